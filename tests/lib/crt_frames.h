/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Samples that stop no-rule in crt code (_init, _fini and crtstuff.c's
 * functions, which no FDE covers): by name, or by address in a stripped
 * library's .init / .fini as readelf -S gives them.
 */
#ifndef CFIPROF_TEST_CRT_FRAMES_H
#define CFIPROF_TEST_CRT_FRAMES_H

#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__aarch64__)
#define MULTIARCH "aarch64-linux-gnu"
#else
#define MULTIARCH "x86_64-linux-gnu"
#endif

/*
 * The startup and teardown code gcc links into every shared object: crti.o's
 * _init and crtn.o's _fini, crtstuff.c's functions.  None has an FDE (see
 * readelf --debug-frames: the libraries' CFI starts at the PLT) and none
 * keeps a frame pointer: a sample there stops at no-rule, whatever the
 * profiler.
 */
static inline bool is_crt_function(const char *f, size_t len)
{
	static const char *const crt[] = {"_init",
					  "_fini",
					  "frame_dummy",
					  "register_tm_clones",
					  "deregister_tm_clones",
					  "__do_global_dtors_aux"};

	for (size_t i = 0; i < sizeof(crt) / sizeof(crt[0]); i++)
		if (len == strlen(crt[i]) && !strncmp(f, crt[i], len))
			return true;
	return false;
}

/*
 * The same code in a stripped object, whose frame reads OBJ+0xADDRESS: the
 * address in the object's .init or .fini, as readelf -S of the library in the
 * system's library folders (or the program in the system's program folders)
 * gives them (or an interpreter's extension folders), or crtstuff.c's functions in its .text, as
 * readelf
 * --debug-dump=frames lists the FDEs: below the first one (a library), or in
 * the gap after _start's, the one at the entry point (a program: crt1.o's
 * _start is linked right before crtstuff's functions).
 */
static inline bool is_crt_address(const char *f, size_t len)
{
	/*
	 * and the interpreters' extension folders (PHP's dom.so: its _init; Ruby's
	 * encodings in enc/ and enc/trans/, Perl's XS modules a folder or two down)
	 */
	static const char *const patterns[] = {"/lib/" MULTIARCH,
					       "/usr/lib/" MULTIARCH,
					       "/usr/bin",
					       "/usr/sbin",
					       "/usr/lib/php/[0-9]*",
					       "/usr/lib/python3*/lib-dynload",
					       "/usr/lib/" MULTIARCH "/ruby/[0-9]*",
					       "/usr/lib/" MULTIARCH "/ruby/[0-9]*/*",
					       "/usr/lib/" MULTIARCH "/ruby/[0-9]*/*/*",
					       "/usr/lib/" MULTIARCH "/perl*/[0-9]*/auto/*",
					       "/usr/lib/" MULTIARCH "/perl*/[0-9]*/auto/*/*"};
	char name[256], cmd[PATH_MAX + 200], line[512], *plus;
	unsigned long long at, start, size, text = 0, first_fde = ~0ull, pc, end;
	unsigned long long entry = 0, entry_end = 0, after_entry = ~0ull, below, above;
	const char *dirs[256];
	size_t ndirs = 0;
	bool in = false, covered;
	glob_t g = {0};

	if (len >= sizeof(name))
		return false;
	memcpy(name, f, len);
	name[len] = 0;
	plus = strstr(name, "+0x");
	if (!plus || sscanf(plus + 3, "%llx", &at) != 1)
		return false;
	*plus = 0;
	if (strchr(name, '/') || strchr(name, '\'') || !name[0])
		return false;
	for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++)
		glob(patterns[i], GLOB_ONLYDIR | GLOB_NOSORT | (i ? GLOB_APPEND : 0), NULL, &g);
	for (size_t i = 0; i < g.gl_pathc && ndirs < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char path[PATH_MAX];

		snprintf(path, sizeof(path), "%s/%s", g.gl_pathv[i], name);
		if (!access(path, R_OK) && !strchr(g.gl_pathv[i], '\''))
			dirs[ndirs++] = g.gl_pathv[i];
	}
	for (size_t d = 0; d < ndirs && !in; d++) {
		FILE *p;

		snprintf(cmd, sizeof(cmd), "readelf -hSW '%s/%s' 2>/dev/null", dirs[d], name);
		p = popen(cmd, "re");
		while (p && fgets(line, sizeof(line), p)) {
			const char *sec = strstr(line, "] .");

			if (!strncmp(line, "  Entry point address:", 22))
				sscanf(line + 22, "%llx", &entry);
			if (sec && !strncmp(sec + 2, ".text ", 6))
				sscanf(sec + 8, "%*s %llx", &text);
			/* [Nr] Name Type Address Off Size ...: .init and .fini */
			if (!sec ||
			    (strncmp(sec + 2, ".init ", 6) && strncmp(sec + 2, ".fini ", 6)))
				continue;
			if (sscanf(sec + 8, "%*s %llx %*x %llx", &start, &size) == 2 &&
			    at >= start && at < start + size)
				in = true;
		}
		if (p)
			pclose(p);
		if (in || !text || at < text)
			continue;
		/*
		 * and crtstuff.c's functions, where .text begins: below the
		 * first FDE in it (readelf's pc=START..END of each FDE)
		 */
		snprintf(cmd, sizeof(cmd), "readelf --debug-dump=frames '%s/%s' 2>/dev/null",
			 dirs[d], name);
		p = popen(cmd, "re");
		below = text;
		above = ~0ull;
		covered = false;
		while (p && fgets(line, sizeof(line), p)) {
			const char *at_pc = strstr(line, " pc=");

			if (!at_pc || sscanf(at_pc + 4, "%llx..%llx", &pc, &end) != 2 || pc < text)
				continue;
			covered |= at >= pc && at < end;
			if (end <= at && end > below)
				below = end;
			if (pc > at && pc < above)
				above = pc;
			if (pc < first_fde)
				first_fde = pc;
			if (pc == entry)
				entry_end = end;
			else if (pc > entry && pc < after_entry)
				after_entry = pc;
		}
		if (p)
			pclose(p);
		in = at < first_fde || (entry_end && at >= entry_end && at < after_entry);
		/*
		 * or where a library's compiler put them later in .text (after
		 * its .text.unlikely and .text.startup functions: libicuuc's,
		 * libgcc_s's): a short gap no FDE covers whose code is
		 * crtstuff's, __do_global_dtors_aux calling __cxa_finalize, as
		 * objdump shows it (_ITM_deregisterTMCloneTable, which it loads
		 * too, is named only where the dynamic symbols list it)
		 */
		if (!in && !covered && above != ~0ull && above - below <= 0x200) {
			bool fin = false;

			snprintf(cmd, sizeof(cmd),
				 "objdump -d --start-address=%#llx --stop-address=%#llx '%s/%s' "
				 "2>/dev/null",
				 below, above, dirs[d], name);
			p = popen(cmd, "re");
			while (p && fgets(line, sizeof(line), p))
				fin |= strstr(line, "<__cxa_finalize") != NULL;
			if (p)
				pclose(p);
			in = fin;
		}
	}
	globfree(&g);
	return in;
}

/*
 * Samples of comm stopped at no-rule in one of those functions, and of those
 * how many inside a page fault: the frame the walk stopped at (the first
 * after the tag) is the crt function; their only user frame (the leaf) is
 * it, kernel frames ("_[k]") may follow, unless callees: then the functions
 * it called too (_init running a constructor: the walk came up to _init's
 * frame through theirs' CFI).
 */
static inline uint64_t count_crt_stops(const char *path, const char *comm, bool callees,
				       uint64_t *in_fault)
{
	FILE *f = fopen(path, "re");
	char *line = NULL, prefix[128];
	size_t cap = 0;
	uint64_t count = 0;

	*in_fault = 0;
	snprintf(prefix, sizeof(prefix), "%s;[incomplete: no-rule];", comm);
	while (f && getline(&line, &cap, f) > 0) {
		char *leaf = line + strlen(prefix), *cnt = strrchr(line, ' ');
		size_t len;

		if (strncmp(line, prefix, strlen(prefix)))
			continue;
		len = strcspn(leaf, "; ");
		if (!(is_crt_function(leaf, len) || is_crt_address(leaf, len)) || !cnt)
			continue;
		if (leaf[len] == ';') {
			const char *k = leaf + len + 1;
			size_t kl = strcspn(k, "; ");

			/* more user frames: the walk got past the leaf, so not this stop */
			if (!callees && (kl < 4 || strncmp(k + kl - 4, "_[k]", 4)))
				continue;
		}
		count += strtoull(cnt + 1, NULL, 10);
		if (leaf[len] == ';' && strstr(leaf, "exc_page_fault_[k]"))
			*in_fault += strtoull(cnt + 1, NULL, 10);
	}
	free(line);
	if (f)
		fclose(f);
	return count;
}

static inline uint64_t count_crt_no_rule(const char *path, const char *comm, uint64_t *in_fault)
{
	return count_crt_stops(path, comm, false, in_fault);
}

/*
 * Samples of comm that stopped for another cause than crt code (a no-rule
 * stop, or fp-chain-broken in an object with no CFI at all, whose frame, the
 * first after the tag, is crt's: is_crt_function or is_crt_address; a
 * library's _init is where its first page fault is), the process's exit (no address space to walk), its
 * exec (the image being replaced: a command started through env) or a
 * load's window (no-mapping, tables-pending: code mapped or tables asked
 * for just before the sample, as many as the load took on a busy machine)
 * or a page fault on the stack the walk starts from (unreadable-memory at the
 * leaf, the only user frame, with the kernel in asm_exc_page_fault: the page
 * was not present, say under migration, and a walk from a perf event cannot
 * fault it in; perf's copy of the stack fails the same way);
 * each printed.  For a program whose native stacks must be complete.
 */
static inline uint64_t count_incomplete_outside_crt(const char *path, const char *comm)
{
	static const char no_rule[] = "[incomplete: no-rule];";
	/* the same in an object with no CFI at all (libicudata: .eh_frame empty): its _init */
	static const char fp_broken[] = "[incomplete: fp-chain-broken];";
	static const char unreadable[] = "[incomplete: unreadable-memory];";
	static const char fault[] = "asm_exc_page_fault_[k];";
	FILE *f = fopen(path, "re");
	char *line = NULL, prefix[128];
	size_t cap = 0, pl;
	uint64_t n = 0;

	pl = (size_t)snprintf(prefix, sizeof(prefix), "%s;[incomplete: ", comm);
	while (f && getline(&line, &cap, f) > 0) {
		const char *at = line + pl - strlen("[incomplete: "), *cnt = strrchr(line, ' ');
		size_t len;

		if (strncmp(line, prefix, pl) || !cnt || !strncmp(line + pl, "exiting]", 8) ||
		    !strncmp(line + pl, "in-execve]", 10) ||
		    !strncmp(line + pl, "no-mapping]", 11) ||
		    !strncmp(line + pl, "tables-pending]", 15))
			continue;
		if (!strncmp(at, no_rule, sizeof(no_rule) - 1) ||
		    !strncmp(at, fp_broken, sizeof(fp_broken) - 1)) {
			const char *f = strchr(at, ';') + 1;

			len = strcspn(f, "; ");
			if (is_crt_function(f, len) || is_crt_address(f, len))
				continue;
		}
		if (!strncmp(at, unreadable, sizeof(unreadable) - 1)) {
			const char *k = at + sizeof(unreadable) - 1;

			k += strcspn(k, "; ");
			if (*k == ';' && !strncmp(k + 1, fault, sizeof(fault) - 1))
				continue;
		}
		n += strtoull(cnt + 1, NULL, 10);
		printf("  incomplete outside crt: %s", line);
	}
	free(line);
	if (f)
		fclose(f);
	return n;
}

#endif
