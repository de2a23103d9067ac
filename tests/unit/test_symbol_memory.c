// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Small files, large memory (issue 26 item 3): symbol names and perf maps
 * whose cost was not bounded by their file's size.  Each case runs in a
 * forked child (tests/lib/bounded.h); its peak RSS above its start, the
 * kernel's VmHWM, is the oracle, against a bound derived from the caps with
 * the reason beside it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/bounded.h"
#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/long_names_elf.h"
#include "user/symbolize/demangle.h"
#include "user/symbolize/elf_symbols.h"
#include "user/symbolize/perfmap.h"
#include "user/symbolize/sym_cache.h"
#include "user/symbolize/sym_table.h"

#define MB (1ull << 20)

static char dir[64];

/* ---- ELF symbols ---- */

struct names_case {
	const char *path;
	size_t probe; /* a long-named symbol looked up */
};

/* val: symbols kept, names right (bit 0 first, 1 last, 2 the cut one), cut names, budgets hit */
static void names_case(void *arg, struct outcome *o)
{
	const struct names_case *nc = arg;
	uint64_t cut0 = elf_symbols_refused(ELF_SYMBOLS_NAME_CUT);
	uint64_t budget0 = elf_symbols_refused(ELF_SYMBOLS_BUDGET);
	struct sym_cache *c = sym_cache_new();
	const char *name = NULL;
	struct sym_obj *obj;
	double t0;

	/* raw names: the demangler must not touch the cut one here */
	sym_cache_set_demangle(c, SYM_DEMANGLE_NONE);
	bound_start();
	t0 = now_ms();
	obj = sym_cache_get(c, NULL, nc->path, -1, 0);
	o->ms = now_ms() - t0;
	o->rc = obj ? 0 : -1;
	if (obj) {
		size_t mark = sizeof(ELF_SYMBOL_NAME_CUT) - 1;

		o->val[0] = sym_obj_count(obj);
		if (!sym_obj_lookup(obj, LONG_NAMES_FIRST + 3, &name, NULL) &&
		    !strcmp(name, "normal_first"))
			o->val[1] |= 1;
		if (!sym_obj_lookup(obj, long_names_addr(o->val[0] - 2) + 1, &name, NULL) &&
		    !strcmp(name, "normal_last"))
			o->val[1] |= 2;
		if (!sym_obj_lookup(obj, long_names_addr(nc->probe), &name, NULL) &&
		    strlen(name) == ELF_SYMBOL_NAME_MAX &&
		    !strncmp(name, LONG_NAMES_HEAD, strlen(LONG_NAMES_HEAD)) &&
		    !strcmp(name + ELF_SYMBOL_NAME_MAX - mark, ELF_SYMBOL_NAME_CUT))
			o->val[1] |= 4;
	}
	o->val[2] = elf_symbols_refused(ELF_SYMBOLS_NAME_CUT) - cut0;
	o->val[3] = elf_symbols_refused(ELF_SYMBOLS_BUDGET) - budget0;
	sym_cache_free(c);
}

/*
 * The file: 1,000 symbols sharing one 400 KB name, 424 KB in all,
 * cost 382 MB as a copy of the name per address.
 */
static void test_shared_long_name(void)
{
	const size_t nsyms = 1000, name_len = 400 * 1000;
	struct names_case nc = {.probe = 500};
	char path[128];
	struct outcome o;
	size_t size;

	snprintf(path, sizeof(path), "%s/long_names.so", dir);
	nc.path = path;
	size = long_names_elf(path, nsyms, name_len, false);
	CHECK(size > name_len && size < 2 * name_len, "the crafted ELF: %zu bytes", size);
	o = run_bounded("1,000 symbols sharing one 400 KB name", names_case, &nc, 256, 60);
	CHECK(o.rc == 0 && o.val[0] == nsyms + 2, "read: %d, %" PRIu64 " symbols (want %zu)", o.rc,
	      o.val[0], nsyms + 2);
	CHECK(o.val[1] == 7, "names: normal_first %s, normal_last %s, the long one cut %s",
	      o.val[1] & 1 ? "ok" : "WRONG", o.val[1] & 2 ? "ok" : "WRONG",
	      o.val[1] & 4 ? "ok" : "WRONG");
	CHECK(o.val[2] == nsyms && o.val[3] == 0,
	      "counted: %" PRIu64 " names cut (want %zu), "
	      "%" PRIu64 " budgets hit (want 0)",
	      o.val[2], nsyms, o.val[3]);
	/* 1,000 cut names are 4 MB: 16 MB leaves room for malloc and ASan, none for 382 MB */
	CHECK(o.peak_kb < (long)(16 * MB >> 10), "peak RSS +%ld KB reading a %zu-byte ELF",
	      o.peak_kb, size);
	unlink(path);
}

/*
 * 20,000 symbols whose names, each its own pointer, stay over the name cap:
 * cut, they are 80 MB, past the object's bound, which stops them before any
 * is copied.
 */
static void test_symbol_bytes_bound(void)
{
	const size_t nsyms = 20000, name_len = ELF_SYMBOL_NAME_MAX + 20000;
	/* what fits: normal_first, then long names of the cap, a range each */
	const uint64_t per = sizeof(struct sym_range) + ELF_SYMBOL_NAME_MAX + 1;
	const uint64_t first = sizeof(struct sym_range) + sizeof("normal_first");
	const uint64_t fit = 1 + (ELF_SYMBOLS_BYTES_MAX - first) / per;
	struct names_case nc = {.probe = 0};
	char path[128];
	struct outcome o;

	snprintf(path, sizeof(path), "%s/many_names.so", dir);
	nc.path = path;
	CHECK(long_names_elf(path, nsyms, name_len, true) > 0, "the crafted ELF");
	o = run_bounded("20,000 symbols of 4 KiB+ names each", names_case, &nc, 512, 60);
	CHECK(o.rc == 0 && o.val[0] == fit,
	      "%" PRIu64 " symbols kept, want %" PRIu64 " (what the bound holds)", o.val[0], fit);
	CHECK((o.val[1] & 5) == 5 && o.val[3] == 1, "names %" PRIu64 ", budgets hit %" PRIu64,
	      o.val[1], o.val[3]);
	/* the bound itself, plus 24 MB for the candidates (20k), malloc and ASan's shadow */
	CHECK(o.peak_kb < (long)((ELF_SYMBOLS_BYTES_MAX + 24 * MB) >> 10),
	      "peak RSS +%ld MB for a bound of %llu MB", o.peak_kb >> 10,
	      ELF_SYMBOLS_BYTES_MAX / MB);
	unlink(path);
}

/* ---- demangled names ---- */

/* "_Z1f" + B<A,A>, then @levels arguments each B<previous, previous>: 2^levels output. */
static void expanding_name(char *buf, size_t len, int levels)
{
	size_t n = (size_t)snprintf(buf, len, "_Z1fI1BI1AS1_E");

	/* substitutions: f S_, B S0_, A S1_, B<A,A> S2_, each new argument the next (base 36) */
	for (int k = 0; k < levels && n < len; k++) {
		static const char d36[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
		char id[4] = {0};
		int v = k + 2;

		if (v >= 36)
			snprintf(id, sizeof(id), "%c%c", d36[v / 36], d36[v % 36]);
		else
			id[0] = d36[v];
		n += (size_t)snprintf(buf + n, len - n, "S0_IS%s_S%s_E", id, id);
	}
	snprintf(buf + n, len - n, "Evv");
}

static void demangle_case(void *arg, struct outcome *o)
{
	const char *want = "void f<B<A, A>, B<B<A, A>, B<A, A> >";
	size_t mark = sizeof(ELF_SYMBOL_NAME_CUT) - 1;
	char *out;
	double t0;

	bound_start();
	t0 = now_ms();
	out = sym_demangle(arg, SYM_DEMANGLE_FULL);
	o->ms = now_ms() - t0;
	o->rc = out ? 0 : -1;
	o->val[0] = out ? strlen(out) : 0;
	o->val[1] = out && !strncmp(out, want, strlen(want)) &&
		    !strcmp(out + strlen(out) - mark, ELF_SYMBOL_NAME_CUT);
	free(out);
}

/*
 * A 200-byte name whose back-references double the output at each level:
 * 40 levels print a terabyte.  It is cut at SYM_DEMANGLED_MAX, in time and
 * memory, and a name that fits is printed whole (libiberty's own output).
 */
static void test_demangle_expansion(void)
{
	char name[512];
	struct outcome o;
	char *small;

	expanding_name(name, sizeof(name), 2);
	small = sym_demangle(name, SYM_DEMANGLE_FULL);
	CHECK(small && !strcmp(small, "void f<B<A, A>, B<B<A, A>, B<A, A> >, B<B<B<A, A>, "
				      "B<A, A> >, B<B<A, A>, B<A, A> > > >()"),
	      "two levels: %s", small ? small : "(null)");
	free(small);
	expanding_name(name, sizeof(name), 40);
	o = run_bounded("a 40-level expanding mangled name", demangle_case, name, 256, 20);
	CHECK(o.rc == 0 && o.val[0] == SYM_DEMANGLED_MAX && o.val[1] == 1,
	      "demangled: %" PRIu64 " bytes (want %u, cut and marked: %s)", o.val[0],
	      SYM_DEMANGLED_MAX, o.val[1] ? "yes" : "no");
	/* the 16 KiB kept, and what libiberty's parse holds: nothing near the output's size */
	CHECK(o.peak_kb < 8 * 1024, "peak RSS +%ld KB", o.peak_kb);
}

/* ---- perf maps ---- */

/*
 * Lines "START 1 N" up to @min_bytes, starts descending (nothing in order:
 * the whole table is sorted); returns how many.
 */
static uint64_t write_map(const char *path, uint64_t min_bytes)
{
	FILE *f = fopen(path, "w");
	uint64_t n = 0, bytes = 0, lines = min_bytes / 10 + 1;

	if (!f)
		return 0;
	for (n = 0; bytes < min_bytes; n++) {
		int w = fprintf(f, "%" PRIx64 " 1 %c\n", 2 * (lines - n), 'a' + (int)(n % 26));

		if (w < 0)
			break;
		bytes += (uint64_t)w;
	}
	if (fclose(f))
		return 0;
	return n;
}

/* val: entries kept (all maps), lines refused, 2 when the last line written was kept */
static void maps_case(void *arg, struct outcome *o)
{
	const char *path = arg;
	uint64_t refused0 = perfmap_lines_refused_total();
	struct perfmap *pm[8] = {0};
	size_t i, nmaps = strstr(path, "multi") ? 5 : 1;
	const char *name = NULL;
	double t0;

	bound_start();
	t0 = now_ms();
	for (i = 0; i < nmaps; i++)
		pm[i] = perfmap_new(path);
	o->ms = now_ms() - t0;
	o->rc = pm[0] ? 0 : -1;
	for (i = 0; i < nmaps; i++)
		o->val[0] += pm[i] ? perfmap_count(pm[i]) : 0;
	o->val[1] = perfmap_lines_refused_total() - refused0;
	/* the last line written (lowest start, 2): kept only if every line was */
	if (pm[0] && !perfmap_lookup(pm[0], 2, &name, NULL))
		o->val[2] = 2;
	for (i = 0; i < nmaps; i++)
		perfmap_free(pm[i]);
}

/*
 * The map: 63 MiB of short lines (a 10-byte line was a 32-byte range
 * and a 2-byte name, doubled by growth and the sort: 430 MB).
 */
static void test_perfmap_bytes(void)
{
	char path[128];
	uint64_t lines;
	struct outcome o;

	snprintf(path, sizeof(path), "%s/perf-63.map", dir);
	lines = write_map(path, 63 * MB);
	CHECK(lines > 6000000, "the map: %" PRIu64 " lines", lines);
	o = run_bounded("a 63 MiB perf map of short lines", maps_case, path, 512, 120);
	CHECK(o.rc == 0 && o.val[0] > 0 && o.val[0] <= PERFMAP_MAX_ENTRIES,
	      "%" PRIu64 " entries kept (at most %u)", o.val[0], PERFMAP_MAX_ENTRIES);
	CHECK(o.val[0] + o.val[1] == lines && o.val[2] == 0,
	      "%" PRIu64 " kept + %" PRIu64 " refused != %" PRIu64 " lines, or the last one kept",
	      o.val[0], o.val[1], lines);
	/*
	 * The table's bound, plus as much again: the block realloc leaves while
	 * growing (kept by ASan's quarantine), getline's and stdio's buffers.
	 */
	CHECK(o.peak_kb < (long)((2 * PERFMAP_MAX_TABLE_BYTES) >> 10),
	      "peak RSS +%ld MB reading a 63 MiB map, bound %llu MB per map", o.peak_kb >> 10,
	      PERFMAP_MAX_TABLE_BYTES / MB);
	unlink(path);
}

/* Five maps of 12 MiB each (each fills its own bound) held at once: the bound across maps. */
static void test_perfmap_total(void)
{
	char path[128];
	uint64_t lines;
	struct outcome o;

	snprintf(path, sizeof(path), "%s/perf-multi.map", dir);
	lines = write_map(path, 12 * MB);
	o = run_bounded("five 12 MiB perf maps held at once", maps_case, path, 512, 120);
	CHECK(o.rc == 0 && o.val[0] + o.val[1] == 5 * lines,
	      "%" PRIu64 " kept + %" PRIu64 " refused != 5 x %" PRIu64 " lines", o.val[0], o.val[1],
	      lines);
	/* each would hold its whole bound (5 x 32 MB): together they stay under the total */
	CHECK(o.peak_kb < (long)((PERFMAP_TOTAL_BYTES + PERFMAP_MAX_TABLE_BYTES) >> 10),
	      "peak RSS +%ld MB for 5 maps, bound %llu MB across maps", o.peak_kb >> 10,
	      PERFMAP_TOTAL_BYTES / MB);
	unlink(path);
}

/* Reads of @path since the watch was set (IN_ACCESS: the kernel's count, not ours). */
static int reads_seen(int ifd)
{
	char buf[4096] __attribute__((aligned(8)));
	int n = 0;
	ssize_t len;

	while ((len = read(ifd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len;) {
			struct inotify_event *ev = (struct inotify_event *)p;

			n += !!(ev->mask & IN_ACCESS);
			p += sizeof(*ev) + ev->len;
		}
	}
	return n;
}

/*
 * The agent's namer lives for one interval: a process's map, unchanged, must
 * not be read again by the next one; changed, it is.
 */
static void test_perfmap_unchanged(void)
{
	struct perfmap_owner own = {.pid = (uint32_t)getpid(), .uid = getuid()};
	int ifd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	const char *name = NULL;
	struct perfmap *pm;
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/perf-own.map", dir);
	f = fopen(path, "w");
	CHECK(f && fputs("1000 10 first_fn\n", f) >= 0 && !fclose(f), "writing %s", path);
	pm = perfmap_new_proc(path, &own);
	CHECK(pm && !perfmap_lookup(pm, 0x1008, &name, NULL) && !strcmp(name, "first_fn"),
	      "first read: %s", name ? name : "(none)");
	perfmap_free(pm);
	CHECK(ifd >= 0 && inotify_add_watch(ifd, path, IN_ACCESS) >= 0, "inotify: %s",
	      strerror(errno));
	/* the next interval's namer */
	pm = perfmap_new_proc(path, &own);
	CHECK(pm && !perfmap_lookup(pm, 0x1008, &name, NULL) && !strcmp(name, "first_fn"),
	      "unchanged: %s", name ? name : "(none)");
	CHECK(reads_seen(ifd) == 0, "an unchanged map was read again");
	perfmap_free(pm);
	/* a change (past the once-a-second re-read bound) is read */
	f = fopen(path, "a");
	CHECK(f && fputs("2000 10 second_fn\n", f) >= 0 && !fclose(f), "appending");
	sleep_s(1.1);
	pm = perfmap_new_proc(path, &own);
	name = NULL;
	CHECK(pm && !perfmap_lookup(pm, 0x2008, &name, NULL) && !strcmp(name, "second_fn"),
	      "changed: %s", name ? name : "(none)");
	CHECK(reads_seen(ifd) > 0, "a changed map was not read");
	perfmap_free(pm);
	perfmap_pool_clear();
	CHECK(perfmap_held_bytes() == 0, "%" PRIu64 " bytes held after the pool was cleared",
	      perfmap_held_bytes());
	close(ifd);
	unlink(path);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	snprintf(dir, sizeof(dir), "/tmp/cfisymmem.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 2;
	}
	RUN_TEST(test_shared_long_name);
	RUN_TEST(test_symbol_bytes_bound);
	RUN_TEST(test_demangle_expansion);
	RUN_TEST(test_perfmap_bytes);
	RUN_TEST(test_perfmap_total);
	RUN_TEST(test_perfmap_unchanged);
	rmdir(dir);
	return HARNESS_DONE();
}
