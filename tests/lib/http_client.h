/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* A tiny HTTP client for the tests (the agent's /metrics on loopback), and a loopback listener. */
#ifndef CFIPROF_TESTS_HTTP_CLIENT_H
#define CFIPROF_TESTS_HTTP_CLIENT_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A listening TCP socket on 127.0.0.1, its port in *port (closed at once: a port nobody serves). */
static inline int listen_loopback(int *port)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16) ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl)) {
		close(fd);
		return -1;
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

/* A connected TCP socket to "A.B.C.D:PORT", or -1. */
static inline int connect_to(const char *addr)
{
	struct sockaddr_in sa = {.sin_family = AF_INET};
	char host[64];
	const char *colon = strrchr(addr, ':');
	int fd;

	if (!colon)
		return -1;
	snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
	sa.sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return -1;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Full response (headers and body) of GET path, or NULL. */
static inline char *http_get(const char *addr, const char *path)
{
	char req[256], buf[4096], *out = NULL;
	size_t len = 0;
	ssize_t n;
	FILE *m;
	int fd = connect_to(addr);

	if (fd < 0)
		return NULL;
	snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr);
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req)) {
		close(fd);
		return NULL;
	}
	m = open_memstream(&out, &len);
	while (poll(&(struct pollfd){.fd = fd, .events = POLLIN}, 1, 5000) > 0 &&
	       (n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, m);
	fclose(m);
	close(fd);
	return out;
}

/* The value of a metric line "NAME VALUE" (name may include {labels}); NAN-like -1 if absent. */
static inline double metric_value(const char *body, const char *name)
{
	const char *p = body;
	size_t n = strlen(name);

	while ((p = strstr(p, name))) {
		if ((p == body || p[-1] == '\n') && p[n] == ' ')
			return strtod(p + n + 1, NULL);
		p += n;
	}
	return -1;
}

#endif
