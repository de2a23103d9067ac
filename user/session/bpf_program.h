/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Loads the BPF skeleton, sizes its maps, opens perf events on every CPU and attaches. */
#ifndef CFIPROF_BPF_PROGRAM_H
#define CFIPROF_BPF_PROGRAM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"
#include "common/map_window.h"
#include "user/session/core_btf.h"
#include "user/session/event_spec.h"
#include "user/session/map_early.h"
#include "user/session/walk_loads.h"

struct loader_opts {
	bool filter_pids;      /* only tgids set by loader_add_target */
	bool follow_children;  /* ... and the processes they fork */
	bool collect_kernel;   /* kernel stacks */
	bool force_tail_calls; /* do not use bpf_loop even if the kernel has it */
	uint32_t runtimes_on;  /* runtimes whose frames BPF reads, a bit each (1 << id) */
	bool runtime_walks_first; /* their walks verified before sampling starts, not during */
	uint32_t max_frames;   /* user frames per sample */
	uint32_t freq;	       /* samples per second per CPU (perf events without a period) */
	uint64_t period;       /* perf events: a sample every this many events (0: freq) */
	const struct event_list *events; /* what to sample stacks on; index = record's event */
	bool explicit_events;  /* -e: its perf events pass the event budget too */
	uint64_t min_block_ns; /* off-CPU: shorter blocks are counted, not sampled */
	uint32_t event_budget; /* probe / tracepoint / off-CPU hits sampled per process per second
				  (0: all) */
	uint32_t rows_max;     /* capacity of the rows map */
	uint32_t ringbuf_bytes;
	uint32_t defer_stack_bytes;    /* stack copied per tables-pending sample (0: off) */
	uint64_t defer_bytes_per_sec; /* budget for those copies */
	int cgroup_fd; /* >= 0: only tasks in this cgroup v2 directory, or below */
	struct map_early *early; /* the largest maps, being created (loader_early_maps) */
};

struct ksyms;
struct exit_maps_bpf;

struct loader {
	struct cfiprof_bpf *skel;
	int nr_cpus;
	struct bpf_link **ev_links;
	int nr_ev_links;
	struct map_window rows_win; /* the rows map (struct cfi_row), mapped as far as used */
	struct cfi_rule *rules_mem;
	size_t rules_len;
	uint64_t *target_bits; /* the pid filter's bitmap, mapped (target_bits) */
	size_t target_bits_len;
	uint32_t rows_max, rules_max, pages_max;
	bool uses_bpf_loop;
	bool exit_maps; /* on_exit_maps loaded: exiting processes send their mappings */
	struct exit_maps_bpf *exit_skel; /* its object (exit_maps_load.h) */
	struct bpf_program *sample_prog; /* what the perf events run */
	/* on_sample loaded later (walk_loads.h): the perf events run on_sample_entry */
	bool walk_later;
	/* on_sample loaded without the runtimes' walks; a later load has them */
	bool runtime_walks_later;
	struct walk_loads *walks; /* the later loads, when either */
	int procs_fd, mappings_fd, pages_fd, events_fd, counters_fd;
	int samples_fd;			      /* ring buffer of the perf events' walked samples */
	uint32_t samples_bytes, events_bytes; /* the two rings' sizes */
	int exit_maps_fd; /* ring buffer of RECORD_MAPS_ENTRY / _END */
	int runtime_procs_fd;	/* the processes running a language runtime (bpf/runtimes.bpf.h) */
	int offcpu_unwalked_fd; /* off-CPU time without a stack (user/session/offcpu_unwalked.h) */
	struct core_btf core;	/* the kernel's types for CO-RE, cached (core_btf.h) */
	bool core_used;		/* loaded with them */
	bool core_thread_on;
	pthread_t core_thread; /* writing them for the next start */
	int core_written;      /* its result: 0, -errno; -EAGAIN while it runs */
};

/*
 * Starts creating the largest maps (the rows array, the sample ring, the rule
 * dictionary) as loader_open will size them from o: a thread's work while
 * the start does its own, handed to loader_open by o->early.
 */
void loader_early_maps(struct map_early *me, const struct loader_opts *o);
/* Opens and loads; on failure prints a clear reason (privilege, verifier) and returns < 0. */
int loader_open(struct loader *l, const struct loader_opts *o);
/* Tracepoints (exec/exit) now; the events (perf events on every online CPU, probes) next. */
int loader_attach_tracepoints(struct loader *l);
int loader_attach_perf(struct loader *l, const struct loader_opts *o);
/*
 * The runtimes' walks verified from now on, when loader_open left them for
 * later: from any thread.
 */
void loader_want_runtime_walks(struct loader *l);
/* The later loads (NULL: none, or they could not start). */
struct walk_loads *loader_walk_loads(const struct loader *l);
void loader_detach_perf(struct loader *l);
void loader_close(struct loader *l);
/* Sums the per-CPU counters. */
int loader_read_counters(struct loader *l, uint64_t out[CNT_MAX]);
int loader_add_target(struct loader *l, uint32_t pid);
/*
 * Adds cfiprof's own programs to @k as kallsyms names them ("bpf_prog_TAG_FUNC
 * [bpf]"): they run in every syscall-exit stack, and may have been loaded
 * after kallsyms was read. Returns the number of functions added.
 */
int loader_name_programs(struct loader *l, struct ksyms *k);

/* k asks the kernel for the names of addresses it lacks (ksyms_ask_kernel): 0 or -1 */
int loader_ask_kernel_names(struct loader *l, struct ksyms *k, char *err, size_t errlen);
/* Run time of the sampling programs (needs kernel.bpf_stats_enabled=1). */
int loader_prog_stats(struct loader *l, uint64_t *run_ns, uint64_t *run_cnt);

#endif
