// SPDX-License-Identifier: GPL-2.0
/*
 * memhog: allocate and touch anonymous memory in chunks, timing each chunk.
 *
 * usage: memhog TOTAL_MIB CHUNK_MIB PASSES
 *
 * Maps TOTAL_MIB of anonymous memory and writes one byte per page, CHUNK_MIB
 * at a time, PASSES times over.  Prints one line with the number of chunks
 * and the median, 99th percentile and maximum chunk latency in
 * milliseconds, so that throttling and direct reclaim show up as latency.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static long parse_positive(const char *s, const char *what)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v <= 0) {
		fprintf(stderr, "memhog: %s must be a positive integer: %s\n",
			what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long total, chunk, passes, page = sysconf(_SC_PAGESIZE);
	size_t nchunks, i, n = 0;
	double *lat, t0;
	char *mem;
	long p;

	if (argc != 4) {
		fprintf(stderr, "usage: memhog TOTAL_MIB CHUNK_MIB PASSES\n");
		return 2;
	}
	total = parse_positive(argv[1], "TOTAL_MIB");
	chunk = parse_positive(argv[2], "CHUNK_MIB");
	passes = parse_positive(argv[3], "PASSES");
	if (chunk > total) {
		fprintf(stderr, "memhog: CHUNK_MIB exceeds TOTAL_MIB\n");
		return 2;
	}
	nchunks = total / chunk;
	lat = calloc(nchunks * passes, sizeof(*lat));
	mem = mmap(NULL, total << 20, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!lat || mem == MAP_FAILED) {
		perror("memhog: allocation");
		return 1;
	}
	for (p = 0; p < passes; p++) {
		for (i = 0; i < nchunks; i++) {
			char *start = mem + (i * chunk << 20);
			long off;

			t0 = now_ms();
			for (off = 0; off < chunk << 20; off += page)
				start[off] = (char)(p + 1);
			lat[n++] = now_ms() - t0;
		}
	}
	qsort(lat, n, sizeof(*lat), cmp_double);
	printf("chunks=%zu p50_ms=%.2f p99_ms=%.2f max_ms=%.2f\n", n,
	       lat[(n - 1) / 2], lat[(n - 1) * 99 / 100],
	       lat[n - 1]);
	return 0;
}
