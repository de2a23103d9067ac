// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The agent's HTTP endpoint: bounded connections, one deadline each; see http_server.h. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "user/agent/http_server.h"

#define ACCEPT_BACKOFF_NS (100 * 1000000ull) /* after EMFILE / ENFILE */

struct conn {
	int fd; /* -1: free slot */
	uint64_t deadline_ns;
	size_t req_len;
	char *out; /* the whole response once the request is in */
	size_t out_len, out_off;
	char req[HTTP_REQUEST_MAX + 1];
};

struct http_server {
	int listen_fd;
	int stop_pipe[2];
	pthread_t thread;
	char path[256], content_type[128];
	http_render_fn render;
	void *ctx;
	uint64_t accept_paused_until;
	struct conn conns[HTTP_MAX_CONN];
};

static uint64_t timed_out_total, displaced_total;

uint64_t http_conns_timed_out_total(void)
{
	return __atomic_load_n(&timed_out_total, __ATOMIC_RELAXED);
}

uint64_t http_conns_displaced_total(void)
{
	return __atomic_load_n(&displaced_total, __ATOMIC_RELAXED);
}

static void conn_close(struct conn *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	c->out = NULL;
	c->fd = -1;
	c->req_len = c->out_len = c->out_off = 0;
}

/* Header and body in one buffer, so writing is one loop over c->out. */
static void set_response(struct conn *c, const char *status, const char *type, const char *body,
			 size_t len, bool head)
{
	char hdr[256];
	int n = snprintf(hdr, sizeof(hdr),
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Connection: close\r\n\r\n",
			 status, type, len);

	if (head)
		len = 0;
	c->out = malloc((size_t)n + len);
	if (!c->out) {
		conn_close(c);
		return;
	}
	memcpy(c->out, hdr, (size_t)n);
	memcpy(c->out + n, body, len);
	c->out_len = (size_t)n + len;
	c->out_off = 0;
}

static void answer(struct http_server *h, struct conn *c)
{
	char method[16], path[256], *body = NULL;
	size_t blen = 0;
	FILE *f;
	int err;

	if (sscanf(c->req, "%15s %255s", method, path) != 2) {
		set_response(c, "400 Bad Request", "text/plain", "bad request\n", 12, false);
		return;
	}
	if (strcmp(method, "GET") && strcmp(method, "HEAD")) {
		set_response(c, "405 Method Not Allowed", "text/plain", "GET only\n", 9, false);
		return;
	}
	path[strcspn(path, "?")] = 0;
	if (strcmp(path, h->path)) {
		set_response(c, "404 Not Found", "text/plain", "not found\n", 10, false);
		return;
	}
	f = open_memstream(&body, &blen);
	if (!f) {
		set_response(c, "500 Internal Server Error", "text/plain", "out of memory\n", 14,
			     false);
		return;
	}
	err = h->render(h->ctx, f);
	err |= fclose(f);
	if (err)
		set_response(c, "500 Internal Server Error", "text/plain", "render failed\n", 14,
			     false);
	else
		set_response(c, "200 OK", h->content_type, body, blen, !strcmp(method, "HEAD"));
	free(body);
}

static void on_readable(struct http_server *h, struct conn *c)
{
	ssize_t n = recv(c->fd, c->req + c->req_len, HTTP_REQUEST_MAX - c->req_len, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->req_len += (size_t)n;
	c->req[c->req_len] = 0;
	/* the request line and headers; the body of a GET is empty */
	if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n"))
		answer(h, c);
	else if (c->req_len == HTTP_REQUEST_MAX)
		set_response(c, "431 Request Header Fields Too Large", "text/plain",
			     "request too large\n", 18, false);
}

static void on_writable(struct conn *c)
{
	ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
			 MSG_NOSIGNAL | MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		conn_close(c);
		return;
	}
	c->out_off += (size_t)n;
	if (c->out_off == c->out_len)
		conn_close(c);
}

/* A free slot, or the oldest connection's: a flood of idle clients cannot lock others out. */
static struct conn *take_slot(struct http_server *h)
{
	struct conn *oldest = &h->conns[0];

	for (int i = 0; i < HTTP_MAX_CONN; i++) {
		if (h->conns[i].fd < 0)
			return &h->conns[i];
		if (h->conns[i].deadline_ns < oldest->deadline_ns)
			oldest = &h->conns[i];
	}
	__atomic_fetch_add(&displaced_total, 1, __ATOMIC_RELAXED);
	conn_close(oldest);
	return oldest;
}

static void on_accept(struct http_server *h, uint64_t now)
{
	for (int i = 0; i < HTTP_MAX_CONN; i++) {
		int fd = accept4(h->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct conn *c;

		if (fd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				h->accept_paused_until = now + ACCEPT_BACKOFF_NS;
			return;
		}
		c = take_slot(h);
		c->fd = fd;
		c->deadline_ns = now + HTTP_DEADLINE_MS * 1000000ull;
	}
}

static void *server_main(void *arg)
{
	struct http_server *h = arg;
	struct pollfd pfd[2 + HTTP_MAX_CONN];
	int slot_of[2 + HTTP_MAX_CONN];

	for (;;) {
		uint64_t now = mono_ns(), wake = UINT64_MAX;
		int n = 0, timeout, i;

		pfd[n++] = (struct pollfd){.fd = h->stop_pipe[0], .events = POLLIN};
		if (now >= h->accept_paused_until)
			pfd[n++] = (struct pollfd){.fd = h->listen_fd, .events = POLLIN};
		else
			wake = h->accept_paused_until;
		for (i = 0; i < HTTP_MAX_CONN; i++) {
			struct conn *c = &h->conns[i];

			if (c->fd < 0)
				continue;
			if (now >= c->deadline_ns) {
				__atomic_fetch_add(&timed_out_total, 1, __ATOMIC_RELAXED);
				conn_close(c);
				continue;
			}
			if (c->deadline_ns < wake)
				wake = c->deadline_ns;
			slot_of[n] = i;
			pfd[n++] = (struct pollfd){.fd = c->fd, .events = c->out ? POLLOUT : POLLIN};
		}
		timeout = wake == UINT64_MAX ? -1 : (int)((wake - now) / 1000000 + 1);
		if (poll(pfd, (nfds_t)n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[0].revents)
			break;
		now = mono_ns();
		for (i = 1; i < n; i++) {
			if (!pfd[i].revents)
				continue;
			if (pfd[i].fd == h->listen_fd) {
				on_accept(h, now);
				continue;
			}
			if (h->conns[slot_of[i]].fd != pfd[i].fd)
				continue; /* replaced by a new connection in this round */
			if (h->conns[slot_of[i]].out)
				on_writable(&h->conns[slot_of[i]]);
			else
				on_readable(h, &h->conns[slot_of[i]]);
		}
	}
	for (int k = 0; k < HTTP_MAX_CONN; k++)
		conn_close(&h->conns[k]);
	return NULL;
}

static int split_addr(const char *addr, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon;

	if (addr[0] == '[') {
		const char *end = strchr(addr, ']');

		if (!end || end[1] != ':')
			return -1;
		snprintf(host, hlen, "%.*s", (int)(end - addr - 1), addr + 1);
		snprintf(port, plen, "%s", end + 2);
		return 0;
	}
	colon = strrchr(addr, ':');
	if (!colon)
		return -1;
	snprintf(host, hlen, "%.*s", (int)(colon - addr), addr);
	snprintf(port, plen, "%s", colon + 1);
	return 0;
}

static void server_free(struct http_server *h)
{
	if (h->listen_fd >= 0)
		close(h->listen_fd);
	if (h->stop_pipe[0] >= 0) {
		close(h->stop_pipe[0]);
		close(h->stop_pipe[1]);
	}
	free(h);
}

int http_addr_check(const char *addr, char *err, size_t errlen)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_NUMERICHOST};
	struct addrinfo *ai = NULL;
	char host[128], port[16];
	int rc;

	if (split_addr(addr, host, sizeof(host), port, sizeof(port))) {
		snprintf(err, errlen, "invalid address '%.64s' (want HOST:PORT)", addr);
		return -1;
	}
	rc = getaddrinfo(*host ? host : NULL, port, &hints, &ai);
	if (rc) {
		snprintf(err, errlen, "invalid address '%.64s': %s", addr, gai_strerror(rc));
		return -1;
	}
	freeaddrinfo(ai);
	return 0;
}

struct http_server *http_server_start(const char *addr, const char *path,
				      const char *content_type, http_render_fn render, void *ctx,
				      char *bound, size_t bound_len, char *err, size_t errlen)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV | AI_NUMERICHOST};
	struct http_server *h = NULL;
	struct addrinfo *ai = NULL;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[128], port[16], hbuf[128], pbuf[16];
	int one = 1, rc;

	if (split_addr(addr, host, sizeof(host), port, sizeof(port))) {
		snprintf(err, errlen, "invalid address '%s' (want HOST:PORT)", addr);
		return NULL;
	}
	rc = getaddrinfo(*host ? host : NULL, port, &hints, &ai);
	if (rc) {
		snprintf(err, errlen, "invalid address '%s': %s", addr, gai_strerror(rc));
		return NULL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(err, errlen, "out of memory");
		freeaddrinfo(ai);
		return NULL;
	}
	for (int i = 0; i < HTTP_MAX_CONN; i++)
		h->conns[i].fd = -1;
	snprintf(h->path, sizeof(h->path), "%s", path);
	snprintf(h->content_type, sizeof(h->content_type), "%s", content_type);
	h->render = render;
	h->ctx = ctx;
	h->stop_pipe[0] = h->stop_pipe[1] = -1;
	h->listen_fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (h->listen_fd < 0)
		goto fail;
	/* a restart right after a crash must not wait for TIME_WAIT */
	setsockopt(h->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(h->listen_fd, ai->ai_addr, ai->ai_addrlen) || listen(h->listen_fd, 16) ||
	    pipe2(h->stop_pipe, O_CLOEXEC))
		goto fail;
	if (!getsockname(h->listen_fd, (struct sockaddr *)&ss, &sl) &&
	    !getnameinfo((struct sockaddr *)&ss, sl, hbuf, sizeof(hbuf), pbuf, sizeof(pbuf),
			 NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(bound, bound_len, ss.ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", hbuf,
			 pbuf);
	errno = pthread_create(&h->thread, NULL, server_main, h);
	if (errno)
		goto fail;
	pthread_setname_np(h->thread, "cfiprof-http");
	freeaddrinfo(ai);
	return h;
fail:
	snprintf(err, errlen, "%s", strerror(errno));
	server_free(h);
	freeaddrinfo(ai);
	return NULL;
}

void http_server_stop(struct http_server *h)
{
	if (!h)
		return;
	/* if the wakeup cannot be written the thread is left running, never joined forever */
	if (write(h->stop_pipe[1], "x", 1) != 1)
		return;
	pthread_join(h->thread, NULL);
	server_free(h);
}
