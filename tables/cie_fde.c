// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CIE and FDE parsing for .eh_frame (by .eh_frame_hdr or linear scan) and
 * .debug_frame.  A malformed entry is reported and skipped; the scan goes on
 * with the next entry whenever its length can still be trusted.
 */
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "tables/diag.h"
#include "tables/dwarf_reader.h"
#include "tables/internal.h"

#define DW_EH_PE_omit 0xff
#define DW_EH_PE_indirect 0x80

int read_encoded(const struct cfi_section *sec, const uint8_t **pp, const uint8_t *end,
		 uint8_t enc, uint64_t *out)
{
	const uint8_t *field = *pp;
	uint64_t v = 0, base = 0;
	int64_t s;

	if (enc == DW_EH_PE_omit)
		return -1;
	switch (enc & 0x0f) {
	case 0x00: /* absptr */
		if (!rd_fixed(pp, end, 8, &v))
			return -1;
		break;
	case 0x01:
		if (!rd_uleb(pp, end, &v))
			return -1;
		break;
	case 0x02:
		if (!rd_fixed(pp, end, 2, &v))
			return -1;
		break;
	case 0x03:
		if (!rd_fixed(pp, end, 4, &v))
			return -1;
		break;
	case 0x04:
		if (!rd_fixed(pp, end, 8, &v))
			return -1;
		break;
	case 0x09:
		if (!rd_sleb(pp, end, &s))
			return -1;
		v = (uint64_t)s;
		break;
	case 0x0a:
		if (!rd_fixed(pp, end, 2, &v))
			return -1;
		v = (uint64_t)(int64_t)(int16_t)v;
		break;
	case 0x0b:
		if (!rd_fixed(pp, end, 4, &v))
			return -1;
		v = (uint64_t)(int64_t)(int32_t)v;
		break;
	case 0x0c:
		if (!rd_fixed(pp, end, 8, &v))
			return -1;
		break;
	default:
		return -1;
	}
	switch (enc & 0x70) {
	case 0x00:
		break;
	case 0x10: /* pcrel: relative to the field's own address */
		base = sec->vaddr + (uint64_t)(field - sec->data);
		break;
	case 0x20:
		base = sec->textrel;
		break;
	case 0x30:
		base = sec->datarel;
		break;
	case 0x40: /* funcrel: only meaningful inside an FDE; nobody emits it for pc_begin */
		break;
	case 0x50: /* aligned: absptr after aligning the cursor */
		return -1;
	default:
		return -1;
	}
	v += base;
	if (enc & DW_EH_PE_indirect) {
		if (!sec->read_addr || sec->read_addr(sec->read_ctx, v, &v))
			return -1;
	}
	*out = v;
	return 0;
}

/* Size in bytes of a pointer field, used for pc_range (format only, never applied). */
static int read_range(const uint8_t **pp, const uint8_t *end, uint8_t enc, uint64_t *out)
{
	struct cfi_section plain = {0};

	return read_encoded(&plain, pp, end, enc & 0x0f, out);
}

static uint32_t cie_slot(const uint8_t *sec_data, uint64_t off, uint32_t mask)
{
	uint64_t k = (off ^ (uint64_t)(uintptr_t)sec_data) * 0x9e3779b97f4a7c15ull;

	return (uint32_t)(k >> 32) & mask;
}

static struct cie *cie_find(struct cfi_parse *p, const struct cfi_section *sec, uint64_t off)
{
	uint32_t mask, i;

	if (!p->cie_hash_cap)
		return NULL;
	mask = p->cie_hash_cap - 1;
	for (i = cie_slot(sec->data, off, mask); p->cie_hash[i]; i = (i + 1) & mask) {
		struct cie *c = p->cies[p->cie_hash[i] - 1];

		if (c->offset == off && c->sec_data == sec->data)
			return c;
	}
	return NULL;
}

static struct cie *cie_insert(struct cfi_parse *p, const struct cie *c)
{
	uint32_t i;

	struct cie *copy;

	if (p->nr_cies == p->cap_cies) {
		uint32_t ncap = p->cap_cies ? p->cap_cies * 2 : 16;
		struct cie **n = realloc(p->cies, ncap * sizeof(*n));

		if (!n)
			return NULL;
		p->cies = n;
		p->cap_cies = ncap;
	}
	copy = malloc(sizeof(*copy));
	if (!copy)
		return NULL;
	*copy = *c;
	if ((p->nr_cies + 1) * 2 > p->cie_hash_cap) {
		uint32_t ncap = p->cie_hash_cap ? p->cie_hash_cap * 2 : 64, j;
		uint32_t *n = calloc(ncap, sizeof(*n));

		if (!n) {
			free(copy);
			return NULL;
		}
		for (j = 0; j < p->nr_cies; j++) {
			i = cie_slot(p->cies[j]->sec_data, p->cies[j]->offset, ncap - 1);
			while (n[i])
				i = (i + 1) & (ncap - 1);
			n[i] = j + 1;
		}
		free(p->cie_hash);
		p->cie_hash = n;
		p->cie_hash_cap = ncap;
	}
	p->cies[p->nr_cies] = copy;
	i = cie_slot(c->sec_data, c->offset, p->cie_hash_cap - 1);
	while (p->cie_hash[i])
		i = (i + 1) & (p->cie_hash_cap - 1);
	p->cie_hash[i] = ++p->nr_cies;
	return copy;
}

struct entry_hdr {
	const uint8_t *id_field;
	const uint8_t *body;
	const uint8_t *end;
	uint64_t id;
	bool is64;
	bool zero;
};

/* Reads the length and id of the entry at off; -1 when the length cannot be trusted. */
static int read_entry_hdr(const struct cfi_section *sec, uint64_t off, struct entry_hdr *h,
			  const char **why)
{
	const uint8_t *p = sec->data + off, *end = sec->data + sec->size;
	uint64_t len;

	memset(h, 0, sizeof(*h));
	if (!rd_fixed(&p, end, 4, &len)) {
		*why = "truncated length";
		return -1;
	}
	if (len == 0) {
		h->zero = true;
		h->end = p;
		return 0;
	}
	if (len == 0xffffffffu) {
		if (!rd_fixed(&p, end, 8, &len)) {
			*why = "truncated 64-bit length";
			return -1;
		}
		h->is64 = true;
	} else if (len >= 0xfffffff0u) {
		*why = "reserved length value";
		return -1;
	}
	if (len > (uint64_t)(end - p)) {
		*why = "length past the end of the section";
		return -1;
	}
	h->end = p + len;
	h->id_field = p;
	if (!rd_fixed(&p, h->end, h->is64 ? 8 : 4, &h->id)) {
		*why = "entry too short for its id";
		return -1;
	}
	h->body = p;
	return 0;
}

static bool entry_is_cie(const struct cfi_section *sec, const struct entry_hdr *h)
{
	if (sec->is_eh)
		return h->id == 0;
	return h->is64 ? h->id == ~0ull : h->id == 0xffffffffu;
}

static const char *parse_cie_body(const struct cfi_section *sec, const struct entry_hdr *h,
				  struct cie *c)
{
	const uint8_t *p = h->body, *end = h->end;
	const char *aug;
	uint8_t version, b;
	uint64_t v;

	c->addr_size = 8;
	c->fde_enc = 0x00;
	if (!rd_u8(&p, end, &version))
		return "truncated CIE";
	if (version != 1 && version != 3 && version != 4)
		return "unsupported CIE version";
	if (!rd_str(&p, end, &aug))
		return "unterminated augmentation string";
	if (aug[0] == 'e' && aug[1] == 'h') {
		/* old GCC: an eh_ptr word follows the augmentation string */
		if (!rd_fixed(&p, end, 8, &v))
			return "truncated eh augmentation";
		aug += 2;
	}
	if (version == 4) {
		uint8_t seg;

		if (!rd_u8(&p, end, &c->addr_size) || !rd_u8(&p, end, &seg))
			return "truncated CIE header";
		if ((c->addr_size != 4 && c->addr_size != 8) || seg != 0)
			return "unsupported address or segment size";
	}
	if (!rd_uleb(&p, end, &c->code_align) || !rd_sleb(&p, end, &c->data_align))
		return "truncated alignment factors";
	if (version == 1) {
		if (!rd_u8(&p, end, &b))
			return "truncated return address register";
		c->ra_reg = b;
	} else if (!rd_uleb(&p, end, &c->ra_reg)) {
		return "truncated return address register";
	}
	if (!sec->is_eh && c->addr_size == 4)
		c->fde_enc = 0x03;
	if (aug[0] == 'z') {
		const uint8_t *aug_end;
		uint64_t aug_len;

		c->has_z = true;
		if (!rd_uleb(&p, end, &aug_len) || aug_len > (uint64_t)(end - p))
			return "augmentation data past the end of the CIE";
		aug_end = p + aug_len;
		for (aug++; *aug; aug++) {
			switch (*aug) {
			case 'R':
				if (!rd_u8(&p, aug_end, &c->fde_enc))
					return "truncated R augmentation";
				break;
			case 'P': {
				uint8_t penc;

				/* the personality is never dereferenced: strip indirect */
				if (!rd_u8(&p, aug_end, &penc) ||
				    read_encoded(sec, &p, aug_end, penc & 0x7f, &v))
					return "bad personality pointer";
				break;
			}
			case 'L':
				if (!rd_u8(&p, aug_end, &b))
					return "truncated L augmentation";
				break;
			case 'S':
				c->signal_frame = true;
				break;
			case 'B':
			case 'G':
				break;
			default:
				/* the 'z' length lets us skip what we do not know */
				goto aug_done;
			}
		}
aug_done:
		p = aug_end;
	} else if (aug[0] != 0) {
		return "unknown augmentation without 'z'";
	}
	if (c->fde_enc != 0xff && (c->fde_enc & 0x0f) > 0x0c)
		return "bad FDE pointer encoding";
	if (c->code_align == 0)
		return "zero code alignment factor";
	c->insns = p;
	c->insns_len = (uint64_t)(end - p);
	return NULL;
}

static const struct cie *get_cie(struct cfi_parse *p, const struct cfi_section *sec,
				 uint64_t off)
{
	struct cie c = {.sec_data = sec->data, .offset = off}, *cached;
	struct entry_hdr h;
	const char *why = NULL;

	cached = cie_find(p, sec, off);
	if (cached)
		return cached->bad ? NULL : cached;
	if (off >= sec->size)
		why = "CIE pointer outside the section";
	else if (read_entry_hdr(sec, off, &h, &why) == 0) {
		if (h.zero || !entry_is_cie(sec, &h))
			why = "CIE pointer does not point at a CIE";
		else
			why = parse_cie_body(sec, &h, &c);
	}
	if (why) {
		diag_add(p->diag, sec->name, off, "CIE: %s", why);
		c.bad = true;
	} else {
		p->stats->cies++;
		/* once per CIE, not once per FDE: a long initial program costs its length once */
		cfa_run_cie(&c, sec);
	}
	cached = cie_insert(p, &c);
	return cached && !cached->bad ? cached : NULL;
}

int cfi_push_fde(struct cfi_parse *p, const struct fde *f)
{
	if (p->nr_fdes >= p->budget.max_fdes)
		return budget_exceeded(p->diag, f->sec->name, f->offset, "FDEs",
				       p->budget.max_fdes);
	if (VEC_RESERVE(p->fdes, p->nr_fdes, p->cap_fdes, 1024))
		return CFI_ERR_NOMEM;
	p->fdes[p->nr_fdes++] = *f;
	return 0;
}

/* Parses the FDE whose header is h; a bad FDE is reported and skipped. */
static int parse_fde(struct cfi_parse *p, const struct cfi_section *sec, uint64_t off,
		     const struct entry_hdr *h)
{
	const uint8_t *q = h->body, *end = h->end;
	struct fde f = {.sec = sec, .offset = off};
	uint64_t cie_off, range;
	const char *why = NULL;

	if (sec->is_eh) {
		uint64_t field = (uint64_t)(h->id_field - sec->data);

		if (h->id > field) {
			why = "CIE pointer before the start of the section";
			goto bad;
		}
		cie_off = field - h->id;
	} else {
		cie_off = h->id;
	}
	f.cie = get_cie(p, sec, cie_off);
	if (!f.cie) {
		why = "its CIE is unusable";
		goto bad;
	}
	if (read_encoded(sec, &q, end, f.cie->fde_enc, &f.pc_begin) ||
	    read_range(&q, end, f.cie->fde_enc, &range)) {
		why = "bad pc_begin / pc_range";
		goto bad;
	}
	if (f.cie->has_z) {
		uint64_t aug_len;

		if (!rd_uleb(&q, end, &aug_len) || aug_len > (uint64_t)(end - q)) {
			why = "augmentation data past the end of the FDE";
			goto bad;
		}
		q += aug_len;
	}
	if (range == 0)
		return 0; /* covers nothing: linkers leave these for discarded code */
	if (range > CFI_MAX_FDE_RANGE || f.pc_begin >= CFI_MAX_ADDR ||
	    range > CFI_MAX_ADDR - f.pc_begin) {
		why = "pc range out of bounds";
		goto bad;
	}
	f.pc_end = f.pc_begin + range;
	f.insns = q;
	f.insns_len = (uint64_t)(end - q);
	return cfi_push_fde(p, &f);
bad:
	p->stats->fdes_bad++;
	diag_add(p->diag, sec->name, off, "FDE: %s", why);
	return 0;
}

int cfi_parse_section(struct cfi_parse *p, const struct cfi_section *sec)
{
	uint64_t off = 0;
	int err;

	while (off < sec->size) {
		struct entry_hdr h;
		const char *why;

		err = budget_tick(&p->budget, p->diag);
		if (err)
			return err;
		if (read_entry_hdr(sec, off, &h, &why)) {
			/* the length is untrusted: nothing after it can be found */
			diag_add(p->diag, sec->name, off, "%s", why);
			break;
		}
		if (!h.zero && !entry_is_cie(sec, &h)) {
			err = parse_fde(p, sec, off, &h);
			if (err)
				return err;
		}
		off = (uint64_t)(h.end - sec->data);
	}
	return 0;
}

/* Marks the FDE at @off parsed; false if it already was. */
static bool first_visit(uint8_t *seen, uint64_t off)
{
	uint8_t bit = (uint8_t)(1u << (off & 7));

	if (seen[off >> 3] & bit)
		return false;
	seen[off >> 3] |= bit;
	return true;
}

int cfi_parse_eh_frame_hdr(struct cfi_parse *p, const struct cfi_section *eh, const uint8_t *hdr,
			   uint64_t hdr_size, uint64_t hdr_vaddr)
{
	struct cfi_section hs = {.data = hdr, .size = hdr_size, .vaddr = hdr_vaddr,
				 .datarel = hdr_vaddr, .name = ".eh_frame_hdr"};
	const uint8_t *q = hdr, *end = hdr + hdr_size;
	uint8_t version, ptr_enc, count_enc, table_enc;
	uint64_t eh_ptr, count, i, first = p->nr_fdes;
	uint8_t *seen = NULL; /* one bit per .eh_frame byte: FDEs already parsed */
	int err = 0;

	if (!rd_u8(&q, end, &version) || !rd_u8(&q, end, &ptr_enc) ||
	    !rd_u8(&q, end, &count_enc) || !rd_u8(&q, end, &table_enc) || version != 1)
		goto fallback;
	if (read_encoded(&hs, &q, end, ptr_enc, &eh_ptr) || eh_ptr != eh->vaddr)
		goto fallback;
	if (count_enc == 0xff || table_enc == 0xff)
		return cfi_parse_section(p, eh); /* no search table: legitimate */
	if (read_encoded(&hs, &q, end, count_enc, &count))
		goto fallback;
	/* every table entry is at least 2 bytes: reject counts the section cannot hold */
	if (count > (uint64_t)(end - q) / 2)
		goto fallback;
	seen = calloc(eh->size / 8 + 1, 1);
	if (!seen)
		return CFI_ERR_NOMEM;
	for (i = 0; i < count; i++) {
		uint64_t loc, fde_addr, off;
		struct entry_hdr h;
		const char *why;

		err = budget_tick(&p->budget, p->diag);
		if (err)
			goto out;
		if (read_encoded(&hs, &q, end, table_enc, &loc) ||
		    read_encoded(&hs, &q, end, table_enc, &fde_addr))
			goto fallback;
		off = fde_addr - eh->vaddr;
		if (fde_addr < eh->vaddr || off >= eh->size) {
			diag_add(p->diag, ".eh_frame_hdr", (uint64_t)(q - hdr),
				 "table entry points outside .eh_frame");
			continue;
		}
		/* entries naming an FDE again add nothing but its copy: parse each FDE once */
		if (!first_visit(seen, off))
			continue;
		if (read_entry_hdr(eh, off, &h, &why)) {
			diag_add(p->diag, eh->name, off, "%s", why);
			continue;
		}
		if (h.zero || entry_is_cie(eh, &h)) {
			diag_add(p->diag, ".eh_frame_hdr", (uint64_t)(q - hdr),
				 "table entry does not point at an FDE");
			continue;
		}
		err = parse_fde(p, eh, off, &h);
		if (err)
			goto out;
	}
	goto out;
fallback:
	diag_add(p->diag, ".eh_frame_hdr", (uint64_t)(q - hdr),
		 "unusable search table: scanning .eh_frame linearly");
	p->nr_fdes = first;
	err = cfi_parse_section(p, eh);
out:
	free(seen);
	return err;
}

void cfi_parse_free(struct cfi_parse *p)
{
	uint32_t i;

	for (i = 0; i < p->nr_cies; i++)
		free(p->cies[i]);
	free(p->cies);
	free(p->cie_hash);
	free(p->fdes);
	memset(p, 0, sizeof(*p));
}
