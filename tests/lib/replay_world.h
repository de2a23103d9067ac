/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Process snapshots for the replay tests: /proc/PID/maps, the stack bytes,
 * a minimal ELF symbolizer, load biases, and a "world" of the tables of every
 * mapped object loaded into a replay_env the way the loader loads the maps.
 * Shared by the kernel-free replay test and the live BPF walk test.
 */
#ifndef CFIPROF_REPLAY_WORLD_H
#define CFIPROF_REPLAY_WORLD_H

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/replay.h"

/* not every includer uses every helper */
#pragma GCC diagnostic ignored "-Wunused-function"

/* ------------------------------------------------------------------ */
/* snapshots                                                           */
/* ------------------------------------------------------------------ */

#define SNAP_MAGIC "CFISNAP1"

struct snap_map {
	uint64_t start, end, offset;
	uint32_t exec;
	uint32_t pad;
	char path[256];
};

struct snapshot {
	uint32_t pid, tid;
	uint64_t rip, rsp, rbp;
	uint64_t stack_addr, stack_len;
	uint32_t nr_maps;
	struct snap_map *maps;
	uint8_t *stack;
};

static void snap_free(struct snapshot *s)
{
	free(s->maps);
	free(s->stack);
	memset(s, 0, sizeof(*s));
}

static int snap_write(const struct snapshot *s, const char *path)
{
	FILE *f = fopen(path, "wb");
	int ok;

	if (!f)
		return -errno;
	ok = fwrite(SNAP_MAGIC, 8, 1, f) == 1 && fwrite(&s->pid, 4, 1, f) == 1 &&
	     fwrite(&s->tid, 4, 1, f) == 1 && fwrite(&s->rip, 8, 1, f) == 1 &&
	     fwrite(&s->rsp, 8, 1, f) == 1 && fwrite(&s->rbp, 8, 1, f) == 1 &&
	     fwrite(&s->stack_addr, 8, 1, f) == 1 && fwrite(&s->stack_len, 8, 1, f) == 1 &&
	     fwrite(&s->nr_maps, 4, 1, f) == 1 &&
	     fwrite(s->maps, sizeof(*s->maps), s->nr_maps, f) == s->nr_maps &&
	     fwrite(s->stack, 1, s->stack_len, f) == s->stack_len;
	if (fclose(f) || !ok)
		return -EIO;
	return 0;
}

static int snap_read(struct snapshot *s, const char *path)
{
	FILE *f = fopen(path, "rb");
	char magic[8];
	int ok;

	memset(s, 0, sizeof(*s));
	if (!f)
		return -errno;
	ok = fread(magic, 8, 1, f) == 1 && !memcmp(magic, SNAP_MAGIC, 8) &&
	     fread(&s->pid, 4, 1, f) == 1 && fread(&s->tid, 4, 1, f) == 1 &&
	     fread(&s->rip, 8, 1, f) == 1 && fread(&s->rsp, 8, 1, f) == 1 &&
	     fread(&s->rbp, 8, 1, f) == 1 && fread(&s->stack_addr, 8, 1, f) == 1 &&
	     fread(&s->stack_len, 8, 1, f) == 1 && fread(&s->nr_maps, 4, 1, f) == 1 &&
	     s->nr_maps < 100000 && s->stack_len < (64u << 20);
	if (ok) {
		s->maps = calloc(s->nr_maps ? s->nr_maps : 1, sizeof(*s->maps));
		s->stack = malloc(s->stack_len ? s->stack_len : 1);
		ok = s->maps && s->stack &&
		     fread(s->maps, sizeof(*s->maps), s->nr_maps, f) == s->nr_maps &&
		     fread(s->stack, 1, s->stack_len, f) == s->stack_len;
	}
	fclose(f);
	if (!ok) {
		snap_free(s);
		return -EIO;
	}
	return 0;
}

static int read_maps(pid_t pid, struct snapshot *s)
{
	char path[64], line[4096];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	s->nr_maps = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		char perms[8], file[4096] = "";
		struct snap_map *m;

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &start, &end, perms, &off,
			   file) < 4)
			continue;
		m = realloc(s->maps, (s->nr_maps + 1) * sizeof(*m));
		if (!m)
			break;
		s->maps = m;
		m = &s->maps[s->nr_maps++];
		memset(m, 0, sizeof(*m));
		m->start = start;
		m->end = end;
		m->offset = off;
		m->exec = perms[2] == 'x';
		snprintf(m->path, sizeof(m->path), "%s", file + strspn(file, " "));
	}
	fclose(f);
	return 0;
}

/* ---- a minimal ELF symbolizer: function symbols and load segments ---- */

struct sym {
	uint64_t addr, size;
	char *name;
};

struct object {
	char path[256];
	uint32_t id;
	struct cfi_table *table;
	int table_err;
	struct sym *syms;
	size_t nr_syms;
	GElf_Phdr *phdrs;
	size_t nr_phdrs;
	uint8_t *file; /* whole file, for the call-site check */
	size_t file_len;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static void object_load_elf(struct object *o)
{
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t i;
	int fd;
	struct stat st;

	fd = open(o->path, O_RDONLY);
	if (fd < 0)
		return;
	if (!fstat(fd, &st) && st.st_size > 0) {
		o->file = malloc(st.st_size);
		if (o->file && pread(fd, o->file, st.st_size, 0) == st.st_size)
			o->file_len = st.st_size;
	}
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e) {
		close(fd);
		return;
	}
	if (!elf_getphdrnum(e, &o->nr_phdrs)) {
		o->phdrs = calloc(o->nr_phdrs + 1, sizeof(*o->phdrs));
		for (i = 0; o->phdrs && i < o->nr_phdrs; i++)
			gelf_getphdr(e, i, &o->phdrs[i]);
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Sym s;
			const char *name;
			struct sym *ns;

			if (!gelf_getsym(d, i, &s) || GELF_ST_TYPE(s.st_info) != STT_FUNC ||
			    !s.st_value)
				continue;
			name = elf_strptr(e, sh.sh_link, s.st_name);
			if (!name)
				continue;
			/* doubling at each power of two: a sanitizer's realloc copies every time */
			if (o->nr_syms >= 16 ? !(o->nr_syms & (o->nr_syms - 1)) : !o->nr_syms) {
				ns = realloc(o->syms, (o->nr_syms ? o->nr_syms * 2 : 16) * sizeof(*ns));
				if (!ns)
					break;
				o->syms = ns;
			}
			ns = o->syms;
			ns[o->nr_syms].addr = s.st_value;
			ns[o->nr_syms].size = s.st_size;
			ns[o->nr_syms].name = strdup(name);
			o->nr_syms++;
		}
	}
	qsort(o->syms, o->nr_syms, sizeof(*o->syms), sym_cmp);
	elf_end(e);
	close(fd);
}

static const char *object_sym(const struct object *o, uint64_t vaddr, uint64_t *start,
			      uint64_t *size)
{
	size_t lo = 0, hi = o->nr_syms;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (o->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* several symbols may share an address: any one that covers vaddr */
	while (lo > 0) {
		const struct sym *s = &o->syms[--lo];

		if (vaddr < s->addr + (s->size ? s->size : 1)) {
			if (start)
				*start = s->addr;
			if (size)
				*size = s->size;
			return s->name;
		}
		if (s->addr + 0x100000 < vaddr)
			break;
	}
	return NULL;
}

/* pc - bias = ELF vaddr, from the PT_LOAD segment that holds the mapping's file offset. */
static int object_bias(const struct object *o, const struct snap_map *m, uint64_t *bias)
{
	size_t i;

	for (i = 0; i < o->nr_phdrs; i++) {
		const GElf_Phdr *p = &o->phdrs[i];
		uint64_t off0 = p->p_offset & ~0xfffull;

		if (p->p_type != PT_LOAD)
			continue;
		if (m->offset >= off0 && m->offset < p->p_offset + p->p_filesz) {
			*bias = m->start - (p->p_vaddr + m->offset - p->p_offset);
			return 0;
		}
	}
	return -1;
}

static void object_free(struct object *o)
{
	size_t i;

	for (i = 0; i < o->nr_syms; i++)
		free(o->syms[i].name);
	free(o->syms);
	free(o->phdrs);
	free(o->file);
	if (o->table)
		cfi_table_free(o->table);
}

/* All objects of a snapshot, with tables, and the replay environment over them. */
struct world {
	struct object objs[64];
	int nr_objs;
	struct replay_env env;
	uint64_t biases[512]; /* per snapshot map, valid when exec and file-backed */
	int obj_of_map[512];
};

static int world_obj(struct world *w, const char *path)
{
	struct object *o;
	struct cfi_diag diag;
	int i;

	for (i = 0; i < w->nr_objs; i++)
		if (!strcmp(w->objs[i].path, path))
			return i;
	if (w->nr_objs >= 64)
		return -1;
	o = &w->objs[w->nr_objs];
	memset(o, 0, sizeof(*o));
	snprintf(o->path, sizeof(o->path), "%s", path);
	o->id = w->nr_objs + 1;
	object_load_elf(o);
	memset(&diag, 0, sizeof(diag));
	o->table_err = cfi_table_build_file(path, NULL, &o->table, &diag);
	if (o->table_err)
		o->table = NULL;
	return w->nr_objs++;
}

static int world_build(struct world *w, const struct snapshot *s)
{
	uint32_t i;
	int err;

	memset(w, 0, sizeof(*w));
	replay_env_init(&w->env, s->pid);
	for (i = 0; i < s->nr_maps && i < 512; i++) {
		const struct snap_map *m = &s->maps[i];
		struct object *o;
		int idx;

		w->obj_of_map[i] = -1;
		/* anonymous executable memory (JIT code): frame pointers, as in the loader */
		if (m->exec && (!m->path[0] || !strncmp(m->path, "[anon", 5))) {
			replay_add_mapping(&w->env, m->start, m->end, 0, CFI_MAPPING_FP, 0);
			continue;
		}
		if (!m->exec || m->path[0] != '/')
			continue;
		idx = world_obj(w, m->path);
		if (idx < 0)
			continue;
		o = &w->objs[idx];
		w->obj_of_map[i] = idx;
		if (object_bias(o, m, &w->biases[i])) {
			fprintf(stderr, "no PT_LOAD for %s offset %#llx\n", m->path,
				(unsigned long long)m->offset);
			continue;
		}
		/* objects without CFI fall back to frame pointers, as in the loader */
		replay_add_mapping(&w->env, m->start, m->end, o->id,
				   o->table ? CFI_MAPPING_CFI : CFI_MAPPING_FP, w->biases[i]);
	}
	for (i = 0; i < (uint32_t)w->nr_objs; i++) {
		if (!w->objs[i].table)
			continue;
		err = replay_add_table(&w->env, w->objs[i].id, w->objs[i].table);
		if (err)
			return err;
	}
	replay_add_mem(&w->env, s->stack_addr, s->stack, s->stack_len);
	return 0;
}

static void world_free(struct world *w)
{
	int i;

	for (i = 0; i < w->nr_objs; i++)
		object_free(&w->objs[i]);
	replay_env_free(&w->env);
}

/* Symbol of pc (lookup at pc - adjust) as "name", "libc:name" style is up to the caller. */
static const char *world_sym(const struct world *w, const struct snapshot *s, uint64_t pc,
			     const struct object **obj, const struct snap_map **map)
{
	uint32_t i;

	*obj = NULL;
	*map = NULL;
	for (i = 0; i < s->nr_maps && i < 512; i++) {
		const struct snap_map *m = &s->maps[i];

		if (pc >= m->start && pc < m->end && w->obj_of_map[i] >= 0) {
			const struct object *o = &w->objs[w->obj_of_map[i]];

			*obj = o;
			*map = m;
			return object_sym(o, pc - w->biases[i], NULL, NULL);
		}
	}
	return NULL;
}

/* Is pc in anonymous executable memory (JIT code)? */
static int snap_anon_exec(const struct snapshot *s, uint64_t pc)
{
	for (uint32_t i = 0; i < s->nr_maps && i < 512; i++) {
		const struct snap_map *m = &s->maps[i];

		if (pc >= m->start && pc < m->end)
			return m->exec && (!m->path[0] || !strncmp(m->path, "[anon", 5));
	}
	return 0;
}

/* The return address must directly follow a call instruction in the file. */
static int follows_call(const struct object *o, const struct snap_map *m, uint64_t pc)
{
	uint64_t off = pc - m->start + m->offset;
	const uint8_t *p;

	if (!o->file || off < 8 || off > o->file_len)
		return 0;
	p = o->file + off;
	if (p[-5] == 0xe8)
		return 1; /* call rel32 */
	/* call r/m64 (ff /2) with 0-, 1-, 4- or 5-byte operand encodings, with or without REX */
	if ((p[-2] == 0xff && (p[-1] & 0x38) == 0x10) ||
	    (p[-3] == 0xff && (p[-2] & 0x38) == 0x10) ||
	    (p[-6] == 0xff && (p[-5] & 0x38) == 0x10) ||
	    (p[-7] == 0xff && (p[-6] & 0x38) == 0x10) || (p[-4] == 0xff && (p[-3] & 0x38) == 0x10))
		return 1;
	return 0;
}

/* ---- replay and compare ---- */

/*
 * Expected chain tokens, leaf first:
 *   "name"   a function of the program or its libraries (name.cold also matches)
 *   "@libc"  any frame in libc.so.6 (its .symtab is stripped)
 *   "@sig"   the signal trampoline in libc (no call before it)
 *   "!name"  an interrupted frame: no call-site check
 *   "@jit"   a frame in anonymous executable memory (JIT code)
 */
struct expect {
	const char *tok[16];
	int nr_tok;
	const char *repeat; /* if set: tok[0], then repeat x nr_repeat, then tok[1..] */
	int nr_repeat;
};

static const char *expect_token(const struct expect *e, int i)
{
	if (!e->repeat)
		return i < e->nr_tok ? e->tok[i] : NULL;
	if (i == 0)
		return e->tok[0];
	if (i <= e->nr_repeat)
		return e->repeat;
	i -= e->nr_repeat;
	return i < e->nr_tok ? e->tok[i] : NULL;
}

static int expect_len(const struct expect *e)
{
	return e->nr_tok + (e->repeat ? e->nr_repeat : 0);
}

/*
 * Does pcs[0..nr) symbolize to exactly the expected chain, every return
 * address directly after a call instruction?  Fills chain (text) and why.
 */
static int chain_match(const struct world *w, const struct snapshot *s, const __u64 *pcs,
		       unsigned int nr, const struct expect *e, char *chain, size_t chain_len,
		       char *why, size_t why_len)
{
	size_t clen = 0;
	unsigned int i;
	int ok = 1;

	chain[0] = 0;
	snprintf(why, why_len, "ok");
	if ((int)nr != expect_len(e)) {
		snprintf(why, why_len, "length");
		ok = 0;
	}
	for (i = 0; i < nr; i++) {
		const struct object *o;
		const struct snap_map *m;
		const char *sym = world_sym(w, s, pcs[i] - (i ? 1 : 0), &o, &m);
		const char *tok = expect_token(e, i);
		const char *base = o ? strrchr(o->path, '/') : NULL;
		int in_libc = base && !strncmp(base, "/libc.so", 8);
		int match;

		if (clen < chain_len - 64 && (i < 12 || i + 6 > nr))
			clen += snprintf(chain + clen, chain_len - clen, "%s%s%s", i ? " <- " : "",
					 in_libc ? "libc:" : "", sym ? sym : "?");
		else if (clen < chain_len - 64 && i == 12)
			clen += snprintf(chain + clen, chain_len - clen, " <- ...");
		if (!tok) {
			ok = 0;
			continue;
		}
		if (!strcmp(tok, "@libc") || !strcmp(tok, "@sig")) {
			match = in_libc;
		} else if (!strcmp(tok, "@jit")) {
			match = !o && snap_anon_exec(s, pcs[i]);
		} else {
			const char *want = tok[0] == '!' ? tok + 1 : tok;
			size_t wl = strlen(want);

			match = sym && !in_libc && !strncmp(sym, want, wl) &&
				(sym[wl] == 0 || sym[wl] == '.');
		}
		if (!match && ok)
			snprintf(why, why_len, "frame %u is not %s", i, tok);
		ok &= match;
		/* call-site check for every return address */
		if (i > 0 && o && tok[0] != '!' && strcmp(tok, "@sig") &&
		    !follows_call(o, m, pcs[i])) {
			if (ok)
				snprintf(why, why_len, "frame %u (%#llx) does not follow a call", i,
					 (unsigned long long)pcs[i]);
			ok = 0;
		}
	}
	return ok;
}

#endif /* CFIPROF_REPLAY_WORLD_H */
