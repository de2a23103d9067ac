/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Servers for the debuginfod tests, all on loopback: Debian's debuginfod
 * serving the debug files of one directory, one that accepts and never
 * answers (a stalled server), and one that answers every request with one
 * given file (a server lying about what it serves).
 */
#ifndef CFIPROF_TESTS_DEBUGINFOD_SERVER_H
#define CFIPROF_TESTS_DEBUGINFOD_SERVER_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/http_client.h"

/* A loopback port nobody listens on now. */
static inline int free_port(void)
{
	int port = 0, fd = listen_loopback(&port);

	if (fd >= 0)
		close(fd);
	return fd >= 0 ? port : -1;
}

/*
 * A loopback port held bound and not listening (*fd, close it after): a
 * connection to it is refused at once, and no other process can take it
 * meanwhile (a port free_port found free can be, by a parallel suite's
 * server).  The port, or -1.
 */
static inline int closed_port(int *fd)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);

	*fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*fd < 0)
		return -1;
	if (bind(*fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    getsockname(*fd, (struct sockaddr *)&sa, &sl)) {
		close(*fd);
		*fd = -1;
		return -1;
	}
	return ntohs(sa.sin_port);
}

/*
 * Starts `debuginfod -F DIR -p PORT` (its database in DIR/../db.sqlite, its
 * log in @log) and waits until it serves @build_id (it scans DIR at start),
 * at most @timeout seconds. Returns its pid (kill it with server_stop), or -1.
 */
static inline pid_t debuginfod_start(const char *dir, int port, const char *build_id,
				     const char *log, double timeout)
{
	char portarg[16], db[PATH_MAX + 4096 + 16], cmd[1024];
	double end = mono_sec() + timeout;
	pid_t pid;

	snprintf(portarg, sizeof(portarg), "%d", port);
	snprintf(db, sizeof(db), "%s.sqlite", dir);
	{
		char *argv[] = {"debuginfod", "-F", (char *)dir, "-p", portarg, "-d", db, NULL};

		pid = spawn(argv, log, log);
	}
	if (pid < 0)
		return -1;
	snprintf(cmd, sizeof(cmd),
		 "curl -sf -o /dev/null --max-time 2 http://127.0.0.1:%d/buildid/%s/debuginfo",
		 port, build_id);
	while (mono_sec() < end) {
		if (system(cmd) == 0)
			return pid;
		usleep(100 * 1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return -1;
}

/*
 * Listens on @port, then forks: the parent gets the child's pid (or -1) in
 * @pid and -1 back; the child, which serves until killed, gets the socket.
 */
static inline int server_fork(int *port, pid_t *pid)
{
	int lfd = listen_loopback(port);

	*pid = -1;
	if (lfd < 0)
		return -1;
	*pid = fork();
	if (*pid != 0) {
		close(lfd);
		return -1;
	}
	return lfd;
}

/*
 * A server on @port that reads each request, then sends @file whole as a 200
 * (NULL: sends nothing and holds the connection open: stalled). Returns its pid.
 */
static inline pid_t fake_server_start(int *port, const char *file)
{
	pid_t pid;
	int lfd = server_fork(port, &pid);

	if (lfd < 0)
		return pid;
	for (;;) {
		int c = accept(lfd, NULL, NULL);
		char buf[4096];
		size_t len = 0;
		char *body;

		if (c < 0)
			continue;
		if (read(c, buf, sizeof(buf)) <= 0 || !file)
			continue; /* stalled: the connection stays open, unanswered */
		body = slurp_len(file, &len);
		if (body) {
			int n = snprintf(buf, sizeof(buf),
					 "HTTP/1.1 200 OK\r\nContent-Length: %zu\r\n"
					 "Connection: close\r\n\r\n",
					 len);

			if (write(c, buf, (size_t)n) == n && write(c, body, len) == (ssize_t)len)
				shutdown(c, SHUT_WR);
			free(body);
		}
		close(c);
	}
}

/*
 * A stalled server on @port: reads each request and never answers; when the
 * client hangs up, appends how long it held the connection (seconds, one
 * line per connection) to @log.  What a client's timeout did, seen from the
 * other end of the connection however slowly the client ran.  Returns its pid.
 */
static inline pid_t stalled_server_start(int *port, const char *log)
{
	pid_t pid;
	int lfd = server_fork(port, &pid);

	if (lfd < 0)
		return pid;
	signal(SIGCHLD, SIG_IGN); /* one child per connection, none waited for */
	for (;;) {
		int c = accept(lfd, NULL, NULL);
		double t0 = mono_sec();
		char buf[4096];
		FILE *f;

		if (c < 0)
			continue;
		if (fork() != 0) {
			close(c);
			continue;
		}
		close(lfd);
		while (read(c, buf, sizeof(buf)) > 0)
			; /* the request, then nothing until the client hangs up */
		f = fopen(log, "ae");
		if (f) {
			fprintf(f, "%.3f\n", mono_sec() - t0);
			fclose(f);
		}
		_exit(0);
	}
}

/*
 * Whether the peer of connection c closed it within ms (read returns 0 or
 * fails; anything it sends is read and dropped).
 */
static inline bool peer_closed_within(int c, int ms)
{
	struct pollfd p = {.fd = c, .events = POLLIN | POLLRDHUP};
	char buf[256];

	while (poll(&p, 1, ms) > 0) {
		if (p.revents & (POLLRDHUP | POLLHUP | POLLERR))
			return true;
		if (read(c, buf, sizeof(buf)) <= 0)
			return true;
	}
	return false;
}

/*
 * A server on @port answering each request with @gz, a gzip file, as a
 * compressed body (Content-Encoding: gzip: curl inflates it as it writes),
 * 16 KiB every 10 ms; the body bytes it got to send in all its answers so
 * far are in @sent (a number), written after each chunk.  Past an eighth of
 * the body, it waits for the client to hang up (30 s at most, once) before
 * it sends more: a client that stops where it should is not outrun however
 * little CPU it gets, and one that does not stop gets all of it.  Returns
 * its pid.
 */
static inline pid_t gzip_server_start(int *port, const char *gz, const char *sent)
{
	pid_t pid;
	int lfd = server_fork(port, &pid);

	if (lfd < 0)
		return pid;
	signal(SIGPIPE, SIG_IGN);
	for (size_t total = 0;;) {
		int c = accept(lfd, NULL, NULL), n;
		size_t len = 0, off = 0;
		char buf[4096], *body;
		FILE *f;

		if (c < 0)
			continue;
		body = read(c, buf, sizeof(buf)) > 0 ? slurp_len(gz, &len) : NULL;
		n = snprintf(buf, sizeof(buf),
			     "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: %zu\r\n"
			     "Connection: close\r\n\r\n",
			     len);
		if (body && write(c, buf, (size_t)n) == n) {
			bool waited = false;

			while (off < len) {
				size_t chunk = len - off < 16384 ? len - off : 16384;
				ssize_t w;

				if (off >= len / 8 && !waited) {
					waited = true;
					if (peer_closed_within(c, 30000))
						break;
				}
				w = write(c, body + off, chunk);

				if (w <= 0)
					break;
				off += (size_t)w;
				/* as it goes: the test may stop this server at any time */
				f = fopen(sent, "w");
				if (f) {
					fprintf(f, "%zu\n", total + off);
					fclose(f);
				}
				usleep(10 * 1000);
			}
		}
		free(body);
		close(c);
		total += off;
	}
}

static inline void server_stop(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

#endif
