// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The session's events in the kernel: which BPF programs load, their
 * settings, and attaching each event (perf events on every CPU, probes,
 * tracepoints, off-CPU) with its index as the cookie, with a clear error for
 * an event that is not there.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cfiprof.skel.h"
#include "user/session/bpf_program.h"
#include "user/session/event_attach.h"

/*
 * Hits of probes, tracepoints and off-CPU blocks sampled under a budget: each
 * process's share (--event-budget) and all processes' together, per second:
 * this many, or five processes' shares if more, split among the CPUs.  A
 * process calling a probed function in a tight loop is sampled at its share
 * (the samples weighted for the rest), and the others keep theirs: a sample
 * reserves ~2 KiB of ring buffer, so ten thousand a second is what a consumer
 * on a busy machine keeps up with.
 */
#define EVENT_HITS_PER_SEC 10000

static uint32_t per_slot(uint64_t per_sec, uint64_t share)
{
	uint64_t n = per_sec * EVENT_SLOT_NS / 1000000000ull / (share ? share : 1);

	return n ? (uint32_t)n : 1;
}

/* Budget 0: every hit sampled (record's default), no share of either kind. */
static void set_budgets(struct cfiprof_bpf *skel, uint32_t budget)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t all = (uint64_t)budget * 5;
	uint32_t proc, cpu;

	if (!budget) {
		skel->rodata->event_proc_budget = skel->rodata->event_cpu_budget = 0;
		return;
	}
	proc = per_slot(budget, 1);
	cpu = per_slot(all > EVENT_HITS_PER_SEC ? all : EVENT_HITS_PER_SEC,
		       (uint64_t)(cpus > 0 ? cpus : 1));
	/* a single process on one CPU keeps its whole share however many CPUs share the rest */
	skel->rodata->event_proc_budget = proc;
	skel->rodata->event_cpu_budget = cpu > proc ? cpu : proc;
}

static bool needs_program(const struct event_list *ev, enum event_kind a, enum event_kind b)
{
	return event_list_has(ev, a) || event_list_has(ev, b);
}

static int count_kind(const struct event_list *ev, enum event_kind a, enum event_kind b)
{
	int i, n = 0;

	for (i = 0; i < ev->nr; i++)
		n += ev->ev[i].kind == a || ev->ev[i].kind == b;
	return n;
}

#define TP_PROGS(p)                                                                                \
	{                                                                                          \
		(p)->on_tp0, (p)->on_tp1, (p)->on_tp2, (p)->on_tp3                                 \
	}
#define FENTRY_PROGS(p)                                                                            \
	{                                                                                          \
		(p)->on_fentry0, (p)->on_fentry1, (p)->on_fentry2, (p)->on_fentry3                 \
	}
#define FEXIT_PROGS(p)                                                                             \
	{                                                                                          \
		(p)->on_fexit0, (p)->on_fexit1, (p)->on_fexit2, (p)->on_fexit3                     \
	}

/* kprobe:FUNC is an fentry, kretprobe:FUNC an fexit: its target is part of the load */
static int configure_funcs(struct cfiprof_bpf *skel, const struct event_list *ev)
{
	struct bpf_program *fentry[EVENT_FUNC_SLOTS] = FENTRY_PROGS(&skel->progs);
	struct bpf_program *fexit[EVENT_FUNC_SLOTS] = FEXIT_PROGS(&skel->progs);
	int i, slot = 0, err;

	for (i = 0; i < EVENT_FUNC_SLOTS; i++) {
		bpf_program__set_autoload(fentry[i], false);
		bpf_program__set_autoload(fexit[i], false);
		bpf_program__set_autoattach(fentry[i], false);
		bpf_program__set_autoattach(fexit[i], false);
	}
	for (i = 0; i < ev->nr; i++) {
		const struct event_spec *e = &ev->ev[i];
		struct bpf_program *prog;

		if (e->kind != EVENT_KPROBE && e->kind != EVENT_KRETPROBE)
			continue;
		prog = e->kind == EVENT_KPROBE ? fentry[slot] : fexit[slot];
		skel->rodata->func_event[slot++] = (__u32)i;
		bpf_program__set_autoload(prog, true);
		err = bpf_program__set_attach_target(prog, 0, e->target);
		if (err) {
			fprintf(stderr,
				"cfiprof: %s: no kernel function %s (in the kernel's BTF)\n",
				e->name, e->target);
			return err;
		}
	}
	return 0;
}

int events_configure(struct cfiprof_bpf *skel, const struct loader_opts *o, bool uses_bpf_loop)
{
	const struct event_list *ev = o->events;
	struct bpf_program *tps[EVENT_TP_SLOTS] = TP_PROGS(&skel->progs);
	bool probes = false;
	int i, slot = 0, err;

	if (count_kind(ev, EVENT_TRACEPOINT, EVENT_TRACEPOINT) > EVENT_TP_SLOTS ||
	    count_kind(ev, EVENT_KPROBE, EVENT_KRETPROBE) > EVENT_FUNC_SLOTS) {
		fprintf(stderr, "cfiprof: at most %d tracepoints and %d kprobes in one profile\n",
			EVENT_TP_SLOTS, EVENT_FUNC_SLOTS);
		return -EINVAL;
	}
	for (i = 0; i < ev->nr; i++) {
		if (ev->ev[i].kind == EVENT_TRACEPOINT)
			skel->rodata->tp_event[slot++] = (__u32)i;
		if (ev->ev[i].kind == EVENT_OFF_CPU)
			skel->rodata->offcpu_event = (__u32)i;
		probes |= ev->ev[i].kind != EVENT_PERF;
	}
	if (probes && !uses_bpf_loop) {
		fprintf(stderr, "cfiprof: probes, tracepoints and off-CPU profiles need bpf_loop "
				"(Linux 5.17), not the tail-call walker\n");
		return -EOPNOTSUPP;
	}
	bpf_program__set_autoload(skel->progs.on_uprobe,
				  needs_program(ev, EVENT_UPROBE, EVENT_URETPROBE));
	bpf_program__set_autoload(skel->progs.on_usdt, event_list_has(ev, EVENT_USDT));
	bpf_program__set_autoload(skel->progs.on_switch, event_list_has(ev, EVENT_OFF_CPU));
	err = configure_funcs(skel, ev);
	if (err)
		return err;
	for (i = 0; i < EVENT_TP_SLOTS; i++) {
		bpf_program__set_autoload(tps[i], i < slot);
		bpf_program__set_autoattach(tps[i], false);
	}
	/* attached here, one by one, each with its event's cookie */
	bpf_program__set_autoattach(skel->progs.on_uprobe, false);
	bpf_program__set_autoattach(skel->progs.on_usdt, false);
	bpf_program__set_autoattach(skel->progs.on_switch, false);
	/* a pending sample per blocked thread, as big as a record at --max-frames with Python's */
	skel->rodata->offcpu_value_bytes = sizeof(struct cfi_sample_record) +
					   (MAX_KERNEL_FRAMES + o->max_frames) * sizeof(__u64) +
					   RT_RECORD_BYTES;
	bpf_map__set_value_size(skel->maps.offcpu_pending, skel->rodata->offcpu_value_bytes);
	if (!event_list_has(ev, EVENT_OFF_CPU)) {
		bpf_map__set_max_entries(skel->maps.offcpu_pending, 1);
		bpf_map__set_max_entries(skel->maps.offcpu_blocked, 1);
		bpf_map__set_max_entries(skel->maps.offcpu_unwalked, 1);
	}
	skel->rodata->offcpu_min_ns = o->min_block_ns;
	skel->rodata->offcpu_enabled = event_list_has(ev, EVENT_OFF_CPU);
	set_budgets(skel, o->event_budget);
	/* the perf events of -e pass the budget too; the default sampling is bounded by -F */
	skel->rodata->budget_perf_events = o->explicit_events;
	/* every sample of the session's first event carries cookie 0: no helper call for it */
	for (i = 1; i < ev->nr; i++)
		if (ev->ev[i].kind == EVENT_PERF)
			skel->rodata->perf_cookies = 1;
	/*
	 * Without probes or -e nothing looks a process's share up: its LRU map is
	 * preallocated, and 16k entries took 2.5-8 ms of every start to create.
	 */
	if (!probes && !o->explicit_events)
		bpf_map__set_max_entries(skel->maps.event_proc_slots, 64);
	return 0;
}

/* ---- attaching ---- */

static int keep_link(struct loader *l, struct bpf_link *link)
{
	struct bpf_link **n;

	if (!link)
		return -errno;
	n = realloc(l->ev_links, (size_t)(l->nr_ev_links + 1) * sizeof(*n));
	if (!n) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	l->ev_links = n;
	l->ev_links[l->nr_ev_links++] = link;
	return 0;
}

static bool is_elf(const char *path)
{
	char magic[4] = "";
	FILE *f = fopen(path, "re");
	bool elf = f && fread(magic, 1, 4, f) == 4 && !memcmp(magic, "\177ELF", 4);

	if (f)
		fclose(f);
	return elf;
}

/* Debian's multiarch directory of this machine's libraries */
#if defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#else
#define MULTIARCH "x86_64-linux-gnu"
#endif

/* A library named without a directory (libc, libc.so.6) is looked for where ld.so looks. */
static int resolve_path(const char *name, char *out, size_t len)
{
	static const char *const dirs[] = {
	    "/lib/" MULTIARCH, "/usr/lib/" MULTIARCH, "/lib64", "/usr/lib64", "/lib",
	    "/usr/lib",	       "/usr/local/lib"};
	static const char *const forms[] = {"%s/%s", "%s/%s.so*", "%s/lib%s.so*"};
	struct stat st;
	size_t d, f;

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return stat(name, &st) ? -errno : 0;
	}
	for (f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
		for (d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
			char pattern[512];
			glob_t g;

			size_t k;

			snprintf(pattern, sizeof(pattern), forms[f], dirs[d], name);
			if (glob(pattern, 0, NULL, &g))
				continue;
			/* libc.so is a linker script: the first ELF file */
			for (k = 0; k < g.gl_pathc && !is_elf(g.gl_pathv[k]); k++)
				;
			if (k < g.gl_pathc)
				snprintf(out, len, "%s", g.gl_pathv[k]);
			globfree(&g);
			if (k < g.gl_pathc)
				return 0;
		}
	}
	return -ENOENT;
}

static int attach_uprobe(struct loader *l, const struct event_spec *e, int idx)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = e->target,
		    .retprobe = e->kind == EVENT_URETPROBE, .bpf_cookie = (__u64)idx);
	char path[PATH_MAX];
	int err = resolve_path(e->path, path, sizeof(path));

	if (err) {
		fprintf(stderr, "cfiprof: %s: no file %s%s\n", e->name, e->path,
			strchr(e->path, '/') ? "" : " in the library directories");
		return err;
	}
	err = keep_link(
	    l, bpf_program__attach_uprobe_opts(l->skel->progs.on_uprobe, -1, path, 0, &uo));
	if (err == -ENOENT || err == -ESRCH)
		fprintf(stderr, "cfiprof: %s: no function %s in %s\n", e->name, e->target, path);
	else if (err)
		fprintf(stderr, "cfiprof: %s: cannot attach: %s\n", e->name, strerror(-err));
	return err;
}

/*
 * Attached in every process (the filter is in BPF, and the processes a command
 * forks are probed too): a probe guarded by a semaphore (Python's) does not
 * fire, since libbpf sets semaphores only in the processes it is given.
 */
static int attach_usdt(struct loader *l, const struct event_spec *e, int idx)
{
	LIBBPF_OPTS(bpf_usdt_opts, uo, .usdt_cookie = (__u64)idx);
	char path[PATH_MAX];
	int err = resolve_path(e->path, path, sizeof(path));

	if (err) {
		fprintf(stderr, "cfiprof: %s: no file %s\n", e->name, e->path);
		return err;
	}
	err = keep_link(l, bpf_program__attach_usdt(l->skel->progs.on_usdt, -1, path, e->target,
						    e->target2, &uo));
	if (err == -ENOENT)
		fprintf(stderr, "cfiprof: %s: no USDT probe %s:%s in %s\n", e->name, e->target,
			e->target2, path);
	else if (err)
		fprintf(stderr, "cfiprof: %s: cannot attach: %s\n", e->name, strerror(-err));
	return err;
}

static int attach_func(struct loader *l, const struct event_spec *e, int slot)
{
	struct bpf_program *fentry[EVENT_FUNC_SLOTS] = FENTRY_PROGS(&l->skel->progs);
	struct bpf_program *fexit[EVENT_FUNC_SLOTS] = FEXIT_PROGS(&l->skel->progs);
	int err =
	    keep_link(l, bpf_program__attach(e->kind == EVENT_KPROBE ? fentry[slot] : fexit[slot]));

	if (err)
		fprintf(stderr, "cfiprof: %s: cannot attach to %s: %s\n", e->name, e->target,
			strerror(-err));
	return err;
}

static int attach_tracepoint(struct loader *l, const struct event_spec *e, int slot)
{
	struct bpf_program *tps[EVENT_TP_SLOTS] = TP_PROGS(&l->skel->progs);
	char dir[2 * EVENT_FIELD_LEN + 64];
	struct stat st;
	int err;

	/* the category is checked where tracefs is mounted (raw tracepoints need only the name) */
	snprintf(dir, sizeof(dir), "/sys/kernel/tracing/events/%s", e->target);
	if (!stat("/sys/kernel/tracing/events", &st) && stat(dir, &st)) {
		fprintf(stderr, "cfiprof: %s: no tracepoint category %s\n", e->name, e->target);
		return -ENOENT;
	}
	err = keep_link(l, bpf_program__attach_raw_tracepoint(tps[slot], e->target2));
	if (err == -ENOENT || err == -EINVAL)
		fprintf(stderr, "cfiprof: %s: no such tracepoint\n", e->name);
	else if (err)
		fprintf(stderr, "cfiprof: %s: cannot attach: %s\n", e->name, strerror(-err));
	return err;
}

static int attach_off_cpu(struct loader *l)
{
	int err = keep_link(l, bpf_program__attach(l->skel->progs.on_switch));

	if (err)
		fprintf(stderr, "cfiprof: off-cpu: cannot attach to sched_switch: %s\n",
			strerror(-err));
	return err;
}

static const char *perf_error(const struct event_spec *e, int err)
{
	if (e->hardware && (err == ENOENT || err == EOPNOTSUPP || err == ENODEV))
		return "this machine has no hardware PMU for it (a VM without a virtual PMU?); "
		       "software events such as cpu-clock work";
	return strerror(err);
}

static int attach_perf_event(struct loader *l, const struct event_spec *e, int idx,
			     const struct loader_opts *o)
{
	struct perf_event_attr attr;
	int cpu, attached = 0;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = e->perf_type;
	attr.config = e->perf_config;
	if (o->period) {
		attr.sample_period = o->period;
	} else {
		attr.freq = 1;
		attr.sample_freq = o->freq;
	}
	for (cpu = 0; cpu < l->nr_cpus; cpu++) {
		LIBBPF_OPTS(bpf_perf_event_opts, po, .bpf_cookie = (__u64)idx);
		struct bpf_link *link;
		int fd =
		    (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		int err;

		if (fd < 0) {
			if (errno == ENODEV)
				continue; /* offline CPU */
			err = errno;
			fprintf(stderr, "cfiprof: %s: %s\n", e->name, perf_error(e, err));
			return -err;
		}
		link = bpf_program__attach_perf_event_opts(l->sample_prog, fd, &po);
		/* the link owns fd from here: its destroy closes it (closed again, another
		 * thread's descriptor of the same number went) */
		if (!link) {
			err = errno;
			close(fd);
			fprintf(stderr, "cfiprof: attaching to %s on CPU %d: %s\n", e->name, cpu,
				strerror(err));
			return -err;
		}
		err = keep_link(l, link);
		if (err)
			return err;
		attached++;
	}
	return attached ? 0 : -ENODEV;
}

int events_attach(struct loader *l, const struct loader_opts *o)
{
	const struct event_list *ev = o->events;
	int i, tp_slot = 0, func_slot = 0, err = 0;

	for (i = 0; i < ev->nr && !err; i++) {
		const struct event_spec *e = &ev->ev[i];

		switch (e->kind) {
		case EVENT_PERF:
			err = attach_perf_event(l, e, i, o);
			break;
		case EVENT_UPROBE:
		case EVENT_URETPROBE:
			err = attach_uprobe(l, e, i);
			break;
		case EVENT_KPROBE:
		case EVENT_KRETPROBE:
			err = attach_func(l, e, func_slot++);
			break;
		case EVENT_TRACEPOINT:
			err = attach_tracepoint(l, e, tp_slot++);
			break;
		case EVENT_USDT:
			err = attach_usdt(l, e, i);
			break;
		case EVENT_OFF_CPU:
			err = attach_off_cpu(l);
			break;
		}
	}
	return err;
}

void events_detach(struct loader *l)
{
	int i;

	for (i = 0; i < l->nr_ev_links; i++)
		bpf_link__destroy(l->ev_links[i]);
	/* on_exit's end of a block on_switch did not see: none after on_switch is gone */
	if (l->skel && l->skel->bss)
		l->skel->bss->offcpu_detached = 1;
	free(l->ev_links);
	l->ev_links = NULL;
	l->nr_ev_links = 0;
}
