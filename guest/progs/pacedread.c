// SPDX-License-Identifier: GPL-2.0
/*
 * pacedread: read a file at a fixed rate, timing each read.
 *
 * usage: pacedread FILE MIB_PER_S LATENCY_FILE
 *
 * Reads FILE in 1 MiB blocks and starts block i no earlier than i /
 * MIB_PER_S seconds after the first, so the reader allocates page cache
 * at a steady rate that a background reclaimer can be measured against.
 * A block that stalls (direct reclaim, throttling) delays only itself:
 * the blocks after it start at once until the schedule is met again.
 * Writes every read's latency in milliseconds to LATENCY_FILE, one per
 * line, and prints the number of blocks and the rate achieved.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define BLOCK	(1L << 20)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_until(double t)
{
	struct timespec ts = { .tv_sec = (time_t)t };

	ts.tv_nsec = (long)((t - ts.tv_sec) * 1e9);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

int main(int argc, char **argv)
{
	double rate, start, t0;
	char *buf, *end;
	long blocks = 0;
	ssize_t got;
	FILE *out;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: pacedread FILE MIB_PER_S LATENCY_FILE\n");
		return 2;
	}
	rate = strtod(argv[2], &end);
	if (*argv[2] == '\0' || *end != '\0' || !(rate > 0)) {
		fprintf(stderr, "pacedread: MIB_PER_S must be a positive number: %s\n",
			argv[2]);
		return 2;
	}
	fd = open(argv[1], O_RDONLY);
	out = fopen(argv[3], "w");
	buf = malloc(BLOCK);
	if (fd < 0 || !out || !buf) {
		perror("pacedread");
		return 1;
	}
	start = now_s();
	do {
		sleep_until(start + blocks / rate);
		t0 = now_s();
		got = read(fd, buf, BLOCK);
		if (got < 0) {
			perror("pacedread: read");
			return 1;
		}
		if (got > 0) {
			fprintf(out, "%.3f\n", (now_s() - t0) * 1e3);
			blocks++;
		}
	} while (got > 0);
	if (fclose(out)) {
		perror("pacedread: latency file");
		return 1;
	}
	printf("blocks=%ld mib_per_s=%.1f\n", blocks,
	       blocks / (now_s() - start));
	return 0;
}
