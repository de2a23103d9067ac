// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Compiled Java frames named from their Method*; see hotspot_names.h. */
#include "user/runtimes/hotspot/hotspot_names.h"
#include "user/runtimes/runtime_parts.h"
#include "user/runtimes/hotspot/hotspot_codecache.h"
#include "user/runtimes/hotspot/hotspot_jit.h"
#include "user/runtimes/target_mem.h"

static void proc_of(void *ctx, uint32_t pid, struct code_proc *out)
{
	const struct runtime_parts *parts = ctx;
	struct cfi_hotspot_proc val;

	if (runtime_detect_lookup(parts->detect, pid, &val, sizeof(val)))
		out->offsets = hotspot_layout_at(val.layout);
}

/* compiled frames whose nmethod was another compile when read: not named (counted) */
static uint64_t stale;

uint64_t hotspot_names_stale(void)
{
	return __atomic_load_n(&stale, __ATOMIC_RELAXED);
}

/*
 * The Method* of the compiled frame whose unit's code is code (the nmethod
 * and its compile id, HOTSPOT_CODE_ID_SHIFT): 0 when the nmethod there is
 * no longer that compile (freed, its memory another's: stale, counted) or
 * cannot be read.
 */
static uint64_t compiled_method(const struct hotspot_layout *l, uint32_t pid, uint64_t code)
{
	uint64_t nm = code & ((1ull << HOTSPOT_CODE_ID_SHIFT) - 1), method = 0;
	uint8_t id[8] = {0};
	int64_t now;

	if (l->nm_compile_id.size > sizeof(id) ||
	    target_read(pid, nm + l->nm_compile_id.off, id, l->nm_compile_id.size) ||
	    hotspot_get(id, sizeof(id),
			(struct hotspot_field){.off = 0,
					       .size = l->nm_compile_id.size,
					       .flags = l->nm_compile_id.flags},
			&now) ||
	    target_read(pid, nm + l->nm_method.off, &method, sizeof(method)))
		return 0;
	if ((uint16_t)now != (uint16_t)(code >> HOTSPOT_CODE_ID_SHIFT)) {
		__atomic_fetch_add(&stale, 1, __ATOMIC_RELAXED);
		return 0;
	}
	return method;
}

/*
 * The Method* of the interpreted frame whose unit's code is code (the
 * Method* and its digest at the sample, bpf/hotspot_abi.h): 0 when the
 * Method there is no longer the one sampled (its class unloaded, another
 * method made in its memory: stale, counted) or cannot be read.
 */
static uint64_t interpreted_method(const struct hotspot_layout *l, uint32_t pid, uint64_t code)
{
	uint64_t method = code & ((1ull << HOTSPOT_CODE_ID_SHIFT) - 1);
	uint16_t now = hotspot_method_digest_now(pid, l, method);

	if (!now)
		return 0;
	if (now != (uint16_t)(code >> HOTSPOT_CODE_ID_SHIFT)) {
		__atomic_fetch_add(&stale, 1, __ATOMIC_RELAXED);
		return 0;
	}
	return method;
}

static void read_name(const struct code_proc *proc, uint32_t pid, uint64_t code, uint8_t owner,
		      struct code_name *out)
{
	struct hotspot_method_name n;

	if (owner == HOTSPOT_FRAME_COMPILED)
		code = proc->offsets ? compiled_method(proc->offsets, pid, code) : 0;
	else if (owner == HOTSPOT_FRAME_INTERPRETED)
		code = proc->offsets ? interpreted_method(proc->offsets, pid, code) : 0;
	else
		code = 0;
	/* a Method* of a class unloaded since is memory of anything: read as any pointer */
	if (!code || !proc->offsets || hotspot_method_name(pid, proc->offsets, code, &n))
		return;
	/* an overload's descriptor, as jcmd and the JVM's own tools print it: "Busy.fib(I)I" */
	if (n.overloaded) {
		size_t len = strlen(n.name);

		snprintf(n.name + len, sizeof(n.name) - len, "%s", n.signature);
	}
	code_name_set(out, n.name, "");
}

const struct code_names_ops hotspot_name_ops = {
    .runtime = RT_HOTSPOT, .proc_of = proc_of, .read_name = read_name};

static void show(void *ctx, uint32_t pid, uint32_t gen, const struct cfi_interp_frame *f,
		 struct interp_frame_shown *out)
{
	bool ok;
	const struct code_name *cn = code_names_show_begin(ctx, pid, gen, f, "[jvm]", out, &ok);

	/* each frame is its own native frame's */
	out->role = INTERP_FRAME_SHOW;
	if (!cn || !ok)
		return;
	out->name = cn->name;
	out->file = cn->file;
	out->line = 0;
}

void hotspot_names_namer(struct code_names *names, struct interp_namer *out)
{
	*out = (struct interp_namer){.ctx = names, .show = show, .by_pc = true};
}
