// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Time to name a stripped library (issue 16): libc.so.6 as Debian ships it,
 * (a) from itself only (.dynsym, and function starts from its FDEs), (b) from
 * its local debug file (libc6-dbg), (c) from debuginfod on loopback with an
 * empty cache (fetch + check + read its .symtab), (d) the same with a warm
 * libdebuginfod cache.  ROUNDS interleaved rounds, medians; a markdown table on
 * standard output.  Needs debuginfod and libc6-dbg (make test-deps).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "common/clock.h"
#include "elf/build_id.h"
#include "elf/debug_file.h"
#include "tests/lib/debuginfod_server.h"
#include "user/symbolize/sym_cache.h"
#include "user/symbolize/sym_fetch.h"

#define ROUNDS 7
#define LIBC   "/lib/x86_64-linux-gnu/libc.so.6"
/* the largest stripped library here: what reading function starts costs at most */
#define LLVM "/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1"

enum { WITHOUT, LOCAL, COLD, WARM, NR_WAYS };
static const char *const way_name[NR_WAYS] = {
    "stripped, no debug file (.dynsym + FDE function starts)",
    "local debug file (/usr/lib/debug, libc6-dbg)", "debuginfod, cold cache (fetched)",
    "debuginfod, warm cache"};

/* of the last name_once: what reading function starts cost */
static struct sym_cache_stats last_stats;

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* ms to load libc's names the way @way says (a fetch until its table is in); *ok if read. */
static double name_once(const char *path, int way, const char *cache, bool *ok)
{
	struct sym_fetch *sf = NULL;
	struct sym_cache *c;
	struct sym_obj *o;
	double t0;

	if (way >= COLD) {
		setenv("DEBUGINFOD_CACHE_PATH", cache, 1);
		sf = sym_fetch_new(NULL);
	}
	t0 = mono_ms();
	c = sym_cache_new();
	sym_cache_set_debug_root(c, way == LOCAL ? DEBUG_ROOT_DEFAULT : "");
	sym_cache_set_fetch(c, sf);
	o = sym_cache_get(c, NULL, path, -1, 0);
	if (sf)
		sym_fetch_wait(sf, mono_ns() + 30ull * 1000000000);
	t0 = mono_ms() - t0;
	*ok = o != NULL;
	sym_cache_get_stats(c, &last_stats);
	sym_cache_free(c);
	sym_fetch_free(sf);
	return t0;
}

int main(void)
{
	char id[ELF_BUILD_ID_HEX_LEN], dir[] = "/tmp/cfibenchsymXXXXXX", cmd[1024], urls[64],
				       cache[128], log[128];
	double ms[NR_WAYS][ROUNDS], llvm[ROUNDS], llvm_fde[ROUNDS];
	bool ok = true, one;
	int port = free_port(), r, w, fd = open(LIBC, O_RDONLY);
	pid_t srv;

	if (fd < 0 || elf_build_id_hex_fd(fd, id, sizeof(id)) || !mkdtemp(dir)) {
		fprintf(stderr, "bench_symbols: no %s build-id\n", LIBC);
		return 1;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p %s/srv && cp /usr/lib/debug/.build-id/%.2s/%s.debug %s/srv/", dir, id,
		 id + 2, dir);
	if (system(cmd)) {
		fprintf(stderr, "bench_symbols: no libc6-dbg debug file for %s\n", id);
		return 1;
	}
	snprintf(cmd, sizeof(cmd), "%s/srv", dir);
	snprintf(log, sizeof(log), "%s/debuginfod.log", dir);
	srv = debuginfod_start(cmd, port, id, log, 30);
	if (srv < 0) {
		fprintf(stderr, "bench_symbols: debuginfod did not start\n");
		return 1;
	}
	snprintf(urls, sizeof(urls), "http://127.0.0.1:%d", port);
	setenv("DEBUGINFOD_URLS", urls, 1);
	for (r = 0; r < ROUNDS; r++) {
		/* a fresh cache for the cold fetch, then the same one warm */
		snprintf(cache, sizeof(cache), "%s/cache%d", dir, r);
		for (w = 0; w < NR_WAYS; w++)
			ms[w][r] = name_once(LIBC, w, cache, &one), ok &= one;
		llvm[r] = access(LLVM, R_OK) ? 0 : name_once(LLVM, WITHOUT, cache, &one);
		llvm_fde[r] = (double)last_stats.fde_ns / 1e6;
	}
	server_stop(srv);
	printf("## Naming stripped libc.so.6 (%s)\n\n", id);
	printf("Median of %d interleaved rounds (tests/bench/bench_symbols.c; debuginfod on "
	       "loopback).\n\n| source | median ms | min ms | max ms |\n| --- | ---: | ---: | ---: "
	       "|\n",
	       ROUNDS);
	for (w = 0; w < NR_WAYS; w++) {
		qsort(ms[w], ROUNDS, sizeof(double), cmp_double);
		printf("| %s | %.1f | %.1f | %.1f |\n", way_name[w], ms[w][ROUNDS / 2], ms[w][0],
		       ms[w][ROUNDS - 1]);
	}
	qsort(llvm, ROUNDS, sizeof(double), cmp_double);
	qsort(llvm_fde, ROUNDS, sizeof(double), cmp_double);
	if (llvm[0] > 0)
		printf("\nlibLLVM-14.so.1 stripped (no debug file; .dynsym + FDE function starts): "
		       "median %.1f ms (min %.1f, max %.1f), of which function starts %.1f ms\n",
		       llvm[ROUNDS / 2], llvm[0], llvm[ROUNDS - 1], llvm_fde[ROUNDS / 2]);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) || !ok ? 1 : 0;
}
