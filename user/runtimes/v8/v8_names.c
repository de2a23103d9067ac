// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* JavaScript frames named from their SharedFunctionInfo; see v8_names.h. */
#include "user/runtimes/v8/v8_names.h"
#include "user/runtimes/runtime_parts.h"
#include "user/runtimes/v8/v8_detect.h"
#include "user/runtimes/v8/v8_sfi.h"

static void proc_of(void *ctx, uint32_t pid, struct code_proc *out)
{
	const struct runtime_parts *parts = ctx;
	struct cfi_v8_proc val;

	if (runtime_detect_lookup(parts->detect, pid, &val, sizeof(val)))
		out->offsets = v8_layout(val.layout);
}

static void read_name(const struct code_proc *proc, uint32_t pid, uint64_t code, uint8_t owner,
		      struct code_name *out)
{
	(void)owner;
	v8_sfi_read(pid, proc->offsets, code, out);
}

const struct code_names_ops v8_name_ops = {
    .runtime = RT_V8, .proc_of = proc_of, .read_name = read_name};

static void show(void *ctx, uint32_t pid, uint32_t gen, const struct cfi_interp_frame *f,
		 struct interp_frame_shown *out)
{
	bool ok;
	const struct code_name *cn = code_names_show_begin(ctx, pid, gen, f, "[v8]", out, &ok);

	/* each frame is its own: no evaluation loop runs several */
	out->role = INTERP_FRAME_SHOW;
	if (!cn || !ok)
		return;
	out->name = cn->name;
	out->file = cn->file;
	out->line = cn->first_line;
}

void v8_names_namer(struct code_names *names, struct interp_namer *out)
{
	*out = (struct interp_namer){.ctx = names, .show = show, .by_pc = true};
}
