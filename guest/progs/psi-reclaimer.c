// SPDX-License-Identifier: GPL-2.0
/*
 * psi-reclaimer: proactive reclaim from user space, the way operators run
 * it today (in the spirit of Meta's senpai), as the benchmarks' competitor
 * to in-kernel background reclaim.
 *
 * usage: psi-reclaimer CGROUP_DIR HIGH_BYTES LOW_BYTES
 *
 * Keeps the cgroup's memory.current at or below HIGH_BYTES by writing
 * memory.reclaim down to LOW_BYTES, in steps of at most STEP_MAX so that no
 * single write blocks for long.  The cgroup's PSI memory pressure paces
 * the loop: with no pressure it polls every IDLE_US; as the share of time
 * the cgroup's tasks stall on memory grows, the poll interval shrinks to
 * BUSY_US, because stalls mean the workload is reclaiming for itself.
 * When memory.reclaim fails (nothing reclaimable) the interval doubles up
 * to FAIL_MAX_US, so an unreclaimable cgroup costs little.  Runs until
 * SIGTERM or SIGINT, then prints what it did.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define STEP_MAX	(32L << 20)
#define IDLE_US		100000
#define BUSY_US		10000
#define FAIL_MAX_US	2000000
/* Stall share (some) at which the loop runs at its fastest. */
#define PRESSURE_FAST	0.10

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int read_file(const char *dir, const char *name, char *buf, size_t size)
{
	char path[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static long long memory_current(const char *cg)
{
	char buf[64];

	return read_file(cg, "memory.current", buf, sizeof(buf)) ?
		-1 : atoll(buf);
}

/* Total microseconds some task of the cgroup stalled on memory. */
static long long pressure_some_total(const char *cg)
{
	char buf[256], *p;

	if (read_file(cg, "memory.pressure", buf, sizeof(buf)))
		return -1;
	p = strstr(buf, "total=");
	return p ? atoll(p + 6) : -1;
}

/* Ask the kernel to reclaim @bytes from the cgroup; 0 when it all went. */
static int reclaim(const char *cg, long long bytes)
{
	char path[4096], val[32];
	int fd, len, ret;

	snprintf(path, sizeof(path), "%s/memory.reclaim", cg);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	len = snprintf(val, sizeof(val), "%lld", bytes);
	ret = write(fd, val, len) == len ? 0 : -1;
	close(fd);
	return ret;
}

static long long parse_bytes(const char *s, const char *what)
{
	char *end;
	long long v = strtoll(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v <= 0) {
		fprintf(stderr, "psi-reclaimer: %s must be a positive byte count: %s\n",
			what, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	long long high, low, usage, psi, last_psi, writes = 0, failures = 0;
	long long asked = 0;
	double last, interval = IDLE_US, fail_us = 0;
	const char *cg;

	if (argc != 4) {
		fprintf(stderr, "usage: psi-reclaimer CGROUP_DIR HIGH_BYTES LOW_BYTES\n");
		return 2;
	}
	cg = argv[1];
	high = parse_bytes(argv[2], "HIGH_BYTES");
	low = parse_bytes(argv[3], "LOW_BYTES");
	if (low >= high) {
		fprintf(stderr, "psi-reclaimer: LOW_BYTES must be below HIGH_BYTES\n");
		return 2;
	}
	last_psi = pressure_some_total(cg);
	if (last_psi < 0 || memory_current(cg) < 0) {
		fprintf(stderr, "psi-reclaimer: cannot read %s/memory.current or memory.pressure\n",
			cg);
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	last = now_us();
	while (!stop) {
		double t, share;

		usleep((useconds_t)interval);
		t = now_us();
		psi = pressure_some_total(cg);
		usage = memory_current(cg);
		if (psi < 0 || usage < 0)
			break;	/* the cgroup is gone */
		share = (psi - last_psi) / (t - last);
		last_psi = psi;
		last = t;
		interval = IDLE_US - (IDLE_US - BUSY_US) *
			   (share > PRESSURE_FAST ? 1.0 : share / PRESSURE_FAST);
		while (usage > high && !stop) {
			long long step = usage - low;

			if (step > STEP_MAX)
				step = STEP_MAX;
			writes++;
			asked += step;
			if (reclaim(cg, step)) {
				if (errno != EAGAIN) {
					perror("psi-reclaimer: memory.reclaim");
					return 1;
				}
				/* Not all of it could go: back off. */
				failures++;
				fail_us = fail_us ? 2 * fail_us : IDLE_US;
				if (fail_us > FAIL_MAX_US)
					fail_us = FAIL_MAX_US;
				break;
			}
			fail_us = 0;
			usage = memory_current(cg);
		}
		if (interval < fail_us)
			interval = fail_us;
	}
	printf("writes=%lld failures=%lld asked_mib=%lld\n", writes, failures,
	       asked >> 20);
	return 0;
}
