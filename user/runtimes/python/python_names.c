// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Python frames named from their code objects (code_names.c reads them,
 * python_code.c says how), placed by their version's way of marking the
 * first frame of each evaluation-loop call.
 */
#include <stdlib.h>
#include <string.h>

#include "user/runtimes/code_names.h"
#include "user/runtimes/python/python_code.h"
#include "user/runtimes/python/python_names.h"
#include "user/runtimes/python/python_offsets.h"

struct python_names {
	struct code_names *cn;
	python_offsets_of offsets_of;
	void *offsets_ctx;
};

static void proc_of(void *ctx, uint32_t pid, struct code_proc *out)
{
	struct python_names *pn = ctx;

	out->offsets = pn->offsets_of ? pn->offsets_of(pn->offsets_ctx, pid) : NULL;
}

static bool code_read(const struct code_proc *proc, uint32_t pid, uint64_t code, uint8_t owner,
		      uint16_t scope, void **obj, size_t *bytes)
{
	(void)scope;
	struct python_code *c = malloc(sizeof(*c));

	(void)owner;
	*obj = c;
	if (!c)
		return false;
	python_code_read(pid, proc->offsets, code, c);
	*bytes = sizeof(*c) + c->bytes;
	return c->ok;
}

static void code_free(void *obj)
{
	struct python_code *c = obj;

	free(c->name);
	free(c);
}

/* One allocation holds a code object's name, file and line table: copied at their offsets. */
static void *code_copy(const void *obj)
{
	const struct python_code *from = obj;
	struct python_code *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	*c = *from;
	if (!from->name)
		return c;
	c->name = malloc(from->bytes);
	if (!c->name) {
		free(c);
		return NULL;
	}
	memcpy(c->name, from->name, from->bytes);
	c->file = c->name + (from->file - from->name);
	c->linetable = (uint8_t *)c->name + ((char *)from->linetable - from->name);
	return c;
}

struct python_names *python_names_new(python_offsets_of offsets_of, void *ctx)
{
	static const struct code_names_ops ops = {.runtime = RT_PYTHON,
						  .proc_of = proc_of,
						  .read = code_read,
						  .copy = code_copy,
						  .free = code_free};
	struct python_names *pn = calloc(1, sizeof(*pn));

	if (!pn)
		return NULL;
	pn->offsets_of = offsets_of;
	pn->offsets_ctx = ctx;
	pn->cn = code_names_new(&ops, pn);
	if (!pn->cn) {
		free(pn);
		return NULL;
	}
	return pn;
}

struct code_names *python_names_reader(struct python_names *pn)
{
	return pn ? pn->cn : NULL;
}

void python_names_free(struct python_names *pn)
{
	if (!pn)
		return;
	code_names_free(pn->cn);
	free(pn);
}

void python_names_note(struct python_names *pn, const struct cfi_sample_record *r, size_t size)
{
	if (pn)
		code_names_note(pn->cn, r, size);
}

bool python_names_wait(struct python_names *pn, double timeout)
{
	return !pn || code_names_wait(pn->cn, timeout);
}

void python_names_stats(struct python_names *pn, struct code_names_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (pn)
		code_names_stats(pn->cn, out);
}

/* The code unit the frame runs, or -1 (before its first instruction, or no offsets). */
static int64_t code_unit(const struct python_offsets *o, const struct cfi_interp_frame *f)
{
	if (!o || f->instr == 0xffffffff || (int32_t)f->instr < 0)
		return -1;
	switch (o->code_kind) {
	case PY_CODE_LINETABLE_310: /* f_lasti in code units */
		return f->instr;
	case PY_CODE_LNOTAB: /* f_lasti in bytes */
		return f->instr / 2;
	default: /* the instruction pointer less the code object */
		if (f->instr < o->code_bytecode)
			return -1;
		return (f->instr - o->code_bytecode) / 2;
	}
}

/*
 * The code object was read after the sample was taken: one freed since (a
 * module's body after its import) may hold another one now.  Its frame's
 * instruction must at least lie inside its bytecode.
 */
static bool frame_fits(const struct python_offsets *o, const struct python_code *c,
		       const struct cfi_interp_frame *f)
{
	int64_t unit = code_unit(o, f);

	return c->ok && (unit < 0 || (uint64_t)unit < c->nr_units);
}

unsigned int python_frame_role(struct python_names *pn, uint32_t pid, uint32_t gen,
			       const struct cfi_interp_frame *f)
{
	const struct code_proc *proc = NULL;
	const struct python_code *c;
	const struct python_offsets *o;
	unsigned int role = INTERP_FRAME_SHOW;
	int64_t unit;
	bool ok;

	c = code_names_find(pn->cn, pid, gen, f, &proc, &ok);
	o = c && proc ? proc->offsets : NULL;
	if (o && o->entry == PY_ENTRY_SHIM_FRAME && f->owner == o->owner_cstack) {
		role = INTERP_FRAME_SKIP | INTERP_FRAME_LAST;
	} else if (o) {
		if ((o->entry == PY_ENTRY_IS_ENTRY && f->is_entry) ||
		    o->entry == PY_ENTRY_EVERY_FRAME)
			role |= INTERP_FRAME_LAST;
		/* _PyFrame_IsIncomplete: set up, but its first instruction not reached yet */
		unit = ok ? code_unit(o, f) : 0;
		if (f->owner != o->owner_generator && unit < (int64_t)c->firsttraceable)
			role |= INTERP_FRAME_SKIP;
	} else if (f->is_entry) {
		/* not read: 3.11's flag is the best guess there is */
		role |= INTERP_FRAME_LAST;
	}
	return role;
}

bool python_frame_name(struct python_names *pn, uint32_t pid, uint32_t gen,
		       const struct cfi_interp_frame *f, const char **name, const char **file,
		       uint32_t *line)
{
	const struct code_proc *proc = NULL;
	const struct python_code *c;
	const struct python_offsets *o;
	int64_t unit;
	bool ok;

	*name = "[python]";
	*file = "";
	*line = 0;
	c = code_names_find(pn->cn, pid, gen, f, &proc, &ok);
	o = proc ? proc->offsets : NULL;
	if (!c || !o || !frame_fits(o, c, f))
		return false;
	*name = c->name;
	*file = c->file;
	unit = code_unit(o, f);
	*line = unit < 0 ? (uint32_t)c->firstlineno
			 : python_code_line(o->code_kind, c->linetable, c->linetable_len,
					    c->firstlineno, (uint32_t)unit);
	/* entries are freed only by python_names_sweep, after the profile is written */
	return true;
}

void python_frame_show(struct python_names *pn, uint32_t pid, uint32_t gen,
		       const struct cfi_interp_frame *f, struct interp_frame_shown *out)
{
	if (!pn) {
		*out = (struct interp_frame_shown){.role = f->is_entry ? INTERP_FRAME_LAST
								       : INTERP_FRAME_SHOW,
						   .name = "[python]",
						   .file = ""};
		return;
	}
	out->role = python_frame_role(pn, pid, gen, f);
	python_frame_name(pn, pid, gen, f, &out->name, &out->file, &out->line);
}

static void python_namer_show(void *ctx, uint32_t pid, uint32_t gen,
			      const struct cfi_interp_frame *f, struct interp_frame_shown *out)
{
	python_frame_show(ctx, pid, gen, f, out);
}

void python_names_namer(struct python_names *pn, struct interp_namer *out)
{
	*out = (struct interp_namer){
	    .ctx = pn, .show = python_namer_show, .eval_frame = "_PyEval_EvalFrameDefault"};
}
