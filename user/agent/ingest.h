/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * One profile sent over HTTP (libcurl, loaded on first use:
 * common/dynlib.h): to a Pyroscope-compatible backend's /ingest, or to an
 * OTLP/HTTP receiver; and what the request is made of: the application name
 * with its labels, the tenant, the bearer token.  The pusher thread and its
 * spool are push.c's.
 */
#ifndef CFIPROF_AGENT_INGEST_H
#define CFIPROF_AGENT_INGEST_H

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "user/agent/push.h"

enum push_result {
	PUSH_OK,
	PUSH_RETRY, /* the network or the backend may do better later */
	PUSH_DROP,  /* this profile itself was refused: retrying cannot help */
};

/* Loads libcurl (once) and initialises it; false (logged) when it cannot. */
bool ingest_init(void);
/* After the last handle is freed. */
void ingest_cleanup(void);
/* One connection cache per pusher thread; NULL when out of memory. */
CURL *ingest_handle_new(void);
void ingest_handle_free(CURL *h);

/*
 * POSTs the pprof in data (len bytes, gzipped) for [from_ns, until_ns) under
 * service (or c->app_name when ""), with c's labels, tenant and token.  Says
 * why in why when not PUSH_OK; status is the HTTP status (0: none came).
 */
enum push_result ingest_post(CURL *h, const struct agent_push_config *c, const char *service,
			     uint64_t from_ns, uint64_t until_ns, const char *data, size_t len,
			     long *status, char *why, size_t whylen);

/*
 * POSTs an OTLP ExportProfilesServiceRequest (data, len bytes, gzipped) to
 * c->url/v1development/profiles, with c's tenant and token; as ingest_post.
 */
enum push_result otlp_post(CURL *h, const struct agent_push_config *c, const char *data, size_t len,
			   long *status, char *why, size_t whylen);

#endif
