/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Pushing interval profiles to a Pyroscope-compatible ingest endpoint:
 *   POST URL/ingest?name=APP{hostname=H,k=v}&from=UNIX&until=UNIX&format=pprof
 * with the gzip'd pprof as the body.  Every profile goes through an on-disk
 * spool first and one thread delivers the spool oldest first, so profiles
 * reach the backend in order, survive a restart, and a backend outage costs
 * only disk space up to --spool-max-bytes; beyond that the oldest profiles
 * are dropped, counted and logged.  The same thread and spool deliver OTLP
 * (agent_push_config's kind): POST URL/v1development/profiles, one gzipped
 * ExportProfilesServiceRequest per interval (ingest.h).
 */
#ifndef CFIPROF_AGENT_PUSH_H
#define CFIPROF_AGENT_PUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a pusher sends: Pyroscope's /ingest (pprof), or an OTLP/HTTP receiver. */
enum agent_push_kind { AGENT_PUSH_PYROSCOPE = 0, AGENT_PUSH_OTLP };

struct agent_push_config {
	enum agent_push_kind kind;
	const char *url, *app_name, *labels, *hostname, *tenant, *token_file, *spool_dir;
	double timeout, backoff_max;
	uint64_t spool_max_bytes;
};

struct agent_push_stats {
	uint64_t successes, failures;	 /* HTTP requests */
	uint64_t dropped, dropped_bytes; /* profiles the spool bound (or a 4xx) discarded */
	uint64_t spool_files, spool_bytes;
	uint64_t last_success_unix;
};

struct agent_push;

/* A service name the spool and Pyroscope's name syntax take: 1..PROF_SERVICE_MAX - 1 of PROF_SERVICE_CHARS. */
bool agent_service_name_ok(const char *s);

/* Longest application name with its labels, "APP{hostname=H,k=v}", NUL included. */
#define AGENT_PUSH_NAME_MAX 1024

/*
 * The Pyroscope name of a push: "APP{hostname=H,k=v,...}" into buf.  Returns
 * 0, or -ENAMETOOLONG when it does not fit (buf then holds a truncated name).
 */
int agent_push_name(const char *app_name, const char *hostname, const char *labels, char *buf,
		    size_t len);

/* Copies cfg, picks up what a previous run left in the spool and starts the pusher thread. */
/*
 * Reads the bearer token (trailing blanks trimmed) from a regular file: read
 * at start and at every push, so a rotated token needs no restart.  0, or
 * -errno (-EINVAL: not a regular file; -ENODATA: empty).
 */
int agent_push_read_token(const char *path, char *buf, size_t len);

struct agent_push *agent_push_start(const struct agent_push_config *cfg);
/* New settings (SIGHUP); the spool directory stays the one the pusher started with. */
int agent_push_configure(struct agent_push *ap, const struct agent_push_config *cfg);
/*
 * Spools one interval's profile, pushed under service (NULL: the configured
 * application name); never blocks on the network.  -EINVAL for a service
 * that is not agent_service_name_ok.
 */
int agent_push_enqueue(struct agent_push *ap, uint64_t from_ns, uint64_t until_ns,
		       const char *service, const void *data, size_t len);
struct profile;
/*
 * Spools an interval: gz (p encoded) whole under the configured name, or, by
 * service, one profile per service of p's samples under that service's name:
 * Pyroscope files a push under the service its name gives, whatever the
 * samples' service_name labels say.  Returns the profiles that could not be
 * encoded (logged).
 */
int agent_push_profile(struct agent_push *ap, const struct profile *p, bool by_service,
		       uint64_t from_ns, uint64_t until_ns, const void *gz, size_t gz_len);
void agent_push_get_stats(struct agent_push *ap, struct agent_push_stats *out);
/*
 * Keeps delivering for at most grace seconds (from agent_push_begin_stop's
 * call, if that came first), then stops and frees ap; what is left stays
 * spooled for the next start.  final (if not NULL) gets the last stats.
 */
void agent_push_stop(struct agent_push *ap, double grace, struct agent_push_stats *final);
/* Starts the grace of a stop without waiting: two pushers stopped at once share it. */
void agent_push_begin_stop(struct agent_push *ap, double grace);

#endif
