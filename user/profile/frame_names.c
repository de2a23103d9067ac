// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Turns PCs into function names for every output format. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "user/profile/frame_names.h"
#include "user/symbolize/kallsyms.h"
#include "user/symbolize/perfmap.h"
#include "user/symbolize/sym_cache.h"

const char *stop_reason_name(int reason)
{
	static const char *const names[STOP_REASON_MAX] = {
#define CFI_STOP_NAME(e, v, name, walkable) [e] = name,
	    CFI_STOP_REASONS(CFI_STOP_NAME)
#undef CFI_STOP_NAME
	};
	/* a few at once: one message may name two reasons */
	static __thread char unknown[4][24];
	static __thread unsigned int next;
	char *buf;

	if (reason >= 0 && reason < STOP_REASON_MAX)
		return names[reason];
	/* a recording of a newer cfiprof: its reason is carried, not refused */
	buf = unknown[next++ % 4];
	snprintf(buf, sizeof(unknown[0]), "unknown(%d)", reason);
	return buf;
}

bool stop_reason_walkable(int reason)
{
	static const bool walkable[STOP_REASON_MAX] = {
#define CFI_STOP_WALKABLE(e, v, name, w) [e] = w,
	    CFI_STOP_REASONS(CFI_STOP_WALKABLE)
#undef CFI_STOP_WALKABLE
	};

	return reason < 0 || reason >= STOP_REASON_MAX || walkable[reason];
}

bool frame_is_bpf_glue(const char *name)
{
	static const char *const prefixes[] = {"bpf_prog_",    "bpf_trace_run",	  "__bpf_trace_",
					       "__traceiter_", "bpf_trampoline_", "0x"};
	size_t i;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

const char *unwalked_frame_name(int cause)
{
	static const char *const names[UNWALKED_MAX] = {
	    [UNWALKED_BUDGET] = "[not walked: event budget]",
	    [UNWALKED_FULL] = "[not walked: too many threads blocked]",
	    [UNWALKED_LOST] = "[not sent: ring buffer full]",
	};

	if (cause <= 0 || cause >= UNWALKED_MAX)
		return "[not walked]";
	return names[cause];
}

void frame_namer_init(struct frame_namer *fn, struct proc_tracker *pt, struct ksyms *ks)
{
	memset(fn, 0, sizeof(*fn));
	fn->pt = pt;
	fn->ksyms = ks;
}

void frame_namer_free(struct frame_namer *fn)
{
	int i;

	for (i = 0; i < fn->nr_perfmaps; i++)
		perfmap_free(fn->perfmaps[i].pm);
	fn->nr_perfmaps = 0;
}

static struct perfmap *perfmap_for(struct frame_namer *fn, uint32_t pid)
{
	struct proc_identity id = {0};
	char path[64];
	bool known;
	int i, n;

	for (i = 0; i < fn->nr_perfmaps; i++) {
		if (fn->perfmaps[i].pid == pid)
			return fn->perfmaps[i].pm;
	}
	if (fn->nr_perfmaps == (int)(sizeof(fn->perfmaps) / sizeof(fn->perfmaps[0])))
		return NULL;
	known = fn->pt && proc_tracker_identity(fn->pt, pid, &id);
	/* the JIT names its map by its pid as it sees it, inside its PID namespace */
	n = perfmap_path(path, sizeof(path), NULL,
			 known && id.ns_pid && !fn->perfmaps_by_path ? (int)id.ns_pid : (int)pid);
	if (n < 0 || (size_t)n >= sizeof(path))
		return NULL;
	fn->perfmaps[fn->nr_perfmaps].pid = pid;
	if (fn->perfmaps_by_path) {
		fn->perfmaps[fn->nr_perfmaps].pm = perfmap_new(path);
	} else {
		struct perfmap_owner o = {.pid = pid, .uid = id.uid, .same_tmp = id.same_tmp};

		fn->perfmaps[fn->nr_perfmaps].pm = perfmap_new_proc(path, &o);
	}
	return fn->perfmaps[fn->nr_perfmaps++].pm;
}

int sym_format_frame(char *buf, size_t len, const char *obj_basename, const char *name,
		     uint64_t obj_offset)
{
	const char *slash;

	if (name)
		return snprintf(buf, len, "%s", name);
	if (!obj_basename || !obj_basename[0])
		return snprintf(buf, len, "[unknown]");
	/* Accept a full path too: a frame names the file, not where it lives. */
	slash = strrchr(obj_basename, '/');
	if (slash && slash[1])
		obj_basename = slash + 1;
	return snprintf(buf, len, "%s+0x%" PRIx64, obj_basename, obj_offset);
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

const char *frame_name_user(struct frame_namer *fn, uint32_t pid, uint32_t gen, uint64_t pc, bool leaf,
			    char *buf, size_t len)
{
	uint64_t lookup = leaf || pc == 0 ? pc : pc - 1;
	struct map_set *ref;
	const struct proc_mapping *m = proc_tracker_mapping_for(fn->pt, pid, gen, NULL, lookup, &ref);
	const char *name = frame_name_mapped(fn, pid, m, pc, leaf, buf, len);

	map_set_put(ref);
	return name;
}

const char *frame_name_mapped(struct frame_namer *fn, uint32_t pid, const struct proc_mapping *m,
			      uint64_t pc, bool leaf, char *buf, size_t len)
{
	uint64_t lookup = leaf || pc == 0 ? pc : pc - 1, off;
	const char *name = NULL;
	struct perfmap *pm;

	if (!m) {
		pm = perfmap_for(fn, pid);
		if (pm && !perfmap_lookup(pm, lookup, &name, &off)) {
			snprintf(buf, len, "%s", name);
			return buf;
		}
		snprintf(buf, len, "[unknown]");
		return buf;
	}
	if (m->sym && !sym_obj_lookup(m->sym, lookup - m->bias, &name, &off)) {
		snprintf(buf, len, "%s", name);
		return buf;
	}
	/*
	 * Not every caller frame holds a return address: the kernel pushes the
	 * signal trampoline's address itself, and pc - 1 is then padding before
	 * the function.  Only then, and only at a symbol's first byte, use pc.
	 */
	if (m->sym && lookup != pc && !sym_obj_lookup(m->sym, pc - m->bias, &name, &off) &&
	    off == 0) {
		snprintf(buf, len, "%s", name);
		return buf;
	}
	/* no symbol, but an FDE: named by the start of its function, one name for all of it */
	if (m->sym && !sym_obj_function_start(m->sym, lookup - m->bias, &off)) {
		sym_format_frame(buf, len, base_name(m->path), NULL, off);
		return buf;
	}
	if (!m->sym) {
		/* anonymous executable memory: a JIT may describe it in perf-PID.map */
		pm = perfmap_for(fn, pid);
		if (pm && !perfmap_lookup(pm, lookup, &name, &off)) {
			snprintf(buf, len, "%s", name);
			return buf;
		}
	}
	sym_format_frame(buf, len, base_name(m->path), NULL, lookup - m->bias);
	return buf;
}

int kernel_names_add(struct kernel_names *kn, uint64_t pc, const char *name)
{
	if (kernel_names_find(kn, pc))
		return 0;
	if (VEC_RESERVE(kn->v, kn->n, kn->cap, 16))
		return -1;
	kn->v[kn->n].name = strdup(name);
	if (!kn->v[kn->n].name)
		return -1;
	kn->v[kn->n++].pc = pc;
	return 0;
}

/* A handful of BPF program frames at most: a linear scan. */
const char *kernel_names_find(const struct kernel_names *kn, uint64_t pc)
{
	size_t i;

	for (i = 0; kn && i < kn->n; i++) {
		if (kn->v[i].pc == pc)
			return kn->v[i].name;
	}
	return NULL;
}

void kernel_names_free(struct kernel_names *kn)
{
	size_t i;

	for (i = 0; i < kn->n; i++)
		free(kn->v[i].name);
	free(kn->v);
	memset(kn, 0, sizeof(*kn));
}

bool kernel_name_is_transient(const char *name)
{
	size_t n = strlen(name);

	return n >= 5 && !strcmp(name + n - 5, "[bpf]");
}

const char *frame_name_kernel(struct frame_namer *fn, uint64_t pc, char *buf, size_t len)
{
	const char *name = kernel_names_find(fn->saved_kernel, pc);
	uint64_t off;

	if (name) {
		snprintf(buf, len, "%s", name);
		return buf;
	}
	/* a report's BPF names are the recording's: today's programs are others */
	if (fn->ksyms && !ksyms_lookup(fn->ksyms, pc, &name, &off) &&
	    !(fn->saved_kernel && kernel_name_is_transient(name))) {
		snprintf(buf, len, "%s", name);
		return buf;
	}
	snprintf(buf, len, "0x%" PRIx64, pc);
	return buf;
}
