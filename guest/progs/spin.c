// SPDX-License-Identifier: GPL-2.0
/*
 * spin: a CPU-bound task that allocates nothing, the bystander whose
 * throughput shows what reclaim on behalf of others costs it.
 *
 * usage: spin SECONDS
 *
 * Runs a fixed arithmetic loop in batches until SECONDS of wall time have
 * passed, then prints the batches completed per second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	volatile unsigned long x = 1;
	double start, seconds, elapsed;
	unsigned long batches = 0;

	if (argc != 2 || (seconds = atof(argv[1])) <= 0) {
		fprintf(stderr, "usage: spin SECONDS\n");
		return 2;
	}
	start = now_s();
	do {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		batches++;
		elapsed = now_s() - start;
	} while (elapsed < seconds);
	printf("%.1f\n", batches / elapsed);
	return 0;
}
