// SPDX-License-Identifier: GPL-2.0
/*
 * anonhold: hold anonymous memory reclaim cannot take, and keep charging.
 *
 * usage: anonhold MIB [mlock]
 *
 * Touches MIB of anonymous memory (locked with mlockall() when asked), then
 * until killed maps, touches and unmaps 1 MiB every 10 ms, so that charges
 * keep arriving while nothing it holds can be reclaimed.
 *
 * The memory is mapped a chunk at a time: under mlockall(), mmap() faults
 * a whole mapping in holding mmap_lock, and khugepaged, waiting to collapse
 * a range of this process, sat in mmap_write_lock() for 15 s of a 25 s
 * populate of 3.4 GiB in a probe on a slow guest; the likely cause of a
 * hung task report (61 s) whose trace was lost.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CHUNK (64L << 20)

static char *touch(long bytes)
{
	char *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mem == MAP_FAILED) {
		perror("anonhold: mmap");
		exit(1);
	}
	memset(mem, 1, bytes);
	return mem;
}

int main(int argc, char **argv)
{
	char *end;
	long mib;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "mlock"))) {
		fprintf(stderr, "usage: anonhold MIB [mlock]\n");
		return 2;
	}
	mib = strtol(argv[1], &end, 10);
	if (*end || mib <= 0) {
		fprintf(stderr, "anonhold: MIB must be a positive integer\n");
		return 2;
	}
	if (argc == 3 && mlockall(MCL_CURRENT | MCL_FUTURE)) {
		perror("anonhold: mlockall");
		return 1;
	}
	for (long left = mib << 20; left > 0; left -= CHUNK)
		touch(left < CHUNK ? left : CHUNK);
	for (;;) {
		munmap(touch(1 << 20), 1 << 20);
		usleep(10000);
	}
}
