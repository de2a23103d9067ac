// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A SharedFunctionInfo named from a live V8 process; see v8_sfi.h.  The
 * process may be hostile: every pointer is only an address to try, every
 * object's instance type is checked before a field of it is trusted, every
 * length is bounded and so are the reads of one SharedFunctionInfo.
 */
#include <stdbool.h>
#include <string.h>

#include "user/runtimes/target_mem.h"
#include "user/runtimes/v8/v8_sfi.h"

#define V8_NAME_MAX	 256		  /* bytes of a name kept, its NUL included */
#define V8_FILE_MAX	 1024		  /* ... of a file */
#define V8_CONS_DEPTH	 8		  /* strings within strings followed */
#define V8_LINE_ENDS_MAX (1u << 22)	  /* a script's lines */
#define V8_STRING_MAX	 ((1 << 29) - 24) /* String::kMaxLength (64-bit) */
#define V8_LOCALS_MAX	 (1 << 20)	  /* a ScopeInfo's context locals */
#define V8_READS_MAX	 4096		  /* target reads for one SharedFunctionInfo */
/* characters of a script's source scanned for a line (V8_FILE_MAX a read, within V8_READS_MAX) */
#define V8_SOURCE_SCAN_MAX (2u << 20)

/*
 * What the v8dbg symbols leave out, as V8 11.3 (Node.js 20) lays it out in
 * src/objects/scope-info.tq (bitfield struct ScopeFlags, class ScopeInfo),
 * src/objects/scope-info.cc (ScopeInfo::Create, NeedsPositionInfo) and
 * src/objects/debug-objects.tq (class DebugInfo); each value checked on
 * node 20's V8 11.3.244.8 heap: the read-only empty_scope_info's flags are
 * bit 29 alone, a function's scope type is 2 (CLASS, EVAL, FUNCTION, MODULE,
 * SCRIPT are 0-4; newer V8s renumber them), its name where its
 * function_variable bits (1 or 3) say, 75 context locals make a hash table
 * and 74 stay inline (tests/unit/test_v8.c), a DebugInfo's script is its
 * third slot.
 *
 * A ScopeInfo's slots follow its map: flags (a Smi) in slot 0, then the
 * parameter and context local counts and, from v8dbg_scopeinfo_idx_first_vars,
 * the variable part: the context locals' names (or one hash table of them
 * when there are kScopeInfoMaxInlinedLocalNamesSize or more) and infos,
 * saved_class_variable_info?, function_variable_info? (name, slot),
 * inferred_function_name?, position_info? (start, end), then what names
 * nothing (11.3 keeps a module's variable count after its module_info).
 */
#define SI_FLAGS_SLOT	      0
#define SI_SCOPE_TYPE(f)      ((f)&0xf)
#define SI_SAVED_CLASS_VAR    (1u << 10)
#define SI_FUNCTION_VAR(f)    ((f) >> 12 & 3) /* VariableAllocationInfo: NONE is 0 */
#define SI_INFERRED_NAME      (1u << 14)
#define SI_IS_EMPTY	      (1u << 29)
#define SI_MAX_INLINED_LOCALS 75 /* kScopeInfoMaxInlinedLocalNamesSize */
/* the scope types with position_info: CLASS, EVAL, FUNCTION, MODULE, SCRIPT (0-4) */
#define SI_HAS_POSITION(t) ((t) <= 4)
/* DebugInfo: shared, debugger_hints, script after its map */
#define DEBUG_INFO_SCRIPT_SLOT 2

struct v8_reader {
	uint32_t pid;
	const struct v8_offsets *o;
	unsigned reads_left;
};

/* A NUL-terminated UTF-8 string being built, never past cap bytes. */
struct v8_text {
	char *s;
	size_t len, cap;
	bool full;
	/* not NULL: the characters' newlines are counted here, none kept */
	uint64_t *newlines;
};

static int rd(struct v8_reader *r, uint64_t addr, void *buf, size_t len)
{
	if (!r->reads_left)
		return -1;
	r->reads_left--;
	return target_read(r->pid, addr, buf, len);
}

static bool is_heap_object(const struct v8_offsets *o, uint64_t v)
{
	return (v & o->heap_object_tag_mask) == o->heap_object_tag;
}

/* A Smi: bit 0 clear (v8_elf_offsets checked a HeapObject's tag has it set). */
static bool smi(const struct v8_offsets *o, uint64_t v, int64_t *out)
{
	*out = (int64_t)v >> o->smi_shift;
	return !(v & 1);
}

/* The bytes at off of the HeapObject obj. */
static int field(struct v8_reader *r, uint64_t obj, uint32_t off, void *out, size_t len)
{
	return rd(r, obj - r->o->heap_object_tag + off, out, len);
}

static int tagged(struct v8_reader *r, uint64_t obj, uint32_t off, uint64_t *out)
{
	return field(r, obj, off, out, sizeof(*out));
}

/* The instance type of obj; -1 when it is no HeapObject whose map can be read. */
static int type_of(struct v8_reader *r, uint64_t obj)
{
	const struct v8_offsets *o = r->o;
	uint64_t map;
	uint16_t type;

	if (!is_heap_object(o, obj) || tagged(r, obj, o->bpf.heap_object_map, &map) ||
	    !is_heap_object(o, map) || field(r, map, o->bpf.map_instance_type, &type, sizeof(type)))
		return -1;
	return type;
}

static bool is_string_type(const struct v8_offsets *o, int type)
{
	return type >= 0 && type < o->first_nonstring_type && !(type & o->is_not_string_mask);
}

/* Code point c appended as UTF-8, a control or a lone surrogate as '?'. */
static void text_put(struct v8_text *t, uint32_t c)
{
	char u[4];
	size_t n;

	if (c < 0x20 || (c >= 0x7f && c < 0xa0) || (c >= 0xd800 && c < 0xe000) || c > 0x10ffff)
		c = '?';
	if (c < 0x80) {
		u[0] = (char)c;
		n = 1;
	} else if (c < 0x800) {
		u[0] = (char)(0xc0 | c >> 6);
		u[1] = (char)(0x80 | (c & 0x3f));
		n = 2;
	} else if (c < 0x10000) {
		u[0] = (char)(0xe0 | c >> 12);
		u[1] = (char)(0x80 | (c >> 6 & 0x3f));
		u[2] = (char)(0x80 | (c & 0x3f));
		n = 3;
	} else {
		u[0] = (char)(0xf0 | c >> 18);
		u[1] = (char)(0x80 | (c >> 12 & 0x3f));
		u[2] = (char)(0x80 | (c >> 6 & 0x3f));
		u[3] = (char)(0x80 | (c & 0x3f));
		n = 4;
	}
	/* a character that does not fit whole ends the text */
	if (t->full || t->len + n >= t->cap) {
		t->full = true;
		return;
	}
	memcpy(t->s + t->len, u, n);
	t->len += n;
	t->s[t->len] = 0;
}

/*
 * count characters from start of the sequential string s (one byte: Latin-1;
 * two: UTF-16) appended: no more than the text has bytes left, each
 * character taking one at least.
 */
static int seq_append(struct v8_reader *r, uint64_t s, bool one_byte, uint32_t start,
		      uint32_t count, struct v8_text *t)
{
	const struct v8_offsets *o = r->o;
	uint16_t units[V8_FILE_MAX];
	uint8_t *bytes = (uint8_t *)units;
	size_t n = t->cap - t->len;

	/* counting: every character of the range, in reads of V8_FILE_MAX */
	while (t->newlines && count) {
		n = count < V8_FILE_MAX ? count : V8_FILE_MAX;
		if (one_byte ? field(r, s, o->seq_one_byte_chars + start, bytes, n)
			     : field(r, s, o->seq_two_byte_chars + 2 * start, units, 2 * n))
			return -1;
		for (size_t i = 0; i < n; i++)
			*t->newlines += (one_byte ? bytes[i] : units[i]) == '\n';
		start += (uint32_t)n;
		count -= (uint32_t)n;
	}
	if (t->newlines)
		return 0;

	n = count < n ? count : n;
	if (n > V8_FILE_MAX)
		n = V8_FILE_MAX;
	if (one_byte) {
		if (field(r, s, o->seq_one_byte_chars + start, bytes, n))
			return -1;
		for (size_t i = 0; i < n; i++)
			text_put(t, bytes[i]);
		return 0;
	}
	if (field(r, s, o->seq_two_byte_chars + 2 * start, units, 2 * n))
		return -1;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = units[i];

		if (c >= 0xd800 && c < 0xdc00 && i + 1 < n && units[i + 1] >= 0xdc00 &&
		    units[i + 1] < 0xe000)
			c = 0x10000 + ((c - 0xd800) << 10) + (units[++i] - 0xdc00);
		text_put(t, c);
	}
	return 0;
}

/* The string at s: its instance type (-1: no string) and length. */
static int string_of(struct v8_reader *r, uint64_t s, uint32_t *len)
{
	int type = type_of(r, s);
	int32_t n;

	if (!is_string_type(r->o, type) || field(r, s, r->o->string_length, &n, sizeof(n)) ||
	    n < 0 || n > V8_STRING_MAX)
		return -1;
	*len = (uint32_t)n;
	return type;
}

/*
 * Characters [start, start + count) of the string at s appended to t,
 * whatever its representation but external (its characters are the
 * embedder's, where no v8dbg symbol says): 0, or -1.
 */
static int text_append(struct v8_reader *r, uint64_t s, uint32_t start, uint32_t count, int depth,
		       struct v8_text *t)
{
	const struct v8_offsets *o = r->o;
	uint64_t a, b;
	uint32_t len, first_len;
	int64_t off;
	int type, rep;

	type = depth > V8_CONS_DEPTH ? -1 : string_of(r, s, &len);
	if (type < 0 || start > len)
		return -1;
	count = count < len - start ? count : len - start;
	if (!count || t->full)
		return 0;
	rep = type & o->string_representation_mask;
	if (rep == o->seq_tag)
		return seq_append(r, s, (type & o->string_encoding_mask) == o->one_byte_tag, start,
				  count, t);
	if (rep == o->thin_tag)
		return tagged(r, s, o->thin_actual, &a)
			   ? -1
			   : text_append(r, a, start, count, depth + 1, t);
	if (rep == o->sliced_tag) {
		if (tagged(r, s, o->sliced_parent, &a) || tagged(r, s, o->sliced_offset, &b) ||
		    !smi(o, b, &off) || off < 0 || off > V8_STRING_MAX)
			return -1;
		return text_append(r, a, start + (uint32_t)off, count, depth + 1, t);
	}
	if (rep != o->cons_tag || tagged(r, s, o->cons_first, &a) ||
	    tagged(r, s, o->cons_second, &b) || string_of(r, a, &first_len) < 0)
		return -1;
	if (start < first_len) {
		uint32_t n = count < first_len - start ? count : first_len - start;

		if (text_append(r, a, start, n, depth + 1, t))
			return -1;
		count -= n;
		start = 0;
	} else {
		start -= first_len;
	}
	return count ? text_append(r, b, start, count, depth + 1, t) : 0;
}

/* The string at s into buf (cap bytes): 0, or -1 when it is none or cannot be read. */
static int read_string(struct v8_reader *r, uint64_t s, char *buf, size_t cap)
{
	struct v8_text t = {buf, 0, cap, false, NULL};

	buf[0] = 0;
	if (text_append(r, s, 0, V8_STRING_MAX, 0, &t)) {
		buf[0] = 0;
		return -1;
	}
	return 0;
}

/* Tagged slot i of the ScopeInfo si. */
static int si_slot(struct v8_reader *r, uint64_t si, uint32_t i, uint64_t *out)
{
	return tagged(r, si, r->o->bpf.heap_object_map + 8 + 8 * i, out);
}

/*
 * The function's name a ScopeInfo keeps (ScopeInfo::FunctionName: a
 * String, or Smi zero for none) into name, and where its scope starts into
 * *pos when it keeps position_info: 0, or -1.
 */
static int scope_info_read(struct v8_reader *r, uint64_t si, char *name, int64_t *pos)
{
	const struct v8_offsets *o = r->o;
	int64_t flags, locals, v;
	uint64_t w;
	uint32_t i, fl;

	if (si_slot(r, si, SI_FLAGS_SLOT, &w) || !smi(o, w, &flags) ||
	    si_slot(r, si, o->scope_info_context_locals, &w) || !smi(o, w, &locals) || locals < 0 ||
	    locals > V8_LOCALS_MAX)
		return -1;
	fl = (uint32_t)flags;
	if (fl & SI_IS_EMPTY)
		return 0;
	i = o->scope_info_first_vars + (uint32_t)(locals < SI_MAX_INLINED_LOCALS ? locals : 1) +
	    (uint32_t)locals + !!(fl & SI_SAVED_CLASS_VAR);
	if (SI_FUNCTION_VAR(fl)) {
		if (si_slot(r, si, i, &w))
			return -1;
		if (!smi(o, w, &v) && read_string(r, w, name, V8_NAME_MAX))
			return -1;
		i += 2;
	}
	i += !!(fl & SI_INFERRED_NAME);
	if (SI_HAS_POSITION(SI_SCOPE_TYPE(fl)) && !si_slot(r, si, i, &w) && smi(o, w, &v) &&
	    v >= 0 && v <= V8_STRING_MAX)
		*pos = v;
	return 0;
}

/* The start position an uncompiled (lazy) function's data keeps; -1 when none. */
static int64_t uncompiled_start(struct v8_reader *r, uint64_t sfi)
{
	const struct v8_offsets *o = r->o;
	uint64_t data;
	int32_t pos;
	int type;

	if (tagged(r, sfi, o->sfi_function_data, &data))
		return -1;
	type = type_of(r, data);
	if (type < o->uncompiled_first_type || type > o->uncompiled_last_type ||
	    field(r, data, o->uncompiled_start_position, &pos, sizeof(pos)) || pos < 0)
		return -1;
	return pos;
}

/* The Script of the function (through its DebugInfo when debugged); 0 when none. */
static uint64_t sfi_script(struct v8_reader *r, uint64_t sfi)
{
	const struct v8_offsets *o = r->o;
	uint64_t s;
	int type;

	if (tagged(r, sfi, o->sfi_script_or_debug_info, &s))
		return 0;
	type = type_of(r, s);
	if (type >= 0 && type == o->debug_info_type) {
		if (si_slot(r, s, DEBUG_INFO_SCRIPT_SLOT, &s))
			return 0;
		type = type_of(r, s);
	}
	return type >= 0 && type == o->script_type ? s : 0;
}

/*
 * The 1-based line of position pos in script: one more than its line ends
 * (the positions of its newlines, ascending) before pos, found by binary
 * search; 0 when the script has not computed them (undefined).
 */
static uint32_t script_line(struct v8_reader *r, uint64_t script, int64_t pos)
{
	const struct v8_offsets *o = r->o;
	uint64_t ends, w;
	int64_t n, v;
	uint32_t lo = 0, hi;

	if (tagged(r, script, o->script_line_ends, &ends) ||
	    type_of(r, ends) != o->fixed_array_type || tagged(r, ends, o->fixed_array_length, &w) ||
	    !smi(o, w, &n) || n < 0 || n > V8_LINE_ENDS_MAX)
		return 0;
	hi = (uint32_t)n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (tagged(r, ends, o->fixed_array_data + 8 * mid, &w) || !smi(o, w, &v))
			return 0;
		if (v < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo + 1;
}

/*
 * The 1-based line of position pos in script counted in its source, for a
 * script whose line ends V8 has not computed (it does when something asks:
 * an exception's stack, --trace-deopt's positions; a script that never
 * throws has none): 0 when the source cannot be read (an external string,
 * the embedder's) or pos is past what is scanned.
 */
static uint32_t source_line(struct v8_reader *r, uint64_t script, int64_t pos)
{
	uint64_t src, newlines = 0;
	struct v8_text t = {.newlines = &newlines};

	if (pos < 0 || pos > V8_SOURCE_SCAN_MAX || tagged(r, script, r->o->script_source, &src) ||
	    text_append(r, src, 0, (uint32_t)pos, 0, &t))
		return 0;
	return (uint32_t)newlines + 1;
}

/*
 * SharedFunctionInfo::Name(): name_or_scope_info is the name, a ScopeInfo
 * keeping it, or Smi zero (kNoSharedNameSentinel) for none.  Where the
 * function starts into *pos when the ScopeInfo says.  0, or -1.
 */
static int sfi_name(struct v8_reader *r, uint64_t sfi, char *name, int64_t *pos)
{
	const struct v8_offsets *o = r->o;
	uint64_t v;
	int type;

	name[0] = 0;
	if (tagged(r, sfi, o->sfi_name_or_scope_info, &v))
		return -1;
	if (!is_heap_object(o, v))
		return v ? -1 : 0;
	type = type_of(r, v);
	if (is_string_type(o, type))
		return read_string(r, v, name, V8_NAME_MAX);
	if (type >= 0 && type == o->scope_info_type)
		return scope_info_read(r, v, name, pos);
	return -1;
}

void v8_sfi_read(uint32_t pid, const struct v8_offsets *o, uint64_t sfi, struct code_name *out)
{
	struct v8_reader r = {pid, o, V8_READS_MAX};
	char name[V8_NAME_MAX], file[V8_FILE_MAX];
	uint32_t line = 0;
	int64_t pos = -1;
	uint64_t script, s;

	memset(out, 0, sizeof(*out));
	if (!o || type_of(&r, sfi) != o->sfi_type || sfi_name(&r, sfi, name, &pos))
		return;
	/* a lazy function's ScopeInfo is not made yet: its UncompiledData says */
	if (pos < 0)
		pos = uncompiled_start(&r, sfi);
	file[0] = 0;
	script = sfi_script(&r, sfi);
	if (script) {
		if (!tagged(&r, script, o->script_name, &s) && is_string_type(o, type_of(&r, s)))
			read_string(&r, s, file, sizeof(file));
		if (pos >= 0)
			line = script_line(&r, script, pos);
		if (pos >= 0 && !line)
			line = source_line(&r, script, pos);
	}
	if (code_name_set(out, name[0] ? name : "(anonymous)", file))
		return;
	out->first_line = line;
}
