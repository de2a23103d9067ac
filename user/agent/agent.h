/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's state (user/cli/agent.c runs it) and the end of an interval
 * (user/agent/interval.c): what was sampled, symbolized into a pprof,
 * written and handed to the pusher.
 */
#ifndef CFIPROF_AGENT_H
#define CFIPROF_AGENT_H

#include <stdbool.h>
#include <stdint.h>

#include "user/agent/config.h"
#include "user/agent/metrics.h"
#include "user/agent/push.h"
#include "user/profile/aggregate.h"
#include "user/session/session.h"
#include "user/symbolize/kallsyms.h"
#include "user/symbolize/sym_refusals.h"

struct agent {
	struct agent_config cfg;
	struct session s;
	bool session_started;
	struct ksyms *ks;
	struct agent_push *push; /* --push: Pyroscope's /ingest */
	struct agent_push *otlp; /* --otlp: an OTLP/HTTP receiver */
	struct agent_metrics *metrics;
	struct agent_counters ctr;
	int stats_fd; /* BPF_ENABLE_STATS: stats stay on only while this is open */
	char hostname[256];
	uint64_t from_ns; /* unix time the current interval started */
	double started_unix;
	char metrics_bound[160]; /* the address /metrics listens on; "-" while it cannot */
	double metrics_retry_at; /* monotonic; 0: /metrics is off or listening */
	bool sym_refusal_logged[SYM_REFUSAL_CAUSES];
	bool cgroup_cut_logged;
};

/* Bytes behind the agent's open DWARF handles, and so the largest object it reads lines of. */
#define AGENT_LINES_OPEN_BYTES (128ull << 20)

/*
 * Swaps the session's aggregator for an empty one, waits a bounded time for
 * the samples taken before the end, then writes the interval.
 */
void agent_end_interval(struct agent *a);
/* Symbolizes iv (the interval from a->from_ns to until_ns), writes and pushes it. */
void agent_flush_interval(struct agent *a, struct aggregator *iv, uint64_t until_ns);

#endif
