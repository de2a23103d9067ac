// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ruby frames named from their iseq; see ruby_names.h.  The process may be
 * hostile: every pointer is only an address to try, every length bounded.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/runtimes/ruby/ruby_names.h"
#include "user/runtimes/ruby/ruby_offsets.h"
#include "user/runtimes/ruby/ruby_symbols.h"
#include "user/runtimes/runtime_parts.h"
#include "user/runtimes/target_mem.h"

#define RUBY_MAX_NAME	 256	    /* bytes of a label or file kept */
#define RUBY_BODY_READ	 160	    /* bytes of an iseq body read */
#define RUBY_MAX_ENTRIES 65536	    /* line-table entries read */
#define RUBY_MAX_BLOB	 (1u << 20) /* an iseq's name, file and line table */
/* Ruby's succinct index (iseq.c): 54 positions in 6 words, then blocks of 512 */
#define SUCC_IMM_BITS	 54
#define SUCC_IMM_BYTES	 48
#define SUCC_BLOCK_BITS	 512
#define SUCC_BLOCK_BYTES 80 /* rank (u32, padded), small-block ranks (u64), bits[8] */

/* The String at v into out (room bytes, NUL-terminated, control bytes as '?'); -1. */
static int read_rstring(uint32_t pid, const struct ruby_offsets *o, uint64_t v, char *out,
			size_t room)
{
	uint8_t b[32];
	uint64_t flags, len, ptr;

	if (!v || (v & 7) || target_read(pid, v, b, sizeof(b)))
		return -1;
	flags = target_u64(b, 0);
	if ((flags & RUBY_T_MASK) != o->t_string)
		return -1;
	if (flags & o->rstring_noembed) {
		len = target_u64(b, o->rstring_heap_len);
		ptr = target_u64(b, o->rstring_heap_ptr);
	} else {
		len = (flags & o->rstring_embed_mask) >> o->rstring_embed_shift;
		ptr = v + o->rstring_embed;
	}
	if (len >= room)
		len = room - 1;
	if (len && target_read(pid, ptr, out, (size_t)len))
		return -1;
	out[len] = 0;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)out[i] < 0x20 || out[i] == 0x7f)
			out[i] = '?';
	return 0;
}

/* An iseq's path: a String, or the first of [path, realpath]. */
static int read_path(uint32_t pid, const struct ruby_offsets *o, uint64_t v, char *out, size_t room)
{
	uint64_t flags = 0;

	if (!v || (v & 7) || target_read(pid, v, &flags, sizeof(flags)))
		return -1;
	if ((flags & RUBY_T_MASK) == o->t_array && !(v = ruby_array_at(pid, o, v, 0)))
		return -1;
	return read_rstring(pid, o, v, out, room);
}

/* The line table (entries' lines, then positions or the succinct index) into it's blob. */
static bool read_lines(uint32_t pid, const struct ruby_offsets *o, const uint8_t *body,
		       struct ruby_iseq *it, size_t name_bytes)
{
	uint64_t entries = target_u64(body, o->body_info_entries),
		 pos = target_u64(body, o->body_info_pos),
		 succ = target_u64(body, o->body_info_succ);
	uint32_t n = target_u32(body, o->body_info_size), blocks;
	size_t esize = o->info_entry_size, lines_off, extra = 0;
	uint8_t *raw;
	char *blob;

	if (n == 0 || n > RUBY_MAX_ENTRIES || !entries || esize < 4 || esize > 64)
		return false;
	lines_off = (name_bytes + 3) & ~(size_t)3;
	if (n > 1 && pos) {
		extra = (size_t)n * 4;
	} else if (n > 1 && succ) {
		blocks =
		    it->iseq_size > SUCC_IMM_BITS
			? (it->iseq_size - SUCC_IMM_BITS + SUCC_BLOCK_BITS - 1) / SUCC_BLOCK_BITS
			: 0;
		extra = SUCC_IMM_BYTES + (size_t)blocks * SUCC_BLOCK_BYTES;
	} else if (n > 1) {
		return false;
	}
	if (lines_off + (size_t)n * 4 + extra > RUBY_MAX_BLOB)
		return false;
	raw = malloc((size_t)n * esize);
	blob = raw ? realloc(it->blob, lines_off + (size_t)n * 4 + extra) : NULL;
	if (!blob || target_read(pid, entries, raw, (size_t)n * esize)) {
		free(raw);
		if (blob)
			it->blob = blob;
		return false;
	}
	it->blob = blob;
	for (uint32_t i = 0; i < n; i++) {
		int32_t line;

		memcpy(&line, raw + (size_t)i * esize + o->info_entry_line, sizeof(line));
		memcpy(blob + lines_off + (size_t)i * 4, &line, sizeof(line));
	}
	free(raw);
	it->nentries = n;
	it->lines_off = (uint32_t)lines_off;
	it->bytes = lines_off + (size_t)n * 4 + extra;
	if (!extra)
		return true;
	if (target_read(pid, pos ? pos : succ, blob + lines_off + (size_t)n * 4, extra)) {
		it->nentries = 1; /* the first line of the table, as for a one-entry table */
		it->bytes = lines_off + (size_t)n * 4;
		return true;
	}
	if (pos)
		it->pos_off = (uint32_t)(lines_off + (size_t)n * 4);
	else
		it->succ_off = (uint32_t)(lines_off + (size_t)n * 4);
	it->succ_len = pos ? 0 : (uint32_t)extra;
	return true;
}

bool ruby_iseq_read(uint32_t pid, const struct ruby_offsets *o, uint64_t addr,
		    struct ruby_iseq **out)
{
	char label[RUBY_MAX_NAME], file[RUBY_MAX_NAME];
	uint8_t body[RUBY_BODY_READ];
	uint64_t b = 0, first;
	struct ruby_iseq *it;
	size_t ln, fn;

	*out = NULL;
	if (!o || (size_t)o->body_info_succ + 8 > sizeof(body) ||
	    (size_t)o->body_first_lineno + 8 > sizeof(body) ||
	    target_read(pid, addr + o->iseq_body, &b, sizeof(b)) ||
	    target_read(pid, b, body, sizeof(body)) ||
	    read_rstring(pid, o, target_u64(body, o->body_label), label, sizeof(label)))
		return false;
	if (read_path(pid, o, target_u64(body, o->body_path), file, sizeof(file)))
		file[0] = 0;
	it = calloc(1, sizeof(*it));
	ln = strlen(label) + 1;
	fn = strlen(file) + 1;
	if (!it || !(it->blob = malloc(ln + fn))) {
		free(it);
		*out = NULL;
		return true; /* out of memory: *out NULL */
	}
	memcpy(it->blob, label, ln);
	memcpy(it->blob + ln, file, fn);
	it->file_off = (uint32_t)ln;
	it->bytes = ln + fn;
	it->encoded = target_u64(body, o->body_iseq_encoded);
	it->iseq_size = target_u32(body, o->body_iseq_size);
	first = target_u64(body, o->body_first_lineno);
	/* a Fixnum: (n << 1) | 1 */
	it->first_line = (first & 1) && (first >> 1) < (1u << 31) ? (uint32_t)(first >> 1) : 0;
	read_lines(pid, o, body, it, ln + fn);
	*out = it;
	return true;
}

/* How many positions of the succinct index t are at or below x (iseq.c's succ_index_lookup). */
static uint32_t succ_rank(const uint8_t *t, size_t len, uint32_t x)
{
	uint64_t word, small, bits;
	uint32_t rank, bit, sb, small_rank;
	size_t off;

	if (x < SUCC_IMM_BITS) {
		memcpy(&word, t + (x / 9) * 8, sizeof(word));
		return (uint32_t)(word >> ((x % 9) * 7)) & 0x7f;
	}
	off = SUCC_IMM_BYTES + (size_t)((x - SUCC_IMM_BITS) / SUCC_BLOCK_BITS) * SUCC_BLOCK_BYTES;
	if (off + SUCC_BLOCK_BYTES > len)
		return 0;
	bit = (x - SUCC_IMM_BITS) % SUCC_BLOCK_BITS;
	sb = bit / 64;
	memcpy(&rank, t + off, sizeof(rank));
	memcpy(&small, t + off + 8, sizeof(small));
	memcpy(&bits, t + off + 16 + sb * 8, sizeof(bits));
	small_rank = sb ? (uint32_t)(small >> ((sb - 1) * 9)) & 0x1ff : 0;
	return rank + small_rank + (uint32_t)__builtin_popcountll(bits << (63 - bit % 64));
}

uint32_t ruby_iseq_line(const struct ruby_iseq *it, uint32_t pc)
{
	uint32_t pos = (pc - (uint32_t)it->encoded) / 8, idx = 0;
	int32_t line;

	if (!it->nentries || pos > it->iseq_size)
		return it->first_line;
	/* pc is the next instruction's once one began */
	if (pos)
		pos--;
	if (it->nentries == 1) {
		idx = 1;
	} else if (it->pos_off) {
		const uint8_t *p = (const uint8_t *)it->blob + it->pos_off;

		for (uint32_t i = 0; i < it->nentries; i++) {
			uint32_t at;

			memcpy(&at, p + (size_t)i * 4, sizeof(at));
			if (at > pos)
				break;
			idx = i + 1;
		}
	} else if (it->succ_off) {
		idx = succ_rank((const uint8_t *)it->blob + it->succ_off, it->succ_len, pos);
	}
	if (idx == 0 || idx > it->nentries)
		return it->first_line;
	memcpy(&line, it->blob + it->lines_off + (size_t)(idx - 1) * 4, sizeof(line));
	return line > 0 ? (uint32_t)line : it->first_line;
}

void ruby_iseq_free(void *obj)
{
	struct ruby_iseq *it = obj;

	if (!it)
		return;
	free(it->blob);
	free(it);
}

static void *iseq_copy(const void *obj)
{
	const struct ruby_iseq *from = obj;
	struct ruby_iseq *it = malloc(sizeof(*it));

	if (!it)
		return NULL;
	*it = *from;
	it->blob = malloc(from->bytes);
	if (!it->blob) {
		free(it);
		return NULL;
	}
	memcpy(it->blob, from->blob, from->bytes);
	return it;
}

/*
 * A C method's frame: its method entry's ID named from global_symbols (at
 * symbols in the process): a label with no file and no lines.
 */
static bool cfunc_read(uint32_t pid, const struct ruby_offsets *o, uint64_t symbols, uint64_t me,
		       struct ruby_iseq **out)
{
	char name[RUBY_MAX_NAME];
	uint64_t id = 0, str;
	struct ruby_iseq *it;
	size_t n;

	*out = NULL;
	if (!o || !me || (me & 7) || target_read(pid, me + o->me_called_id, &id, sizeof(id)))
		return false;
	str = ruby_id_string(pid, o, symbols, id);
	if (!str || read_rstring(pid, o, str, name, sizeof(name)) || !name[0])
		return false;
	n = strlen(name) + 1;
	it = calloc(1, sizeof(*it));
	if (!it || !(it->blob = malloc(n + 1))) {
		free(it);
		return true; /* out of memory: *out NULL */
	}
	memcpy(it->blob, name, n);
	it->blob[n] = 0; /* no file */
	it->file_off = (uint32_t)n;
	it->bytes = n + 1;
	*out = it;
	return true;
}

static bool iseq_read(const struct code_proc *proc, uint32_t pid, uint64_t code, uint8_t owner,
		      uint16_t scope, void **obj, size_t *bytes)
{
	(void)scope;
	struct ruby_iseq *it = NULL;
	bool ok = owner == RUBY_FRAME_ISEQ ? ruby_iseq_read(pid, proc->offsets, code, &it)
		  : owner == RUBY_FRAME_CFUNC
		      ? cfunc_read(pid, proc->offsets, proc->addr, code, &it)
		      : false;

	*obj = it;
	*bytes = it ? sizeof(*it) + it->bytes : 0;
	return ok;
}

static void proc_of(void *ctx, uint32_t pid, struct code_proc *out)
{
	const struct runtime_parts *parts = ctx;
	struct cfi_ruby_proc val;

	if (runtime_detect_lookup(parts->detect, pid, &val, sizeof(val))) {
		out->offsets = ruby_offsets_find(val.version);
		out->addr = val.global_symbols;
	}
}

const struct code_names_ops ruby_name_ops = {.runtime = RT_RUBY,
					     .proc_of = proc_of,
					     .read = iseq_read,
					     .copy = iseq_copy,
					     .free = ruby_iseq_free};

static void show(void *ctx, uint32_t pid, uint32_t gen, const struct cfi_interp_frame *f,
		 struct interp_frame_shown *out)
{
	bool ok;
	const struct ruby_iseq *it = code_names_show_begin(ctx, pid, gen, f, "[ruby]", out, &ok);

	if (!it || !ok)
		return;
	out->name = it->blob;
	out->file = it->blob + it->file_off;
	/* a C method's: its name alone, as the frames of the C code it runs */
	out->line = f->owner == RUBY_FRAME_CFUNC ? 0 : ruby_iseq_line(it, f->instr);
}

void ruby_names_namer(struct code_names *names, struct interp_namer *out)
{
	*out = (struct interp_namer){.ctx = names, .show = show, .eval_frame = "rb_vm_exec"};
}
