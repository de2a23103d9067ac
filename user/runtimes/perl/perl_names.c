// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Perl frames named from their CV; see perl_names.h.  The process may be
 * hostile: every pointer is only an address to try, every string bounded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/runtimes/perl/perl_names.h"
#include "user/runtimes/perl/perl_offsets.h"
#include "user/runtimes/runtime_parts.h"
#include "user/runtimes/target_mem.h"

#define PERL_MAX_NAME 256 /* bytes of a name or file kept */
#define PERL_BODY_MAX 128 /* bytes of an SV's body read */

/* A HEK's key at addr into out (room bytes, NUL-terminated, control bytes as '?'); -1. */
static int read_hek(uint32_t pid, const struct perl_offsets *o, uint64_t addr, char *out,
		    size_t room)
{
	int32_t len;
	size_t n;

	if (target_read(pid, addr + o->hek_len, &len, sizeof(len)) || len < 0)
		return -1;
	n = (size_t)len < room - 1 ? (size_t)len : room - 1;
	if (target_read(pid, addr + o->hek_key, out, n))
		return -1;
	out[n] = 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = '?';
	return 0;
}

/* A C string at addr into out (room bytes): the longest of a few reads that succeeds. */
static int read_cstr(uint32_t pid, uint64_t addr, char *out, size_t room)
{
	static const size_t tries[] = {PERL_MAX_NAME, 64, 16};

	for (size_t t = 0; t < sizeof(tries) / sizeof(tries[0]); t++) {
		size_t n = tries[t] < room ? tries[t] : room;

		if (!target_read(pid, addr, out, n)) {
			out[n - 1] = 0;
			out[strcspn(out, "\n")] = 0;
			return 0;
		}
	}
	return -1;
}

/* The body (sv_any) of the SV at addr, and its flags; 0 when unreadable. */
static uint64_t sv_body(uint32_t pid, const struct perl_offsets *o, uint64_t addr, uint32_t *flags)
{
	uint64_t any = 0;

	*flags = 0;
	if (!addr || target_read(pid, addr + o->sv_any, &any, sizeof(any)) ||
	    target_read(pid, addr + o->sv_flags, flags, sizeof(*flags)))
		return 0;
	return any;
}

/* A stash's name (HvNAME) into out; -1 when it has none readable. */
static int stash_name(uint32_t pid, const struct perl_offsets *o, uint64_t hv, char *out,
		      size_t room)
{
	uint64_t any, aux, name;
	int32_t count;
	uint32_t flags;

	any = sv_body(pid, o, hv, &flags);
	if (!any || !(flags & o->svf_ook))
		return -1;
	aux = any + o->xhv_aux;
	if (target_read(pid, aux + o->aux_name, &name, sizeof(name)) ||
	    target_read(pid, aux + o->aux_name_count, &count, sizeof(count)) || !name)
		return -1;
	/* several names (a stash renamed): the first is its name */
	if (count && target_read(pid, name, &name, sizeof(name)))
		return -1;
	return read_hek(pid, o, name, out, room);
}

void perl_cv_read(uint32_t pid, const struct perl_offsets *o, uint64_t addr, struct code_name *cv)
{
	char sub[PERL_MAX_NAME], pkg[PERL_MAX_NAME], file[PERL_MAX_NAME],
	    name[2 * PERL_MAX_NAME + 4];
	uint8_t b[PERL_BODY_MAX];
	uint64_t any, gv_u, stash, p, gv;
	uint32_t flags, cv_flags;

	memset(cv, 0, sizeof(*cv));
	any = o ? sv_body(pid, o, addr, &flags) : 0;
	if (!any || (size_t)o->xcv_flags + 4 > sizeof(b) ||
	    target_read(pid, any, b, (size_t)o->xcv_flags + 4))
		return;
	gv_u = target_u64(b, o->xcv_gv_u);
	stash = target_u64(b, o->xcv_stash);
	cv_flags = target_u32(b, o->xcv_flags);
	pkg[0] = file[0] = 0;
	p = target_u64(b, o->xcv_file);
	if (p && read_cstr(pid, p, file, sizeof(file)))
		file[0] = 0;
	if (cv_flags & o->cvf_named) {
		/* a lexical or named-by-HEK sub: its name, its stash the CV's */
		if (read_hek(pid, o, gv_u, sub, sizeof(sub)))
			return;
	} else if (!gv_u) {
		/* no glob: the main program's CV, named by its frame, known by its file */
		sub[0] = 0;
	} else {
		gv = sv_body(pid, o, gv_u, &flags);
		if (!gv || target_read(pid, gv + o->xgv_namehek, &p, sizeof(p)) ||
		    read_hek(pid, o, p, sub, sizeof(sub)) ||
		    target_read(pid, gv + o->xgv_stash, &stash, sizeof(stash)))
			return;
	}
	if (stash && stash_name(pid, o, stash, pkg, sizeof(pkg)))
		pkg[0] = 0;
	snprintf(name, sizeof(name), "%s%s%s", pkg, pkg[0] ? "::" : "", sub);
	code_name_set(cv, name, file);
}

static void proc_of(void *ctx, uint32_t pid, struct code_proc *out)
{
	const struct runtime_parts *parts = ctx;
	struct cfi_perl_proc val;

	if (runtime_detect_lookup(parts->detect, pid, &val, sizeof(val)))
		out->offsets = perl_offsets_find(val.version);
}

/* The main code's frame: its file the COP's (its name is its frame's). */
static void main_read(uint32_t pid, const struct perl_offsets *o, uint64_t cop,
		      struct code_name *cv)
{
	char file[PERL_MAX_NAME];
	uint64_t p = 0;

	memset(cv, 0, sizeof(*cv));
	if (o && !target_read(pid, cop + o->cop_file, &p, sizeof(p)) && p &&
	    !read_cstr(pid, p, file, sizeof(file)))
		code_name_set(cv, "", file);
}

static void read_name(const struct code_proc *proc, uint32_t pid, uint64_t code, uint8_t owner,
		      struct code_name *out)
{
	if (owner == PERL_FRAME_MAIN)
		main_read(pid, proc->offsets, code, out);
	else
		perl_cv_read(pid, proc->offsets, code, out);
}

const struct code_names_ops perl_name_ops = {
    .runtime = RT_PERL, .proc_of = proc_of, .read_name = read_name};

static void show(void *ctx, uint32_t pid, uint32_t gen, const struct cfi_interp_frame *f,
		 struct interp_frame_shown *out)
{
	bool ok;
	const struct code_name *cv = code_names_show_begin(ctx, pid, gen, f, "[perl]", out, &ok);

	out->line = f->instr;
	if (f->owner == PERL_FRAME_MAIN)
		out->name = "<main>";
	if (!cv || !cv->file)
		return;
	/* the main code's name is its frame's, its file the COP's */
	if (ok && f->owner != PERL_FRAME_MAIN && cv->name[0])
		out->name = cv->name;
	out->file = cv->file;
}

void perl_names_namer(struct code_names *names, struct interp_namer *out)
{
	*out =
	    (struct interp_namer){.ctx = names, .show = show, .eval_frame = "Perl_runops_standard"};
}
