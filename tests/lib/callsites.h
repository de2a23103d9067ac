/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The call-site check of a saved recording (record --save): every non-leaf
 * user pc of a complete stack must be a return address, i.e. the bytes before
 * it in the mapped file are a call instruction (x86-64's call, arm64's bl,
 * blr or pointer-authenticated blr: by the file's ELF machine).  A pc in no file (JIT code,
 * anonymous memory) cannot be checked: counted apart, as jit.
 */
#ifndef CFIPROF_TEST_CALLSITES_H
#define CFIPROF_TEST_CALLSITES_H

#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PATHBUF
#define PATHBUF (PATH_MAX + 256)
#endif

struct map_ent {
	uint32_t pid;
	uint64_t start, end, offset;
	char path[PATH_MAX];
};

struct callsite_stats {
	uint64_t checked, failed, vdso, sigframes, unmapped, jit;
	/*
	 * In: [resumed_start, resumed_end), a function entered by a signal handler
	 * that pushed the pc it interrupted as its "return address" (Go's
	 * runtime.asyncPreempt); the frame above it is counted as preempted.
	 */
	uint64_t resumed_start, resumed_end, preempted;
	/*
	 * In: function entries a runtime pushes as return addresses by design (V8's
	 * deoptimizer continues an interpreted frame at InterpreterEnterAtBytecode);
	 * counted as entry_returns, unchecked.
	 */
	uint64_t entries[4], entry_returns;
	int nr_entries;
	/* In: a copy of the vDSO of the recorded machine (arm64's signal trampoline is there) */
	const char *vdso_path;
	char first_fail[PATHBUF];
};

/*
 * The symbols of path (a path, or a command found in PATH) as binutils' nm
 * lists them (-D: the dynamic ones): how many are named name (exact) or hold
 * it (!exact), the value of the last in *value; -1 if nm fails.
 */
static inline int nm_find(const char *path, bool dynamic, const char *name, bool exact,
			  uint64_t *value)
{
	char cmd[2 * PATH_MAX], line[4096], sym[4096], type;
	uint64_t v;
	int n = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "nm %s -- \"$(command -v '%s')\" 2>/dev/null",
		 dynamic ? "-D" : "", path);
	p = popen(cmd, "re");
	if (!p)
		return -1;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, "%lx %c %4095s", &v, &type, sym) == 3 &&
		    (exact ? !strcmp(sym, name) : strstr(sym, name) != NULL)) {
			n++;
			if (value)
				*value = v;
		}
	return pclose(p) == 0 ? n : -1;
}

/* The value of symbol name in path's symbol table (nm); 0 if none. */
static inline uint64_t nm_symbol(const char *path, const char *name)
{
	uint64_t value = 0;

	return nm_find(path, false, name, true, &value) > 0 ? value : 0;
}

struct file_cache {
	char path[PATH_MAX];
	int fd;
};

static struct file_cache fcache[64];
static int nr_fcache;

static int cached_fd(const char *path)
{
	int i;

	for (i = 0; i < nr_fcache; i++) {
		if (!strcmp(fcache[i].path, path))
			return fcache[i].fd;
	}
	if (nr_fcache == 64)
		return -1;
	snprintf(fcache[nr_fcache].path, sizeof(fcache[0].path), "%s", path);
	fcache[nr_fcache].fd = open(path, O_RDONLY | O_CLOEXEC);
	return fcache[nr_fcache++].fd;
}

static void close_fcache(void)
{
	int i;

	for (i = 0; i < nr_fcache; i++) {
		if (fcache[i].fd >= 0)
			close(fcache[i].fd);
	}
	nr_fcache = 0;
}

/*
 * Is b[0..len) exactly one call instruction: e8 rel32, or ff /2 with any
 * ModRM/SIB/displacement form, optionally after a REX prefix?
 */
static bool is_call(const uint8_t *b, int len)
{
	int i = 0, need;
	uint8_t modrm, mod, rm;

	if (len == 5 && b[0] == 0xe8)
		return true;
	if (b[0] >= 0x40 && b[0] <= 0x4f)
		i = 1;
	if (len < i + 2 || b[i] != 0xff)
		return false;
	modrm = b[i + 1];
	if (((modrm >> 3) & 7) != 2)
		return false;
	mod = modrm >> 6;
	rm = modrm & 7;
	need = i + 2;
	if (mod != 3) {
		if (rm == 4) {
			if (len < need + 1)
				return false;
			if (mod == 0 && (b[need] & 7) == 5)
				need += 4; /* SIB, no base: disp32 */
			need += 1;
		} else if (mod == 0 && rm == 5) {
			need += 4; /* rip-relative */
		}
		if (mod == 1)
			need += 1;
		else if (mod == 2)
			need += 4;
	}
	return need == len;
}

/*
 * Ends the byte string (the bytes just before a return address) with a call?
 * 2..8 bytes: REX + ff /2 with SIB + disp32 (41 ff 94 24 d32) is 8 long.
 */
static bool ends_with_call(const uint8_t *before, int n)
{
	int len;

	for (len = 2; len <= 8 && len <= n; len++) {
		if (is_call(before + n - len, len))
			return true;
	}
	return false;
}

/* arm64: the instruction before ra is bl, blr, or blraa(z)/blrab(z) */
static bool a64_call_before(const uint8_t before[4])
{
	uint32_t insn;

	memcpy(&insn, before, 4);
	return (insn & 0xfc000000) == 0x94000000 || (insn & 0xfffffc1f) == 0xd63f0000 ||
	       (insn & 0xfefff800) == 0xd63f0800;
}

/* The ELF machine of an open file (EM_X86_64, EM_AARCH64, ...), 0 if unknown. */
static uint16_t file_machine(int fd)
{
	uint8_t h[20];

	if (fd < 0 || pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h) || memcmp(h, "\177ELF", 4))
		return 0;
	return (uint16_t)(h[18] | h[19] << 8);
}

/* x86-64 rt_sigreturn trampoline (glibc __restore_rt): mov $15,%rax; syscall */
static const uint8_t sigreturn_code[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};

/*
 * Whether off in the file fd is on that trampoline: at its mov (where the
 * handler returned to), its syscall, or right after it (in rt_sigreturn).
 */
static bool x86_sigreturn_at(int fd, uint64_t off)
{
	static const uint64_t backs[] = {0, 7, sizeof(sigreturn_code)};
	uint8_t code[sizeof(sigreturn_code)];

	for (size_t k = 0; fd >= 0 && k < sizeof(backs) / sizeof(backs[0]); k++)
		if (off >= backs[k] &&
		    pread(fd, code, sizeof(code), (off_t)(off - backs[k])) ==
			(ssize_t)sizeof(code) &&
		    !memcmp(code, sigreturn_code, sizeof(code)))
			return true;
	return false;
}
/* arm64's, the vDSO's __kernel_rt_sigreturn: mov x8, #139 (rt_sigreturn); svc #0 */
static const uint8_t a64_sigreturn_code[] = {0x68, 0x11, 0x80, 0xd2, 0x01, 0x00, 0x00, 0xd4};

/*
 * Whether pc, at off in the vDSO image cs->vdso_path, is on arm64's
 * sigreturn trampoline: at its mov, its svc, or right after (in the
 * syscall); at_start: at its first instruction only (the address the
 * kernel puts in x30 for the handler to return to).
 */
static bool a64_vdso_sigreturn(const struct callsite_stats *cs, uint64_t off, bool at_start)
{
	uint8_t code[sizeof(a64_sigreturn_code)];
	int fd = cs->vdso_path ? cached_fd(cs->vdso_path) : -1;

	for (uint64_t back = 0; back <= (at_start ? 0 : 8); back += 4)
		if (fd >= 0 && off >= back &&
		    pread(fd, code, sizeof(code), (off_t)(off - back)) == (ssize_t)sizeof(code) &&
		    !memcmp(code, a64_sigreturn_code, sizeof(code)))
			return true;
	return false;
}

static const struct map_ent *find_map(const struct map_ent *maps, int nr, uint32_t pid, uint64_t pc)
{
	int i;

	for (i = 0; i < nr; i++) {
		if (maps[i].pid == pid && maps[i].start <= pc && pc < maps[i].end)
			return &maps[i];
	}
	return NULL;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static int check_callsites(const char *path, struct callsite_stats *cs, uint64_t *complete_stacks)
{
	FILE *f = fopen(path, "re");
	struct map_ent *maps = NULL;
	int nr_maps = 0, cap_maps = 0;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;

	if (!f)
		return -1;
	*complete_stacks = 0;
	while ((len = getline(&line, &cap, f)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = 0;
		if (!strncmp(line, "map ", 4)) {
			struct map_ent m;
			int pos = 0;

			memset(&m, 0, sizeof(m));
			if (sscanf(line, "map %u %lx %lx %lx %*x %*u %*s %n", &m.pid, &m.start, &m.end,
				   &m.offset, &pos) < 4 ||
			    !pos)
				continue;
			snprintf(m.path, sizeof(m.path), "%s", line + pos);
			if (nr_maps == cap_maps) {
				cap_maps = cap_maps ? 2 * cap_maps : 64;
				maps = realloc(maps, (size_t)cap_maps * sizeof(*maps));
				if (!maps)
					abort();
			}
			maps[nr_maps++] = m;
			continue;
		}
		if (strncmp(line, "stack ", 6))
			continue;
		uint64_t count;
		unsigned int pid, tid, reason, flags;
		char *u = strstr(line, " u ");
		int pos = 0;

		if (sscanf(line, "stack %lu %u %u %u %u %*s %n", &count, &pid, &tid, &reason, &flags,
			   &pos) < 5 ||
		    !u)
			continue;
		if (reason != 0)
			continue;
		(*complete_stacks)++;
		u += 3;
		/* the pcs end at the next field: " c N g N", then a runtime's frames ("py ...") */
		if (strchr(u, ' '))
			*strchr(u, ' ') = 0;
		if (!strcmp(u, "-"))
			continue;
		bool next_interrupted = false, arm64 = false;
		int idx = 0;
		char *tok, *save = NULL;
		uint64_t prev = 0;

		for (tok = strtok_r(u, ",", &save); tok;
		     prev = strtoull(tok, NULL, 16), tok = strtok_r(NULL, ",", &save), idx++) {
			uint64_t pc = strtoull(tok, NULL, 16), off;
			const struct map_ent *m;
			uint8_t before[8], here[sizeof(sigreturn_code)];
			ssize_t got;
			int fd, nb;

			if (idx == 0) {
				/*
				 * The leaf: the interrupted pc itself.  On the restorer
				 * (the handler returned to it) or right after its
				 * syscall (the kernel was in rt_sigreturn), the signal
				 * frame is still there and above it is the pc it
				 * interrupted.
				 */
				m = find_map(maps, nr_maps, pid, pc);
				off = m ? pc - m->start + m->offset : 0;
				fd = m && m->path[0] == '/' ? cached_fd(m->path) : -1;
				/* the recording's machine, from the first mapped file's header */
				for (int k = 0; k < nr_maps; k++)
					if (maps[k].pid == pid && maps[k].path[0] == '/') {
						arm64 = file_machine(cached_fd(maps[k].path)) ==
							EM_AARCH64;
						break;
					}
				next_interrupted = x86_sigreturn_at(fd, off);
				/* arm64's trampoline is the vDSO's: on it or in its syscall */
				if (arm64 && m && !strcmp(m->path, "[vdso]"))
					next_interrupted =
					    a64_vdso_sigreturn(cs, pc - m->start, false);
				continue;
			}
			if (prev >= cs->resumed_start && prev < cs->resumed_end) {
				cs->preempted++;
				continue;
			}
			bool entry = false;

			for (int e = 0; e < cs->nr_entries; e++)
				entry |= pc == cs->entries[e];
			if (entry) {
				cs->entry_returns++;
				continue;
			}
			if (next_interrupted) {
				/* the pc the signal interrupted: not a return address */
				next_interrupted = false;
				continue;
			}
			m = find_map(maps, nr_maps, pid, pc - 1);
			if (!m) {
				cs->unmapped++;
				cs->failed++;
				if (!cs->first_fail[0])
					snprintf(cs->first_fail, sizeof(cs->first_fail),
						 "pc %#lx (frame %d) of pid %u in no saved mapping", pc,
						 idx, pid);
				continue;
			}
			if (!strcmp(m->path, "[vdso]")) {
				cs->vdso++;
				/*
				 * arm64's sigreturn trampoline is the vDSO's (x86-64's is
				 * libc's, below): as a caller frame, the frame above it is
				 * the interrupted pc, no return address (read in the vDSO's
				 * copy when there is one: only the trampoline is a caller)
				 */
				next_interrupted =
				    arm64 &&
				    (!cs->vdso_path || a64_vdso_sigreturn(cs, pc - m->start, true));
				continue;
			}
			if (m->path[0] != '/') {
				cs->jit++;
				continue;
			}
			off = pc - m->start + m->offset;
			fd = m->path[0] == '/' ? cached_fd(m->path) : -1;
			if (fd >= 0 && pread(fd, here, sizeof(here), (off_t)off) == (ssize_t)sizeof(here) &&
			    !memcmp(here, sigreturn_code, sizeof(here))) {
				/* the kernel pushed this "return address" (sa_restorer) */
				cs->sigframes++;
				next_interrupted = true;
				continue;
			}
			cs->checked++;
			nb = off < 8 ? (int)off : 8;
			if (file_machine(fd) == EM_AARCH64)
				nb = off < 4 ? (int)off : 4;
			got = fd >= 0 ? pread(fd, before + 8 - nb, (size_t)nb, (off_t)(off - nb)) : -1;
			if (got != nb || (nb == 4 ? !a64_call_before(before + 4)
						  : !ends_with_call(before + 8 - nb, nb))) {
				cs->failed++;
				if (!cs->first_fail[0]) {
					char hex[32] = "";
					int k;

					for (k = 0; got == nb && k < nb; k++)
						sprintf(hex + 3 * k, "%02x ", before[8 - nb + k]);
					snprintf(cs->first_fail, sizeof(cs->first_fail),
						 "pc %#lx (frame %d) = %s+%#lx, bytes before: %s%s", pc,
						 idx, base_name(m->path), off, hex,
						 fd < 0 ? "(cannot open the file)" : "");
				}
			}
		}
	}
	free(line);
	free(maps);
	fclose(f);
	close_fcache();
	return 0;
}

#endif
