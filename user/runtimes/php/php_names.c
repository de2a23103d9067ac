// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * PHP frames named from their zend_function; see php_names.h.  The process
 * may be hostile: every pointer is only an address to try, every string is
 * bounded, a function whose type is none PHP has is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/runtimes/php/php_names.h"
#include "user/runtimes/php/php_offsets.h"
#include "user/runtimes/runtime_parts.h"
#include "user/runtimes/target_mem.h"

#define PHP_MAX_NAME 256 /* bytes of a name or file kept */
#define PHP_FUNC_MAX 256 /* bytes of a zend_function read */

/* zend_function.type */
enum { PHP_INTERNAL = 1, PHP_USER = 2, PHP_EVAL = 4 };

/* A zend_string at addr into out (room bytes, NUL-terminated, control bytes as '?'); -1 if none. */
static int read_zstr(uint32_t pid, const struct php_offsets *o, uint64_t addr, char *out,
		     size_t room)
{
	uint64_t len;
	size_t n;

	if (target_read(pid, addr + o->str_len, &len, sizeof(len)))
		return -1;
	n = len < room - 1 ? (size_t)len : room - 1;
	if (target_read(pid, addr + o->str_val, out, n))
		return -1;
	out[n] = 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = '?';
	return 0;
}

void php_function_read(uint32_t pid, const struct php_offsets *o, uint64_t addr,
		       struct code_name *f)
{
	char fname[PHP_MAX_NAME], cname[PHP_MAX_NAME], file[PHP_MAX_NAME],
	    name[2 * PHP_MAX_NAME + 4];
	uint8_t b[PHP_FUNC_MAX];
	uint64_t p;

	memset(f, 0, sizeof(*f));
	if (!o || o->func_read > sizeof(b) || target_read(pid, addr, b, o->func_read))
		return;
	f->kind = b[0];
	if (f->kind != PHP_INTERNAL && f->kind != PHP_USER && f->kind != PHP_EVAL)
		return;
	fname[0] = cname[0] = file[0] = 0;
	p = target_u64(b, o->func_name);
	if (p && read_zstr(pid, o, p, fname, sizeof(fname)))
		return;
	p = target_u64(b, o->func_scope);
	if (p && (target_read(pid, p + o->ce_name, &p, sizeof(p)) ||
		  read_zstr(pid, o, p, cname, sizeof(cname))))
		return;
	if (f->kind != PHP_INTERNAL) {
		p = target_u64(b, o->func_filename);
		if (p && read_zstr(pid, o, p, file, sizeof(file)))
			return;
		f->first_line = target_u32(b, o->func_line_start);
	}
	if (fname[0])
		snprintf(name, sizeof(name), "%s%s%s", cname, cname[0] ? "::" : "", fname);
	else
		name[0] = 0;
	code_name_set(f, name, file);
}

static void proc_of(void *ctx, uint32_t pid, struct code_proc *out)
{
	const struct runtime_parts *parts = ctx;
	struct cfi_php_proc val;

	if (runtime_detect_lookup(parts->detect, pid, &val, sizeof(val)))
		out->offsets = php_offsets_find(val.version);
}

static void read_name(const struct code_proc *proc, uint32_t pid, uint64_t code, uint8_t owner,
		      struct code_name *out)
{
	(void)owner;
	php_function_read(pid, proc->offsets, code, out);
}

const struct code_names_ops php_name_ops = {
    .runtime = RT_PHP, .proc_of = proc_of, .read_name = read_name};

static void show(void *ctx, uint32_t pid, uint32_t gen, const struct cfi_interp_frame *f,
		 struct interp_frame_shown *out)
{
	bool ok;
	const struct code_name *fn = code_names_show_begin(ctx, pid, gen, f, "[php]", out, &ok);

	/* no function: nothing runs in the frame */
	if (!f->code) {
		out->role |= INTERP_FRAME_SKIP;
		return;
	}
	if (!fn || !ok)
		return;
	/* a file's code: its own, or one it includes; its name is the file's */
	out->name = fn->name[0]		   ? fn->name
		    : fn->kind == PHP_EVAL ? "{eval}"
		    : f->is_entry	   ? "{main}"
					   : "{include}";
	out->file = fn->file;
	out->line = f->instr ? f->instr : fn->first_line;
}

void php_names_namer(struct code_names *names, struct interp_namer *out)
{
	*out = (struct interp_namer){.ctx = names, .show = show, .eval_frame = "execute_ex"};
}
