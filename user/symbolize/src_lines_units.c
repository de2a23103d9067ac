// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* An object's compile units and their address ranges; see src_lines_units.h. */
#include "user/symbolize/src_lines_units.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "elf/sections.h"

/* Bytes of the line program at @off of .debug_line (@d): libdw decodes all of it. */
static uint64_t line_program_bytes(const Elf_Data *d, uint64_t off)
{
	uint32_t len32;
	uint64_t len64;

	if (!d || off > d->d_size || d->d_size - off < 4)
		return 0;
	memcpy(&len32, (const char *)d->d_buf + off, 4);
	if (len32 != 0xffffffffu)
		return len32;
	if (d->d_size - off < 12)
		return 0;
	memcpy(&len64, (const char *)d->d_buf + off + 4, 8);
	return len64;
}

/* A debug section as libdw reads it (libelf keeps one copy per section, inflated once). */
static Elf_Data *debug_section(Elf *e, const char *name)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_by_name(e, name, &sh);

	return scn && sh.sh_type != SHT_NOBITS ? elf_getdata(scn, NULL) : NULL;
}

static int by_start(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* One more range of unit cu; -1 past the limit or out of memory. */
static int add_range(struct src_lines *sl, uint64_t start, uint64_t end, uint64_t cu)
{
	struct cu_range *cr;

	/* ranges at 0 are functions the linker dropped */
	if (!start || end <= start)
		return 0;
	if (sl->nr_ranges >= SRC_MAX_CUS * 4ull)
		return -1;
	cr = vec_grow(sl->ranges, sizeof(*cr), sl->nr_ranges, &sl->cap_ranges, 256);
	if (!cr)
		return -1;
	sl->ranges = cr;
	sl->ranges[sl->nr_ranges++] = (struct cu_range){start, end, (uint32_t)cu};
	return 0;
}

/* The unit at off (its header's offset when hdr, its first DIE's when not); -1 if none. */
static long unit_at(const struct src_lines *sl, Dwarf_Off off, bool hdr)
{
	uint64_t lo = 0, hi = sl->nr_cus;

	/* units are listed in order of offset */
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if ((hdr ? sl->cus[mid].unit_off : sl->cus[mid].die_off) < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < sl->nr_cus && (hdr ? sl->cus[lo].unit_off : sl->cus[lo].die_off) == off)
		return (long)lo;
	return -1;
}

/* A little-endian (the section's, as the host's) value of size bytes (4 or 8) at p. */
static uint64_t read_word(const unsigned char *p, unsigned int size)
{
	uint32_t v32;
	uint64_t v64;

	if (size == 4) {
		memcpy(&v32, p, 4);
		return v32;
	}
	memcpy(&v64, p, 8);
	return v64;
}

/*
 * One set of .debug_aranges at off of p (size bytes): its unit marked as
 * listed there (a unit without code has an empty set) and its ranges added.
 * The offset of the next set; 0 at a malformed one (the rest is not read).
 */
static uint64_t aranges_set(struct src_lines *sl, const unsigned char *p, uint64_t size,
			    uint64_t off)
{
	unsigned int word = 4, initial = 4, asize;
	uint64_t len, end, t, start, n;
	uint16_t version;
	long cu;

	len = read_word(p + off, 4);
	if (len == 0xffffffffu) {
		if (size - off < 12)
			return 0;
		len = read_word(p + off + 4, 8);
		word = 8;
		initial = 12;
	}
	if (len > size - off - initial || len < 2u + word + 2u)
		return 0;
	end = off + initial + len;
	memcpy(&version, p + off + initial, 2);
	asize = p[off + initial + 2 + word];
	/* version 2, 4- or 8-byte addresses, no segment selectors: anything else is skipped */
	if (version != 2 || (asize != 4 && asize != 8) || p[off + initial + 2 + word + 1])
		return end;
	cu = unit_at(sl, read_word(p + off + initial + 2, word), true);
	if (cu < 0)
		return end;
	sl->units_aranges += !sl->cus[cu].in_aranges;
	sl->cus[cu].in_aranges = true;
	/* the tuples start at a multiple of their size from the set's start */
	t = initial + 2 + word + 2;
	t = off + (t + 2 * asize - 1) / (2 * asize) * (2 * asize);
	for (; t + 2 * asize <= end; t += 2 * asize) {
		start = read_word(p + t, asize);
		n = read_word(p + t + asize, asize);
		if (!start && !n)
			break;
		if (start + n >= start && add_range(sl, start, start + n, (uint64_t)cu))
			return UINT64_MAX;
	}
	return end;
}

/*
 * The ranges .debug_aranges gives, read here: libdw's own reading interns
 * every unit (an allocation each), and the units' DIEs cost an abbreviation
 * table each (libc6-dbg: 2,063 units, every one with a set in its aranges).
 * -1 over the limit of ranges.
 */
static int ranges_from_aranges(struct src_lines *sl)
{
	Elf_Data *d = debug_section(sl->elf, ".debug_aranges");
	const unsigned char *p = d ? d->d_buf : NULL;
	uint64_t off = 0, size = d && p ? d->d_size : 0;

	/* a set's end never passes the section's: off <= size */
	while (size - off >= 4) {
		off = aranges_set(sl, p, size, off);
		if (off == UINT64_MAX)
			return -1;
		if (!off)
			break;
	}
	return 0;
}

/* A unit .debug_aranges left out: the ranges of its DIE, if it is a compile or partial unit. */
static int ranges_from_die(struct src_lines *sl, uint64_t cu)
{
	Dwarf_Die cudie;
	Dwarf_Addr base, start, end;
	ptrdiff_t r = 0;
	uint8_t unit_type;

	if (!dwarf_offdie(sl->dw, sl->cus[cu].die_off, &cudie) ||
	    dwarf_cu_info(cudie.cu, NULL, &unit_type, NULL, NULL, NULL, NULL, NULL) ||
	    (unit_type != DW_UT_compile && unit_type != DW_UT_partial))
		return 0;
	sl->units_die++;
	while ((r = dwarf_ranges(&cudie, r, &base, &start, &end)) > 0)
		if (add_range(sl, start, end, cu))
			return -1;
	return 0;
}

/*
 * Lists the units (their headers only) and their ranges; -1 when the object
 * is over a limit.  A unit's line program is measured at its first lookup.
 */
int src_lines_list_units(struct src_lines *sl)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	sl->units_aranges = sl->units_die = 0;
	while (!dwarf_next_unit(sl->dw, off, &next, &hsize, NULL, NULL, NULL, NULL, NULL, NULL)) {
		struct cu_info *ci;

		if (sl->nr_cus >= SRC_MAX_CUS)
			return -1;
		ci = vec_grow(sl->cus, sizeof(*sl->cus), sl->nr_cus, &sl->cap_cus, 64);
		if (!ci)
			return -1;
		sl->cus = ci;
		sl->cus[sl->nr_cus++] =
		    (struct cu_info){.unit_off = off, .die_off = off + hsize, .bytes = next - off};
		off = next;
	}
	if (ranges_from_aranges(sl))
		return -1;
	for (uint64_t i = 0; i < sl->nr_cus; i++)
		if (!sl->cus[i].in_aranges && ranges_from_die(sl, i))
			return -1;
	qsort(sl->ranges, sl->nr_ranges, sizeof(*sl->ranges), by_start);
	return 0;
}

/* What a lookup in unit cu walks: its DIEs and its line program (measured once). */
uint64_t src_lines_unit_bytes(struct src_lines *sl, struct cu_info *ci)
{
	Dwarf_Die cudie;
	Dwarf_Attribute at;
	Dwarf_Word stmt;

	if (ci->sized)
		return ci->bytes;
	ci->sized = true;
	if (dwarf_offdie(sl->dw, ci->die_off, &cudie) && dwarf_attr(&cudie, DW_AT_stmt_list, &at) &&
	    !dwarf_formudata(&at, &stmt))
		ci->bytes += line_program_bytes(debug_section(sl->elf, ".debug_line"), stmt);
	return ci->bytes;
}

/* The unit covering @vaddr, or -1. */
long src_lines_find_unit(const struct src_lines *sl, uint64_t vaddr)
{
	uint64_t lo = 0, hi = sl->nr_ranges;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (sl->ranges[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges of different units do not nest: the closest start below decides */
	if (lo && vaddr < sl->ranges[lo - 1].end)
		return sl->ranges[lo - 1].cu;
	return -1;
}
