// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * HotSpot's code cache from a live JVM; see hotspot_codecache.h.  The
 * algorithms are memory/heap.cpp's (CodeHeap::find_block_for, find_start,
 * next_block) and code/codeBlob.hpp's (blob_contains, code_begin), done on
 * copies read from the process, every value checked before it is used.
 */
#include <stdlib.h>
#include <string.h>

#include "bpf/cfiprof_abi.h"
#include "common/clock.h"
#include "user/runtimes/hotspot/hotspot_codecache.h"
#include "user/runtimes/target_mem.h"

#define FREE_SENTINEL 0xFF /* CodeHeap::free_sentinel: no block holds the segment */
/* segment map hops for one pc: a 2 GiB heap of 128-byte segments takes 2^24 / 254 */
#define HOPS_MAX     65536
#define MAP_CHUNK    256  /* segment map bytes read at once to hop back */
#define WALK_CHUNK   4096 /* ... to walk forward */
#define OBJ_MAX	     1024 /* bytes of a CodeHeap or a block's start read at once */
#define SEGMENTS_MAX (1ull << 32)
#define FRAME_MAX    (1 << 20) /* words of a frame */

/* field f of the object at b[base...] (have bytes from b) into *v */
static int get_at(const uint8_t *b, size_t have, size_t base, struct hotspot_field f, int64_t *v)
{
	return base > have ? -1 : hotspot_get(b + base, have - base, f, v);
}

/* A pointer field (8 bytes) of the object at b[base...]: 0 when absent. */
static uint64_t ptr_at(const uint8_t *b, size_t have, size_t base, struct hotspot_field f)
{
	int64_t v;

	return get_at(b, have, base, f, &v) ? 0 : (uint64_t)v;
}

/* The end (offset + size) of the VirtualSpace fields used here. */
static size_t vs_end(const struct hotspot_layout *l)
{
	const struct hotspot_field *f[] = {&l->vs_low_boundary, &l->vs_high_boundary, &l->vs_low,
					   &l->vs_high};
	size_t end = 0;

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if ((size_t)f[i]->off + f[i]->size > end)
			end = (size_t)f[i]->off + f[i]->size;
	return end;
}

/* The CodeHeap at addr: 0, or -1 when unreadable or not a plausible heap. */
static int heap_read(uint32_t pid, const struct hotspot_layout *l, uint64_t addr,
		     struct hotspot_heap *out)
{
	size_t need = vs_end(l), have;
	uint8_t b[OBJ_MAX];
	int64_t log2;

	have = (size_t)l->heap_log2_segment.off + l->heap_log2_segment.size;
	if (l->heap_memory.off + need > have)
		have = l->heap_memory.off + need;
	if (l->heap_segmap.off + need > have)
		have = l->heap_segmap.off + need;
	if (have > sizeof(b) || target_read(pid, addr, b, have) ||
	    get_at(b, have, 0, l->heap_log2_segment, &log2))
		return -1;
	out->addr = addr;
	out->low_boundary = ptr_at(b, have, l->heap_memory.off, l->vs_low_boundary);
	out->low = ptr_at(b, have, l->heap_memory.off, l->vs_low);
	out->high = ptr_at(b, have, l->heap_memory.off, l->vs_high);
	out->high_boundary = ptr_at(b, have, l->heap_memory.off, l->vs_high_boundary);
	out->segmap = ptr_at(b, have, l->heap_segmap.off, l->vs_low);
	/* a segment holds a FreeBlock (16 bytes); -XX:CodeCacheSegmentSize is 64 by default... */
	if (log2 < 4 || log2 > 20 || !out->segmap || !out->low)
		return -1;
	out->log2_segment = (uint8_t)log2;
	/* ... and its committed part lies in its reserved range */
	if (out->low_boundary > out->low || out->low > out->high ||
	    out->high > out->high_boundary ||
	    (out->high_boundary - out->low) >> log2 >= SEGMENTS_MAX)
		return -1;
	return 0;
}

int hotspot_heaps_read(uint32_t pid, const struct hotspot_layout *l, struct hotspot_heaps *out)
{
	uint64_t array, data, heaps[HOTSPOT_HEAPS_MAX];
	uint8_t b[OBJ_MAX];
	size_t have;
	int64_t len;

	memset(out, 0, sizeof(*out));
	have = (size_t)l->array_data.off + l->array_data.size;
	if ((size_t)l->array_len.off + l->array_len.size > have)
		have = (size_t)l->array_len.off + l->array_len.size;
	if (have > sizeof(b) || target_read(pid, l->code_heaps, &array, sizeof(array)) ||
	    target_read(pid, array, b, have) || get_at(b, have, 0, l->array_len, &len) || len < 1 ||
	    len > HOTSPOT_HEAPS_MAX)
		return -1;
	data = ptr_at(b, have, 0, l->array_data);
	if (target_read(pid, data, heaps, (size_t)len * sizeof(heaps[0])))
		return -1;
	for (int64_t i = 0; i < len; i++)
		if (heap_read(pid, l, heaps[i], &out->heap[i]))
			return -1;
	out->n = (uint32_t)len;
	return 0;
}

/* The integer field f of the object at b[base...], or dflt when absent. */
static int64_t int_or(const uint8_t *b, size_t have, size_t base, struct hotspot_field f,
		      int64_t dflt)
{
	int64_t v;

	return get_at(b, have, base, f, &v) ? dflt : v;
}

/* Whether the blob named name is an nmethod, where it has no _kind (before JDK 23). */
static bool named_nmethod(const char *name)
{
	return !strcmp(name, "nmethod") || !strcmp(name, "native nmethod");
}

/*
 * The CodeBlob at addr, whose first bytes are b[0, have), in a block
 * ending at end, into *out: 0, or -1 when it is not plausibly one there.
 */
static int blob_parse(const struct hotspot_layout *l, struct hotspot_strings *s, const uint8_t *b,
		      size_t have, uint64_t addr, uint64_t end, struct hotspot_blob *out)
{
	int64_t size, header, begin, code_end, frame, complete, kind;
	uint64_t ub, ue, osr;

	memset(out, 0, sizeof(*out));
	if (get_at(b, have, 0, l->blob_size, &size) ||
	    get_at(b, have, 0, l->blob_header_size, &header) ||
	    get_at(b, have, 0, l->blob_code_begin, &begin) ||
	    get_at(b, have, 0, l->blob_code_end, &code_end) ||
	    get_at(b, have, 0, l->blob_frame_size, &frame) ||
	    get_at(b, have, 0, l->blob_frame_complete, &complete) ||
	    hotspot_cstr(s, ptr_at(b, have, 0, l->blob_name), out->name, sizeof(out->name)))
		return -1;
	out->name_addr = ptr_at(b, have, 0, l->blob_name);
	/* offsets from the blob (JDK 23 on) wrap as the addresses they are */
	ub = (uint64_t)begin + (l->code_relative ? addr : 0);
	ue = (uint64_t)code_end + (l->code_relative ? addr : 0);
	/* the blob in its block, its header first, its code in it */
	if (end <= addr || size <= 0 || (uint64_t)size > end - addr || header <= 0 ||
	    header > size || ub < addr + (uint64_t)header || ub > ue ||
	    ue > addr + (uint64_t)size || frame < -1 || frame > FRAME_MAX || complete < -1 ||
	    complete > (int64_t)(ue - ub))
		return -1;
	out->addr = addr;
	out->code_begin = ub;
	out->code_end = ue;
	out->size = (int32_t)size;
	out->frame_size = (int32_t)frame;
	out->frame_complete = (int32_t)complete;
	kind = int_or(b, have, 0, l->blob_kind, -1);
	out->is_nmethod = l->kind_nmethod >= 0 ? kind == l->kind_nmethod : named_nmethod(out->name);
	out->is_interpreter = !strcmp(out->name, "Interpreter");
	if (!out->is_nmethod)
		return 0;
	out->method = ptr_at(b, have, 0, l->nm_method);
	out->compile_id = (int32_t)int_or(b, have, 0, l->nm_compile_id, -1);
	out->entry_bci = (int32_t)int_or(b, have, 0, l->nm_entry_bci, -2);
	out->state = (int8_t)int_or(b, have, 0, l->nm_state, -128);
	out->comp_level = (int8_t)int_or(b, have, 0, l->nm_comp_level, -1);
	osr = out->entry_bci >= 0 ? ptr_at(b, have, 0, l->nm_osr_entry) : 0;
	out->osr_entry = osr > ub && osr < ue ? (int32_t)(osr - ub) : 0;
	/* an nmethod always has its Method (native wrappers too) and an id */
	return out->method && out->compile_id >= 0 && out->entry_bci >= -1 ? 0 : -1;
}

/*
 * The start of the block at block of heap h: its header and what fields
 * of its blob may need, as much as its heap's committed part holds, into
 * b (OBJ_MAX bytes); how many bytes, 0 when unreadable.
 */
static size_t block_read(uint32_t pid, const struct hotspot_layout *l, const struct hotspot_heap *h,
			 uint64_t block, uint8_t *b)
{
	size_t n = (size_t)l->heap_block_size + l->nmethod_bytes;

	if (n > OBJ_MAX)
		n = OBJ_MAX;
	if (block >= h->high)
		return 0;
	if (n > h->high - block)
		n = (size_t)(h->high - block);
	return target_read(pid, block, b, n) ? 0 : n;
}

/* The header of a block whose start is b[0, have): its length (segments) and use. */
static int block_header(const struct hotspot_layout *l, const uint8_t *b, size_t have,
			uint64_t *length, bool *used)
{
	int64_t len, u;

	if (get_at(b, have, 0, l->block_length, &len) || get_at(b, have, 0, l->block_used, &u) ||
	    len <= 0 || (uint64_t)len >= SEGMENTS_MAX)
		return -1;
	*length = (uint64_t)len;
	*used = u != 0;
	return 0;
}

/* The heap whose committed part holds pc, or NULL. */
static const struct hotspot_heap *heap_of(const struct hotspot_heaps *hs, uint64_t pc)
{
	for (uint32_t i = 0; i < hs->n && i < HOTSPOT_HEAPS_MAX; i++)
		if (hs->heap[i].low <= pc && pc < hs->heap[i].high)
			return &hs->heap[i];
	return NULL;
}

/*
 * The first segment of the block holding segment seg of heap h, hopping
 * back through its segment map as CodeHeap::find_block_for does: 0, or -1
 * when seg is in no block (FREE_SENTINEL) or the map is not one.
 */
static int block_start(uint32_t pid, const struct hotspot_heap *h, uint64_t *seg)
{
	uint8_t map[MAP_CHUNK];
	uint64_t first = 0, i = *seg;
	bool have = false;

	for (unsigned hops = 0; hops <= HOPS_MAX; hops++) {
		uint8_t v;

		if (!have || i < first) {
			first = i >= MAP_CHUNK - 1 ? i - (MAP_CHUNK - 1) : 0;
			if (target_read(pid, h->segmap + first, map, (size_t)(i - first + 1)))
				return -1;
			have = true;
		}
		v = map[i - first];
		/* seg in no block; or a hop onto a free segment, or before the heap: no map */
		if (v == FREE_SENTINEL || v > i)
			return -1;
		if (!v) {
			*seg = i;
			return 0;
		}
		i -= v;
	}
	return -1;
}

int hotspot_blob_at(uint32_t pid, const struct hotspot_layout *l, const struct hotspot_heaps *hs,
		    uint64_t pc, struct hotspot_blob *out)
{
	const struct hotspot_heap *h = heap_of(hs, pc);
	struct hotspot_strings *s;
	uint64_t seg, block, length, end;
	uint8_t b[OBJ_MAX];
	size_t have;
	bool used;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!h)
		return -1;
	seg = (pc - h->low) >> h->log2_segment;
	if (block_start(pid, h, &seg))
		return -1;
	block = h->low + (seg << h->log2_segment);
	have = block_read(pid, l, h, block, b);
	if (!have || block_header(l, b, have, &length, &used) || !used)
		return -1;
	end = block + (length << h->log2_segment);
	if (end > h->high || end < block || pc >= end)
		return -1;
	s = malloc(sizeof(*s));
	if (!s)
		return -1;
	hotspot_strings_init(s, pid);
	rc = blob_parse(l, s, b + l->heap_block_size, have - l->heap_block_size,
			block + l->heap_block_size, end, out);
	free(s);
	/* CodeHeap::find_blob: the block's blob must hold pc */
	if (rc || pc < out->addr || pc - out->addr >= (uint64_t)out->size) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	return 0;
}

/*
 * The Symbol at sym (a UTF-8 name of the class file's) into out (room
 * bytes), '/' turned into sep when sep is not '/', control bytes into '?':
 * 0, or -1 when unreadable.  *cut set when it was longer than out.
 */
static int symbol_read(uint32_t pid, const struct hotspot_layout *l, uint64_t sym, char *out,
		       size_t room, char sep, bool *cut)
{
	uint8_t head[OBJ_MAX];
	size_t n, hn = (size_t)l->symbol_length.off + l->symbol_length.size;
	int64_t len;

	if (!sym || hn > sizeof(head) || target_read(pid, sym, head, hn) ||
	    get_at(head, hn, 0, l->symbol_length, &len) || len < 0)
		return -1;
	n = (size_t)len < room - 1 ? (size_t)len : room - 1;
	*cut |= n < (size_t)len;
	if (n && target_read(pid, sym + l->symbol_body.off, out, n))
		return -1;
	out[n] = 0;
	for (size_t i = 0; i < n; i++) {
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = '?';
		else if (out[i] == '/')
			out[i] = sep;
	}
	return 0;
}

/* The pointer field f of the object at addr: 0 when unreadable. */
uint64_t hotspot_ptr_read(uint32_t pid, uint64_t addr, struct hotspot_field f)
{
	uint64_t v;

	return addr && !target_read(pid, addr + f.off, &v, sizeof(v)) ? v : 0;
}

/* The integer field f of the object at addr into *v: 0, or -1. */
int hotspot_int_read(uint32_t pid, uint64_t addr, struct hotspot_field f, int64_t *v)
{
	uint8_t b[8];

	if (!addr || f.size > sizeof(b) || target_read(pid, addr + f.off, b, f.size))
		return -1;
	f.off = 0;
	return hotspot_get(b, f.size, f, v);
}

/* Symbol i of the ConstantPool at pool (a slot after its header), bounded by its length. */
static uint64_t pool_symbol(uint32_t pid, const struct hotspot_layout *l, uint64_t pool, int64_t i,
			    int64_t length)
{
	uint64_t sym;

	if (i <= 0 || i >= length ||
	    target_read(pid, pool + l->pool_size + (uint64_t)i * 8, &sym, sizeof(sym)))
		return 0;
	return sym;
}

/*
 * A hidden class's name as Klass::external_name gives it: its Symbol is
 * the class file's name, '+' and the InstanceKlass's address (ClassFile-
 * Parser::mangle_hidden_class_name, JDK 15 on), printed with '/' for '+'.
 * Whether a class is hidden is in its flags, not read here: the name ends
 * so only when a hidden class's does ('+' is legal in a class name, but
 * '+0x' and a 64-bit pointer's hex digits at the end is HotSpot's).
 */
static void hidden_name(char *name)
{
	char *plus = strrchr(name, '+');
	size_t hex;

	if (!plus || strncmp(plus, "+0x", 3))
		return;
	hex = strspn(plus + 3, "0123456789abcdefABCDEF");
	if (hex && hex <= 16 && !plus[3 + hex])
		*plus = '/';
}

/* methods of a class looked at for overloads: a class past it is taken as without */
#define HOTSPOT_OVERLOAD_SCAN_MAX 1024

/*
 * Whether another method of holder than method has the name at index
 * name_i of their class's constant pool (javac writes a name once, so
 * same index, same name); false when the class's methods cannot be read.
 */
static bool has_overload(uint32_t pid, const struct hotspot_layout *l, uint64_t holder,
			 uint64_t method, int64_t name_i)
{
	uint64_t arr =
	    HOTSPOT_HAS(l->klass_methods) ? hotspot_ptr_read(pid, holder, l->klass_methods) : 0;
	uint64_t ms[64];
	int64_t n;

	if (!arr || !HOTSPOT_HAS(l->md_array_data) ||
	    hotspot_int_read(pid, arr, l->md_array_length, &n) || n < 2 ||
	    n > HOTSPOT_OVERLOAD_SCAN_MAX)
		return false;
	for (int64_t i = 0; i < n; i += 64) {
		size_t k = (size_t)(n - i < 64 ? n - i : 64);

		if (target_read(pid, arr + l->md_array_data.off + (uint64_t)i * 8, ms, k * 8))
			return false;
		for (size_t j = 0; j < k; j++) {
			int64_t other;

			if (ms[j] != method &&
			    !hotspot_int_read(pid, hotspot_ptr_read(pid, ms[j], l->method_const),
					      l->const_name_index, &other) &&
			    other == name_i)
				return true;
		}
	}
	return false;
}

uint64_t hotspot_const_method_holder(uint32_t pid, const struct hotspot_layout *l, uint64_t cm)
{
	return hotspot_ptr_read(pid, hotspot_ptr_read(pid, cm, l->const_pool), l->pool_holder);
}

int hotspot_method_name(uint32_t pid, const struct hotspot_layout *l, uint64_t method,
			struct hotspot_method_name *out)
{
	uint64_t cm, pool, holder;
	int64_t name_i, sig_i, length, file_i;
	char mname[HOTSPOT_STRING_MAX];
	bool cut = false;
	size_t n;

	memset(out, 0, sizeof(*out));
	cm = hotspot_ptr_read(pid, method, l->method_const);
	pool = hotspot_ptr_read(pid, cm, l->const_pool);
	holder = hotspot_ptr_read(pid, pool, l->pool_holder);
	if (!holder || hotspot_int_read(pid, cm, l->const_name_index, &name_i) ||
	    hotspot_int_read(pid, cm, l->const_sig_index, &sig_i) ||
	    hotspot_int_read(pid, pool, l->pool_length, &length) ||
	    symbol_read(pid, l, hotspot_ptr_read(pid, holder, l->klass_name), out->name,
			HOTSPOT_STRING_MAX, '.', &out->cut) ||
	    symbol_read(pid, l, pool_symbol(pid, l, pool, name_i, length), mname, sizeof(mname),
			'/', &out->cut) ||
	    symbol_read(pid, l, pool_symbol(pid, l, pool, sig_i, length), out->signature,
			sizeof(out->signature), '/', &out->cut)) {
		memset(out, 0, sizeof(*out));
		return -1;
	}
	out->overloaded = has_overload(pid, l, holder, method, name_i);
	hidden_name(out->name);
	n = strlen(out->name);
	out->name[n] = '.';
	memcpy(out->name + n + 1, mname, strlen(mname) + 1);
	/* the class's own pool's (JDK 17 keeps it there, not in the InstanceKlass); may lack one */
	if (!l->source_file || hotspot_int_read(pid, pool, l->pool_source_file, &file_i) ||
	    symbol_read(pid, l, pool_symbol(pid, l, pool, file_i, length), out->file,
			sizeof(out->file), '/', &cut))
		out->file[0] = 0;
	return 0;
}

uint16_t hotspot_method_digest_now(uint32_t pid, const struct hotspot_layout *l, uint64_t method)
{
	uint64_t cm = hotspot_ptr_read(pid, method, l->method_const);
	uint64_t kname =
	    hotspot_ptr_read(pid, hotspot_const_method_holder(pid, l, cm), l->klass_name);
	uint16_t name_i, sig_i, len;
	uint64_t tail = 0;
	uint32_t n, hash = 0;

	/* as the kernel reads it (bpf/hotspot.bpf.h): two bytes of each index, whatever its size */
	if (!kname || target_read(pid, cm + l->const_name_index.off, &name_i, sizeof(name_i)) ||
	    target_read(pid, cm + l->const_sig_index.off, &sig_i, sizeof(sig_i)) ||
	    target_read(pid, kname + l->symbol_length.off, &len, sizeof(len)))
		return 0;
	n = len < HOTSPOT_DIGEST_TAIL ? len : HOTSPOT_DIGEST_TAIL;
	if (n && target_read(pid, kname + l->symbol_body.off + len - n, &tail, n))
		return 0;
	if ((l->symbol_hash.flags & HOTSPOT_F_FOUND) &&
	    target_read(pid, kname + l->symbol_hash.off, &hash, sizeof(hash)))
		return 0;
	return hotspot_method_digest(kname, name_i, sig_i, len, tail, (uint16_t)(hash >> 16));
}

int hotspot_method_lines(uint32_t pid, const struct hotspot_layout *l, uint64_t method,
			 uint8_t *table, uint32_t room, uint32_t *len, int32_t *code_size)
{
	uint64_t cm = l->lines ? hotspot_ptr_read(pid, method, l->method_const) : 0, at;
	int64_t flags, size, words;

	if (!cm || hotspot_int_read(pid, cm, l->const_flags, &flags) ||
	    !(flags & l->has_line_table) || hotspot_int_read(pid, cm, l->const_code_size, &size) ||
	    hotspot_int_read(pid, cm, l->const_size, &words) || size < 0 || words <= 0 ||
	    (uint64_t)words > (1u << 20))
		return -1;
	/* ConstMethod::compressed_linenumber_table: right after the bytecodes */
	at = l->const_method_size + (uint64_t)size;
	if (at >= (uint64_t)words * 8)
		return -1;
	*len = (uint64_t)words * 8 - at < room ? (uint32_t)((uint64_t)words * 8 - at) : room;
	*code_size = (int32_t)size;
	return target_read(pid, cm + at, table, *len);
}

/* A walk's state: the budget left, what was seen. */
/*
 * Blocks read at once: a code cache of 10,000 nmethods is 10,000 blocks,
 * and one read each made its walk (a poll every 50 ms while the JVM
 * compiles) most of the agent's CPU time.
 */
#define PREFETCH 64

struct walk {
	uint32_t pid;
	const struct hotspot_layout *l;
	struct hotspot_walk_budget left;
	uint64_t deadline;
	struct hotspot_walk_stats st;
	struct hotspot_strings strings;
	uint8_t map[WALK_CHUNK]; /* segment map bytes [map_first, map_first + map_n) */
	uint64_t map_first, map_n;
	/* the starts of the blocks the loaded map bytes show from one on, read in one call */
	uint64_t pf_at[PREFETCH];
	uint32_t pf_have[PREFETCH]; /* bytes read of each (0: not read) */
	uint32_t pf_n, pf_next;
	uint8_t pf_buf[PREFETCH][OBJ_MAX];
};

/* Whether the budget allows one more read (counted). */
static bool may_read(struct walk *w)
{
	if (w->st.reads >= w->left.reads) {
		w->st.cut = true;
		return false;
	}
	w->st.reads++;
	return true;
}

/* The segment map byte of segment i of h (nsegs of them committed) into *v: 0, or -1. */
static int map_byte(struct walk *w, const struct hotspot_heap *h, uint64_t i, uint64_t nsegs,
		    uint8_t *v)
{
	if (i < w->map_first || i >= w->map_first + w->map_n) {
		uint64_t n = nsegs - i < WALK_CHUNK ? nsegs - i : WALK_CHUNK;

		w->map_n = 0;
		if (!may_read(w) || target_read(w->pid, h->segmap + i, w->map, (size_t)n))
			return -1;
		w->map_first = i;
		w->map_n = n;
	}
	*v = w->map[i - w->map_first];
	return 0;
}

/*
 * Reads the blocks that start (map byte 0) from segment i of h on, within the
 * map bytes loaded, at once: each counts as one read of the budget.  A read
 * that fails part way leaves the blocks after the failing one unread.
 */
static void prefetch(struct walk *w, const struct hotspot_heap *h, uint64_t i)
{
	size_t want = (size_t)w->l->heap_block_size + w->l->nmethod_bytes;
	struct iovec local[PREFETCH], remote[PREFETCH];
	uint32_t k = 0;
	ssize_t got;

	if (want > OBJ_MAX)
		want = OBJ_MAX;
	w->pf_n = w->pf_next = 0;
	for (uint64_t j = i; j < w->map_first + w->map_n && k < PREFETCH; j++) {
		uint8_t v = w->map[j - w->map_first];
		uint64_t at = h->low + (j << h->log2_segment);
		size_t len = want;

		if (v == FREE_SENTINEL || at >= h->high)
			break;
		if (v)
			continue;
		if (!may_read(w))
			break;
		if (len > h->high - at)
			len = (size_t)(h->high - at);
		w->pf_at[k] = at;
		local[k] = (struct iovec){w->pf_buf[k], len};
		remote[k] = (struct iovec){(void *)at, len};
		k++;
	}
	got = k ? process_vm_readv((pid_t)w->pid, local, k, remote, k, 0) : 0;
	for (uint32_t m = 0; m < k; m++) {
		size_t len = local[m].iov_len;

		w->pf_have[m] = got >= (ssize_t)len ? (uint32_t)len : 0;
		got = got >= (ssize_t)len ? got - (ssize_t)len : 0;
	}
	w->pf_n = k;
}

/*
 * The start of the block at segment i of h (its map bytes loaded): where it
 * was read (*have bytes), or NULL when it was not (the budget, or unreadable).
 */
static const uint8_t *block_at(struct walk *w, const struct hotspot_heap *h, uint64_t i,
			       size_t *have)
{
	uint64_t block = h->low + (i << h->log2_segment);

	for (int pass = 0; pass < 2; pass++) {
		while (w->pf_next < w->pf_n && w->pf_at[w->pf_next] < block)
			w->pf_next++;
		if (w->pf_next < w->pf_n && w->pf_at[w->pf_next] == block) {
			*have = w->pf_have[w->pf_next];
			return *have ? w->pf_buf[w->pf_next++] : NULL;
		}
		if (!pass)
			prefetch(w, h, i);
	}
	*have = 0;
	return NULL;
}

/*
 * The blocks of heap h from segment 0, as CodeHeap::next_block goes, until
 * the first segment no block holds (_next_segment: the map is FREE_SENTINEL
 * from there): 0 at its end (or when fn ended the walk: 2), 1 when cut by
 * the budget, -1 when unreadable.
 */
static int walk_heap(struct walk *w, const struct hotspot_heap *h, hotspot_blob_fn fn, void *arg)
{
	uint64_t nsegs = (h->high - h->low) >> h->log2_segment, i = 0;

	w->map_n = 0;
	w->pf_n = w->pf_next = 0;
	while (i < nsegs) {
		uint64_t block = h->low + (i << h->log2_segment), length, end;
		struct hotspot_blob blob;
		const uint8_t *b = NULL;
		size_t have = 0;
		uint8_t v;
		bool used;

		if (w->st.blocks >= w->left.blocks ||
		    ((w->st.blocks & 255) == 0 && mono_ns() >= w->deadline)) {
			w->st.cut = true;
			return 1;
		}
		if (map_byte(w, h, i, nsegs, &v))
			return w->st.cut ? 1 : -1;
		if (v == FREE_SENTINEL)
			return 0;
		if (!v)
			b = block_at(w, h, i, &have);
		if (w->st.cut)
			return 1;
		/* not a block's start, or one being made: the heap changed under us */
		if (v || !b || block_header(w->l, b, have, &length, &used) || length > nsegs - i) {
			w->st.torn++;
			return 0;
		}
		w->st.blocks++;
		end = block + (length << h->log2_segment);
		i += length;
		if (!used) {
			w->st.free++;
			w->st.free_block = block;
			continue;
		}
		if (blob_parse(w->l, &w->strings, b + w->l->heap_block_size,
			       have - w->l->heap_block_size, block + w->l->heap_block_size, end,
			       &blob)) {
			w->st.bad++;
			continue;
		}
		w->st.blobs++;
		if (fn && fn(&blob, arg))
			return 2;
	}
	return 0;
}

int hotspot_blobs_walk(uint32_t pid, const struct hotspot_layout *l, const struct hotspot_heaps *h,
		       const struct hotspot_walk_budget *budget, hotspot_blob_fn fn, void *arg,
		       struct hotspot_walk_stats *stats)
{
	struct walk *w = calloc(1, sizeof(*w));
	int rc = 0;

	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (!w)
		return -1;
	w->pid = pid;
	w->l = l;
	w->left.blocks =
	    budget && budget->blocks && budget->blocks < 1000000 ? budget->blocks : 1000000;
	w->left.reads = budget && budget->reads ? budget->reads : 2000000;
	w->deadline = mono_ns() + (budget && budget->ns ? budget->ns : 2000000000ull);
	hotspot_strings_init(&w->strings, pid);
	for (uint32_t i = 0; i < h->n && i < HOTSPOT_HEAPS_MAX && !rc; i++)
		rc = walk_heap(w, &h->heap[i], fn, arg);
	w->st.reads += w->strings.reads;
	if (stats)
		*stats = w->st;
	free(w);
	return rc == 2 ? 0 : rc;
}
