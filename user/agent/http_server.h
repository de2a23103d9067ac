/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A tiny HTTP/1.1 server for GET (and HEAD) of one path, on its own thread:
 * the agent's /metrics.  Whoever can reach the port may be hostile, so every
 * connection has one deadline for the whole exchange (request read and
 * response written), at most HTTP_MAX_CONN are served at once (a new one
 * replaces the oldest when all are taken), I/O never blocks the thread, and
 * running out of file descriptors backs off instead of spinning.
 */
#ifndef CFIPROF_HTTP_SERVER_H
#define CFIPROF_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define HTTP_MAX_CONN	  8
#define HTTP_DEADLINE_MS  2000 /* from accept to the last byte of the response */
#define HTTP_REQUEST_MAX  8192

/* Writes the body for path into f; returns 0, or -1 for a 500. */
typedef int (*http_render_fn)(void *ctx, FILE *f);

struct http_server;

/*
 * Listens on addr ("HOST:PORT", "[V6]:PORT"; port 0 picks one, written to
 * bound as HOST:PORT) and serves GET path with render.  NULL on failure, with
 * the reason in err.
 */
struct http_server *http_server_start(const char *addr, const char *path,
				      const char *content_type, http_render_fn render, void *ctx,
				      char *bound, size_t bound_len, char *err, size_t errlen);
void http_server_stop(struct http_server *h);
/* 0 if addr is a numeric HOST:PORT http_server_start can listen on, else -1 with err set. */
int http_addr_check(const char *addr, char *err, size_t errlen);

/* Connections closed unserved (process-wide): past their deadline, or replaced by a new one. */
uint64_t http_conns_timed_out_total(void);
uint64_t http_conns_displaced_total(void);

#endif
