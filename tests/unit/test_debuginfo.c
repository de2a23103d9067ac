// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Symbols for stripped objects (issue 16), without a kernel: a stripped
 * program's functions grouped by their FDEs exactly as its own symbols group
 * them; its MiniDebugInfo read (and a bad one refused); its debug file fetched
 * from Debian's debuginfod on loopback, checked, cached; a server down, one
 * that stalls and one that serves another build's file change nothing but the
 * names and hold nothing past the timeout; the fetch bounds count their refusals.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

#include "tests/lib/harness.h"
#include "tests/lib/tmpdir.h"
#include "tests/lib/debuginfod_server.h"
#include "common/clock.h"
#include "elf/build_id.h"
#include "elf/minidebuginfo.h"
#include "user/symbolize/sym_cache.h"
#include "user/symbolize/sym_fetch.h"

#define PROG_CFLAGS "-O2 -fomit-frame-pointer -g -Wall -D_GNU_SOURCE -Itests/progs"

struct func {
	char name[256];
	uint64_t addr, size;
};

/* Sized functions of @path by binutils' nm (the oracle), *n of them. */
static struct func *nm_funcs(const char *path, size_t *n)
{
	char cmd[1024], line[512], type;
	unsigned long long addr, size;
	struct func *v = NULL;
	size_t cap = 0;
	FILE *p;

	*n = 0;
	snprintf(cmd, sizeof(cmd), "nm -n -S --defined-only '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p)
		return NULL;
	while (fgets(line, sizeof(line), p)) {
		char name[256];

		if (sscanf(line, "%llx %llx %c %255s", &addr, &size, &type, name) != 4 || !size ||
		    (type != 't' && type != 'T'))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			v = realloc(v, cap * sizeof(*v));
		}
		snprintf(v[*n].name, sizeof(v[*n].name), "%s", name);
		v[*n].addr = addr;
		v[*n].size = size;
		(*n)++;
	}
	pclose(p);
	return v;
}

static void build_id_of(const char *path, char *id, size_t len)
{
	int fd = open(path, O_RDONLY);

	id[0] = '\0';
	if (fd >= 0) {
		if (elf_build_id_hex_fd(fd, id, len))
			id[0] = '\0';
		close(fd);
	}
}

/* chain (tests/progs) built -g, its debug file, and a copy stripped of everything. */
static bool build_chain(const char *name)
{
	return shell_ok("gcc " PROG_CFLAGS " tests/progs/chain.c -o %s/%s && "
			"objcopy --only-keep-debug %s/%s %s/%s.debug && "
			"strip --strip-all %s/%s -o %s/%s.stripped",
			tmpdir, name, tmpdir, name, tmpdir, name, tmpdir, name, tmpdir, name);
}

/*
 * How @o names @addr: its symbol, else "+0xSTART" by the FDE (as frame_names
 * prints it after the object's name), else "".
 */
static const char *name_at(struct sym_obj *o, uint64_t addr, char *buf, size_t len)
{
	const char *name;
	uint64_t start;

	if (!sym_obj_lookup(o, addr, &name, NULL))
		snprintf(buf, len, "%s", name);
	else if (!sym_obj_function_start(o, addr, &start))
		snprintf(buf, len, "+0x%" PRIx64, start);
	else
		buf[0] = '\0';
	return buf;
}

/*
 * Every address of every function of @full (nm) gets one name in @stripped's
 * view, and no two functions share a name made from an FDE: grouped exactly
 * as the symbols group them. *@exact counts the functions for which that
 * holds; returns how many were checked.
 */
static size_t check_grouping(const char *what, const char *full, const char *stripped,
			     size_t *exact)
{
	struct sym_cache *c = sym_cache_new();
	size_t n = 0, i, nr = 0, shown = 0;
	struct func *f = nm_funcs(full, &n);
	char first[256], cur[256], prev[256] = "";
	struct sym_obj *o;
	uint64_t pc;

	*exact = 0;
	CHECK(c && sym_cache_set_debug_root(c, "") == 0, "%s: sym_cache", what);
	o = c ? sym_cache_get(c, NULL, stripped, -1, 0) : NULL;
	CHECK(o && n > 0, "%s: %zu functions, object %p", what, n, (void *)o);
	for (i = 0; o && i < n; i++) {
		const char *why = NULL;

		/* aliases (one address, several names) are one function */
		if (i && f[i].addr == f[i - 1].addr)
			continue;
		nr++;
		name_at(o, f[i].addr, first, sizeof(first));
		for (pc = f[i].addr; pc < f[i].addr + f[i].size && !why; pc++)
			if (strcmp(name_at(o, pc, cur, sizeof(cur)), first))
				why = "two names";
		if (!first[0])
			why = "unnamed";
		else if (first[0] == '+' && strtoull(first + 3, NULL, 16) != f[i].addr)
			why = "named by another start";
		else if (first[0] == '+' && !strcmp(first, prev))
			why = "the name of the function before";
		if (why && shown++ < 5)
			fprintf(stderr,
				"  %s: %s (0x%" PRIx64
				"): %s: '%s' at its start, '%s' at +0x%" PRIx64 "\n",
				what, f[i].name, f[i].addr, why, first, cur, pc - 1 - f[i].addr);
		*exact += !why;
		snprintf(prev, sizeof(prev), "%s", first);
	}
	sym_cache_free(c);
	free(f);
	return nr;
}

/* chain stripped of every symbol: each function one name, "+0xSTART" of its own start. */
static void test_fde_grouping(void)
{
	size_t n, exact;

	CHECK(build_chain("g"), "cannot build chain");
	n = check_grouping("chain", tpath("g"), tpath("g.stripped"), &exact);
	CHECK(n >= 6 && exact == n, "chain: %zu of %zu functions grouped exactly", exact, n);
}

/*
 * A distribution's stripped library: libc.so.6 against its libc6-dbg symbols.
 * Functions libc exports keep their .dynsym names; the rest are grouped. The
 * exceptions are hand-written assembly whose CFI does not cover the whole
 * symbol (clone3's child half): a piece of it is then named by its own FDE.
 */
static void test_fde_grouping_libc(void)
{
	char id[ELF_BUILD_ID_HEX_LEN], dbg[512];
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	size_t n, exact;

	build_id_of(libc, id, sizeof(id));
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	CHECK(id[0] && access(dbg, R_OK) == 0, "no libc6-dbg debug file %s", dbg);
	/* nm reads the debug file's symbols; the addresses are libc's */
	n = check_grouping("libc", dbg, libc, &exact);
	printf(
	    "FIGURE: libc.so.6 stripped: %zu of %zu functions grouped exactly by FDE or .dynsym\n",
	    exact, n);
	CHECK(n > 2000 && exact * 1000 >= n * 995,
	      "libc: only %zu of %zu functions grouped exactly", exact, n);
}

/* GDB's MiniDebugInfo recipe (as Fedora builds its packages), then the program stripped. */
static void test_minidebuginfo(void)
{
	struct sym_cache *c;
	struct sym_obj *o;
	const char *name = NULL;
	uint64_t refused = minidebuginfo_refused_total();
	size_t n, i, named = 0;
	struct func *f;

	CHECK(build_chain("m"), "cannot build chain");
	CHECK(
	    shell_ok("cd %s && nm -D m --format=posix --defined-only | awk '{ print $1 }' | sort > "
		     "dynsyms && nm m --format=posix --defined-only | "
		     "awk '{ if ($2 == \"T\" || $2 == \"t\" || $2 == \"D\") print $1 }' | sort > "
		     "funcsyms && "
		     "comm -13 dynsyms funcsyms > keep && "
		     "objcopy -S --remove-section .gdb_index --remove-section .comment "
		     "--keep-symbols=keep m.debug mini && xz -f mini && "
		     "objcopy --add-section .gnu_debugdata=mini.xz m.stripped m.mini",
		     tmpdir),
	    "cannot build the MiniDebugInfo program");
	f = nm_funcs(tpath("m"), &n);
	c = sym_cache_new();
	sym_cache_set_debug_root(c, "");
	o = sym_cache_get(c, NULL, tpath("m.mini"), -1, 0);
	CHECK(o != NULL, "cannot read m.mini");
	for (i = 0; o && i < n; i++) {
		name = NULL;
		if (!sym_obj_lookup(o, f[i].addr + f[i].size / 2, &name, NULL) &&
		    !strcmp(name, f[i].name))
			named++;
		else
			fprintf(stderr, "  %s named %s\n", f[i].name, name ? name : "(nothing)");
	}
	CHECK(n >= 6 && named == n, "MiniDebugInfo names %zu of %zu functions", named, n);
	CHECK(minidebuginfo_refused_total() == refused, "a good MiniDebugInfo was refused");
	sym_cache_free(c);

	/* corrupt: the section refused and counted, the object still read */
	CHECK(shell_ok("cd %s && head -c 4000 /dev/urandom > junk.xz && "
		       "objcopy --add-section .gnu_debugdata=junk.xz m.stripped m.junk",
		       tmpdir),
	      "cannot build m.junk");
	c = sym_cache_new();
	sym_cache_set_debug_root(c, "");
	o = sym_cache_get(c, NULL, tpath("m.junk"), -1, 0);
	CHECK(o != NULL, "m.junk unreadable");
	CHECK(minidebuginfo_refused_total() == refused + 1, "corrupt MiniDebugInfo not counted");
	sym_cache_free(c);

	/* past the decompressed-size bound: refused, counted */
	{
		int fd = open(tpath("m.mini"), O_RDONLY);
		Elf *e;
		struct minidebuginfo m;

		elf_version(EV_CURRENT);
		e = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
		CHECK(e && minidebuginfo_open(e, 0, &m) == 0, "m.mini: no MiniDebugInfo");
		if (e)
			minidebuginfo_close(&m);
		CHECK(e && minidebuginfo_open(e, 512, &m) == -2, "512-byte bound not enforced");
		CHECK(minidebuginfo_refused_total() == refused + 2, "bound refusal not counted");
		if (e)
			elf_end(e);
		if (fd >= 0)
			close(fd);
	}
	free(f);
}

/* A symbolizer asking @urls, its libdebuginfod cache in tmpdir/@cache. */
static struct sym_fetch *fetcher(const char *urls, const char *cache, uint64_t timeout_ns)
{
	struct sym_fetch_opts o = {.dbgd = {.timeout_ns = timeout_ns}};

	/* libdebuginfod reads both from the environment; no thread runs yet */
	setenv("DEBUGINFOD_URLS", urls, 1);
	setenv("DEBUGINFOD_CACHE_PATH", tpath(cache), 1);
	return sym_fetch_new(&o);
}

/*
 * How many of @f's functions @obj names right (through @sf when not NULL)
 * after waiting.  With @named_before, the first function is looked up
 * before the file can arrive: @server (the debuginfod serving it) is
 * stopped from before the get until that lookup is done.
 */
static size_t named_after(struct sym_fetch *sf, const char *obj, struct func *f, size_t n,
			  double *waited, size_t *named_before, pid_t server)
{
	struct sym_cache *c = sym_cache_new();
	struct sym_obj *o;
	const char *name;
	size_t i, named = 0;
	double t0;

	sym_cache_set_debug_root(c, "");
	sym_cache_set_fetch(c, sf);
	/*
	 * the server cannot answer while stopped: without that, the lookup
	 * right after the get raced the fetch's HTTP round trip, and lost it
	 * once in a clean clone
	 */
	if (named_before && server > 0)
		kill(server, SIGSTOP);
	o = sym_cache_get(c, NULL, obj, -1, 0);
	if (named_before && o && n)
		*named_before +=
		    !sym_obj_lookup(o, f[0].addr, &name, NULL) && !strcmp(name, f[0].name);
	if (named_before && server > 0)
		kill(server, SIGCONT);
	t0 = mono_sec();
	sym_fetch_wait(sf, mono_ns() + 30ull * 1000000000);
	*waited = mono_sec() - t0;
	for (i = 0; o && i < n; i++)
		named += !sym_obj_lookup(o, f[i].addr, &name, NULL) && !strcmp(name, f[i].name);
	sym_cache_free(c);
	return named;
}

static uint64_t outcome(struct sym_fetch *sf, enum dbgd_outcome o)
{
	struct sym_fetch_stats st;

	sym_fetch_get_stats(sf, &st);
	return st.dbgd.outcomes[o];
}

/* Debian's debuginfod serves the debug file: every function named, then from the cache. */
static void test_debuginfod_served(void)
{
	char id[ELF_BUILD_ID_HEX_LEN], urls[64], log[512];
	size_t n, named, before = 0;
	struct sym_fetch *sf;
	struct func *f;
	double waited;
	int port = free_port();
	pid_t srv;

	CHECK(build_chain("d") &&
		  shell_ok("mkdir -p %s/srv && cp %s/d.debug %s/srv/", tmpdir, tmpdir, tmpdir),
	      "cannot build chain");
	build_id_of(tpath("d.stripped"), id, sizeof(id));
	snprintf(log, sizeof(log), "%s/debuginfod.log", tmpdir);
	srv = debuginfod_start(tpath("srv"), port, id, log, 20);
	CHECK(srv > 0, "debuginfod did not serve %s within 20 s", id);
	if (srv <= 0) {
		dump_tail("debuginfod", log);
		return;
	}
	f = nm_funcs(tpath("d"), &n);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	sf = fetcher(urls, "cache", 0);
	named = named_after(sf, tpath("d.stripped"), f, n, &waited, &before, srv);
	CHECK(n >= 6 && named == n, "fetched: %zu of %zu functions named", named, n);
	CHECK(before == 0, "named before the file arrived: %zu", before);
	CHECK(outcome(sf, DBGD_FETCHED) == 1, "not fetched once: %" PRIu64,
	      outcome(sf, DBGD_FETCHED));
	printf("FIGURE: debuginfod cold fetch and naming of chain: %.1f ms\n", waited * 1e3);
	sym_fetch_free(sf);

	/* a new run: libdebuginfod's cache answers, the server is not asked */
	server_stop(srv);
	sf = fetcher(urls, "cache", 0);
	named = named_after(sf, tpath("d.stripped"), f, n, &waited, NULL, 0);
	CHECK(named == n, "cached: %zu of %zu functions named", named, n);
	CHECK(outcome(sf, DBGD_CACHED) == 1, "not from the cache");
	printf("FIGURE: debuginfod warm (cached) naming of chain: %.1f ms\n", waited * 1e3);
	sym_fetch_free(sf);
	free(f);
}

/*
 * No server, a stalled one, one serving another build's file: the names stay
 * those of the object itself (grouped by FDE), the wait ends within the
 * timeout, each counted by its outcome.
 */
static void test_debuginfod_unavailable(void)
{
	char urls[64];
	size_t n, named;
	struct sym_fetch *sf;
	struct sym_fetch_stats st;
	struct func *f;
	double waited;
	int port;
	pid_t srv;

	CHECK(build_chain("u") &&
		  shell_ok("gcc " PROG_CFLAGS " -O1 tests/progs/chain.c -o %s/other "
			   "&& objcopy --only-keep-debug %s/other %s/other.debug",
			   tmpdir, tmpdir, tmpdir),
	      "cannot build chain");
	f = nm_funcs(tpath("u"), &n);

	port = free_port();
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	sf = fetcher(urls, "cache-down", 0);
	named = named_after(sf, tpath("u.stripped"), f, n, &waited, NULL, 0);
	CHECK(named == 0 && outcome(sf, DBGD_FAILED) == 1,
	      "server down: %zu named, failed %" PRIu64, named, outcome(sf, DBGD_FAILED));
	CHECK(waited < 2, "server down: waited %.1f s", waited);
	sym_fetch_free(sf);

	srv = fake_server_start(&port, NULL);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	sf = fetcher(urls, "cache-slow", 1000ull * 1000 * 1000);
	named = named_after(sf, tpath("u.stripped"), f, n, &waited, NULL, 0);
	CHECK(named == 0 && outcome(sf, DBGD_TIMED_OUT) == 1,
	      "stalled: %zu named, timed out %" PRIu64, named, outcome(sf, DBGD_TIMED_OUT));
	CHECK(waited < 2.5, "stalled server with a 1 s timeout: waited %.1f s", waited);
	printf("FIGURE: stalled server, 1 s timeout: the fetch ended after %.2f s\n", waited);
	sym_fetch_free(sf);
	server_stop(srv);

	srv = fake_server_start(&port, tpath("other.debug"));
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	sf = fetcher(urls, "cache-lie", 0);
	named = named_after(sf, tpath("u.stripped"), f, n, &waited, NULL, 0);
	sym_fetch_get_stats(sf, &st);
	CHECK(named == 0 && st.refused[SYM_FETCH_REFUSED_INVALID] == 1,
	      "another build's file: %zu named, %" PRIu64 " refused", named,
	      st.refused[SYM_FETCH_REFUSED_INVALID]);
	sym_fetch_free(sf);
	server_stop(srv);
	free(f);
}

/*
 * A server's compressed answer that inflates past the size bound (a gzip of
 * 256 MiB of zeros, 256 KiB on the wire): libdebuginfod asks for gzip and
 * curl inflates as it writes, while the progress it reports counts the
 * bytes received, which stayed under the bound.  The fetch must stop once
 * what it wrote passes the bound, not once the whole file is on disk: the
 * server gets to send only part of its body.
 */
static void test_debuginfod_inflated(void)
{
	char urls[64], gz[PATH_MAX + 16], sent_path[PATH_MAX + 16];
	struct sym_fetch_opts o = {.dbgd = {.max_bytes = 8ull << 20}};
	size_t n, named, gz_len = 0;
	unsigned long long sent = 0;
	struct sym_fetch *sf;
	struct func *f;
	double waited = 0;
	char *text;
	int port = 0;
	pid_t srv;

	CHECK(build_chain("z"), "cannot build chain");
	snprintf(gz, sizeof(gz), "%s", tpath("bomb.gz"));
	snprintf(sent_path, sizeof(sent_path), "%s", tpath("bomb.sent"));
	CHECK(shell_ok("head -c 256M /dev/zero | gzip -1 > %s", gz), "cannot make %s", gz);
	free(slurp_len(gz, &gz_len));
	f = nm_funcs(tpath("z"), &n);
	srv = gzip_server_start(&port, gz, sent_path);
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", urls, 1);
	setenv("DEBUGINFOD_CACHE_PATH", tpath("cache-inflated"), 1);
	sf = sym_fetch_new(&o);
	named = sf ? named_after(sf, tpath("z.stripped"), f, n, &waited, NULL, 0) : 0;
	server_stop(srv);
	text = slurp(sent_path);
	if (text)
		sent = strtoull(text, NULL, 10);
	printf("FIGURE: a 256 MiB answer in %zu bytes of gzip, bound 8 MiB: %llu bytes of it "
	       "sent before the fetch stopped, after %.2f s\n",
	       gz_len, sent, waited);
	CHECK(sf && named == 0 && outcome(sf, DBGD_TOO_LARGE) == 1,
	      "inflated answer: %zu named, too large %" PRIu64, named,
	      sf ? outcome(sf, DBGD_TOO_LARGE) : 0);
	/*
	 * At 1000:1, 8 MiB written is ~8 KiB received; the check runs at each of
	 * libdebuginfod's polls (a 16 KiB chunk every 10 ms here, and the server
	 * waits for it at an eighth of the body): a fetch that stops sends less
	 * than a quarter however little CPU it gets, one that stops only once the
	 * file is whole sends all of it.
	 */
	CHECK(gz_len > 0 && sent * 4 < gz_len,
	      "the fetch stopped after %llu of %zu compressed bytes (want under a quarter)", sent,
	      gz_len);
	sym_fetch_free(sf);
	free(text);
	free(f);
}

/* The bounds: build-ids per minute, bytes of tables held; each refusal counted by cause. */
static void test_fetch_bounds(void)
{
	struct sym_fetch_opts o = {.per_minute = 1, .max_table_bytes = 1};
	struct sym_fetch_stats st;
	struct sym_fetched *a, *b, *a2;
	char urls[64];
	struct sym_fetch *sf;
	int port = 0;
	pid_t srv;

	CHECK(build_chain("b"), "cannot build chain");
	srv = fake_server_start(&port, tpath("b.debug"));
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", urls, 1);
	setenv("DEBUGINFOD_CACHE_PATH", tpath("cache-bounds"), 1);
	sf = sym_fetch_new(&o);
	CHECK(sf != NULL, "sym_fetch_new");
	if (!sf)
		return;
	{
		char id[ELF_BUILD_ID_HEX_LEN];

		build_id_of(tpath("b"), id, sizeof(id));
		a = sym_fetch_want(sf, id);
		a2 = sym_fetch_want(sf, id); /* the same build-id: the same entry, no new fetch */
		b = sym_fetch_want(sf, "00112233445566778899aabbccddeeff00112233");
	}
	sym_fetch_wait(sf, mono_ns() + 10ull * 1000000000);
	sym_fetch_get_stats(sf, &st);
	CHECK(a && a2 == a && !b, "entries: a %p a2 %p b %p", (void *)a, (void *)a2, (void *)b);
	CHECK(st.requested == 1 && st.refused[SYM_FETCH_REFUSED_RATE] == 1,
	      "rate: %" PRIu64 " asked, %" PRIu64 " refused", st.requested,
	      st.refused[SYM_FETCH_REFUSED_RATE]);
	CHECK(st.refused[SYM_FETCH_REFUSED_MEMORY] == 1 && st.table_bytes == 0,
	      "memory bound: %" PRIu64 " refused, %" PRIu64 " bytes held",
	      st.refused[SYM_FETCH_REFUSED_MEMORY], st.table_bytes);
	sym_fetched_put(a);
	sym_fetched_put(a2);
	sym_fetch_free(sf);
	server_stop(srv);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cfidbginfoXXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 2;
	}
	unsetenv("DEBUGINFOD_URLS");
	RUN_TEST(test_fde_grouping);
	RUN_TEST(test_fde_grouping_libc);
	RUN_TEST(test_minidebuginfo);
	RUN_TEST(test_debuginfod_served);
	RUN_TEST(test_debuginfod_unavailable);
	RUN_TEST(test_fetch_bounds);
	RUN_TEST(test_debuginfod_inflated);
	if (!getenv("KEEP"))
		shell_ok("rm -rf %s", tmpdir);
	return HARNESS_DONE();
}
