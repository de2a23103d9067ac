// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Python code objects read from their process (process_vm_readv), once per
 * (pid, generation, address).  The process may be hostile: every pointer is
 * only an address to try, every length is bounded before use, a string that
 * is not a compact str object or a table that is not a bytes object is
 * refused, and reads are limited per second and in bytes kept.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "common/clock.h"
#include "common/hash.h"
#include "user/symbolize/python_names.h"
#include "user/track/python_detect.h"

#define PN_BUCKETS	 4096
#define PN_MAX_ENTRIES	 65536	     /* code objects remembered, all processes */
#define PN_MAX_BYTES	 (64u << 20) /* their strings and location tables */
#define PN_READS_PER_SEC 4096	     /* code objects read per second */
#define PN_MAX_NAME	 512	     /* characters of a name or file kept */
#define PN_MAX_LINETABLE (64u << 10) /* bytes of a location table kept */
#define PN_HEADER_MAX	 256	     /* bytes of a code object read at once */

struct pn_entry {
	struct pn_entry *next;
	uint32_t pid, gen;
	uint64_t code;
	uint16_t scope; /* struct cfi_python_frame's: a code object of another module at code */
	const struct python_offsets *off;
	bool ok;
	char *name, *file; /* one allocation with linetable */
	uint8_t *linetable;
	uint32_t linetable_len;
	int32_t firstlineno;
	uint32_t firsttraceable;
	uint64_t nr_units; /* of bytecode (ob_size) */
	size_t bytes;
};

struct python_names {
	struct python_detect *pd;
	pthread_mutex_t lock;
	struct pn_entry *buckets[PN_BUCKETS];
	uint64_t nr, bytes;
	uint64_t window_start_ns;
	uint32_t window_reads;
	struct python_names_stats stats;
};

struct python_names *python_names_new(struct python_detect *pd)
{
	struct python_names *pn = calloc(1, sizeof(*pn));

	if (!pn)
		return NULL;
	pn->pd = pd;
	pthread_mutex_init(&pn->lock, NULL);
	return pn;
}

static void entry_free(struct pn_entry *e)
{
	free(e->name);
	free(e);
}

void python_names_free(struct python_names *pn)
{
	struct pn_entry *e, *n;
	uint32_t b;

	if (!pn)
		return;
	for (b = 0; b < PN_BUCKETS; b++)
		for (e = pn->buckets[b]; e; e = n) {
			n = e->next;
			entry_free(e);
		}
	pthread_mutex_destroy(&pn->lock);
	free(pn);
}

static uint32_t bucket_of(uint32_t pid, uint32_t gen, uint64_t code)
{
	uint64_t k[2] = {(uint64_t)pid << 32 | gen, code};

	return (uint32_t)(hash_bytes(HASH_FNV_OFFSET, k, sizeof(k)) % PN_BUCKETS);
}

/* The entry of frame f's code object in (pid, gen). */
static struct pn_entry *find(struct python_names *pn, uint32_t pid, uint32_t gen,
			     const struct cfi_python_frame *f)
{
	struct pn_entry *e = pn->buckets[bucket_of(pid, gen, f->code)];

	while (e && (e->pid != pid || e->gen != gen || e->code != f->code || e->scope != f->scope))
		e = e->next;
	return e;
}

/* Exactly len bytes of the process at addr. */
static int read_mem(uint32_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {buf, len}, remote = {(void *)addr, len};

	if (!addr || addr + len < addr)
		return -1;
	return process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) == (ssize_t)len ? 0 : -1;
}

static uint64_t get_u64(const uint8_t *b, uint16_t off)
{
	uint64_t v;

	memcpy(&v, b + off, sizeof(v));
	return v;
}

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
	if (o->str_ascii_data > sizeof(hdr) || read_mem(pid, addr, hdr, o->str_ascii_data))
		return -1;
	chars = get_u64(hdr, o->str_length);
	state = hdr[o->str_state];
	kind = state >> 2 & 7;
	/* state: interned:2 kind:3 compact:1 ascii:1 ready:1 */
	if (!(state & 1u << 5) || !(state & 1u << 7) || (kind != 1 && kind != 2 && kind != 4))
		return -1;
	if ((state & 1u << 6) && kind != 1)
		return -1;
	if (chars > PN_MAX_NAME)
		chars = PN_MAX_NAME;
	data_off = state & 1u << 6 ? o->str_ascii_data : o->str_compact_data;
	if (chars && read_mem(pid, addr + data_off, data, chars * kind))
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

/* Reads the code object e->code of e->pid into e; e->ok says whether it was one. */
static void read_code(struct pn_entry *e)
{
	const struct python_offsets *o = e->off;
	uint8_t hdr[PN_HEADER_MAX], bhdr[40];
	char name[PN_MAX_NAME * 4 + 1], file[PN_MAX_NAME * 4 + 1];
	uint64_t tab, tab_len;
	size_t nl, fl;
	int32_t first;

	e->ok = false;
	if (!o || o->code_bytecode > sizeof(hdr) ||
	    read_mem(e->pid, e->code, hdr, o->code_bytecode))
		return;
	memcpy(&first, hdr + o->code_firstlineno, sizeof(first));
	memcpy(&e->firsttraceable, hdr + o->code_firsttraceable, sizeof(e->firsttraceable));
	e->nr_units = get_u64(hdr, o->bytes_size); /* a code object is a PyVarObject too */
	if (first < 0 || e->firsttraceable > (1u << 24) || e->nr_units > (1u << 24))
		return;
	if (read_str(e->pid, o, get_u64(hdr, o->code_qualname), name, sizeof(name)) ||
	    read_str(e->pid, o, get_u64(hdr, o->code_filename), file, sizeof(file)))
		return;
	tab = get_u64(hdr, o->code_linetable);
	tab_len = 0;
	if (o->bytes_data <= sizeof(bhdr) && !read_mem(e->pid, tab, bhdr, o->bytes_data)) {
		tab_len = get_u64(bhdr, o->bytes_size);
		if (tab_len > PN_MAX_LINETABLE)
			tab_len = PN_MAX_LINETABLE; /* lines past it read as the first line */
	}
	nl = strlen(name) + 1;
	fl = strlen(file) + 1;
	e->name = malloc(nl + fl + tab_len);
	if (!e->name)
		return;
	memcpy(e->name, name, nl);
	e->file = e->name + nl;
	memcpy(e->file, file, fl);
	e->linetable = (uint8_t *)e->file + fl;
	if (tab_len && read_mem(e->pid, tab + o->bytes_data, e->linetable, tab_len))
		tab_len = 0;
	e->linetable_len = (uint32_t)tab_len;
	e->firstlineno = first;
	e->bytes = nl + fl + tab_len;
	e->ok = true;
}

/* May another code object be read now?  lock held. */
static bool read_allowed(struct python_names *pn)
{
	uint64_t now = mono_ns();

	if (pn->nr >= PN_MAX_ENTRIES || pn->bytes >= PN_MAX_BYTES)
		return false;
	if (now - pn->window_start_ns >= 1000000000ull) {
		pn->window_start_ns = now;
		pn->window_reads = 0;
	}
	return pn->window_reads++ < PN_READS_PER_SEC;
}

/* A copy of e under generation gen; NULL when out of memory. */
static struct pn_entry *entry_copy(const struct pn_entry *e, uint32_t gen)
{
	struct pn_entry *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	*c = *e;
	c->gen = gen;
	if (!e->name)
		return c;
	c->name = malloc(e->bytes);
	if (!c->name) {
		free(c);
		return NULL;
	}
	memcpy(c->name, e->name, e->bytes);
	c->file = c->name + (e->file - e->name);
	c->linetable = (uint8_t *)c->name + ((char *)e->linetable - e->name);
	return c;
}

/* The code objects of r's frames kept under r's generation: from taken_gen's entries, or read. */
static void note(struct python_names *pn, const struct cfi_sample_record *r, size_t size,
		 bool carry, uint32_t taken_gen)
{
	const struct cfi_python_frame *f;
	const struct python_offsets *off;
	struct pn_entry *e, *from;
	uint32_t i, b;

	if (!pn || !r->nr_python || r->nr_python > PY_MAX_FRAMES ||
	    r->nr_kernel > MAX_KERNEL_FRAMES || r->nr_user > MAX_USER_FRAMES_LIMIT ||
	    size < sizeof(*r) + ((size_t)r->nr_kernel + r->nr_user) * sizeof(__u64) +
		       (size_t)r->nr_python * sizeof(*f))
		return;
	off = python_detect_lookup(pn->pd, r->pid);
	f = python_frames_of(r);
	pthread_mutex_lock(&pn->lock);
	for (i = 0; i < r->nr_python; i++) {
		if (!f[i].code || find(pn, r->pid, r->generation, &f[i]))
			continue;
		from = carry ? find(pn, r->pid, taken_gen, &f[i]) : NULL;
		if (from && (pn->nr >= PN_MAX_ENTRIES || pn->bytes >= PN_MAX_BYTES)) {
			pn->stats.refused++;
			continue;
		} else if (from) {
			e = entry_copy(from, r->generation);
			if (!e)
				break;
		} else {
			if (!read_allowed(pn)) {
				pn->stats.refused++;
				continue; /* named "[python]"; a later sample may read it */
			}
			e = calloc(1, sizeof(*e));
			if (!e)
				break;
			e->pid = r->pid;
			e->gen = r->generation;
			e->code = f[i].code;
			e->scope = f[i].scope;
			e->off = off;
			/* a read of a few hundred bytes: done under the lock, the namer waits that
			 * long */
			read_code(e);
			pn->stats.read++;
			if (!e->ok)
				pn->stats.unreadable++;
		}
		b = bucket_of(e->pid, e->gen, e->code);
		e->next = pn->buckets[b];
		pn->buckets[b] = e;
		pn->nr++;
		pn->bytes += e->bytes;
	}
	pthread_mutex_unlock(&pn->lock);
}

void python_names_note(struct python_names *pn, const struct cfi_sample_record *r, size_t size)
{
	note(pn, r, size, false, 0);
}

void python_names_carry(struct python_names *pn, const struct cfi_sample_record *r, size_t size,
			uint32_t taken_gen)
{
	note(pn, r, size, true, taken_gen);
}

void python_names_sweep(struct python_names *pn)
{
	struct pn_entry **pp, *e;
	uint32_t b;

	if (!pn)
		return;
	pthread_mutex_lock(&pn->lock);
	for (b = 0; b < PN_BUCKETS; b++) {
		for (pp = &pn->buckets[b]; (e = *pp);) {
			if (kill((pid_t)e->pid, 0) && errno == ESRCH) {
				*pp = e->next;
				pn->nr--;
				pn->bytes -= e->bytes;
				entry_free(e);
			} else {
				pp = &e->next;
			}
		}
	}
	pthread_mutex_unlock(&pn->lock);
}

void python_names_stats(struct python_names *pn, struct python_names_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!pn)
		return;
	pthread_mutex_lock(&pn->lock);
	*out = pn->stats;
	pthread_mutex_unlock(&pn->lock);
}

/* The code unit the frame runs, or -1 (before its first instruction, or no offsets). */
static int64_t code_unit(const struct pn_entry *e, const struct cfi_python_frame *f)
{
	if (!e->off || f->instr == 0xffffffff || f->instr < e->off->code_bytecode)
		return -1;
	return (f->instr - e->off->code_bytecode) / 2;
}

/*
 * The code object was read after the sample was taken: one freed since (a
 * module's body after its import) may hold another one now.  Its frame's
 * instruction must at least lie inside its bytecode.
 */
static bool frame_fits(const struct pn_entry *e, const struct cfi_python_frame *f)
{
	int64_t unit = code_unit(e, f);

	return e->ok && (unit < 0 || (uint64_t)unit < e->nr_units);
}

unsigned int python_frame_role(struct python_names *pn, uint32_t pid, uint32_t gen,
			       const struct cfi_python_frame *f)
{
	const struct python_offsets *o;
	const struct pn_entry *e;
	unsigned int role = PY_FRAME_SHOW;
	int64_t unit;

	pthread_mutex_lock(&pn->lock);
	e = find(pn, pid, gen, f);
	o = e ? e->off : NULL;
	if (o && o->entry == PY_ENTRY_SHIM_FRAME && f->owner == o->owner_cstack) {
		role = PY_FRAME_SKIP | PY_FRAME_LAST;
	} else if (o) {
		if (o->entry == PY_ENTRY_IS_ENTRY && f->is_entry)
			role |= PY_FRAME_LAST;
		/* _PyFrame_IsIncomplete: set up, but its first instruction not reached yet */
		unit = e->ok ? code_unit(e, f) : 0;
		if (f->owner != o->owner_generator && unit < (int64_t)e->firsttraceable)
			role |= PY_FRAME_SKIP;
	} else if (f->is_entry) {
		/* not read: 3.11's flag is the best guess there is */
		role |= PY_FRAME_LAST;
	}
	pthread_mutex_unlock(&pn->lock);
	return role;
}

bool python_frame_name(struct python_names *pn, uint32_t pid, uint32_t gen,
		       const struct cfi_python_frame *f, const char **name, const char **file,
		       uint32_t *line)
{
	const struct pn_entry *e;
	int64_t unit;

	*name = "[python]";
	*file = "";
	*line = 0;
	pthread_mutex_lock(&pn->lock);
	e = find(pn, pid, gen, f);
	if (e && !frame_fits(e, f))
		e = NULL;
	if (e) {
		*name = e->name;
		*file = e->file;
		unit = code_unit(e, f);
		*line = unit < 0 ? (uint32_t)e->firstlineno
				 : python_linetable_line(e->linetable, e->linetable_len,
							 e->firstlineno, (uint32_t)unit);
	}
	pthread_mutex_unlock(&pn->lock);
	/* entries are freed only by python_names_sweep, after the profile is written */
	return e != NULL;
}

void python_frame_show(struct python_names *pn, uint32_t pid, uint32_t gen,
		       const struct cfi_python_frame *f, struct python_frame_shown *out)
{
	if (!pn) {
		*out =
		    (struct python_frame_shown){.role = f->is_entry ? PY_FRAME_LAST : PY_FRAME_SHOW,
						.name = "[python]",
						.file = ""};
		return;
	}
	out->role = python_frame_role(pn, pid, gen, f);
	python_frame_name(pn, pid, gen, f, &out->name, &out->file, &out->line);
}

bool python_is_eval_frame(const char *native_name)
{
	static const char eval[] = "_PyEval_EvalFrameDefault";

	/* LTO may split it: _PyEval_EvalFrameDefault.cold */
	return !strncmp(native_name, eval, sizeof(eval) - 1) &&
	       (!native_name[sizeof(eval) - 1] || native_name[sizeof(eval) - 1] == '.');
}

/* 6-bit groups, least significant first, 0x40 set on all but the last (Objects/locations.md). */
static bool read_varint(const uint8_t *t, size_t len, size_t *i, uint32_t *out)
{
	uint32_t v = 0, shift = 0;
	uint8_t b;

	do {
		if (*i >= len || shift > 30)
			return false;
		b = t[(*i)++];
		v |= (uint32_t)(b & 63) << shift;
		shift += 6;
	} while (b & 64);
	*out = v;
	return true;
}

static bool read_svarint(const uint8_t *t, size_t len, size_t *i, int32_t *out)
{
	uint32_t u;

	if (!read_varint(t, len, i, &u))
		return false;
	*out = u & 1 ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
	return true;
}

uint32_t python_linetable_line(const uint8_t *t, size_t len, int32_t firstlineno, uint32_t unit)
{
	int64_t line = firstlineno;
	uint32_t at = 0, skip;
	size_t i = 0;

	while (i < len) {
		uint8_t first = t[i++];
		uint32_t code = first >> 3 & 15, units = (first & 7) + 1;
		int32_t delta = 0;
		bool none = false;

		if (!(first & 0x80))
			return 0; /* not the first byte of an entry: not a location table */
		switch (code) {
		case 15: /* no location */
			none = true;
			break;
		case 14: /* long form: line delta, end line delta, columns */
			if (!read_svarint(t, len, &i, &delta) || !read_varint(t, len, &i, &skip) ||
			    !read_varint(t, len, &i, &skip) || !read_varint(t, len, &i, &skip))
				return 0;
			break;
		case 13: /* no columns */
			if (!read_svarint(t, len, &i, &delta))
				return 0;
			break;
		case 10:
		case 11:
		case 12: /* one line: delta code - 10, two column bytes */
			delta = (int32_t)code - 10;
			i += 2;
			break;
		default: /* short form: same line, one column byte */
			i += 1;
			break;
		}
		line += delta;
		if (unit < at + units)
			return none || line <= 0 || line > UINT32_MAX ? 0 : (uint32_t)line;
		at += units;
	}
	return 0;
}
