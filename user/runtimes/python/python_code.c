// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * One Python code object read from its process (process_vm_readv); see
 * python_code.h.  The process may be hostile: every pointer is only an
 * address to try, every length is bounded before use, a string that is not a
 * compact str object or a table that is not a bytes object is refused.
 */
#include <stdlib.h>
#include <string.h>

#include "user/runtimes/python/python_code.h"
#include "user/runtimes/target_mem.h"
#include "user/runtimes/python/python_offsets.h"

#define PN_MAX_NAME	 512	     /* characters of a name or file kept */
#define PN_MAX_LINETABLE (64u << 10) /* bytes of a location table kept */
#define PN_HEADER_MAX	 256	     /* bytes of a code object read at once */

/* Appends code point c as UTF-8; returns the bytes written (0: no room). */
static size_t put_utf8(char *out, size_t room, uint32_t c)
{
	if (c < 0x80 && room >= 1) {
		out[0] = (char)c;
		return 1;
	}
	if (c < 0x800 && room >= 2) {
		out[0] = (char)(0xc0 | c >> 6);
		out[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000 && room >= 3) {
		out[0] = (char)(0xe0 | c >> 12);
		out[1] = (char)(0x80 | (c >> 6 & 0x3f));
		out[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	if (c < 0x110000 && room >= 4) {
		out[0] = (char)(0xf0 | c >> 18);
		out[1] = (char)(0x80 | (c >> 12 & 0x3f));
		out[2] = (char)(0x80 | (c >> 6 & 0x3f));
		out[3] = (char)(0x80 | (c & 0x3f));
		return 4;
	}
	return 0;
}

/*
 * A str object at addr as UTF-8 into out (len bytes, NUL-terminated), at most
 * PN_MAX_NAME characters: compact strings only (what the compiler makes of
 * names and file names).  -1 when it is not one.
 */
static int read_str(uint32_t pid, const struct python_offsets *o, uint64_t addr, char *out,
		    size_t len)
{
	uint8_t hdr[80], data[PN_MAX_NAME * 4];
	uint64_t chars;
	uint32_t kind, state, i;
	size_t n = 0;
	uint16_t data_off;

	/* the header every str has; a compact non-ASCII one's data follows a longer one */
	if (o->str_ascii_data > sizeof(hdr) || target_read(pid, addr, hdr, o->str_ascii_data))
		return -1;
	chars = target_u64(hdr, o->str_length);
	state = hdr[o->str_state];
	kind = state >> 2 & 7;
	/* state: interned:2 kind:3 compact:1 ascii:1, then 3.11's ready:1 */
	if (!(state & 1u << 5) || (o->str_ready_bit && !(state & 1u << 7)) ||
	    (kind != 1 && kind != 2 && kind != 4))
		return -1;
	if ((state & 1u << 6) && kind != 1)
		return -1;
	if (chars > PN_MAX_NAME)
		chars = PN_MAX_NAME;
	data_off = state & 1u << 6 ? o->str_ascii_data : o->str_compact_data;
	if (chars && target_read(pid, addr + data_off, data, chars * kind))
		return -1;
	for (i = 0; i < chars; i++) {
		uint32_t c = kind == 1	 ? data[i]
			     : kind == 2 ? ((uint16_t *)data)[i]
					 : ((uint32_t *)data)[i];
		size_t w = put_utf8(out + n, len - 1 - n, c ? c : '?');

		if (!w)
			break;
		n += w;
	}
	out[n] = 0;
	return 0;
}

void python_code_read(uint32_t pid, const struct python_offsets *o, uint64_t code,
		      struct python_code *c)
{
	uint8_t hdr[PN_HEADER_MAX], bhdr[40];
	char name[PN_MAX_NAME * 4 + 1], file[PN_MAX_NAME * 4 + 1];
	uint64_t tab, tab_len;
	size_t nl, fl;
	int32_t first;

	memset(c, 0, sizeof(*c));
	if (!o || o->code_read > sizeof(hdr) || target_read(pid, code, hdr, o->code_read))
		return;
	memcpy(&first, hdr + o->code_firstlineno, sizeof(first));
	if (o->code_firsttraceable != PY_OFF_NONE)
		memcpy(&c->firsttraceable, hdr + o->code_firsttraceable, sizeof(c->firsttraceable));
	if (o->code_code == PY_OFF_NONE) {
		c->nr_units =
		    target_u64(hdr, o->bytes_size); /* a code object is a PyVarObject too */
	} else {
		/* 3.10 and older: the instructions are a bytes object of their own */
		if (o->bytes_data > sizeof(bhdr) ||
		    target_read(pid, target_u64(hdr, o->code_code), bhdr, o->bytes_data))
			return;
		c->nr_units = target_u64(bhdr, o->bytes_size) / 2;
	}
	if (first < 0 || c->firsttraceable > (1u << 24) || c->nr_units > (1u << 24))
		return;
	if (read_str(pid, o, target_u64(hdr, o->code_qualname), name, sizeof(name)) ||
	    read_str(pid, o, target_u64(hdr, o->code_filename), file, sizeof(file)))
		return;
	tab = target_u64(hdr, o->code_linetable);
	tab_len = 0;
	if (o->bytes_data <= sizeof(bhdr) && !target_read(pid, tab, bhdr, o->bytes_data)) {
		tab_len = target_u64(bhdr, o->bytes_size);
		if (tab_len > PN_MAX_LINETABLE)
			tab_len = PN_MAX_LINETABLE; /* lines past it read as the first line */
	}
	nl = strlen(name) + 1;
	fl = strlen(file) + 1;
	c->name = malloc(nl + fl + tab_len);
	if (!c->name)
		return;
	memcpy(c->name, name, nl);
	c->file = c->name + nl;
	memcpy(c->file, file, fl);
	c->linetable = (uint8_t *)c->file + fl;
	if (tab_len && target_read(pid, tab + o->bytes_data, c->linetable, tab_len))
		tab_len = 0;
	c->linetable_len = (uint32_t)tab_len;
	c->firstlineno = first;
	c->bytes = nl + fl + tab_len;
	c->ok = true;
}
