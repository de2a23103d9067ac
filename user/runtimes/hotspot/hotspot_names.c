// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Compiled Java frames named from their Method*; see hotspot_names.h. */
#include "user/runtimes/hotspot/hotspot_names.h"
#include "user/runtimes/runtime_parts.h"
#include "user/runtimes/hotspot/hotspot_codecache.h"
#include "user/runtimes/hotspot/hotspot_jit.h"

static void proc_of(void *ctx, uint32_t pid, struct code_proc *out)
{
	const struct runtime_parts *parts = ctx;
	struct cfi_hotspot_proc val;

	if (runtime_detect_lookup(parts->detect, pid, &val, sizeof(val)))
		out->offsets = hotspot_layout_at(val.layout);
}

static void read_name(const struct code_proc *proc, uint32_t pid, uint64_t code, uint8_t owner,
		      struct code_name *out)
{
	struct hotspot_method_name n;

	(void)owner;
	/* a Method* of a class unloaded since is memory of anything: read as any pointer */
	if (!proc->offsets || hotspot_method_name(pid, proc->offsets, code, &n))
		return;
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
