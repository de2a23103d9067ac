// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The BPF side's life cycle: open, size, load, attach, read counters, close. */
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bpf/lifecycle_abi.h"
#include "cfiprof.skel.h"
#include "common/thread_nice.h"
#include "exit_maps.skel.h"
#include "user/session/bpf_names.h"
#include "user/session/bpf_program.h"
#include "user/session/core_btf.h"
#include "user/session/event_attach.h"
#include "user/session/exit_maps_load.h"
#include "user/session/kfuncs.h"
#include "user/session/privileges.h"
#include "user/symbolize/kallsyms.h"

/*
 * libbpf's advice that is not true here: since Linux 5.11 BPF memory is
 * charged to the memory cgroup, not RLIMIT_MEMLOCK, so "try raising 'ulimit
 * -l'" after a refused map sends the user the wrong way (explain_privilege
 * says what is).
 */
static bool libbpf_misleading(const char *msg)
{
	return strstr(msg, "ulimit -l") || strstr(msg, "RLIMIT_MEMLOCK");
}

/* a load with the cached types failed is loaded again without them: its warnings are not news */
static volatile bool libbpf_muted;

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list args)
{
	char *msg = NULL;
	int n;

	/* verifier logs arrive at WARN level: keep them, drop debug chatter */
	if (level == LIBBPF_DEBUG || libbpf_muted || getenv("CFIPROF_QUIET_LIBBPF"))
		return 0;
	n = vasprintf(&msg, fmt, args);
	if (n < 0)
		return 0;
	if (!libbpf_misleading(msg))
		fputs(msg, stderr);
	free(msg);
	return n;
}

static void explain_privilege(int err)
{
	if (err != -EPERM && err != -EACCES)
		return;
	fprintf(stderr,
		"cfiprof: permission denied loading BPF: run as root, or grant CAP_BPF and "
		"CAP_PERFMON (plus CAP_SYS_PTRACE to read other users' processes); see "
		PRIVILEGES_ADVICE "\n");
}

/* A BPF array's bytes, page-rounded (what mmap maps of it). */
static size_t map_bytes(struct bpf_map *m)
{
	size_t sz = (size_t)bpf_map__value_size(m) * bpf_map__max_entries(m);
	long page = sysconf(_SC_PAGESIZE);

	return (sz + (size_t)page - 1) & ~((size_t)page - 1);
}

static void *map_mmap(struct bpf_map *m, size_t *len)
{
	size_t sz = map_bytes(m);
	void *p;

	p = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(m), 0);
	if (p == MAP_FAILED)
		return NULL;
	*len = sz;
	return p;
}

/*
 * Table load requests per second, all processes together (each costs the
 * loader a read of /proc/PID/maps at least): far more than processes starting
 * and dlopen()ing ask for, far less than a thousand processes mapping code in
 * a loop would.  A refused request is asked again by the process's next sample.
 */
#define TABLE_REQUESTS_PER_SEC 1000

/* The BPF side's share per CPU and per slot: it counts per CPU, without atomics. */
static uint32_t request_budget_per_cpu(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t per_slot = (uint64_t)TABLE_REQUESTS_PER_SEC * REQUEST_SLOT_NS / 1000000000ull;

	if (cpus < 1)
		cpus = 1;
	return per_slot / (uint64_t)cpus ? (uint32_t)(per_slot / (uint64_t)cpus) : 1;
}

/* Whether the running kernel is major.minor or later. */
static bool kernel_at_least(int major, int minor)
{
	struct utsname u;
	int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

/*
 * Whether the perf events run on_sample_entry, whose tail call a later load's
 * on_sample takes (user/session/walk_loads.h): only where a verifier skips
 * the global functions no path reaches (6.8 on), with bpf_loop, and only for
 * perf events: the other events' programs walk with the one load they have.
 */
static bool sample_entry_usable(const struct loader_opts *o, bool uses_bpf_loop)
{
	int i;

	if (o->runtime_walks_first || !uses_bpf_loop)
		return false;
	for (i = 0; i < o->events->nr; i++)
		if (o->events->ev[i].kind != EVENT_PERF)
			return false;
	return kernel_at_least(6, 8);
}

/*
 * Whether on_sample is loaded twice, the runtimes' walks only the second
 * time (bpf/runtimes.bpf.h's runtime_walks_later): the first is then
 * verified without them, which is all a native process's samples wait for.
 */
static bool runtime_walks_later(const struct loader_opts *o, bool uses_bpf_loop)
{
	uint32_t all = 0;

#define RUNTIME_BIT(id, value, name, tag, frames, type) all |= 1u << (id);
	CFI_RUNTIMES(RUNTIME_BIT)
#undef RUNTIME_BIT
	return (o->runtimes_on & all) && sample_entry_usable(o, uses_bpf_loop);
}

/*
 * Whether the first load leaves on_sample out (bpf/sample_entry.bpf.h's
 * walk_later): the command starts without waiting for the walk's
 * verification, its samples meanwhile sent unwalked with a copy of their
 * stack, which needs stack copies (--defer-stack).
 */
static bool walk_later(const struct loader_opts *o, bool uses_bpf_loop)
{
	return o->defer_stack_bytes && sample_entry_usable(o, uses_bpf_loop);
}

/*
 * The program arrays: on_sample behind on_sample_entry when the runtimes'
 * walks come later, the tail-call walker's next part without bpf_loop.
 */
static int set_tail_calls(struct loader *l)
{
	struct cfiprof_bpf *skel = l->skel;
	__u32 zero = 0;
	int fd;

	l->sample_prog = skel->progs.on_sample;
	if (l->walk_later)
		l->sample_prog = skel->progs.on_sample_entry;
	else if (l->runtime_walks_later) {
		fd = bpf_program__fd(skel->progs.on_sample);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.sample_progs), &zero, &fd,
					BPF_ANY)) {
			fprintf(stderr, "cfiprof: cannot set up the sampling program: %s\n",
				strerror(errno));
			return -errno;
		}
		l->sample_prog = skel->progs.on_sample_entry;
	}
	if (!l->uses_bpf_loop) {
		fd = bpf_program__fd(skel->progs.walk_tc);
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.walk_progs), &zero, &fd, BPF_ANY)) {
			fprintf(stderr, "cfiprof: cannot set up the tail-call walker: %s\n",
				strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/* The rows map's capacity in rows, even: two to an element */
static uint32_t rows_even(const struct loader_opts *o)
{
	return (o->rows_max + 1) & ~1u;
}

/*
 * The page index's entries for that many rows.  A hash map's creation
 * initializes a bucket per element whether or not it is preallocated, a
 * cost paid at every start.  A page index entry covers 64 KiB of code and
 * objects hold hundreds to thousands of rows a page (libz 565, libLLVM
 * 1,110, libstdc++ 1,799: cfiprof tables --json), so one entry per 64 rows
 * is 9-28 times what full rows need.
 */
static uint32_t pages_max(const struct loader_opts *o)
{
	uint32_t n = rows_even(o) / 64;

	return n < 4096 ? 4096 : n > 262144 ? 262144 : n;
}

/*
 * The samples' ring: o->ringbuf_bytes when set (--ring-buffer sizes both
 * rings), else SAMPLES_RING_BYTES_PER_CPU a CPU, a power of two from
 * SAMPLES_RING_BYTES to EVENTS_RING_BYTES: small enough to stay in the cache
 * on a small host, a second of 256-byte samples at 999 Hz a CPU.
 */
static uint32_t samples_bytes(const struct loader_opts *o)
{
	long ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t want = (uint64_t)(ncpus > 0 ? ncpus : 1) * SAMPLES_RING_BYTES_PER_CPU;
	uint32_t bytes = SAMPLES_RING_BYTES;

	if (o->ringbuf_bytes)
		return o->ringbuf_bytes;
	while (bytes < want && bytes < EVENTS_RING_BYTES)
		bytes <<= 1;
	return bytes;
}

void loader_early_maps(struct map_early *me, const struct loader_opts *o)
{
	const struct map_early_spec spec[] = {
	    {"rows", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct cfi_row_pair),
	     rows_even(o) / 2, BPF_F_MMAPABLE},
	    {"events", BPF_MAP_TYPE_RINGBUF, 0, 0,
	     o->ringbuf_bytes ? o->ringbuf_bytes : EVENTS_RING_BYTES, 0},
	    {"samples", BPF_MAP_TYPE_RINGBUF, 0, 0, samples_bytes(o), 0},
	    {"rules", BPF_MAP_TYPE_ARRAY, sizeof(__u32), sizeof(struct cfi_rule), RULES_MAX,
	     BPF_F_MMAPABLE},
	    /* bpf/lifecycle_maps.bpf.h: both objects' maps */
	    {"procs", BPF_MAP_TYPE_HASH, sizeof(__u32), sizeof(struct cfi_proc_val), PROCS_MAX,
	     BPF_F_NO_PREALLOC},
	    /* 64K buckets to initialize at the default rows */
	    {"pages", BPF_MAP_TYPE_HASH, sizeof(struct cfi_page_key), sizeof(struct cfi_page_val),
	     pages_max(o), BPF_F_NO_PREALLOC},
	    {"counters", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(__u64), CNT_MAX, 0},
	    {"exit_maps", BPF_MAP_TYPE_RINGBUF, 0, 0, EXIT_MAPS_RING_BYTES, 0},
	    {"exit_maps_sent", BPF_MAP_TYPE_PERCPU_ARRAY, sizeof(__u32), sizeof(__u32), 1, 0},
	    {"pid_times", BPF_MAP_TYPE_LRU_HASH, sizeof(__u32), sizeof(struct pid_times),
	     PID_TIMES_MAX, 0},
	};

	map_early_start(me, spec, (int)(sizeof(spec) / sizeof(spec[0])));
}

/*
 * The exit mappings' object: a failure ends the start only where the cached
 * types may be why (loaded again without them); else sampling goes on without
 * exit lists (said), on_exit keeping their times (LRU).
 */
static int exit_maps_open(struct loader *l, const char *core_path)
{
	l->exit_skel = exit_maps_load(l->skel->obj, core_path);
	if (l->exit_skel)
		return 0;
	if (core_path)
		return -errno;
	fprintf(stderr,
		"cfiprof: the exiting processes' mappings program could not be loaded (%s): "
		"the deferred samples of a process that exits are not finished\n",
		strerror(errno));
	return 0;
}

static int loader_open_once(struct loader *l, const struct loader_opts *o, const char *core_path)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = core_path);
	struct cfiprof_bpf *skel;
	int err;

	memset(l, 0, sizeof(*l));
	l->core.dir_fd = l->core.file_fd = -1;
	skel = cfiprof_bpf__open_opts(&oo);
	if (!skel) {
		err = -errno;
		fprintf(stderr, "cfiprof: cannot open the BPF object: %s\n", strerror(errno));
		return err;
	}
	l->skel = skel;
	l->uses_bpf_loop =
		!o->force_tail_calls &&
		libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL) == 1;
	skel->rodata->filter_enabled = o->filter_pids;
	skel->rodata->follow_children = o->follow_children;
	skel->rodata->filter_cgroup = o->cgroup_fd >= 0;
	skel->rodata->collect_kernel = o->collect_kernel;
	skel->rodata->use_bpf_loop = l->uses_bpf_loop;
	skel->rodata->have_find_vma =
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_find_vma, NULL) == 1;
	skel->rodata->runtimes_on = o->runtimes_on;
	l->runtime_walks_later = runtime_walks_later(o, l->uses_bpf_loop);
	skel->rodata->runtime_walks_later = l->runtime_walks_later;
	l->walk_later = walk_later(o, l->uses_bpf_loop);
	skel->rodata->walk_later = l->walk_later;
	bpf_program__set_autoload(skel->progs.on_sample_entry,
				  l->runtime_walks_later || l->walk_later);
	bpf_program__set_autoload(skel->progs.on_sample, !l->walk_later);
	skel->rodata->max_user_frames = o->max_frames;
	skel->rodata->defer_stack_bytes = o->defer_stack_bytes;
	skel->rodata->defer_bytes_per_sec = o->defer_bytes_per_sec;
	/* new mappings (dlopen) should load within a few ms, not wait out a long rate limit */
	skel->rodata->request_interval_ns = 10 * 1000 * 1000;
	skel->rodata->request_budget = request_budget_per_cpu();
	l->rows_max = rows_even(o);
	l->rules_max = bpf_map__max_entries(skel->maps.rules);
	l->pages_max = pages_max(o);
	bpf_map__set_max_entries(skel->maps.pages, l->pages_max);
	/* rows and rules are written by user space through mmap: no syscall per row */
	bpf_map__set_max_entries(skel->maps.rows, l->rows_max / 2);
	bpf_map__set_map_flags(skel->maps.rows, bpf_map__map_flags(skel->maps.rows) | BPF_F_MMAPABLE);
	bpf_map__set_map_flags(skel->maps.rules,
			       bpf_map__map_flags(skel->maps.rules) | BPF_F_MMAPABLE);
	/*
	 * Hash maps filled only from user space need no preallocation: the page
	 * index alone would pin 20 MiB whatever is loaded.
	 */
	bpf_map__set_map_flags(skel->maps.pages,
			       bpf_map__map_flags(skel->maps.pages) | BPF_F_NO_PREALLOC);
	bpf_map__set_map_flags(skel->maps.procs,
			       bpf_map__map_flags(skel->maps.procs) | BPF_F_NO_PREALLOC);
	if (o->ringbuf_bytes) {
		bpf_map__set_max_entries(skel->maps.events, o->ringbuf_bytes);
		/* a wakeup must come before the ring is full */
		if (skel->rodata->wakeup_bytes > o->ringbuf_bytes / 8)
			skel->rodata->wakeup_bytes = o->ringbuf_bytes / 8;
	}
	l->samples_bytes = samples_bytes(o);
	l->events_bytes = bpf_map__max_entries(skel->maps.events);
	bpf_map__set_max_entries(skel->maps.samples, l->samples_bytes);
	skel->rodata->samples_wakeup_bytes = l->samples_bytes / 8;
	/*
	 * The tail-call walker is most of what the verifier has to prove (its
	 * 32-frame unrolled body): not loaded when bpf_loop walks.
	 */
	if (l->uses_bpf_loop)
		bpf_program__set_autoload(skel->progs.walk_tc, false);
	/* an exiting process's mappings, for its deferred samples: needs the VMA iterator */
	l->exit_maps = o->defer_stack_bytes && exit_maps_supported();
	skel->rodata->exit_maps_on = l->exit_maps;
	err = events_configure(skel, o, l->uses_bpf_loop);
	if (err)
		goto fail;
	if (o->early)
		map_early_hand_over(o->early, skel->obj);
	libbpf_muted = core_path != NULL;
	err = kfuncs_patch_object(skel->obj);
	err = err ? err : cfiprof_bpf__load(skel);
	libbpf_muted = false;
	/*
	 * After this load, not beside it: another BPF load at the same time
	 * made both slower than the two in turn.
	 */
	if (!err && l->exit_maps)
		err = exit_maps_open(l, core_path);
	/* loaded again without the cache, which says what went wrong if anything else did */
	if (err && core_path)
		goto fail;
	if (err && event_list_has(o->events, EVENT_KPROBE) + event_list_has(o->events, EVENT_KRETPROBE)) {
		fprintf(stderr, "cfiprof: kprobe / kretprobe: this kernel refused a BPF program on a "
				"kernel function (fentry / fexit: %s); tracepoints and uprobes may still "
				"work\n", strerror(-err));
		goto fail;
	}
	if (err) {
		fprintf(stderr, "cfiprof: loading the BPF program failed: %s\n", strerror(-err));
		explain_privilege(err);
		goto fail;
	}
	err = set_tail_calls(l);
	if (err)
		goto fail;
	/* the rows as far as they are used: the whole map mapped would all be resident */
	err =
	    map_window_init(&l->rows_win, bpf_map__fd(skel->maps.rows), map_bytes(skel->maps.rows));
	l->rules_mem = map_mmap(skel->maps.rules, &l->rules_len);
	l->target_bits = map_mmap(skel->maps.target_bits, &l->target_bits_len);
	if (err || !l->rules_mem || !l->target_bits) {
		err = err ? err : -errno;
		fprintf(stderr, "cfiprof: cannot mmap the table maps: %s\n", strerror(-err));
		goto fail;
	}
	if (o->cgroup_fd >= 0) {
		__u32 zero = 0;

		if (bpf_map_update_elem(bpf_map__fd(skel->maps.target_cgroup), &zero, &o->cgroup_fd,
					BPF_ANY)) {
			err = -errno;
			fprintf(stderr, "cfiprof: cannot set the cgroup filter: %s\n", strerror(errno));
			goto fail;
		}
	}
	l->procs_fd = bpf_map__fd(skel->maps.procs);
	l->runtime_procs_fd = bpf_map__fd(skel->maps.runtime_procs);
	l->mappings_fd = bpf_map__fd(skel->maps.mappings);
	l->pages_fd = bpf_map__fd(skel->maps.pages);
	l->events_fd = bpf_map__fd(skel->maps.events);
	l->samples_fd = bpf_map__fd(skel->maps.samples);
	l->exit_maps_fd = bpf_map__fd(skel->maps.exit_maps);
	l->counters_fd = bpf_map__fd(skel->maps.counters);
	l->offcpu_unwalked_fd = bpf_map__fd(skel->maps.offcpu_unwalked);
	l->nr_cpus = libbpf_num_possible_cpus();
	if (l->nr_cpus <= 0) {
		err = -EINVAL;
		goto fail;
	}
	return 0;
fail:
	loader_close(l);
	return err;
}

static void *core_btf_fill(void *arg)
{
	struct loader *l = arg;

	thread_nice(BACKGROUND_NICE);
	__atomic_store_n(&l->core_written, core_btf_write(&l->core), __ATOMIC_RELEASE);
	return NULL;
}

/*
 * The later loads' thread, started at once: the walk is verified while the
 * start goes on and the command runs.  Without it the perf events would
 * never walk: the start fails.  core.file_fd changes no more, and no thread
 * writes it when the types' cache was used.
 */
static int loader_start_walk_loads(struct loader *l)
{
	if (!l->walk_later && !l->runtime_walks_later)
		return 0;
	l->walks = walk_loads_start(l->skel, l->core_used ? l->core.file_fd : -1, l->walk_later);
	if (l->walks)
		return 0;
	if (l->walk_later) {
		fprintf(stderr, "cfiprof: cannot start loading the sampling walk: out of memory "
				"or threads\n");
		return -ENOMEM;
	}
	fprintf(stderr, "cfiprof: cannot start loading the language runtimes' walks: their "
			"frames are not read\n");
	return 0;
}

int loader_open(struct loader *l, const struct loader_opts *o)
{
	struct rlimit rl = {RLIM_INFINITY, RLIM_INFINITY};
	struct core_btf core;
	size_t elf_len[2];
	const void *elf[2] = {cfiprof_bpf__elf_bytes(&elf_len[0]),
			      exit_maps_bpf__elf_bytes(&elf_len[1])};
	int err;

	libbpf_set_print(libbpf_quiet);
	/* kernels before 5.11 charge BPF memory to RLIMIT_MEMLOCK */
	setrlimit(RLIMIT_MEMLOCK, &rl);
	core_btf_find(&core, elf, elf_len, 2);
	err = loader_open_once(l, o, core.custom[0] ? core.custom : NULL);
	if (err && core.custom[0]) {
		fprintf(stderr,
			"cfiprof: the cached kernel types (%s) could not be used: "
			"removed, loading with the kernel's BTF\n",
			core.name);
		core_btf_drop(&core);
		err = loader_open_once(l, o, NULL);
	}
	l->core = core;
	/* each object holds descriptors of its own of the maps it was handed */
	if (o->early)
		map_early_free(o->early);
	/* a cache others can write to could make BPF read the wrong fields: said every time */
	if (core.refused)
		fprintf(stderr, "cfiprof: not using the kernel types' cache: %s\n", core.refused);
	if (err) {
		core_btf_close(&l->core);
		return err;
	}
	l->core_used = l->core.custom[0];
	l->core_written = -EAGAIN;
	/* written beside the session, from this object's types, for the next start */
	if (!l->core_used && l->core.name[0] &&
	    !pthread_create(&l->core_thread, NULL, core_btf_fill, l))
		l->core_thread_on = true;
	return loader_start_walk_loads(l);
}

int loader_attach_tracepoints(struct loader *l)
{
	int err;

	err = cfiprof_bpf__attach(l->skel);
	if (!err && l->exit_skel)
		err = exit_maps_bpf__attach(l->exit_skel);

	if (err)
		fprintf(stderr, "cfiprof: attaching exec/exit tracepoints failed: %s\n",
			strerror(-err));
	return err;
}

int loader_attach_perf(struct loader *l, const struct loader_opts *o)
{
	int err = events_attach(l, o);

	if (err == -EACCES || err == -EPERM)
		explain_privilege(-EPERM);
	return err;
}

void loader_detach_perf(struct loader *l)
{
	events_detach(l);
}

void loader_want_runtime_walks(struct loader *l)
{
	walk_loads_want_runtimes(l->walks);
}

struct walk_loads *loader_walk_loads(const struct loader *l)
{
	return l->walks;
}

void loader_close(struct loader *l)
{
	if (l->core_thread_on)
		pthread_join(l->core_thread, NULL);
	core_btf_close(&l->core);
	loader_detach_perf(l);
	exit_maps_bpf__destroy(l->exit_skel);
	/* after the tracker's thread, the one that may start it, has ended */
	walk_loads_stop(l->walks);
	map_window_free(&l->rows_win);
	if (l->rules_mem)
		munmap(l->rules_mem, l->rules_len);
	if (l->target_bits)
		munmap(l->target_bits, l->target_bits_len);
	cfiprof_bpf__destroy(l->skel);
	memset(l, 0, sizeof(*l));
}

int loader_read_counters(struct loader *l, uint64_t out[CNT_MAX])
{
	uint64_t *vals = calloc((size_t)l->nr_cpus, sizeof(uint64_t));
	uint32_t id;
	int cpu;

	if (!vals)
		return -ENOMEM;
	for (id = 0; id < CNT_MAX; id++) {
		out[id] = 0;
		if (bpf_map_lookup_elem(l->counters_fd, &id, vals))
			continue;
		for (cpu = 0; cpu < l->nr_cpus; cpu++)
			out[id] += vals[cpu];
	}
	free(vals);
	return 0;
}

int loader_add_target(struct loader *l, uint32_t pid)
{
	if (pid >= TARGET_PID_LIMIT || !l->target_bits)
		return -EINVAL;
	/* atomic: BPF's on_fork and on_free change other bits of the same word */
	__atomic_fetch_or(&l->target_bits[pid / 64], 1ULL << (pid % 64), __ATOMIC_RELAXED);
	return 0;
}

int loader_prog_stats(struct loader *l, uint64_t *run_ns, uint64_t *run_cnt)
{
	__typeof__(l->skel->progs) *p = &l->skel->progs;
	/* sched_switch runs on every switch: its time counts, its runs are not samples */
	struct bpf_program *progs[] = {
	    p->on_sample_entry, p->on_sample,  p->walk_tc,    p->on_uprobe, p->on_usdt,
	    p->on_tp0,		p->on_tp1,     p->on_tp2,     p->on_tp3,    p->on_fentry0,
	    p->on_fentry1,	p->on_fentry2, p->on_fentry3, p->on_fexit0, p->on_fexit1,
	    p->on_fexit2,	p->on_fexit3,  p->on_switch};
	size_t i;

	*run_ns = *run_cnt = 0;
	for (i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (bpf_program__fd(progs[i]) < 0)
			continue; /* walk_tc is not loaded when bpf_loop walks */
		if (bpf_obj_get_info_by_fd(bpf_program__fd(progs[i]), &info, &len))
			return -errno;
		*run_ns += info.run_time_ns;
		/* a tail call's time and run are its caller's: on_sample's, on_sample_entry's */
		if (progs[i] != p->walk_tc && progs[i] != p->on_switch)
			*run_cnt += info.run_cnt;
	}
	return 0;
}

int loader_ask_kernel_names(struct loader *l, struct ksyms *k, char *err, size_t errlen)
{
	size_t len = 0;
	void *io = map_mmap(l->skel->maps.ksym_io, &len);

	if (!io) {
		snprintf(err, errlen, "kernel symbols: cannot map the kernel's answers: %s",
			 strerror(errno));
		return -1;
	}
	if (!ksyms_ask_kernel(k, bpf_program__fd(l->skel->progs.ksym_names), io, len, err, errlen))
		return 0;
	munmap(io, len);
	return -1;
}

int loader_name_programs(struct loader *l, struct ksyms *k)
{
	struct bpf_btf_cache cache = {0};
	struct bpf_program *prog;
	int added = 0;

	bpf_object__for_each_program(prog, l->skel->obj)
	{
		if (bpf_program__fd(prog) >= 0)
			added += bpf_names_add_fd(bpf_program__fd(prog), k, &cache);
	}
	bpf_btf_cache_free(&cache);
	if (added)
		ksyms_sort(k);
	return added;
}
