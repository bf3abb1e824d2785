// SPDX-License-Identifier: GPL-2.0
/*
 * cgchurn: create memory cgroups, fill their page cache past the high
 * watermark and remove them while their background reclaim is queued or
 * running, CYCLES times.
 *
 * usage: cgchurn PARENT DATA_DIR CYCLES WMARKS
 *
 * Each cycle makes PARENT/cN with memory.max 16M, no swap and WMARKS in
 * memory.reclaim_wmarks, forks a child that joins it and writes 24 MiB to
 * DATA_DIR/cN, kills the cgroup 0-40 ms later (cgroup.kill), reaps the
 * child, removes the cgroup and the file.  Every other cycle waits for
 * the cgroup's usage to pass half its limit (the watermarks' high of
 * "high=50%") before that delay starts, so that a worker is queued or
 * running when the cgroup goes; on a slow kernel the others are mostly
 * killed before the child has charged that much.  One fork and no exec
 * per cycle: a shell loop spent seconds per cycle on the debug kernel.
 * Logs how many cycles are done every PROGRESS_EVERY cycles.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MIB (1 << 20)
#define PROGRESS_EVERY 100

static int write_file(const char *dir, const char *name, const char *val)
{
	char path[4096];
	int fd, ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY);
	if (fd < 0) {
		fprintf(stderr, "cgchurn: %s: %s\n", path, strerror(errno));
		return -1;
	}
	ok = write(fd, val, strlen(val)) == (ssize_t)strlen(val);
	if (!ok)
		fprintf(stderr, "cgchurn: writing \"%s\" to %s: %s\n", val,
			path, strerror(errno));
	close(fd);
	return ok ? 0 : -1;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* The child: join CG and write 24 MiB of page cache to FILE. */
static void fill(const char *cg, const char *file)
{
	static char buf[MIB];
	int fd, i;

	if (write_file(cg, "cgroup.procs", "0"))
		_exit(1);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		_exit(1);
	memset(buf, 1, sizeof(buf));
	for (i = 0; i < 24; i++)
		if (write(fd, buf, sizeof(buf)) != sizeof(buf))
			_exit(1);
	_exit(0);
}

/* Wait until CG's memory.current exceeds BYTES or the child CHILD exits. */
static void wait_usage(const char *cg, long bytes, pid_t child)
{
	char path[4096 + sizeof("/memory.current")], buf[32];
	siginfo_t info;
	int tries, fd;
	ssize_t len;

	snprintf(path, sizeof(path), "%s/memory.current", cg);
	for (tries = 0; tries < 2000; tries++) {
		fd = open(path, O_RDONLY);
		if (fd < 0)
			return;
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			return;
		buf[len] = '\0';
		if (atol(buf) > bytes)
			return;
		info.si_pid = 0;
		if (waitid(P_PID, child, &info, WEXITED | WNOHANG | WNOWAIT) ||
		    info.si_pid == child)
			return;
		sleep_ms(1);
	}
}

static int cycle(const char *parent, const char *data, int i,
		 const char *wmarks)
{
	char cg[4096], file[4096];
	pid_t pid;
	int tries;

	snprintf(cg, sizeof(cg), "%s/c%d", parent, i);
	snprintf(file, sizeof(file), "%s/c%d", data, i);
	if (mkdir(cg, 0755)) {
		fprintf(stderr, "cgchurn: mkdir %s: %s\n", cg, strerror(errno));
		return -1;
	}
	if (write_file(cg, "memory.max", "16M") ||
	    write_file(cg, "memory.swap.max", "0") ||
	    write_file(cg, "memory.reclaim_wmarks", wmarks))
		return -1;
	pid = fork();
	if (pid < 0) {
		perror("cgchurn: fork");
		return -1;
	}
	if (pid == 0)
		fill(cg, file);
	if (i % 2)
		wait_usage(cg, 8 * MIB, pid);
	sleep_ms(rand() % 5 * 10);
	if (write_file(cg, "cgroup.kill", "1"))
		return -1;
	if (waitpid(pid, NULL, 0) != pid) {
		perror("cgchurn: waitpid");
		return -1;
	}
	/* The killed child is reaped, but the cgroup may lag behind. */
	for (tries = 0; rmdir(cg); tries++) {
		if (errno != EBUSY || tries == 100) {
			fprintf(stderr, "cgchurn: rmdir %s: %s\n", cg,
				strerror(errno));
			return -1;
		}
		sleep_ms(50);
	}
	unlink(file);
	return 0;
}

/*
 * To the kernel log, which reaches the console at once: stress.sh shows a
 * phase's output only when the phase ends, and a run killed at its time
 * limit should still tell how far it got.  One write() per record: not
 * dprintf(), which gives up without writing when its lseek(SEEK_CUR) on
 * /dev/kmsg fails with EINVAL.
 */
static void progress(int done, int cycles)
{
	char msg[80];
	int fd = open("/dev/kmsg", O_WRONLY), len;

	if (fd < 0)
		return;
	len = snprintf(msg, sizeof(msg),
		       "cgchurn: %d of %d create/remove cycles done\n", done,
		       cycles);
	if (write(fd, msg, len) != len)
		fprintf(stderr, "cgchurn: /dev/kmsg: %s\n", strerror(errno));
	close(fd);
}

int main(int argc, char **argv)
{
	int cycles, i;

	if (argc != 5 || (cycles = atoi(argv[3])) < 1) {
		fprintf(stderr,
			"usage: cgchurn PARENT DATA_DIR CYCLES WMARKS\n");
		return 2;
	}
	srand(getpid());
	for (i = 1; i <= cycles; i++) {
		if (cycle(argv[1], argv[2], i, argv[4])) {
			printf("stress: cycle %d of %d failed\n", i, cycles);
			return 1;
		}
		if (i % PROGRESS_EVERY == 0 && i < cycles)
			progress(i, cycles);
	}
	printf("stress: %d create/remove cycles\n", cycles);
	return 0;
}
