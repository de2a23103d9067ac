/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's self-metrics in Prometheus text format, served by
 * http_server.c (GET /metrics only, a few connections with one deadline each,
 * loopback by default): sampling and walk counters from the BPF side, tables, processes,
 * the push and the agent's own CPU, RSS and kernel map memory.
 */
#ifndef CFIPROF_AGENT_METRICS_H
#define CFIPROF_AGENT_METRICS_H

#include <stdint.h>
#include <stdio.h>

#include "user/agent/push.h"
#include "user/session/session.h"

/* Written by the main loop with __atomic stores, read by the metrics thread. */
struct agent_counters {
	uint64_t intervals, profile_samples, profile_overflow, profile_malformed;
	uint64_t profile_late; /* samples in an interval after the one they were taken in */
	uint64_t write_errors, files_removed, last_interval_unix;
	uint64_t metrics_bind_failures; /* attempts to listen on --metrics-addr that failed */
	uint64_t services_folded;	/* services past --max-services, merged into "other" */
	uint64_t services_folded_samples;
};

struct agent_metrics_src {
	struct session *s;
	struct agent_push *push; /* NULL when not pushing */
	struct agent_push *otlp; /* NULL without --otlp */
	struct agent_counters *ctr;
	double start;	   /* monotonic seconds */
	double start_unix; /* process_start_time_seconds: when the agent started */
};

struct agent_metrics;

/*
 * Listens on addr ("HOST:PORT", "[V6]:PORT"; port 0 picks one, written to
 * bound).  NULL with the reason in err: the caller logs and retries.
 */
struct agent_metrics *agent_metrics_start(const char *addr, const struct agent_metrics_src *src,
					  char *bound, size_t bound_len, char *err, size_t errlen);
void agent_metrics_stop(struct agent_metrics *m);
/* The /metrics body. */
int agent_metrics_render(const struct agent_metrics_src *src, FILE *f);

#endif
