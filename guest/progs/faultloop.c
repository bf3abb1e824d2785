// SPDX-License-Identifier: GPL-2.0
/*
 * faultloop: page-fault-heavy microbenchmark for the memory charge path.
 *
 * usage: faultloop MIB SECONDS
 *
 * Maps MIB of anonymous memory, writes one byte per page (one fault and one
 * charge each), unmaps it, and repeats until SECONDS have passed.  Prints
 * the number of faults and the faults per second of CPU time the process
 * used (user + system), which TCG's wall-clock noise affects less than
 * elapsed time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	long mib, seconds, page = sysconf(_SC_PAGESIZE), faults = 0;
	double start, cpu0, wall, cpu;
	char *end1, *end2;

	if (argc != 3) {
		fprintf(stderr, "usage: faultloop MIB SECONDS\n");
		return 2;
	}
	mib = strtol(argv[1], &end1, 10);
	seconds = strtol(argv[2], &end2, 10);
	if (*end1 || *end2 || mib <= 0 || seconds <= 0) {
		fprintf(stderr, "faultloop: MIB and SECONDS must be positive integers\n");
		return 2;
	}
	start = now_s();
	cpu0 = cpu_s();
	do {
		char *mem = mmap(NULL, mib << 20, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		long off;

		if (mem == MAP_FAILED) {
			perror("faultloop: mmap");
			return 1;
		}
		/* No transparent huge pages: one fault per base page. */
		madvise(mem, mib << 20, MADV_NOHUGEPAGE);
		for (off = 0; off < mib << 20; off += page)
			mem[off] = 1;
		munmap(mem, mib << 20);
		faults += (mib << 20) / page;
	} while (now_s() - start < seconds);
	wall = now_s() - start;
	cpu = cpu_s() - cpu0;
	printf("faults=%ld wall_s=%.3f cpu_s=%.3f faults_per_cpu_s=%.0f\n",
	       faults, wall, cpu, faults / cpu);
	return 0;
}
