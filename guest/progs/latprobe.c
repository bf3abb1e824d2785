// SPDX-License-Identifier: GPL-2.0
/*
 * latprobe: a latency-sensitive task for the isolation benchmark.
 *
 * usage: latprobe RESIDENT_MIB SECONDS LATENCY_FILE
 *
 * Touches RESIDENT_MIB of anonymous memory once, then, until SECONDS have
 * passed, times small operations: each reads 64 random pages of its
 * resident data, and every 16th also faults in a fresh page (a new
 * allocation, as a server's request handling does now and then).  Between
 * operations it sleeps a millisecond.  Writes every operation's latency in
 * microseconds to LATENCY_FILE, one per line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define PAGES_PER_OP	64
#define FRESH_EVERY	16
#define FRESH_MIB	16

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	long mib, seconds, page = sysconf(_SC_PAGESIZE), npages, ops = 0;
	long fresh_pages = (FRESH_MIB << 20) / page, fresh_used = 0;
	char *mem, *fresh = NULL, *end1, *end2;
	volatile char sink = 0;
	double start;
	FILE *out;

	if (argc != 4) {
		fprintf(stderr, "usage: latprobe RESIDENT_MIB SECONDS LATENCY_FILE\n");
		return 2;
	}
	mib = strtol(argv[1], &end1, 10);
	seconds = strtol(argv[2], &end2, 10);
	if (*end1 || *end2 || mib <= 0 || seconds <= 0) {
		fprintf(stderr, "latprobe: RESIDENT_MIB and SECONDS must be positive integers\n");
		return 2;
	}
	out = fopen(argv[3], "w");
	npages = (mib << 20) / page;
	mem = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!out || mem == MAP_FAILED) {
		perror("latprobe");
		return 1;
	}
	for (long i = 0; i < npages; i++)
		mem[i * page] = 1;
	srand(1);
	start = now_us();
	while (now_us() - start < seconds * 1e6) {
		double t0 = now_us();

		for (int i = 0; i < PAGES_PER_OP; i++)
			sink += mem[(rand() % npages) * page];
		if (++ops % FRESH_EVERY == 0) {
			/* A fresh page; recycle the area when it is used up. */
			if (!fresh || fresh_used == fresh_pages) {
				if (fresh)
					munmap(fresh, FRESH_MIB << 20);
				fresh = mmap(NULL, FRESH_MIB << 20,
					     PROT_READ | PROT_WRITE,
					     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
				if (fresh == MAP_FAILED) {
					perror("latprobe: mmap");
					return 1;
				}
				fresh_used = 0;
			}
			fresh[fresh_used++ * page] = 1;
		}
		fprintf(out, "%.1f\n", now_us() - t0);
		usleep(1000);
	}
	if (fclose(out)) {
		perror("latprobe: LATENCY_FILE");
		return 1;
	}
	printf("ops=%ld\n", ops);
	return 0;
}
