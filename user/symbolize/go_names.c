// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Go function names and lines from .gopclntab; see go_names.h. */
#include "user/symbolize/go_names.h"

#include <string.h>

#include "elf/gopclntab.h"
#include "elf/sections.h"
#include "user/symbolize/elf_symbols.h"

/* bytes of the tables every go_names keeps, in whichever symbolizer thread */
static uint64_t lines_held, lines_max = GO_LINES_HELD_MAX;

uint64_t go_names_set_lines_max(uint64_t max)
{
	return __atomic_exchange_n(&lines_max, max, __ATOMIC_RELAXED);
}

/* Whether n more bytes fit the bound: taken if so. */
static bool take_lines_bytes(uint64_t n)
{
	uint64_t cur = __atomic_load_n(&lines_held, __ATOMIC_RELAXED);
	uint64_t max = __atomic_load_n(&lines_max, __ATOMIC_RELAXED);

	do {
		if (n > max || cur > max - n)
			return false;
	} while (!__atomic_compare_exchange_n(&lines_held, &cur, cur + n, false, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return true;
}

/* Adds function @i of @g; 1 when the byte bound leaves no room, -1 on ENOMEM or bad data. */
static int add_func(struct sym_table *t, const struct gopclntab *g, uint64_t i)
{
	uint64_t start, end;
	const char *name;
	size_t len;
	int64_t off;
	int room;

	if (gopclntab_func(g, i, &start, &end, &name))
		return 0; /* one bad record: counted, the others still named */
	/* Go names are short; a longer one is cut like an ELF symbol's */
	len = strnlen(name, ELF_SYMBOL_NAME_MAX);
	room = sym_table_room(t, len + 1, ELF_SYMBOLS_BYTES_MAX);
	if (room <= 0)
		return room < 0 ? -1 : 1;
	off = sym_table_intern(t, name, len);
	if (off < 0 || (start < end && sym_table_add(t, start, end, (uint32_t)off, 0) < 0))
		return -1;
	return 0;
}

/* From the first function's start to the last one's end: functions are sorted by address. */
static void text_range(struct go_names *gn, const struct gopclntab *g)
{
	uint64_t n = gopclntab_nfunc(g), start, end, s2, e2;
	const char *name;

	if (n && !gopclntab_func(g, 0, &start, &end, &name) &&
	    !gopclntab_func(g, n - 1, &s2, &e2, &name) && start < e2) {
		gn->text_start = start;
		gn->text_end = e2;
	}
}

void go_names_read_text(struct go_names *gn, Elf *e, int fd)
{
	struct gopclntab *g;
	GElf_Shdr sh;

	if (!gopclntab_section(e, &sh) || gopclntab_read_names(e, fd, &g, NULL))
		return;
	text_range(gn, g);
	gopclntab_free(g);
}

bool go_names_is_go(const struct go_names *gn, uint64_t vaddr)
{
	if (gn->fns.n)
		return sym_table_find(&gn->fns, vaddr) >= 0;
	return vaddr >= gn->text_start && vaddr < gn->text_end;
}

int go_names_read(struct go_names *gn, Elf *e, int fd, bool lines)
{
	struct gopclntab *g = NULL;
	uint64_t i, n;
	/* the inline trees' funcdata only for lines */
	int ret = lines ? gopclntab_read(e, fd, &g, NULL) : gopclntab_read_names(e, fd, &g, NULL);
	int r = 0;

	memset(gn, 0, sizeof(*gn));
	if (ret)
		return ret;
	n = gopclntab_nfunc(g);
	text_range(gn, g);
	for (i = 0; i < n && r == 0; i++)
		r = add_func(&gn->fns, g, i);
	if (r > 0)
		gopclntab_refused(GOPCLNTAB_OVER_BUDGET);
	if (r < 0) {
		gopclntab_free(g);
		sym_table_release(&gn->fns);
		return -1;
	}
	sym_table_finish(&gn->fns);
	if (lines && take_lines_bytes(gopclntab_bytes(g))) {
		gn->tab = g;
		return 0;
	}
	if (lines)
		gopclntab_refused(GOPCLNTAB_OVER_BUDGET);
	gopclntab_free(g);
	return 0;
}

int go_names_lines(struct go_names *gn, uint64_t vaddr, const struct src_frame **frames)
{
	struct gopclntab_frame fr[SRC_FRAMES_MAX];
	int n, i;

	*frames = NULL;
	if (!gn->tab)
		return 0;
	n = gopclntab_frames(gn->tab, vaddr, fr, SRC_FRAMES_MAX);
	for (i = 0; i < n; i++)
		gn->frames[i] = (struct src_frame){.system_name = fr[i].name,
						   .file = fr[i].file,
						   .line = fr[i].line,
						   .start_line = fr[i].start_line};
	if (n > 0)
		*frames = gn->frames;
	return n;
}

void go_names_free(struct go_names *gn)
{
	/* what take_lines_bytes took for it: the table kept is the one counted */
	__atomic_fetch_sub(&lines_held, gopclntab_bytes(gn->tab), __ATOMIC_RELAXED);
	gopclntab_free(gn->tab);
	gn->tab = NULL;
	sym_table_release(&gn->fns);
}
