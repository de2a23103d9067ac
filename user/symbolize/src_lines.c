// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Source lines and inline frames from DWARF; see src_lines.h.
 *
 * libdw answers "which scopes cover this address" for a compile unit, so
 * the one thing to find first is the unit.  The units' ranges are listed once
 * when the file is opened, from .debug_aranges where it names the unit, from
 * the unit's DIE where it does not (clang leaves the section out), and a
 * lookup is a binary search over them.  The file is read with
 * ELF_C_READ over an fd kept open, never mmap'd: a hostile process could
 * truncate a mapped file under us, and a read past its end would be SIGBUS.
 */
#include "user/symbolize/src_lines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/vec.h"
#include "elf/elf_read.h"
#include "elf/sections.h"
#include "user/symbolize/dwarf_fn_index.h"
#include "user/symbolize/src_lines_units.h"
#include "user/symbolize/src_lines_cache.h"
#include "user/symbolize/src_lines_internal.h"
#include "user/symbolize/src_lines_sections.h"

void src_lines_ctx_init(struct src_lines_ctx *ctx)
{
	struct rlimit rl;

	memset(ctx, 0, sizeof(*ctx));
	ctx->max_object_bytes = 256ull << 20;
	ctx->max_cu_bytes = 16ull << 20;
	ctx->max_open_bytes = 512ull << 20;
	ctx->max_cache_entries = 1u << 20;
	ctx->ns_left = UINT64_MAX;
	ctx->max_attached = 256;
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur / 8 < ctx->max_attached)
		ctx->max_attached = rl.rlim_cur / 8;
}

/* ---- attaching ---- */

static const char *no_debug_info(Elf *e, void *ctx)
{
	bool has;

	(void)ctx;
	src_lines_section_bytes(e, &has);
	return has ? NULL : "has no .debug_info";
}

/* Its inflated copy, or the name to write it as at the first open. */
static void use_cache(struct src_lines *sl, const char *name)
{
	int fd = src_lines_cache_open(name);

	if (fd < 0) {
		sl->cache_name = strdup(name);
		return;
	}
	close(sl->fd);
	sl->fd = fd;
	sl->inflated = true;
}

static struct src_lines *attach_fd(int fd, const char *path)
{
	struct src_lines *sl = calloc(1, sizeof(*sl));
	char name[SRC_LINES_CACHE_NAME_LEN];
	bool has;

	if (!sl)
		goto err;
	sl->fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	sl->path = strdup(path ? path : "");
	if (sl->fd < 0 || !sl->path)
		goto err;
	sl->elf = elf_read_begin(sl->fd);
	if (!sl->elf || elf_kind(sl->elf) != ELF_K_ELF)
		goto err;
	sl->section_bytes = src_lines_section_bytes(sl->elf, &has);
	if (!has)
		goto err;
	if (src_lines_cache_name(sl->elf, sl->fd, name, sizeof(name)))
		use_cache(sl, name);
	/* read again when first looked up: libelf keeps what it read until elf_end */
	elf_end(sl->elf);
	sl->elf = NULL;
	return sl;
err:
	if (sl) {
		if (sl->elf)
			elf_end(sl->elf);
		if (sl->fd >= 0)
			close(sl->fd);
		free(sl->path);
		free(sl);
	}
	return NULL;
}

struct src_lines *src_lines_attach(struct src_lines_ctx *ctx, Elf *e, int fd,
				   const struct debug_file_search *s)
{
	struct debug_file_search own = *s;
	struct debug_file dbg = {.fd = -1};
	struct src_lines *sl = NULL;
	bool has;

	/* a place first: the fd is what is bounded */
	if (__atomic_add_fetch(&ctx->nr_attached, 1, __ATOMIC_RELAXED) > ctx->max_attached) {
		__atomic_fetch_add(&ctx->st.refused[SRC_REFUSED_FILES], 1, __ATOMIC_RELAXED);
		goto out;
	}
	src_lines_section_bytes(e, &has);
	if (has) {
		sl = attach_fd(fd, s->obj_path);
		goto out;
	}
	own.unusable = no_debug_info;
	if (debug_file_find(e, &own, &dbg))
		goto out;
	sl = attach_fd(dbg.fd, dbg.path);
	debug_file_close(&dbg);
out:
	if (!sl)
		__atomic_fetch_sub(&ctx->nr_attached, 1, __ATOMIC_RELAXED);
	else if (sl->inflated)
		__atomic_fetch_add(&ctx->st.inflated_found, 1, __ATOMIC_RELAXED);
	return sl;
}

const char *src_lines_path(const struct src_lines *sl)
{
	return sl->path;
}

/* ---- the open handle ---- */

static void lru_unlink(struct src_lines_ctx *ctx, struct src_lines *sl)
{
	if (sl->prev)
		sl->prev->next = sl->next;
	else if (ctx->lru == sl)
		ctx->lru = sl->next;
	if (sl->next)
		sl->next->prev = sl->prev;
	sl->prev = sl->next = NULL;
}

static void lru_front(struct src_lines_ctx *ctx, struct src_lines *sl)
{
	lru_unlink(ctx, sl);
	sl->next = ctx->lru;
	if (ctx->lru)
		ctx->lru->prev = sl;
	ctx->lru = sl;
}

void src_lines_handle_drop(struct src_lines *sl)
{
	if (sl->dw)
		dwarf_end(sl->dw);
	sl->dw = NULL;
	/* the sections libelf read and libdw inflated go with the Elf */
	if (sl->elf)
		elf_end(sl->elf);
	sl->elf = NULL;
	for (uint64_t i = 0; i < sl->nr_cus; i++)
		fn_index_free(sl->cus[i].fns);
	free(sl->cus);
	free(sl->ranges);
	sl->cus = NULL;
	sl->ranges = NULL;
	sl->nr_cus = sl->cap_cus = sl->nr_ranges = sl->cap_ranges = 0;
}

static void handle_close(struct src_lines_ctx *ctx, struct src_lines *sl)
{
	if (!sl->dw)
		return;
	src_lines_handle_drop(sl);
	ctx->st.open_bytes -= sl->cost;
	sl->cost = 0;
	sl->held = false;
	lru_unlink(ctx, sl);
}

static void charge(struct src_lines_ctx *ctx, struct src_lines *sl, uint64_t bytes)
{
	struct src_lines *o;

	sl->cost += bytes;
	ctx->st.open_bytes += bytes;
	/* the handle in use stays: the others make room, oldest first */
	while (ctx->st.open_bytes > ctx->max_open_bytes) {
		for (o = ctx->lru; o && o->next; o = o->next)
			;
		if (!o || o == sl)
			break;
		handle_close(ctx, o);
		ctx->st.closes++;
	}
}

enum open_state src_lines_handle_read(struct src_lines *sl, uint64_t max_object_bytes)
{
	bool has, refused = false;

	/* the cache's copy is private to this user: mapped, no process can cut it */
	sl->elf = sl->inflated ? elf_begin(sl->fd, ELF_C_READ_MMAP, NULL) : elf_read_begin(sl->fd);
	if (sl->elf && elf_kind(sl->elf) == ELF_K_ELF) {
		/* measured again: the file's owner may have rewritten it since */
		sl->section_bytes = src_lines_section_bytes(sl->elf, &has);
		refused = sl->section_bytes > max_object_bytes;
		if (!refused) {
			src_lines_hide_unread(sl->elf);
			sl->dw = dwarf_begin_elf(sl->elf, DWARF_C_READ, NULL);
		}
	}
	if (sl->dw && src_lines_list_units(sl))
		refused = true;
	if (sl->dw && !refused) {
		/* inflated by libdw now: kept for the next start (or not: it is a cache) */
		if (sl->cache_name)
			sl->cache_written = !src_lines_cache_write(sl->elf, sl->cache_name);
		free(sl->cache_name);
		sl->cache_name = NULL;
		return OPEN_READY;
	}
	src_lines_handle_drop(sl);
	return refused ? OPEN_REFUSED : OPEN_FAILED;
}

void src_lines_handle_adopt(struct src_lines_ctx *ctx, struct src_lines *sl)
{
	uint8_t limit = sl->idle_limit ? sl->idle_limit : 1;

	/* wanted again within as many periods as it was kept idle: keep it longer */
	if (sl->idle_closed && ctx->epoch + 1 - sl->idle_closed <= limit)
		sl->idle_limit = limit * 2 > SRC_IDLE_MAX ? SRC_IDLE_MAX : limit * 2;
	sl->held = true;
	ctx->st.opens++;
	ctx->st.inflated_written += sl->cache_written;
	sl->cache_written = false;
	ctx->st.units_aranges += sl->units_aranges;
	ctx->st.units_die += sl->units_die;
	sl->units_aranges = sl->units_die = 0;
	lru_front(ctx, sl);
	charge(ctx, sl, sl->section_bytes);
	/* the lists themselves */
	charge(ctx, sl, sl->cap_cus * sizeof(*sl->cus) + sl->cap_ranges * sizeof(*sl->ranges));
}

static int handle_open(struct src_lines_ctx *ctx, struct src_lines *sl)
{
	enum open_state st;

	sl->epoch = ctx->epoch;
	if (sl->dw) {
		lru_front(ctx, sl);
		return 0;
	}
	if (sl->refused || sl->section_bytes > ctx->max_object_bytes) {
		sl->refused = true;
		return -1;
	}
	st = src_lines_handle_read(sl, ctx->max_object_bytes);
	sl->refused = st == OPEN_REFUSED;
	if (st != OPEN_READY)
		return -1;
	src_lines_handle_adopt(ctx, sl);
	return 0;
}

int src_lines_prepare(struct src_lines_ctx *ctx, struct src_lines *sl)
{
	uint64_t t0 = mono_ns();
	int ret = handle_open(ctx, sl);

	ctx->st.ns += mono_ns() - t0;
	return ret;
}

/* ---- answers ---- */

static void answers_clear(struct src_lines_ctx *ctx, struct src_lines *sl)
{
	ctx->st.cache_entries -= sl->nr_ans;
	free(sl->ans);
	sl->ans = NULL;
	sl->nr_ans = sl->cap_ans = 0;
	sl->nr_frames = 0;
}

static struct answer *answer_slot(struct src_lines *sl, uint64_t vaddr)
{
	uint64_t mask = sl->cap_ans - 1, i;

	for (i = (vaddr * 0x9e3779b97f4a7c15ull >> 17) & mask; sl->ans[i].used; i = (i + 1) & mask)
		if (sl->ans[i].vaddr == vaddr)
			break;
	return &sl->ans[i];
}

static struct answer *answer_new(struct src_lines_ctx *ctx, struct src_lines *sl, uint64_t vaddr)
{
	struct answer *a;

	if (ctx->st.cache_entries >= ctx->max_cache_entries)
		answers_clear(ctx, sl);
	if ((sl->nr_ans + 1) * 2 > sl->cap_ans) {
		struct src_lines tmp = {.cap_ans = sl->cap_ans ? sl->cap_ans * 2 : 64};
		uint64_t k;

		tmp.ans = calloc(tmp.cap_ans, sizeof(*tmp.ans));
		if (!tmp.ans)
			return NULL;
		for (k = 0; k < sl->cap_ans; k++)
			if (sl->ans[k].used)
				*answer_slot(&tmp, sl->ans[k].vaddr) = sl->ans[k];
		free(sl->ans);
		sl->ans = tmp.ans;
		sl->cap_ans = tmp.cap_ans;
	}
	a = answer_slot(sl, vaddr);
	a->used = true;
	a->vaddr = vaddr;
	a->first = (uint32_t)sl->nr_frames;
	a->n = 0;
	sl->nr_ans++;
	ctx->st.cache_entries++;
	return a;
}

static int add_frame(struct src_lines *sl, struct answer *a, const struct src_frame *f)
{
	struct src_frame *v;

	if (sl->nr_frames >= UINT32_MAX)
		return -1;
	v = vec_grow(sl->frames, sizeof(*v), sl->nr_frames, &sl->cap_frames, 64);
	if (!v)
		return -1;
	sl->frames = v;
	v[sl->nr_frames] =
	    (struct src_frame){strset_intern(&sl->strs, f->system_name),
			       strset_intern(&sl->strs, f->file), f->line, f->start_line};
	sl->nr_frames++;
	a->n++;
	return 0;
}

/* ---- DWARF ---- */

static const char *die_system_name(Dwarf_Die *d)
{
	Dwarf_Attribute a;
	const char *s = NULL;

	if (dwarf_attr_integrate(d, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(d, DW_AT_MIPS_linkage_name, &a))
		s = dwarf_formstring(&a);
	if (!s && dwarf_attr_integrate(d, DW_AT_name, &a))
		s = dwarf_formstring(&a);
	return s;
}

static uint32_t die_udata(Dwarf_Die *d, unsigned int name)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (!dwarf_attr(d, name, &a) || dwarf_formudata(&a, &w) || w > UINT32_MAX)
		return 0;
	return (uint32_t)w;
}

/* @file made absolute with the unit's directory, as addr2line prints it; NULL stays NULL. */
static const char *full_path(const char *file, const char *comp_dir, char *buf, size_t len)
{
	int n;

	if (!file || file[0] == '/' || !comp_dir || !comp_dir[0])
		return file;
	n = snprintf(buf, len, "%s/%s", comp_dir, file);
	return n > 0 && (size_t)n < len ? buf : file;
}

/*
 * Fills @a with the chain at @vaddr: the DIEs containing it, from the unit's
 * function index (the same chain dwarf_getscopes_die gives, as eu-addr2line
 * -i prints it).  A level's line is where the pc is for the innermost, else
 * where the level inside it was inlined (its DW_AT_call_file / call_line).
 */
static int resolve(struct src_lines *sl, struct answer *a, Dwarf_Die *cudie,
		   const struct fn_index *fns, uint64_t vaddr)
{
	Dwarf_Off offs[SRC_FRAMES_MAX * 2];
	Dwarf_Files *files = NULL;
	size_t nr_files = 0;
	Dwarf_Line *ln = dwarf_getsrc_die(cudie, vaddr);
	Dwarf_Attribute at;
	const char *comp_dir =
	    dwarf_attr(cudie, DW_AT_comp_dir, &at) ? dwarf_formstring(&at) : NULL;
	struct src_frame f = {0};
	char path[4096];
	int n, i, err = 0;
	int line;

	if (ln) {
		f.file = full_path(dwarf_linesrc(ln, NULL, NULL), comp_dir, path, sizeof(path));
		if (!dwarf_lineno(ln, &line) && line > 0)
			f.line = (uint32_t)line;
	}
	n = fn_index_chain(fns, vaddr, offs, (int)(sizeof(offs) / sizeof(offs[0])));
	if (n > 0 && dwarf_getsrcfiles(cudie, &files, &nr_files))
		files = NULL;
	for (i = 0; i < n && !err && a->n < SRC_FRAMES_MAX; i++) {
		Dwarf_Die die;
		int tag;
		uint32_t call_file;

		if (!dwarf_offdie(sl->dw, offs[i], &die))
			break;
		tag = dwarf_tag(&die);
		f.system_name = die_system_name(&die);
		f.start_line = dwarf_decl_line(&die, &line) || line < 0 ? 0 : (uint32_t)line;
		err = add_frame(sl, a, &f);
		if (tag != DW_TAG_inlined_subroutine)
			break;
		/* the caller's position: where this level was inlined */
		call_file = die_udata(&die, DW_AT_call_file);
		f.file = files && call_file < nr_files ? dwarf_filesrc(files, call_file, NULL, NULL)
						       : NULL;
		f.file = full_path(f.file, comp_dir, path, sizeof(path));
		f.line = die_udata(&die, DW_AT_call_line);
	}
	/* no function scope (assembly with line info): the line alone */
	if (!err && !a->n && ln) {
		f.system_name = NULL;
		f.start_line = 0;
		err = add_frame(sl, a, &f);
	}
	return err;
}

int src_lines_lookup(struct src_lines_ctx *ctx, struct src_lines *sl, uint64_t vaddr,
		     const struct src_frame **frames)
{
	struct answer *a;
	uint64_t t0, dt;
	Dwarf_Die cudie;
	long cu;
	int ret = -1;

	ctx->st.lookups++;
	*frames = NULL;
	if (sl->cap_ans) {
		a = answer_slot(sl, vaddr);
		if (a->used) {
			ctx->st.hits++;
			*frames = sl->frames + a->first;
			return (int)a->n;
		}
	}
	if (sl->refused) {
		ctx->st.refused[SRC_REFUSED_OBJECT]++;
		return -1;
	}
	if (!ctx->ns_left) {
		ctx->st.refused[SRC_REFUSED_TIME]++;
		return -1;
	}
	t0 = mono_ns();
	if (ctx->opener && !sl->held) {
		int r = src_opener_take(ctx, sl);

		if (r > 0)
			ctx->st.refused[SRC_REFUSED_OPENING]++;
		else if (r < 0 && sl->refused)
			ctx->st.refused[SRC_REFUSED_OBJECT]++;
		if (r)
			goto out;
	}
	if (handle_open(ctx, sl)) {
		if (sl->refused)
			ctx->st.refused[SRC_REFUSED_OBJECT]++;
		goto out;
	}
	cu = src_lines_find_unit(sl, vaddr);
	if (cu >= 0 && src_lines_unit_bytes(sl, &sl->cus[cu]) > ctx->max_cu_bytes) {
		ctx->st.refused[SRC_REFUSED_CU]++;
		goto out;
	}
	a = answer_new(ctx, sl, vaddr);
	if (!a)
		goto out;
	ret = 0;
	if (cu >= 0 && dwarf_offdie(sl->dw, sl->cus[cu].die_off, &cudie)) {
		struct cu_info *ci = &sl->cus[cu];

		/* one walk of the unit; its DIEs and line program stay in libdw's memory */
		if (!ci->fns) {
			ci->fns = fn_index_build(&cudie, ci->bytes);
			if (ci->fns)
				charge(ctx, sl, ci->bytes + fn_index_bytes(ci->fns));
		}
		if (!ci->fns || resolve(sl, a, &cudie, ci->fns, vaddr)) {
			/* out of memory midway: keep what is complete, an empty answer */
			sl->nr_frames = a->first;
			a->n = 0;
		}
	}
	if (a->n)
		ctx->st.resolved++;
	*frames = a->n ? sl->frames + a->first : NULL;
	ret = (int)a->n;
out:
	dt = mono_ns() - t0;
	ctx->st.ns += dt;
	if (ctx->ns_left != UINT64_MAX)
		ctx->ns_left = ctx->ns_left > dt ? ctx->ns_left - dt : 0;
	return ret;
}

void src_lines_close_idle(struct src_lines_ctx *ctx)
{
	struct src_lines *sl = ctx->lru, *next;

	/* a handle the opener read and no lookup took is closed idle too (the agent trims) */
	if (ctx->opener)
		ctx->st.closes += src_opener_age(ctx->opener);
	for (; sl; sl = next) {
		next = sl->next;
		if (ctx->epoch - sl->epoch >= (sl->idle_limit ? sl->idle_limit : 1)) {
			handle_close(ctx, sl);
			ctx->st.closes++;
			sl->idle_closed = ctx->epoch + 1;
		}
	}
	ctx->epoch++;
}

void src_lines_free(struct src_lines_ctx *ctx, struct src_lines *sl)
{
	if (!sl)
		return;
	if (ctx->opener)
		src_opener_forget(ctx->opener, sl);
	/* one the opener read and no lookup took: not charged, not in the lru */
	handle_close(ctx, sl);
	answers_clear(ctx, sl);
	free(sl->frames);
	strset_free(&sl->strs);
	close(sl->fd);
	free(sl->path);
	free(sl->cache_name);
	free(sl);
	__atomic_fetch_sub(&ctx->nr_attached, 1, __ATOMIC_RELAXED);
}
