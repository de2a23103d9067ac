// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Compaction: FDEs of every source become one non-overlapping, address-ordered
 * sequence of (address, rule id) rows, then 4-byte rows grouped in 64 KiB pages.
 *
 * Overlaps are resolved deterministically: .eh_frame beats .debug_frame, which
 * beats a separate debug file, which beats Go's .gopclntab (tables/go_input.c:
 * rows where no CFI covers); within one source the FDE that starts first
 * wins (ties: lower section offset).  An address between FDEs gets an explicit
 * "no info" row so it never inherits the previous function's rule.
 */
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "tables/internal.h"

/* 4M pages = 256 GiB of covered code: anything larger is corrupt input. */
#define MAX_PAGES (1u << 22)

struct piece {
	uint64_t start, end;
	uint64_t fde;
};

struct pieces {
	struct piece *v;
	uint64_t nr, cap;
};

static int pieces_push(struct pieces *ps, uint64_t start, uint64_t end, uint64_t fde)
{
	struct piece *n = vec_grow(ps->v, sizeof(*n), ps->nr, &ps->cap, 1024);

	if (!n)
		return CFI_ERR_NOMEM;
	ps->v = n;
	ps->v[ps->nr++] = (struct piece){start, end, fde};
	return 0;
}

static int fde_order(const struct fde *x, const struct fde *y)
{
	if (x->pc_begin != y->pc_begin)
		return x->pc_begin < y->pc_begin ? -1 : 1;
	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return 0;
}

static int cmp_fde_idx(const void *a, const void *b, void *arg)
{
	const struct fde *fdes = arg;

	return fde_order(&fdes[*(const uint64_t *)a], &fdes[*(const uint64_t *)b]);
}

/* FDE indices of one source by start address (already in order when from .eh_frame_hdr). */
static int sorted_source(const struct cfi_parse *p, enum cfi_source src, uint64_t **out,
			 uint64_t *nr)
{
	uint64_t *idx = malloc((p->nr_fdes ? p->nr_fdes : 1) * sizeof(*idx)), n = 0, i;
	bool sorted = true;

	if (!idx)
		return CFI_ERR_NOMEM;
	for (i = 0; i < p->nr_fdes; i++) {
		if (p->fdes[i].sec->source != src)
			continue;
		if (n && fde_order(&p->fdes[idx[n - 1]], &p->fdes[i]) > 0)
			sorted = false;
		idx[n++] = i;
	}
	if (!sorted)
		qsort_r(idx, n, sizeof(*idx), cmp_fde_idx, p->fdes);
	*out = idx;
	*nr = n;
	return 0;
}

/*
 * Adds the parts of this source's FDEs that neither an earlier FDE of the same
 * source nor any accepted piece (higher-priority sources) covers.
 */
static int add_source(const struct cfi_parse *p, enum cfi_source src, struct pieces *acc,
		      struct cfi_stats *stats)
{
	struct pieces add = {0}, merged = {0};
	uint64_t *idx, nr, i, j = 0, cursor = 0;
	int err;

	err = sorted_source(p, src, &idx, &nr);
	if (err)
		return err;
	for (i = 0; i < nr; i++) {
		const struct fde *f = &p->fdes[idx[i]];
		uint64_t a = f->pc_begin > cursor ? f->pc_begin : cursor, b;
		bool clipped = a != f->pc_begin;

		if (f->pc_end > cursor)
			cursor = f->pc_end;
		/*
		 * One sweep over the accepted pieces for the whole source: a only
		 * grows while j moves (the next FDE starts at or past the cursor),
		 * so a piece j has passed never covers anything again.
		 */
		while (a < f->pc_end) {
			while (j < acc->nr && acc->v[j].end <= a)
				j++;
			if (j < acc->nr && acc->v[j].start <= a) {
				/* a is covered: jump past this accepted piece */
				a = acc->v[j].end;
				clipped = true;
				continue;
			}
			b = j < acc->nr && acc->v[j].start < f->pc_end ? acc->v[j].start : f->pc_end;
			if (b != f->pc_end)
				clipped = true;
			err = pieces_push(&add, a, b, idx[i]);
			if (err)
				goto out;
			a = b;
		}
		if (clipped)
			stats->fdes_overlap++;
	}
	/* merge the two sorted, disjoint lists */
	for (i = 0, j = 0; i < acc->nr || j < add.nr;) {
		bool take_acc = j == add.nr || (i < acc->nr && acc->v[i].start < add.v[j].start);
		const struct piece *pc = take_acc ? &acc->v[i++] : &add.v[j++];

		err = pieces_push(&merged, pc->start, pc->end, pc->fde);
		if (err)
			goto out;
	}
	free(acc->v);
	*acc = merged;
	merged.v = NULL;
out:
	free(merged.v);
	free(add.v);
	free(idx);
	return err;
}

/* ---- per-FDE evaluation ---- */

struct fde_rows {
	struct fde_row *v;
	uint64_t nr, cap;
	struct rule_dict *dict;
	struct cfi_parse *p;
	const struct fde *fde;
	int err;
};

static int collect_row(void *ctx, uint64_t addr, const struct cfa_state *st)
{
	struct fde_rows *fr = ctx;
	struct cfi_stats *stats = fr->p->stats;
	struct cfi_rule r;
	void *n;
	int id;

	if (stats->raw_rows >= fr->p->budget.max_raw_rows) {
		fr->err = budget_exceeded(fr->p->diag, fr->fde->sec->name, fr->fde->offset,
					  "raw rows", fr->p->budget.max_raw_rows);
		return fr->err;
	}
	fr->err = budget_tick(&fr->p->budget, fr->p->diag);
	if (fr->err)
		return fr->err;
	rule_classify(st, fr->fde->sec->regs, fr->fde->cie->signal_frame, &r);
	stats->raw_rows++;
	if (r.reason != CFI_UNSUP_NONE && r.reason < CFI_UNSUP_MAX)
		stats->unsupported[r.reason]++;
	id = rule_dict_intern(fr->dict, &r);
	if (id < 0) {
		fr->err = id;
		return id;
	}
	if (fr->nr && fr->v[fr->nr - 1].addr == addr) {
		fr->v[fr->nr - 1].rule = (uint16_t)id;
		return 0;
	}
	if (fr->nr && fr->v[fr->nr - 1].rule == id)
		return 0;
	n = vec_grow(fr->v, sizeof(*fr->v), fr->nr, &fr->cap, 64);
	if (!n) {
		fr->err = CFI_ERR_NOMEM;
		return CFI_ERR_NOMEM;
	}
	fr->v = n;
	fr->v[fr->nr].addr = addr;
	fr->v[fr->nr].rule = (uint16_t)id;
	fr->nr++;
	return 0;
}

/* ---- the flat address-ordered output ---- */

static int sink_put(struct row_sink *s, uint64_t addr, uint16_t rule)
{
	void *n;

	if (s->nr && s->v[s->nr - 1].addr == addr) {
		s->v[s->nr - 1].rule = rule;
		if (s->nr >= 2 && s->v[s->nr - 2].rule == rule)
			s->nr--;
		return 0;
	}
	if (s->nr && s->v[s->nr - 1].rule == rule)
		return 0; /* identical neighbours merge */
	if (!s->nr && rule == CFI_RULE_NONE)
		return 0;
	if (s->max && s->nr >= s->max)
		return CFI_ERR_BUDGET;
	n = vec_grow(s->v, sizeof(*s->v), s->nr, &s->cap, 4096);
	if (!n)
		return CFI_ERR_NOMEM;
	s->v = n;
	s->v[s->nr].addr = addr;
	s->v[s->nr].rule = rule;
	s->nr++;
	return 0;
}

/* The FDE of one source whose pieces are being emitted, run once. */
struct fde_run {
	uint64_t fde; /* index into the parse's FDEs; UINT64_MAX: none yet */
	bool ok;
	uint64_t next; /* first of its rows not yet passed */
	struct fde_rows fr;
};

static int emit_pieces(struct cfi_parse *p, struct pieces *ps, struct rule_dict *dict,
		       struct row_sink *out, struct diag_ctx *diag)
{
	/*
	 * Within one source, pieces of different FDEs never interleave (a later
	 * FDE starts past the cursor), but a clipped FDE's pieces interleave with
	 * other sources' pieces: one run per source keeps each FDE's program run
	 * once and its rows read once, in address order.
	 */
	struct fde_run runs[CFI_SRC_MAX];
	uint64_t i, k;
	int err = 0, s;

	for (s = 0; s < CFI_SRC_MAX; s++)
		runs[s] = (struct fde_run){.fde = UINT64_MAX, .fr = {.dict = dict, .p = p}};
	for (i = 0; i < ps->nr; i++) {
		const struct piece *pc = &ps->v[i];
		const struct fde *f = &p->fdes[pc->fde];
		struct fde_run *run = &runs[f->sec->source];
		struct fde_rows *fr = &run->fr;
		uint16_t in_force;

		if (pc->fde != run->fde) {
			fr->nr = 0;
			fr->err = 0;
			fr->fde = f;
			run->fde = pc->fde;
			run->next = 0;
			if (f->sec->source == CFI_SRC_GOPCLNTAB)
				run->ok = go_run_fde(f, collect_row, fr) == 0;
			else if (f->sec->source == CFI_SRC_STUBS)
				run->ok = linker_stubs_run_fde(f, collect_row, fr) == 0;
			else
				run->ok = cfa_run_fde(f, collect_row, fr, diag) == 0;
			if (run->ok && !fr->err && f->sec->regs->arch == CFI_ARCH_ARM64)
				fr->err = arm64_add_left_out_push(fr->dict, fr->v, fr->nr);
			if (fr->err == CFI_ERR_NOMEM || fr->err == CFI_ERR_TOO_BIG ||
			    fr->err == CFI_ERR_BUDGET) {
				err = fr->err;
				break;
			}
			if (!run->ok) {
				p->stats->fdes_bad++;
			} else {
				p->stats->fdes++;
			}
		}
		if (!run->ok || !fr->nr)
			continue; /* a bad FDE leaves a gap, never a guess */
		/* pieces of one FDE come in address order: its rows are scanned once */
		for (k = run->next; k < fr->nr && fr->v[k].addr <= pc->start; k++)
			;
		in_force = fr->v[k ? k - 1 : 0].rule;
		err = sink_put(out, pc->start, in_force);
		for (; !err && k < fr->nr && fr->v[k].addr < pc->end; k++)
			err = sink_put(out, fr->v[k].addr, fr->v[k].rule);
		run->next = k;
		if (!err && (i + 1 == ps->nr || ps->v[i + 1].start != pc->end))
			err = sink_put(out, pc->end, CFI_RULE_NONE);
		if (err)
			break;
	}
	for (s = 0; s < CFI_SRC_MAX; s++)
		free(runs[s].fr.v);
	return err;
}

/* ---- pages ---- */

struct page_builder {
	struct cfi_table *t;
	uint64_t cap_rows, cap_pages;
	uint64_t max_bytes; /* 0: any */
};

/* Bytes of t's rows and page index with rows and pages more, as the table store counts them. */
static uint64_t table_bytes_with(const struct cfi_table *t, uint64_t rows, uint64_t pages)
{
	return (t->nr_rows + rows) * sizeof(struct cfi_row) +
	       (t->nr_pages + pages) * (sizeof(struct cfi_page_key) + sizeof(struct cfi_page_val));
}

/* Whether one more row (and page) keeps the table within its bytes. */
static bool pb_fits(const struct page_builder *pb, uint64_t rows, uint64_t pages)
{
	return !pb->max_bytes || table_bytes_with(pb->t, rows, pages) <= pb->max_bytes;
}

static int pb_row(struct page_builder *pb, uint16_t off, uint16_t rule)
{
	struct cfi_table *t = pb->t;
	void *n;

	if (t->nr_rows == pb->cap_rows && pb->cap_rows * 2 > UINT32_MAX)
		return CFI_ERR_TOO_BIG;
	if (!pb_fits(pb, 1, 0))
		return CFI_ERR_BUDGET;
	n = vec_grow(t->rows, sizeof(*t->rows), t->nr_rows, &pb->cap_rows, 4096);
	if (!n)
		return CFI_ERR_NOMEM;
	t->rows = n;
	t->rows[t->nr_rows].off = off;
	t->rows[t->nr_rows].rule = rule;
	t->nr_rows++;
	t->pages[t->nr_pages - 1].nr_rows++;
	return 0;
}

/* A page holding nothing but "no info" is dropped: a missing page means the same. */
static void pb_drop_empty_last(struct cfi_table *t)
{
	struct cfi_page *last;

	if (!t->nr_pages)
		return;
	last = &t->pages[t->nr_pages - 1];
	if (last->nr_rows == 1 && t->rows[last->first_row].rule == CFI_RULE_NONE) {
		t->nr_rows--;
		t->nr_pages--;
	}
}

static int pb_page(struct page_builder *pb, uint64_t page)
{
	struct cfi_table *t = pb->t;
	void *n;

	pb_drop_empty_last(t);
	if (t->nr_pages == pb->cap_pages && pb->cap_pages * 2 > MAX_PAGES * 2ull)
		return CFI_ERR_TOO_BIG;
	if (!pb_fits(pb, 0, 1))
		return CFI_ERR_BUDGET;
	n = vec_grow(t->pages, sizeof(*t->pages), t->nr_pages, &pb->cap_pages, 64);
	if (!n)
		return CFI_ERR_NOMEM;
	t->pages = n;
	if (t->nr_pages >= MAX_PAGES)
		return CFI_ERR_TOO_BIG;
	t->pages[t->nr_pages].page = page;
	t->pages[t->nr_pages].first_row = t->nr_rows;
	t->pages[t->nr_pages].nr_rows = 0;
	t->nr_pages++;
	return 0;
}

/*
 * Folding gaps.  Every "no info" row between two functions costs 4 bytes; most
 * gaps are alignment padding right after a function's last row.  Such a gap is
 * folded into that row's rule as a hole (see struct cfi_rule) when the same
 * (rule, hole) pair recurs often enough to pay for its dictionary entry; the
 * next function's first row is then absorbed too when it repeats the rule.
 */
#define FOLD_MIN_USES 5

/* The id of rule base with a hole folded in (see struct cfi_rule), or an error. */
static int intern_hole(struct rule_dict *dict, uint16_t base, uint8_t off, uint8_t len)
{
	struct cfi_rule h = dict->rules[base];

	h.hole_off = off;
	h.hole_len = len;
	return rule_dict_intern(dict, &h);
}

static bool gap_key(const struct row_sink *s, struct rule_dict *dict, uint64_t prev, uint64_t i,
		    uint32_t *key)
{
	uint64_t a, end, next;
	const struct cfi_rule *r;

	if (i + 1 >= s->nr || s->v[i].rule != CFI_RULE_NONE)
		return false;
	a = s->v[prev].addr;
	end = s->v[i].addr;
	next = s->v[i + 1].addr;
	r = &dict->rules[s->v[prev].rule];
	if (r->cfa_kind == CFI_CFA_NONE || r->hole_len || end - a > 0xff || next - end > 0xff ||
	    (a >> CFI_PAGE_SHIFT) != (next >> CFI_PAGE_SHIFT))
		return false;
	*key = ((uint32_t)s->v[prev].rule << 16 | (uint32_t)(end - a) << 8 | (uint32_t)(next - end));
	return true;
}

/*
 * The fallback fold for gaps whose (rule, offset) pair is rare: hole_off 0
 * means the hole is the last hole_len bytes before the next row, which keeps
 * the number of distinct rules small (gap lengths are mostly alignment
 * padding) at the cost of not absorbing the next function's first row.
 */
static bool end_key(const struct row_sink *s, struct rule_dict *dict, uint64_t prev, uint64_t i,
		    uint32_t *key)
{
	uint64_t end, next;
	const struct cfi_rule *r;

	if (i + 1 >= s->nr || s->v[i].rule != CFI_RULE_NONE)
		return false;
	end = s->v[i].addr;
	next = s->v[i + 1].addr;
	r = &dict->rules[s->v[prev].rule];
	if (r->cfa_kind == CFI_CFA_NONE || r->hole_len || next - end > 0xff ||
	    (s->v[prev].addr >> CFI_PAGE_SHIFT) != (next >> CFI_PAGE_SHIFT))
		return false;
	/* hole_off 0 in the key: never produced by gap_key, whose hole_off is >= 1 */
	*key = (uint32_t)s->v[prev].rule << 16 | (uint32_t)(next - end);
	return true;
}

static int fold_gaps(struct row_sink *s, struct rule_dict *dict)
{
	/* keys: rule << 16 | hole_off << 8 | hole_len */
	struct key_counts fc = {0};
	uint64_t i, out;
	uint32_t key;
	int err = 0, id;

	for (i = 1; i < s->nr && !err; i++) {
		if (gap_key(s, dict, i - 1, i, &key))
			err = key_counts_add(&fc, key);
		if (!err && end_key(s, dict, i - 1, i, &key))
			err = key_counts_add(&fc, key);
	}
	if (err)
		goto out;
	for (i = 0, out = 0; i < s->nr; i++) {
		uint16_t base;
		if (out && gap_key(s, dict, out - 1, i, &key) &&
		    key_counts_get(&fc, key) >= FOLD_MIN_USES) {
			base = s->v[out - 1].rule;
			id = intern_hole(dict, base, (uint8_t)(key >> 8), (uint8_t)key);
			if (id < 0) {
				err = id;
				goto out;
			}
			/* the gap row goes; so does a following row that repeats the rule */
			s->v[out - 1].rule = (uint16_t)id;
			if (s->v[i + 1].rule == base)
				i++;
			continue;
		}
		if (out && end_key(s, dict, out - 1, i, &key) &&
		    key_counts_get(&fc, key) >= FOLD_MIN_USES) {
			id = intern_hole(dict, s->v[out - 1].rule, 0, (uint8_t)key);
			if (id < 0) {
				err = id;
				goto out;
			}
			/* the gap row goes; the hole ends where the next row starts */
			s->v[out - 1].rule = (uint16_t)id;
			continue;
		}
		s->v[out++] = s->v[i];
	}
	s->nr = out;
out:
	key_counts_free(&fc);
	return err;
}

/* The rule a new page starts with: a folded hole belongs to its own row only. */
static int without_hole(struct rule_dict *dict, uint16_t id)
{
	struct cfi_rule r = dict->rules[id];

	if (!r.hole_len)
		return id;
	r.hole_off = 0;
	r.hole_len = 0;
	return rule_dict_intern(dict, &r);
}

static int build_pages(const struct row_sink *s, struct rule_dict *dict, struct cfi_table *t,
		       uint64_t max_bytes)
{
	struct page_builder pb = {.t = t, .max_bytes = max_bytes};
	uint64_t i, cur = UINT64_MAX, pg;
	uint16_t in_force = CFI_RULE_NONE;
	int err = 0;

	for (i = 0; i < s->nr && !err; i++) {
		uint64_t addr = s->v[i].addr, page = addr >> CFI_PAGE_SHIFT;
		uint16_t off = (uint16_t)(addr & (CFI_PAGE_SIZE - 1));

		if (page != cur) {
			int base = without_hole(dict, in_force);

			if (base < 0)
				return base;
			in_force = (uint16_t)base;
			/* pages crossed by one long rule still need their own entry */
			if (cur != UINT64_MAX && in_force != CFI_RULE_NONE) {
				if (page - cur > MAX_PAGES)
					return CFI_ERR_TOO_BIG;
				for (pg = cur + 1; pg < page && !err; pg++) {
					err = pb_page(&pb, pg);
					if (!err)
						err = pb_row(&pb, 0, in_force);
				}
			}
			if (!err)
				err = pb_page(&pb, page);
			if (!err && off != 0)
				err = pb_row(&pb, 0, in_force);
			cur = page;
		}
		if (!err)
			err = pb_row(&pb, off, s->v[i].rule);
		in_force = s->v[i].rule;
	}
	if (!err)
		pb_drop_empty_last(t);
	return err;
}

/* Bytes after an entry point without CFI that are treated as the outermost frame. */
#define ENTRY_SPAN_MAX 256

/*
 * The entry point is where the kernel starts a thread of execution, so the
 * frame there is the outermost one whether or not it has CFI.  ld.so's
 * _start / _dl_start_user have none; without this rule every sample taken
 * while the dynamic loader runs would end as "no rule".
 */
static int mark_entry(struct row_sink *s, struct rule_dict *dict, uint64_t entry)
{
	struct cfi_rule r = {.cfa_kind = CFI_CFA_RSP, .cfa_off = 8, .ra_kind = CFI_REG_UNDEFINED};
	uint64_t lo = 0, hi = s->nr, end;
	int id;

	if (!entry)
		return 0;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].addr <= entry)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo: first row after entry; lo - 1: the row in force at entry */
	if (lo > 0 && s->v[lo - 1].rule != CFI_RULE_NONE)
		return 0;
	end = entry + ENTRY_SPAN_MAX;
	if (lo < s->nr && s->v[lo].addr < end)
		end = s->v[lo].addr;
	id = rule_dict_intern(dict, &r);
	if (id < 0)
		return id;
	if (s->nr + 2 > s->cap) {
		void *n = realloc(s->v, (s->nr + 2) * sizeof(*s->v));

		if (!n)
			return CFI_ERR_NOMEM;
		s->v = n;
		s->cap = s->nr + 2;
	}
	if (lo > 0 && s->v[lo - 1].addr == entry) {
		s->v[lo - 1].rule = (uint16_t)id; /* the gap row sat exactly at entry */
	} else {
		memmove(&s->v[lo + 1], &s->v[lo], (s->nr - lo) * sizeof(*s->v));
		s->v[lo].addr = entry;
		s->v[lo].rule = (uint16_t)id;
		s->nr++;
		lo++;
	}
	if (lo == s->nr || s->v[lo].addr != end) {
		memmove(&s->v[lo + 1], &s->v[lo], (s->nr - lo) * sizeof(*s->v));
		s->v[lo].addr = end;
		s->v[lo].rule = CFI_RULE_NONE;
		s->nr++;
	}
	return 0;
}

int build_compact(struct cfi_parse *p, struct rule_dict *dict, struct cfi_table *t,
		  struct diag_ctx *diag)
{
	uint64_t max_bytes = p->budget.max_bytes;
	struct pieces acc = {0};
	struct row_sink sink = {0};
	int err = 0, src;

	/*
	 * A table keeps at least half its sink's rows (a folded gap takes one
	 * row with it, and gaps never follow each other), and pairing keeps at
	 * least half of those: a sink four times what max_bytes holds in rows,
	 * or pages with twice its bytes, is a table past it.
	 */
	if (max_bytes)
		sink.max = 4 * (max_bytes / sizeof(struct cfi_row)) + 4;
	for (src = 0; src < CFI_SRC_MAX && !err; src++)
		err = add_source(p, (enum cfi_source)src, &acc, p->stats);
	if (!err)
		err = emit_pieces(p, &acc, dict, &sink, diag);
	if (err == CFI_ERR_BUDGET && sink.max && sink.nr >= sink.max)
		budget_exceeded(diag, "ELF", 0, "bytes of table", max_bytes);
	if (!err)
		err = mark_entry(&sink, dict, p->entry);
	if (!err)
		err = fold_gaps(&sink, dict);
	if (!err) {
		err = build_pages(&sink, dict, t, 2 * max_bytes);
		if (!err)
			err = pair_rows(t, dict);
		if (!err && max_bytes && table_bytes_with(t, 0, 0) > max_bytes)
			err = CFI_ERR_BUDGET;
		if (err == CFI_ERR_BUDGET)
			budget_exceeded(diag, "ELF", 0, "bytes of table", max_bytes);
	}
	if (!err && sink.nr) {
		t->min_addr = sink.v[0].addr;
		t->max_addr = sink.v[sink.nr - 1].addr;
	}
	free(acc.v);
	free(sink.v);
	return err;
}
