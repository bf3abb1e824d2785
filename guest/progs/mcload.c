// SPDX-License-Identifier: GPL-2.0
/*
 * mcload: an open-loop load generator for memcached's text protocol.
 *
 * usage: mcload PORT fill KEYS VALUE_BYTES
 *        mcload PORT get KEYS RATE SECONDS LATENCY_FILE
 *
 * "fill" stores KEYS items of VALUE_BYTES each (keys k0 .. k<KEYS-1>) and
 * waits for every reply.  "get" sends RATE gets a second for SECONDS, each
 * for a key drawn uniformly from the KEYS, on one connection to 127.0.0.1.
 * The sends follow a fixed schedule whatever the server does (open loop):
 * a closed-loop client would wait out a stalled server and so leave the
 * stall out of its latencies.  Each request's latency runs from the time
 * it was due to be sent to the end of its reply; they are written to
 * LATENCY_FILE in microseconds, one per line, in the order sent.  Prints
 * "requests N", "misses N", "late_sends N" (sends more than 1 ms behind
 * their schedule, the client's own lag) and "start_us T", when the first
 * request was due on CLOCK_MONOTONIC, which a trace with the "mono" clock
 * shares: request I was due at T + I * 1000000 / RATE.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define KEY_MAX		32
#define REPLY_BUF	(1 << 20)
#define LATE_US		1000.0

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static int connect_local(int port)
{
	struct sockaddr_in addr = {
		.sin_family = AF_INET,
		.sin_port = htons(port),
		.sin_addr.s_addr = htonl(INADDR_LOOPBACK),
	};
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);

	if (fd < 0)
		die("socket");
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)))
		die("connect");
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static void send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			die("write");
		}
		buf += n;
		len -= n;
	}
}

/*
 * Replies arrive in request order.  The reader keeps what it has not yet
 * matched to a request in buf[0..*len) and returns how many whole replies
 * it consumed; *hits counts those that carried a value.  A get's reply is
 * "END\r\n" (a miss) or "VALUE k f n\r\n<n bytes>\r\nEND\r\n"; a set's is
 * "STORED\r\n".
 */
static long take_replies(char *buf, size_t *len, long *hits)
{
	size_t pos = 0;
	long done = 0;

	for (;;) {
		char *rest = buf + pos, *eol;
		size_t avail = *len - pos;
		unsigned long bytes;

		eol = memmem(rest, avail, "\r\n", 2);
		if (!eol)
			break;
		if (!strncmp(rest, "END\r\n", 5) ||
		    !strncmp(rest, "STORED\r\n", 8)) {
			pos += eol + 2 - rest;
			done++;
			continue;
		}
		if (strncmp(rest, "VALUE ", 6) ||
		    sscanf(rest, "VALUE %*s %*u %lu", &bytes) != 1) {
			fprintf(stderr, "mcload: unexpected reply: %.*s\n",
				(int)(eol - rest), rest);
			exit(1);
		}
		/* header, data, "\r\n", "END\r\n" */
		if ((size_t)(eol + 2 - rest) + bytes + 7 > avail)
			break;
		pos += eol + 2 - rest + bytes + 7;
		(*hits)++;
		done++;
	}
	memmove(buf, buf + pos, *len - pos);
	*len -= pos;
	return done;
}

static void read_replies(int fd, char *buf, size_t *len, long *hits,
			 long *done)
{
	ssize_t n = read(fd, buf + *len, REPLY_BUF - *len);

	if (n < 0 && errno != EINTR && errno != EAGAIN)
		die("read");
	if (n == 0) {
		fprintf(stderr, "mcload: the server closed the connection\n");
		exit(1);
	}
	if (n > 0) {
		*len += n;
		*done += take_replies(buf, len, hits);
	}
}

static void fill(int fd, long keys, long value_bytes)
{
	char *buf = malloc(REPLY_BUF), *value = malloc(value_bytes + 2);
	char head[64];
	long i, hits = 0, done = 0;
	size_t len = 0;

	if (!buf || !value)
		die("malloc");
	memset(value, 'v', value_bytes);
	memcpy(value + value_bytes, "\r\n", 2);
	for (i = 0; i < keys; i++) {
		int n = snprintf(head, sizeof(head), "set k%ld 0 0 %ld\r\n",
				 i, value_bytes);

		send_all(fd, head, n);
		send_all(fd, value, value_bytes + 2);
		/* Keep the replies from piling up in the socket. */
		while (done < i - 64)
			read_replies(fd, buf, &len, &hits, &done);
	}
	while (done < keys)
		read_replies(fd, buf, &len, &hits, &done);
	printf("stored %ld\n", keys);
}

static void get_load(int fd, long keys, long rate, long seconds,
		     const char *latency_file)
{
	long total = rate * seconds, sent = 0, done = 0, hits = 0, late = 0, i;
	double *due = malloc(total * sizeof(*due));
	double *lat = malloc(total * sizeof(*lat));
	double start, interval = 1e6 / rate;
	char *buf = malloc(REPLY_BUF), req[KEY_MAX + 8];
	size_t len = 0;
	FILE *out;

	if (!due || !lat || !buf)
		die("malloc");
	srandom(getpid());
	start = now_us();
	while (done < total) {
		double t = now_us(), next = start + sent * interval;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		struct timespec wait = { .tv_sec = 1 };
		long before = done;

		if (sent < total && t >= next) {
			int n = snprintf(req, sizeof(req), "get k%ld\r\n",
					 random() % keys);

			if (t - next > LATE_US)
				late++;
			due[sent++] = next;
			send_all(fd, req, n);
			continue;
		}
		if (sent < total) {
			long ns = (long)((next - t) * 1000);

			wait.tv_sec = ns / 1000000000;
			wait.tv_nsec = ns % 1000000000;
		}
		if (ppoll(&pfd, 1, &wait, NULL) < 0 && errno != EINTR)
			die("ppoll");
		if (!(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		read_replies(fd, buf, &len, &hits, &done);
		t = now_us();
		for (i = before; i < done; i++)
			lat[i] = t - due[i];
	}
	out = fopen(latency_file, "w");
	if (!out)
		die(latency_file);
	for (i = 0; i < total; i++)
		fprintf(out, "%.0f\n", lat[i]);
	fclose(out);
	printf("requests %ld\nmisses %ld\nlate_sends %ld\nstart_us %.0f\n",
	       total, total - hits, late, start);
}

int main(int argc, char **argv)
{
	int fd;

	if (argc == 5 && !strcmp(argv[2], "fill")) {
		fd = connect_local(atoi(argv[1]));
		fill(fd, atol(argv[3]), atol(argv[4]));
		return 0;
	}
	if (argc == 7 && !strcmp(argv[2], "get") && atol(argv[3]) > 0 &&
	    atol(argv[4]) > 0 && atol(argv[5]) > 0) {
		fd = connect_local(atoi(argv[1]));
		get_load(fd, atol(argv[3]), atol(argv[4]), atol(argv[5]),
			 argv[6]);
		return 0;
	}
	fprintf(stderr, "usage: mcload PORT fill KEYS VALUE_BYTES\n"
		"       mcload PORT get KEYS RATE SECONDS LATENCY_FILE\n");
	return 2;
}
