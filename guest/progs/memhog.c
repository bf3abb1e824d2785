// SPDX-License-Identifier: GPL-2.0
/*
 * memhog: allocate and touch anonymous memory in chunks, timing each chunk.
 *
 * usage: memhog TOTAL_MIB CHUNK_MIB PASSES [LATENCY_FILE]
 *
 * Maps TOTAL_MIB of anonymous memory and writes one byte per page, CHUNK_MIB
 * at a time, PASSES times over.  Prints one line with the number of chunks
 * and the median, 99th percentile and maximum chunk latency in
 * milliseconds, so that throttling and direct reclaim show up as latency.
 * With LATENCY_FILE, also appends every chunk latency to it, one per line,
 * for percentiles over many processes.
 */
#include <fcntl.h>
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

/* Append all latencies with one write, so that processes do not interleave. */
static int write_latencies(const char *path, const double *lat, size_t n)
{
	size_t size = n * 24 + 1, len = 0, i;
	char *buf = malloc(size);
	int fd, ret = -1;

	if (!buf)
		return -1;
	for (i = 0; i < n; i++)
		len += snprintf(buf + len, size - len, "%.3f\n", lat[i]);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd >= 0 && write(fd, buf, len) == (ssize_t)len)
		ret = 0;
	else
		perror("memhog: latency file");
	if (fd >= 0)
		close(fd);
	free(buf);
	return ret;
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

	if (argc != 4 && argc != 5) {
		fprintf(stderr,
			"usage: memhog TOTAL_MIB CHUNK_MIB PASSES [LATENCY_FILE]\n");
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
	if (argc == 5 && write_latencies(argv[4], lat, n))
		return 1;
	qsort(lat, n, sizeof(*lat), cmp_double);
	printf("chunks=%zu p50_ms=%.2f p99_ms=%.2f max_ms=%.2f\n", n,
	       lat[(n - 1) / 2], lat[(n - 1) * 99 / 100],
	       lat[n - 1]);
	return 0;
}
