// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Compiled Java frames named from their Method*; see hotspot_names.h. */
#include <stdlib.h>
#include <string.h>

#include "user/runtimes/hotspot/hotspot_names.h"
#include "user/runtimes/runtime_parts.h"
#include "user/runtimes/hotspot/hotspot_codecache.h"
#include "user/runtimes/hotspot/hotspot_jit.h"
#include "user/runtimes/hotspot/hotspot_scopes.h"
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

void hotspot_names_count_stale(void)
{
	__atomic_fetch_add(&stale, 1, __ATOMIC_RELAXED);
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

static bool code_read(const struct code_proc *proc, uint32_t pid, uint64_t code, uint8_t owner,
		      uint16_t scope, void **obj, size_t *bytes)
{
	uint64_t nm =
	    owner == HOTSPOT_FRAME_COMPILED ? code & ((1ull << HOTSPOT_CODE_ID_SHIFT) - 1) : 0;
	struct hotspot_code *c = NULL;

	if (owner == HOTSPOT_FRAME_COMPILED)
		code = proc->offsets ? compiled_method(proc->offsets, pid, code) : 0;
	else if (owner == HOTSPOT_FRAME_INTERPRETED)
		code = proc->offsets ? interpreted_method(proc->offsets, pid, code) : 0;
	else
		code = 0;
	/* a Method* of a class unloaded since is memory of anything: read as any pointer */
	/* an interpreted frame's scope is its bci + 1 (0: none), a compiled one's its compile id */
	if (code && proc->offsets)
		c = hotspot_code_read_at(pid, proc->offsets, code, nm,
					 owner == HOTSPOT_FRAME_INTERPRETED ? (int32_t)scope - 1
									    : -1);
	*obj = c;
	*bytes = c ? c->bytes : 0;
	return c != NULL;
}

static void *code_copy(const void *obj)
{
	const struct hotspot_code *from = obj;
	void *c = malloc(from->bytes);

	if (c)
		memcpy(c, from, from->bytes);
	return c;
}

const struct code_names_ops hotspot_name_ops = {
    .runtime = RT_HOTSPOT, .proc_of = proc_of, .read = code_read, .copy = code_copy, .free = free};

static void show(void *ctx, uint32_t pid, uint32_t gen, const struct cfi_interp_frame *f,
		 struct interp_frame_shown *out)
{
	bool ok;
	const struct hotspot_code *c = code_names_show_begin(ctx, pid, gen, f, "[jvm]", out, &ok);
	const struct hotspot_chain *ch;

	/* each frame is its own native frame's */
	out->role = INTERP_FRAME_SHOW;
	if (!c || !ok)
		return;
	out->name = hotspot_code_strs(c) + c->name;
	/* an interpreted frame's line is its bci's, read with its method */
	if (f->owner == HOTSPOT_FRAME_INTERPRETED && c->line) {
		out->file = hotspot_code_strs(c) + c->file;
		out->line = c->line;
		return;
	}
	ch = f->owner == HOTSPOT_FRAME_COMPILED ? hotspot_code_at(c, f->instr) : NULL;
	if (!ch)
		return;
	/* the file with a line only: "Busy.fib (Busy.java:16)", else the name alone as before */
	if (ch->line)
		out->file = hotspot_code_strs(c) + c->file;
	out->line = ch->line;
	out->nr_inlined = ch->nr;
	out->inlined = ch->nr ? hotspot_chain_levels(c, ch) : NULL;
	out->strs = hotspot_code_strs(c);
}

void hotspot_names_namer(struct code_names *names, struct interp_namer *out)
{
	*out = (struct interp_namer){.ctx = names, .show = show, .by_pc = true};
}
