// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's HTTP endpoint against clients that never finish (issue 12,
 * item 12): a client dripping its request a byte at a time, or twenty that
 * connect and say nothing, must not keep /metrics from an ordinary scrape,
 * and each is dropped at the whole-request deadline, not kept for hours.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/http_client.h"
#include "user/agent/http_server.h"

static int renders;

static int render(void *ctx, FILE *f)
{
	renders++;
	fprintf(f, "%s 42\n", (const char *)ctx);
	return 0;
}

/* Sends req and reads the answer until the server closes or timeout_s passes. */
static int request(const char *addr, const char *req, char *out, size_t len, double timeout_s)
{
	int fd = connect_to(addr);
	double end = mono_sec() + timeout_s;
	size_t n = 0;

	out[0] = 0;
	if (fd < 0 || send(fd, req, strlen(req), MSG_NOSIGNAL) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (n + 1 < len && mono_sec() < end) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		ssize_t r;

		if (poll(&p, 1, 50) <= 0)
			continue;
		r = recv(fd, out + n, len - 1 - n, 0);
		if (r <= 0)
			break;
		n += (size_t)r;
		out[n] = 0;
	}
	close(fd);
	return (int)n;
}

static void test_answers(const char *addr)
{
	char out[4096];

	request(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", out, sizeof(out), 2);
	CHECK(strstr(out, "HTTP/1.1 200 OK") && strstr(out, "\r\n\r\nmetric 42\n") &&
		  strstr(out, "Content-Length: 10\r\n"),
	      "GET /metrics: '%s'", out);
	request(addr, "HEAD /metrics HTTP/1.1\r\n\r\n", out, sizeof(out), 2);
	CHECK(strstr(out, "HTTP/1.1 200 OK") && !strstr(out, "metric 42"), "HEAD: '%s'", out);
	request(addr, "GET /other HTTP/1.1\r\n\r\n", out, sizeof(out), 2);
	CHECK(strstr(out, "HTTP/1.1 404"), "GET /other: '%s'", out);
	request(addr, "POST /metrics HTTP/1.1\r\n\r\n", out, sizeof(out), 2);
	CHECK(strstr(out, "HTTP/1.1 405"), "POST: '%s'", out);
	request(addr, "nonsense\r\n\r\n", out, sizeof(out), 2);
	CHECK(strstr(out, "HTTP/1.1 400"), "no path: '%s'", out);
}

/* Seconds until the server closes a client that keeps sending a byte every 300 ms. */
static double drip_until_closed(int fd, double limit)
{
	double t0 = mono_sec();
	char b;

	while (mono_sec() - t0 < limit) {
		struct pollfd p = {.fd = fd, .events = POLLIN};

		if (send(fd, "X", 1, MSG_NOSIGNAL) < 0 ||
		    (poll(&p, 1, 300) > 0 && recv(fd, &b, 1, MSG_DONTWAIT) <= 0))
			return mono_sec() - t0;
	}
	return limit;
}

static void test_dripping_client(const char *addr)
{
	int drip = connect_to(addr);
	double t0, took, closed;
	char out[4096];

	CHECK(drip >= 0 && send(drip, "GET /metrics HTTP/1.1\r\n", 23, MSG_NOSIGNAL) == 23,
	      "drip client connects");
	t0 = mono_sec();
	request(addr, "GET /metrics HTTP/1.1\r\n\r\n", out, sizeof(out), 3);
	took = mono_sec() - t0;
	CHECK(strstr(out, "metric 42") && took < 1.0,
	      "a scrape beside a half-sent request answered in %.2f s: '%.80s'", took, out);
	/* cut at the deadline however often it sends: not before, not hours later */
	closed = drip_until_closed(drip, 8) + took;
	CHECK(closed >= HTTP_DEADLINE_MS / 1000.0 - 0.5 && closed <= HTTP_DEADLINE_MS / 1000.0 + 0.7,
	      "a client dripping its request is closed after %.2f s (deadline %d ms)", closed,
	      HTTP_DEADLINE_MS);
	if (drip >= 0)
		close(drip);
}

static void test_idle_flood(const char *addr)
{
	int idle[20], i, open_after = 0;
	double t0, took;
	char out[4096];

	for (i = 0; i < 20; i++)
		idle[i] = connect_to(addr);
	sleep_s(0.2);
	t0 = mono_sec();
	request(addr, "GET /metrics HTTP/1.1\r\n\r\n", out, sizeof(out), 3);
	took = mono_sec() - t0;
	CHECK(strstr(out, "metric 42") && took < 1.0,
	      "a scrape beside 20 idle connections answered in %.2f s: '%.80s'", took, out);
	/* every idle one is gone by its deadline */
	sleep_s(HTTP_DEADLINE_MS / 1000.0 + 0.5);
	for (i = 0; i < 20; i++) {
		char b;

		if (idle[i] < 0)
			continue;
		if (recv(idle[i], &b, 1, MSG_DONTWAIT) < 0 && errno == EAGAIN)
			open_after++;
		close(idle[i]);
	}
	CHECK(open_after == 0, "%d of 20 idle connections still open after the deadline",
	      open_after);
}

int main(void)
{
	char bound[128] = "", err[256] = "";
	struct http_server *h = http_server_start("127.0.0.1:0", "/metrics", "text/plain", render,
						  "metric", bound, sizeof(bound), err, sizeof(err));

	CHECK(h && bound[0], "server starts on 127.0.0.1:0: %s", err);
	if (!h)
		return HARNESS_DONE();
	test_answers(bound);
	test_dripping_client(bound);
	test_idle_flood(bound);
	CHECK(renders >= 3, "render called per GET/HEAD (%d)", renders);
	http_server_stop(h);
	CHECK(!http_server_start("nonsense", "/m", "t", render, NULL, bound, sizeof(bound), err,
				 sizeof(err)) &&
		      strstr(err, "HOST:PORT"),
	      "a bad address is refused: %s", err);
	return HARNESS_DONE();
}
