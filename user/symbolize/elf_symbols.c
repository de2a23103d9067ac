// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An ELF object's function symbols as sorted ranges: .symtab and .dynsym,
 * PLT stubs, and the .symtab of the separate debug file of a stripped object.
 */
#include "user/symbolize/elf_symbols.h"

#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf/debug_file.h"
#include "elf/elf_read.h"
#include "elf/minidebuginfo.h"
#include "elf/sections.h"

/* A function symbol as read, before aliases are merged. */
struct cand {
	uint64_t addr, size;
	/* End of the containing section: the limit for a zero-sized symbol. */
	uint64_t sec_end;
	const char *name;
	int bind_rank;
	bool plt;   /* synthesized for a PLT stub */
	bool label; /* STT_NOTYPE in code: named only where no function is */
};

/*
 * Section bytes read per object (symbol tables, their strings, PLT
 * relocations; its debug file's or MiniDebugInfo's included), charged before
 * libelf allocates them (elf/elf_read.h): ELF_SYMBOLS_MAX symbols with names
 * of 40 bytes on average, many times over.
 */
#define ELF_SYMBOLS_READ_MAX (256ull << 20)

static uint64_t refused[ELF_SYMBOLS_REFUSAL_MAX];

uint64_t elf_symbols_refused(enum elf_symbols_refusal r)
{
	return r < ELF_SYMBOLS_REFUSAL_MAX ? __atomic_load_n(&refused[r], __ATOMIC_RELAXED) : 0;
}

static void count_refusal(enum elf_symbols_refusal r, uint64_t n)
{
	__atomic_fetch_add(&refused[r], n, __ATOMIC_RELAXED);
}

/* A name's length as kept: never scanned past the bound, whatever its real length. */
static size_t name_len(const char *s)
{
	return strnlen(s, ELF_SYMBOL_NAME_MAX + 1);
}

/* An object past ELF_SYMBOLS_MAX keeps the first ones read. */
struct cands {
	struct cand *v;
	size_t n, cap;
	bool full; /* ELF_SYMBOLS_MAX reached: the rest is ignored */
};

static int cands_push(struct cands *cs, const struct cand *cd)
{
	if (cs->n >= ELF_SYMBOLS_MAX) {
		cs->full = true;
		return 0;
	}
	if (cs->n == cs->cap) {
		size_t cap = cs->cap ? 2 * cs->cap : 1024;
		struct cand *p = realloc(cs->v, cap * sizeof(*p));

		if (!p)
			return -1;
		cs->v = p;
		cs->cap = cap;
	}
	cs->v[cs->n++] = *cd;
	return 0;
}

static int bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

/*
 * A label perf names code by: an untyped symbol in an executable section,
 * visible (not an assembler's local label), not an AArch64 or ARM mapping
 * symbol ($x, $d); ld.so's _start and _dl_start_user, hand-written
 * assembly, of size 0 or given one (arm64's vDSO __kernel_rt_sigreturn,
 * SYM_CODE_START and .size: the signal trampoline).  Where a function covers it, the function names
 * it (the labels inside functions are dropped once all are read: drop_covered_labels).
 */
static bool is_code_label(const GElf_Sym *sym, const char *name, size_t ndx, const bool *sec_code,
			  size_t shnum)
{
	unsigned char vis = GELF_ST_VISIBILITY(sym->st_other);

	return ndx < shnum && ndx < SHN_LORESERVE && sec_code[ndx] && name[0] != '$' &&
	       strncmp(name, ".L", 2) && vis != STV_HIDDEN && vis != STV_INTERNAL;
}

/*
 * Appends the defined function symbols of the first usable section of @type:
 * an object has one .symtab and one .dynsym, and more headers of either type
 * can only be copies (read again, each would multiply the symbols).
 * Returns 1 when such a section was read, 0 when there is none, -1 on ENOMEM.
 */
static int collect(Elf *e, Elf64_Word type, struct cands *cs, uint64_t *left)
{
	uint64_t *sec_end = NULL;
	bool *sec_code = NULL;
	Elf_Scn *scn = NULL;
	size_t shnum, i;
	int found = 0;

	if (elf_getshdrnum(e, &shnum) != 0)
		return 0;
	while (!found && (scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr shdr;
		Elf_Data *data, *xdata = NULL;
		size_t nsym;

		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != type || !shdr.sh_entsize)
			continue;
		/* the names too: elf_strptr reads the whole string table */
		data = elf_read_section(scn, left, NULL);
		if (!data || !elf_read_section(elf_getscn(e, shdr.sh_link), left, NULL))
			continue;
		found = 1;
		/* Section ends, indexed by section number, for the zero-size rule. */
		sec_end = calloc(shnum ? shnum : 1, sizeof(*sec_end));
		if (!sec_end)
			return -1;
		sec_code = calloc(shnum ? shnum : 1, sizeof(*sec_code));
		if (!sec_code) {
			free(sec_end);
			return -1;
		}
		for (i = 1; i < shnum; i++) {
			GElf_Shdr s;

			if (gelf_getshdr(elf_getscn(e, i), &s) && (s.sh_flags & SHF_ALLOC)) {
				sec_end[i] = s.sh_addr + s.sh_size;
				sec_code[i] = (s.sh_flags & SHF_EXECINSTR) != 0;
			}
		}
		/* Symbols whose section index does not fit in st_shndx keep it here. */
		{
			Elf_Scn *x = NULL;

			while ((x = elf_nextscn(e, x)) != NULL) {
				GElf_Shdr xs;

				if (gelf_getshdr(x, &xs) && xs.sh_type == SHT_SYMTAB_SHNDX &&
				    xs.sh_link == elf_ndxscn(scn)) {
					xdata = elf_read_section(x, left, NULL);
					break;
				}
			}
		}
		nsym = shdr.sh_size / shdr.sh_entsize;
		for (i = 1; i < nsym && !cs->full; i++) {
			GElf_Sym sym;
			Elf32_Word xndx = 0;
			struct cand cd;
			unsigned char st;
			size_t ndx;

			if (!gelf_getsymshndx(data, xdata, (int)i, &sym, &xndx))
				break;
			st = GELF_ST_TYPE(sym.st_info);
			if ((st != STT_FUNC && st != STT_GNU_IFUNC && st != STT_NOTYPE) ||
			    sym.st_shndx == SHN_UNDEF || sym.st_value == 0)
				continue;
			cd.name = elf_strptr(e, shdr.sh_link, sym.st_name);
			if (!cd.name || !cd.name[0])
				continue;
			ndx = sym.st_shndx == SHN_XINDEX ? xndx : sym.st_shndx;
			cd.label = st == STT_NOTYPE;
			if (cd.label && !is_code_label(&sym, cd.name, ndx, sec_code, shnum))
				continue;
			cd.addr = sym.st_value;
			cd.size = sym.st_size;
			cd.sec_end = 0;
			if ((sym.st_shndx < SHN_LORESERVE || sym.st_shndx == SHN_XINDEX) &&
			    ndx < shnum)
				cd.sec_end = sec_end[ndx];
			if (cd.sec_end <= cd.addr)
				cd.sec_end = 0;
			/* a function at the same address names it first */
			cd.bind_rank = bind_rank(GELF_ST_BIND(sym.st_info)) + (cd.label ? 3 : 0);
			cd.plt = false;
			if (cands_push(cs, &cd) < 0) {
				free(sec_end);
				free(sec_code);
				return -1;
			}
		}
	}
	free(sec_end);
	free(sec_code);
	return found;
}

#define PLT_ENTRY    16
#define GOT_RESERVED 3	/* .got.plt's first slots: _DYNAMIC, the link map, the lazy resolver */
#define R_JUMP_SLOT  7	/* R_X86_64_JUMP_SLOT */
#define R_IRELATIVE  37 /* R_X86_64_IRELATIVE: an ifunc called through the PLT */

/* The name of a function symbol of syms at addr (an ifunc's resolver), global first; or NULL. */
static const char *func_at(Elf *e, Elf_Data *syms, const GElf_Shdr *sh, GElf_Addr addr)
{
	const char *best = NULL;
	GElf_Sym sym;

	for (int k = 1; sh->sh_entsize && (size_t)k < sh->sh_size / sh->sh_entsize; k++) {
		int type;

		if (!gelf_getsym(syms, k, &sym) || sym.st_value != addr ||
		    sym.st_shndx == SHN_UNDEF)
			continue;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_GNU_IFUNC && type != STT_FUNC)
			continue;
		if (!best || GELF_ST_BIND(sym.st_info) == STB_GLOBAL)
			best = elf_strptr(e, sh->sh_link, sym.st_name);
		if (best && GELF_ST_BIND(sym.st_info) == STB_GLOBAL)
			break;
	}
	return best;
}

/*
 * PLT stubs have no symbols; name them "func@plt" as perf and objdump do.
 * Stub k of .plt.sec (IBT), or k + 1 of .plt (entry 0 calls the lazy
 * resolver), jumps through slot k of .got.plt past its reserved ones: the
 * slot a .rela.plt entry names by its offset.  The entries are not in slot
 * order where ifunc (IRELATIVE) ones are among them (libc: "realloc@plt" was
 * put on strnlen's stub), so the slot, not the index, places the name; an
 * ifunc's stub is named after the ifunc whose resolver is its addend.  The
 * names are allocated in *arena (freed by the caller after the table is
 * built); local binding, so a real symbol at the same address wins.
 * Returns -1 on ENOMEM only.
 */
static int collect_plt(Elf *e, struct cands *cs, char **arena, uint64_t *left)
{
	GElf_Shdr rela_sh, plt_sh, sym_sh, got_sh;
	Elf_Scn *rela = elf_section_by_name(e, ".rela.plt", &rela_sh), *plt, *syms, *got;
	Elf_Data *rdata, *sdata;
	size_t n, i, used = 0, cap = 0, first = 0, nr_stubs;
	char *names = NULL;

	*arena = NULL;
	if (!rela || rela_sh.sh_type != SHT_RELA || !rela_sh.sh_entsize)
		return 0;
	plt = elf_section_by_name(e, ".plt.sec", &plt_sh);
	if (!plt) {
		plt = elf_section_by_name(e, ".plt", &plt_sh);
		first = 1;
	}
	syms = elf_getscn(e, rela_sh.sh_link);
	if (!plt || !syms || !gelf_getshdr(syms, &sym_sh) || sym_sh.sh_type != SHT_DYNSYM)
		return 0;
	got = elf_section_by_name(e, ".got.plt", &got_sh);
	rdata = elf_read_section(rela, left, NULL);
	sdata = elf_read_section(syms, left, NULL);
	/* elf_strptr reads the whole string table */
	if (!elf_read_section(elf_getscn(e, sym_sh.sh_link), left, NULL))
		return 0;
	n = rela_sh.sh_size / rela_sh.sh_entsize;
	/* a PLT that does not hold one stub per relocation is not one we understand */
	if (!rdata || !sdata || (n + first) * PLT_ENTRY > plt_sh.sh_size)
		return 0;
	nr_stubs = plt_sh.sh_size / PLT_ENTRY - first;
	for (i = 0; i < n; i++) {
		const char *name = NULL;
		size_t slot = i, len;
		GElf_Rela r;
		GElf_Sym sym;
		struct cand cd;

		if (!gelf_getrela(rdata, (int)i, &r))
			continue;
		if (GELF_R_TYPE(r.r_info) == R_JUMP_SLOT &&
		    gelf_getsym(sdata, (int)GELF_R_SYM(r.r_info), &sym))
			name = elf_strptr(e, sym_sh.sh_link, sym.st_name);
		else if (GELF_R_TYPE(r.r_info) == R_IRELATIVE)
			name = func_at(e, sdata, &sym_sh, (GElf_Addr)r.r_addend);
		if (!name || !name[0])
			continue;
		/* without .got.plt (none seen yet), the index as before */
		if (got) {
			if (r.r_offset < got_sh.sh_addr + GOT_RESERVED * 8 ||
			    (r.r_offset - got_sh.sh_addr) % 8)
				continue;
			slot = (r.r_offset - got_sh.sh_addr) / 8 - GOT_RESERVED;
		}
		if (slot >= nr_stubs)
			continue;
		/* cut like any name (build_table), so the arena is bounded by the count */
		len = name_len(name);
		if (len > ELF_SYMBOL_NAME_MAX)
			len = ELF_SYMBOL_NAME_MAX;
		len += sizeof("@plt");
		if (used + len > cap) {
			/* names are found again by offset: cands hold offsets until the end */
			char *p = realloc(names, cap = (cap + len) * 2);

			if (!p) {
				free(names);
				return -1;
			}
			names = p;
		}
		snprintf(names + used, len, "%.*s@plt", (int)(len - sizeof("@plt")), name);
		cd.addr = plt_sh.sh_addr + (slot + first) * PLT_ENTRY;
		cd.size = PLT_ENTRY;
		cd.sec_end = plt_sh.sh_addr + plt_sh.sh_size;
		cd.name = (const char *)(uintptr_t)used;
		cd.bind_rank = 2;
		cd.plt = true;
		cd.label = false;
		if (cands_push(cs, &cd) < 0) {
			free(names);
			return -1;
		}
		used += len;
	}
	/* the arena moved while it grew: offsets become pointers now */
	for (i = 0; i < cs->n; i++) {
		if (cs->v[i].plt)
			cs->v[i].name = names + (uintptr_t)cs->v[i].name;
	}
	*arena = names;
	return 0;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;

	while (n < ELF_SYMBOL_NAME_MAX && s[n] == '_')
		n++;
	return n;
}

/*
 * Alias rule, applied to symbols at one address, first difference wins:
 * global (or unique) over weak over local binding; fewer leading
 * underscores (malloc over __libc_malloc); shorter name; strcmp order.
 * The result depends only on the set of symbols, never on file order.
 */
static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	size_t ux, uy, lx, ly;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->bind_rank != y->bind_rank)
		return x->bind_rank - y->bind_rank;
	ux = leading_underscores(x->name);
	uy = leading_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	/* names compare as kept (cut): a 400 KB name is never scanned whole */
	lx = name_len(x->name);
	ly = name_len(y->name);
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strncmp(x->name, y->name, lx);
}

/*
 * Labels inside a function (the sorted candidates' sized ones) or at its
 * address go: there the function's name is the one perf and the debug info
 * give, and a label would cut the function's range short.
 */
static void drop_covered_labels(struct cands *cs)
{
	uint64_t covered_to = 0;
	size_t i, n = 0;

	for (i = 0; i < cs->n; i++) {
		const struct cand *c = &cs->v[i];

		if (c->label && c->addr < covered_to)
			continue;
		if (c->label && n && cs->v[n - 1].addr == c->addr && !cs->v[n - 1].label)
			continue;
		if (!c->label && c->size && c->addr + c->size > covered_to)
			covered_to = c->addr + c->size;
		cs->v[n++] = *c;
	}
	cs->n = n;
}

/* The end of the symbol at cs->v[i], first of its address, whose group ends at j. */
static uint64_t group_end(const struct cands *cs, size_t i, size_t j)
{
	uint64_t addr = cs->v[i].addr, end = 0, sec_end = 0;
	size_t k;

	for (k = i; k < j; k++) {
		if (cs->v[k].size && addr + cs->v[k].size > end)
			end = addr + cs->v[k].size;
		if (cs->v[k].sec_end > sec_end)
			sec_end = cs->v[k].sec_end;
	}
	if (end)
		return end;
	/*
	 * Zero-sized (hand-written assembly without .size): assume it runs to
	 * the next function but never out of its section.
	 */
	end = j < cs->n ? cs->v[j].addr : UINT64_MAX;
	if (sec_end && sec_end < end)
		end = sec_end;
	return end == UINT64_MAX ? addr + 1 : end;
}

static size_t group_next(const struct cands *cs, size_t i)
{
	size_t j = i;

	while (j < cs->n && cs->v[j].addr == cs->v[i].addr)
		j++;
	return j;
}

/* The name kept for @name: its length, cut to the bound with its mark. */
static size_t kept_len(const char *name)
{
	size_t len = name_len(name);

	return len > ELF_SYMBOL_NAME_MAX ? ELF_SYMBOL_NAME_MAX : len;
}

/*
 * How many addresses (groups, from the first) fit in @max_bytes of ranges and
 * names, and the names' bytes: sized before anything is allocated.
 */
static size_t fit_groups(const struct cands *cs, uint64_t max_bytes, size_t *str_bytes)
{
	uint64_t bytes = 0;
	size_t i = 0, groups = 0;

	*str_bytes = 0;
	while (i < cs->n) {
		uint64_t need = sizeof(struct sym_range) + kept_len(cs->v[i].name) + 1;

		if (bytes + need > max_bytes)
			break;
		bytes += need;
		*str_bytes += need - sizeof(struct sym_range);
		groups++;
		i = group_next(cs, i);
	}
	return groups;
}

static int add_group(struct sym_table *t, const struct cands *cs, size_t i, size_t j)
{
	const char *name = cs->v[i].name;
	size_t len = kept_len(name);
	int64_t off;

	if (name_len(name) > ELF_SYMBOL_NAME_MAX) {
		size_t cut = sizeof(ELF_SYMBOL_NAME_CUT) - 1;
		char buf[ELF_SYMBOL_NAME_MAX];

		memcpy(buf, name, len - cut);
		memcpy(buf + len - cut, ELF_SYMBOL_NAME_CUT, cut);
		off = sym_table_intern(t, buf, len);
		count_refusal(ELF_SYMBOLS_NAME_CUT, 1);
	} else {
		off = sym_table_intern(t, name, len);
	}
	if (off < 0)
		return -1;
	return sym_table_add(t, cs->v[i].addr, group_end(cs, i, j), (uint32_t)off, 0);
}

/*
 * One range per address, named by the alias rule, in at most @max_bytes:
 * the table is sized first and allocated once.  Returns 0, 1 when symbols
 * past the bound were dropped (counted), -1 on ENOMEM.
 */
static int build_table(struct sym_table *t, struct cands *cs, uint64_t max_bytes)
{
	size_t i = 0, j, groups, str_bytes, kept = 0;
	bool over = cs->full;

	if (cs->n)
		qsort(cs->v, cs->n, sizeof(*cs->v), cand_cmp);
	drop_covered_labels(cs);
	groups = fit_groups(cs, max_bytes, &str_bytes);
	if (groups && sym_table_reserve(t, groups, str_bytes) < 0)
		return -1;
	for (; i < cs->n && kept < groups; i = j, kept++) {
		j = group_next(cs, i);
		if (add_group(t, cs, i, j) < 0)
			return -1;
	}
	over |= i < cs->n;
	if (over)
		count_refusal(ELF_SYMBOLS_BUDGET, 1);
	sym_table_finish(t);
	return over;
}

bool elf_has_symtab(Elf *e)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr shdr;

	while ((scn = elf_nextscn(e, scn)) != NULL)
		if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_SYMTAB)
			return true;
	return false;
}

static const char *no_symtab(Elf *e, void *ctx)
{
	(void)ctx;
	return elf_has_symtab(e) ? NULL : "has no .symtab";
}

int elf_symbols_read_symtab(struct sym_table *t, Elf *e, uint64_t max_bytes)
{
	uint64_t left = ELF_SYMBOLS_READ_MAX;
	struct cands cs = {0};
	int ret = -1;

	if (!max_bytes || max_bytes > ELF_SYMBOLS_BYTES_MAX)
		max_bytes = ELF_SYMBOLS_BYTES_MAX;
	if (collect(e, SHT_SYMTAB, &cs, &left) >= 0)
		ret = build_table(t, &cs, max_bytes);
	free(cs.v);
	return ret;
}

int elf_symbols_read(struct sym_table *t, Elf *e, const char *path, const struct stat *self,
		     const char *debug_root, uint32_t pid, struct elf_symbols_info *info)
{
	struct debug_file_search s = {
	    .root = debug_root,
	    .obj_path = path,
	    .pid = pid,
	    .self = self,
	    .unusable = no_symtab,
	};
	struct debug_file dbg = {.fd = -1};
	struct minidebuginfo mini = {0};
	struct cands cs = {0};
	uint64_t left = ELF_SYMBOLS_READ_MAX;
	char *plt_names = NULL;
	int ret = -1, nsymtab;

	memset(info, 0, sizeof(*info));
	nsymtab = collect(e, SHT_SYMTAB, &cs, &left);
	if (nsymtab < 0 || collect(e, SHT_DYNSYM, &cs, &left) < 0 ||
	    collect_plt(e, &cs, &plt_names, &left) < 0)
		goto out;
	info->symtab = nsymtab > 0;
	/* Only a stripped object needs its debug file: .symtab is all we read there. */
	if (nsymtab == 0 && !debug_file_find(e, &s, &dbg)) {
		info->debug_file = strdup(dbg.path);
		if (!info->debug_file || collect(dbg.elf, SHT_SYMTAB, &cs, &left) < 0 ||
		    elf_read_truncated(dbg.fd, dbg.size))
			goto out;
		info->symtab = true;
	} else if (nsymtab == 0 && !minidebuginfo_open(e, 0, &mini)) {
		/* Fedora's: the static functions .dynsym lacks, beside it */
		if ((nsymtab = collect(mini.elf, SHT_SYMTAB, &cs, &left)) < 0)
			goto out;
		info->symtab = info->minidebuginfo = nsymtab > 0;
	}
	/* Names point into the mapped files: build before elf_end. */
	ret = build_table(t, &cs, ELF_SYMBOLS_BYTES_MAX) < 0 ? -1 : 0;
out:
	if (ret < 0) {
		free(info->debug_file);
		info->debug_file = NULL;
	}
	free(plt_names);
	free(cs.v);
	debug_file_close(&dbg);
	minidebuginfo_close(&mini);
	return ret;
}
