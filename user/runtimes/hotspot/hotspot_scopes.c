// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A frame's code read with its nmethod's debug info; see hotspot_scopes.h.
 * The nmethod's sections, as JDK 17's nmethod.hpp places them: its
 * metadata [nm + _metadata_offset, _scopes_data_begin), 8-byte Metadata*
 * slots; its scopes data [_scopes_data_begin, nm + _scopes_pcs_offset);
 * its PcDescs [nm + _scopes_pcs_offset, nm + _dependencies_offset).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "user/runtimes/hotspot/hotspot_codecache.h"
#include "user/runtimes/hotspot/hotspot_scopes.h"
#include "user/runtimes/target_mem.h"

/* Metadata* slots of one nmethod read, at most (C2's largest: a few hundred) */
#define METADATA_MAX 8192

static uint64_t st_nmethods, st_no_layout, st_unreadable, st_bad_chains, st_no_pc;

void hotspot_scopes_stats(struct hotspot_scopes_stats *out)
{
	out->nmethods = __atomic_load_n(&st_nmethods, __ATOMIC_RELAXED);
	out->no_layout = __atomic_load_n(&st_no_layout, __ATOMIC_RELAXED);
	out->unreadable = __atomic_load_n(&st_unreadable, __ATOMIC_RELAXED);
	out->bad_chains = __atomic_load_n(&st_bad_chains, __ATOMIC_RELAXED);
	out->no_pc = __atomic_load_n(&st_no_pc, __ATOMIC_RELAXED);
}

static void count(uint64_t *c, uint64_t n)
{
	__atomic_fetch_add(c, n, __ATOMIC_RELAXED);
}

/* A method of the scopes as read: its strings, its line number table. */
struct method_slot {
	uint64_t method;
	uint32_t name, file; /* offsets in the build's strings */
	uint8_t *table;	     /* NULL: no line number table */
	uint32_t table_len;
	int32_t code_size;
};

/* One read's state: what was read of the process, what is built. */
struct build {
	uint32_t pid;
	const struct hotspot_layout *l;
	bool lines; /* the methods' line number tables are read */
	uint8_t *scopes;
	uint32_t scopes_len;
	uint64_t *meta;
	uint32_t nr_meta;
	uint32_t code_begin;
	struct hotspot_pcdesc *pcs;
	uint32_t nr_pcs;
	struct hotspot_chain *chains;
	uint32_t nr_chains;
	struct interp_inlined *levels;
	uint64_t nr_levels, cap_levels;
	char *strs;
	uint64_t nr_strs, cap_strs;
	struct method_slot slot[HOTSPOT_INLINED_METHODS_MAX];
	uint32_t nr_slots;
	/* a scope decode offset + 1 (0: empty) -> its chain, open addressing */
	uint32_t *seen_key, *seen_chain, seen_mask;
	uint32_t line; /* an interpreted frame's, of its bci: 0 when unknown */
};

/* s into the build's strings: its offset, or UINT32_MAX out of memory. */
static uint32_t str_add(struct build *b, const char *s)
{
	size_t n = strlen(s) + 1;
	uint32_t at = (uint32_t)b->nr_strs;

	/* doubled until s fits (a name is 2 * HOTSPOT_STRING_MAX at most) */
	while (b->nr_strs + n > b->cap_strs)
		if (VEC_RESERVE(b->strs, b->cap_strs, b->cap_strs, 1024))
			return UINT32_MAX;
	memcpy(b->strs + b->nr_strs, s, n);
	b->nr_strs += n;
	return at;
}

/* The slot of the Method at method, read when new: its index, or -1 (unreadable, too many). */
static int slot_of(struct build *b, uint64_t method)
{
	struct hotspot_method_name n;
	struct method_slot *s;
	uint32_t i;

	for (i = 0; i < b->nr_slots; i++)
		if (b->slot[i].method == method)
			return (int)i;
	if (b->nr_slots >= HOTSPOT_INLINED_METHODS_MAX ||
	    hotspot_method_name(b->pid, b->l, method, &n))
		return -1;
	/* an overload's descriptor, as jcmd and the JVM's own tools print it: "Busy.fib(I)I" */
	if (n.overloaded) {
		size_t len = strlen(n.name);

		snprintf(n.name + len, sizeof(n.name) - len, "%s", n.signature);
	}
	s = &b->slot[b->nr_slots];
	memset(s, 0, sizeof(*s));
	s->method = method;
	s->name = str_add(b, n.name);
	s->file = str_add(b, n.file);
	if (s->name == UINT32_MAX || s->file == UINT32_MAX)
		return -1;
	/* the table of a frame with no line to look up is not read */
	s->table = b->lines ? malloc(HOTSPOT_LINES_BYTES_MAX) : NULL;
	if (s->table &&
	    hotspot_method_lines(b->pid, b->l, method, s->table, HOTSPOT_LINES_BYTES_MAX,
				 &s->table_len, &s->code_size)) {
		free(s->table);
		s->table = NULL;
	}
	return (int)b->nr_slots++;
}

/* The line of bci in slot i's method: 0 when unknown. */
static uint32_t line_at(const struct build *b, int i, int32_t bci)
{
	const struct method_slot *s = &b->slot[i];
	int32_t line = s->table ? hotspot_line_of(s->table, s->table_len, bci, s->code_size,
						  hotspot_u5_excluded(b->l->vm_version))
				: -1;

	return line > 0 ? (uint32_t)line : 0;
}

/*
 * The scope chain at decode offset off into *out, its inlined levels
 * appended: 0, or -1 (nothing appended) when it does not decode, is deeper
 * than the bound, its methods are unreadable, or its outermost method is
 * not the nmethod's (HotSpot's is, always: not this nmethod's debug info).
 */
static int chain_decode(struct build *b, uint32_t off, struct hotspot_chain *out)
{
	struct {
		uint64_t method;
		int32_t bci;
	} lv[HOTSPOT_SCOPE_DEPTH_MAX];
	struct hotspot_scope sc = {0};
	uint32_t n = 0, i;
	uint64_t levels = b->nr_levels;

	*out = (struct hotspot_chain){0};
	/* serialized_null: the nmethod's method at InvocationEntryBci */
	if (!off) {
		out->line = line_at(b, 0, -1);
		return 0;
	}
	while (n < HOTSPOT_SCOPE_DEPTH_MAX) {
		if (hotspot_scope_at(b->scopes, b->scopes_len, off,
				     hotspot_u5_excluded(b->l->vm_version), &sc) ||
		    !sc.method || sc.method > b->nr_meta)
			return -1;
		lv[n].method = b->meta[sc.method - 1];
		lv[n++].bci = sc.bci;
		if (!sc.sender)
			break;
		off = sc.sender;
	}
	if (sc.sender || lv[n - 1].method != b->slot[0].method ||
	    b->nr_levels + n - 1 > HOTSPOT_LEVELS_MAX)
		return -1;
	for (i = 0; i + 1 < n; i++) {
		int s = slot_of(b, lv[i].method);

		if (s < 0 || VEC_RESERVE(b->levels, b->nr_levels, b->cap_levels, 64)) {
			b->nr_levels = levels;
			return -1;
		}
		b->levels[b->nr_levels++] =
		    (struct interp_inlined){.name = b->slot[s].name,
					    .file = b->slot[s].file,
					    .line = line_at(b, s, lv[i].bci)};
	}
	out->line = line_at(b, 0, lv[n - 1].bci);
	out->first = (uint32_t)levels;
	out->nr = n - 1;
	return 0;
}

/* The chain of scope decode offset off, decoded once per offset: its index. */
static uint32_t chain_of(struct build *b, uint32_t off)
{
	uint32_t h = (off * 0x9e3779b1u) & b->seen_mask;

	while (b->seen_key[h] && b->seen_key[h] != off + 1)
		h = (h + 1) & b->seen_mask;
	if (b->seen_key[h])
		return b->seen_chain[h];
	if (chain_decode(b, off, &b->chains[b->nr_chains]))
		count(&st_bad_chains, 1);
	b->seen_key[h] = off + 1;
	b->seen_chain[h] = b->nr_chains;
	return b->nr_chains++;
}

/* Bytes [from, to) of the process into a new buffer (NULL: unreadable, empty or too long). */
static void *read_range(uint32_t pid, uint64_t from, uint64_t to, uint64_t max)
{
	void *buf;

	if (to <= from || to - from > max)
		return NULL;
	buf = malloc((size_t)(to - from));
	if (buf && target_read(pid, from, buf, (size_t)(to - from))) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The PcDescs in raw[0, n) (stride bytes each) into b->pcs, their chains decoded: 0, or -1. */
static int pcs_decode(struct build *b, const uint8_t *raw, uint32_t n, uint32_t stride)
{
	const struct hotspot_layout *l = b->l;
	int64_t last = -1;
	uint32_t size = 16;

	while (size < 2 * n)
		size *= 2;
	b->pcs = malloc(n * sizeof(*b->pcs));
	b->chains = malloc(n * sizeof(*b->chains));
	b->seen_key = calloc(size, sizeof(*b->seen_key));
	b->seen_chain = malloc(size * sizeof(*b->seen_chain));
	if (!b->pcs || !b->chains || !b->seen_key || !b->seen_chain)
		return -1;
	b->seen_mask = size - 1;
	for (uint32_t i = 0; i < n; i++) {
		int64_t pc, scope;

		if (hotspot_get(raw + (size_t)i * stride, stride, l->pcdesc_pc, &pc) ||
		    hotspot_get(raw + (size_t)i * stride, stride, l->pcdesc_scope, &scope))
			return -1;
		/* the sentinels: lower_offset_limit (-1) first, upper_offset_limit last */
		if (pc < 0 || pc == INT32_MAX)
			continue;
		/* HotSpot's binary search needs them sorted, so do we: else not PcDescs */
		if (pc <= last || scope < 0 || (uint64_t)scope >= b->scopes_len)
			return -1;
		last = pc;
		b->pcs[b->nr_pcs++] = (struct hotspot_pcdesc){
		    .pc_offset = (int32_t)pc, .scope = chain_of(b, (uint32_t)scope)};
	}
	return 0;
}

/* The debug info of the nmethod at nm into b: 0, or -1 when unreadable or implausible. */
/* Where an nmethod's debug info lies: its metadata, scopes data and PcDescs, [begin, end). */
struct debug_at {
	uint64_t code, meta, meta_end, data, data_end, pcs, pcs_end;
};

/* JDK 25's nmethod (nmethod.hpp): PcDescs and scopes in its immutable data, metadata in its mutable
 * data. */
static int debug_at_immutable(struct build *b, uint64_t nm, struct debug_at *at)
{
	const struct hotspot_layout *l = b->l;
	uint64_t imm = hotspot_ptr_read(b->pid, nm, l->nm_immutable);
	uint64_t mut = hotspot_ptr_read(b->pid, nm, l->blob_mutable);
	int64_t imm_size, pcs_off, data_off, mut_size, reloc, begin;

	if (!imm || !mut || hotspot_int_read(b->pid, nm, l->nm_immutable_size, &imm_size) ||
	    hotspot_int_read(b->pid, nm, l->nm_scopes_pcs, &pcs_off) ||
	    hotspot_int_read(b->pid, nm, l->nm_scopes_data_off, &data_off) ||
	    hotspot_int_read(b->pid, nm, l->blob_mutable_size, &mut_size) ||
	    hotspot_int_read(b->pid, nm, l->blob_relocation_size, &reloc) ||
	    hotspot_int_read(b->pid, nm, l->blob_code_begin, &begin) || pcs_off < 0 ||
	    data_off < pcs_off || imm_size < data_off || reloc < 0 || mut_size < reloc)
		return -1;
	/* the scopes data ends before JVMCI's speculations and a reference counter: a bound */
	*at = (struct debug_at){.code = nm + (uint64_t)begin,
				.meta = mut + (uint64_t)reloc,
				.meta_end = mut + (uint64_t)mut_size,
				.data = imm + (uint64_t)data_off,
				.data_end = imm + (uint64_t)imm_size,
				.pcs = imm + (uint64_t)pcs_off,
				.pcs_end = imm + (uint64_t)data_off};
	return 0;
}

/* Before JDK 24: all of it in the nmethod, the metadata right before the scopes data. */
static int debug_at_nmethod(struct build *b, uint64_t nm, struct debug_at *at)
{
	const struct hotspot_layout *l = b->l;
	uint64_t data = hotspot_ptr_read(b->pid, nm, l->nm_scopes_data), code = 0;
	int64_t pcs_off, deps_off, meta_off, begin;

	if (!data || hotspot_int_read(b->pid, nm, l->nm_scopes_pcs, &pcs_off) ||
	    hotspot_int_read(b->pid, nm, l->nm_dependencies, &deps_off) ||
	    hotspot_int_read(b->pid, nm, l->nm_metadata, &meta_off) || meta_off <= 0 ||
	    pcs_off <= meta_off || deps_off < pcs_off)
		return -1;
	/* JDK 23 on: an offset from the blob; before, an address */
	if (l->code_relative && !hotspot_int_read(b->pid, nm, l->blob_code_begin, &begin))
		code = nm + (uint64_t)begin;
	else if (!l->code_relative)
		code = hotspot_ptr_read(b->pid, nm, l->blob_code_begin);
	*at = (struct debug_at){.code = code,
				.meta = nm + (uint64_t)meta_off,
				.meta_end = data,
				.data = data,
				.data_end = nm + (uint64_t)pcs_off,
				.pcs = nm + (uint64_t)pcs_off,
				.pcs_end = nm + (uint64_t)deps_off};
	return 0;
}

static int debug_read(struct build *b, uint64_t nm)
{
	const struct hotspot_layout *l = b->l;
	struct debug_at at = {0};
	uint8_t *raw = NULL;
	uint64_t nr_pcs;
	int rc = -1;

	if (l->scopes_immutable ? debug_at_immutable(b, nm, &at) : debug_at_nmethod(b, nm, &at))
		return -1;
	nr_pcs = (at.pcs_end - at.pcs) / l->pcdesc_size;
	if (!at.code || at.meta_end < at.meta || (at.meta_end - at.meta) % 8 ||
	    (at.meta_end - at.meta) / 8 > METADATA_MAX || at.data_end < at.data ||
	    at.data_end - at.data > UINT32_MAX || at.pcs_end < at.pcs ||
	    (at.pcs_end - at.pcs) % l->pcdesc_size || nr_pcs > HOTSPOT_PCDESCS_MAX)
		return -1;
	b->code_begin = (uint32_t)at.code;
	b->nr_meta = (uint32_t)((at.meta_end - at.meta) / 8);
	b->scopes_len = (uint32_t)(at.data_end - at.data);
	/* an nmethod with no inlining and few scopes may have no metadata: none read */
	if (b->nr_meta)
		b->meta = read_range(b->pid, at.meta, at.meta_end, METADATA_MAX * 8);
	b->scopes = read_range(b->pid, at.data, at.data_end, HOTSPOT_SCOPES_BYTES_MAX);
	raw =
	    read_range(b->pid, at.pcs, at.pcs_end, (uint64_t)HOTSPOT_PCDESCS_MAX * l->pcdesc_size);
	if ((b->nr_meta && !b->meta) || !b->scopes || !raw)
		goto cleanup;
	rc = pcs_decode(b, raw, (uint32_t)nr_pcs, l->pcdesc_size);
cleanup:
	free(raw);
	return rc;
}

/* The build packed into one allocation (NULL out of memory). */
static struct hotspot_code *pack(const struct build *b)
{
	size_t head = (sizeof(struct hotspot_code) + 7) & ~(size_t)7;
	size_t pcs = b->nr_pcs * sizeof(*b->pcs), chains = b->nr_pcs ? b->nr_chains : 0;
	size_t levels = b->nr_pcs ? b->nr_levels * sizeof(*b->levels) : 0, bytes;
	struct hotspot_code *c;

	chains *= sizeof(*b->chains);
	bytes = head + pcs + chains + levels + b->nr_strs;
	c = malloc(bytes);
	if (!c)
		return NULL;
	*c = (struct hotspot_code){.bytes = bytes,
				   .name = b->slot[0].name,
				   .file = b->slot[0].file,
				   .code_begin = b->code_begin,
				   .line = b->line,
				   .nr_pcs = b->nr_pcs,
				   .nr_chains = (uint32_t)(chains / sizeof(*b->chains)),
				   .nr_levels = (uint32_t)(levels / sizeof(*b->levels)),
				   .pcs = (uint32_t)head,
				   .chains = (uint32_t)(head + pcs),
				   .levels = (uint32_t)(head + pcs + chains),
				   .strs = (uint32_t)(head + pcs + chains + levels)};
	if (pcs)
		memcpy((uint8_t *)c + c->pcs, b->pcs, pcs);
	if (chains)
		memcpy((uint8_t *)c + c->chains, b->chains, chains);
	if (levels)
		memcpy((uint8_t *)c + c->levels, b->levels, levels);
	memcpy((uint8_t *)c + c->strs, b->strs, b->nr_strs);
	return c;
}

struct hotspot_code *hotspot_code_read(uint32_t pid, const struct hotspot_layout *l,
				       uint64_t method, uint64_t nm)
{
	return hotspot_code_read_at(pid, l, method, nm, -1);
}

struct hotspot_code *hotspot_code_read_at(uint32_t pid, const struct hotspot_layout *l,
					  uint64_t method, uint64_t nm, int32_t bci)
{
	struct hotspot_code *c = NULL;
	struct build *b = calloc(1, sizeof(*b));

	if (!b)
		return NULL;
	b->pid = pid;
	b->l = l;
	b->lines = l->lines && (nm ? l->scopes : bci >= 0);
	/* slot 0: the frame's own method */
	if (slot_of(b, method) != 0)
		goto cleanup;
	if (!nm && bci >= 0)
		b->line = line_at(b, 0, bci);
	if (nm && !l->scopes) {
		count(&st_no_layout, 1);
	} else if (nm && debug_read(b, nm)) {
		count(&st_unreadable, 1);
		b->nr_pcs = 0;
	} else if (nm) {
		count(&st_nmethods, 1);
	}
	c = pack(b);
cleanup:
	for (uint32_t i = 0; i < b->nr_slots; i++)
		free(b->slot[i].table);
	free(b->scopes);
	free(b->meta);
	free(b->pcs);
	free(b->chains);
	free(b->levels);
	free(b->strs);
	free(b->seen_key);
	free(b->seen_chain);
	free(b);
	return c;
}

const struct hotspot_chain *hotspot_code_at(const struct hotspot_code *c, uint32_t pc)
{
	const struct hotspot_pcdesc *pcs = (const void *)((const uint8_t *)c + c->pcs);
	const struct hotspot_chain *chains = (const void *)((const uint8_t *)c + c->chains);
	int64_t i;

	if (!c->nr_pcs)
		return NULL;
	/* wraps for a pc below the code: past every PcDesc */
	i = hotspot_pcdesc_find(pcs, c->nr_pcs, pc - c->code_begin);
	if (i < 0 || pcs[i].scope >= c->nr_chains) {
		count(&st_no_pc, 1);
		return NULL;
	}
	return &chains[pcs[i].scope];
}
