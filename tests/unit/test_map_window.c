// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A BPF array mapped as far as it is used (common/map_window.h): the rows map
 * mapped whole was all resident in the profiler's RSS.  Against a real
 * mmap()able array of 16 MiB: at first one chunk is resident, a write past it
 * after map_window_cover lands in the map's element at that offset (read
 * back with bpf_map_lookup_elem, not through the mapping), the base never
 * moves, and a cover past the map's end is refused.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/map_window.h"
#include "tests/lib/harness.h"

#define ELEMS (2u << 20) /* of 8 bytes: 16 MiB */

/* kB of /proc/self/smaps's Rss over the mappings inside [base, base + len) */
static long rss_kb_in(const void *base, size_t len)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	uintptr_t lo = (uintptr_t)base, hi = lo + len, s, e;
	char line[512];
	long kb = 0, v;
	bool in = false;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " ", &s, &e) == 2 && strchr(line, ' '))
			in = s >= lo && e <= hi;
		else if (in && sscanf(line, "Rss: %ld kB", &v) == 1)
			kb += v;
	}
	fclose(f);
	return kb;
}

static void test_map_window(void)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE);
	struct map_window w;
	uint64_t v = 0, *slot;
	uint32_t key = (5u << 20) / 8 + 3; /* 5 MiB in, past the first chunk */
	size_t len = (size_t)ELEMS * 8;
	void *base;
	long kb;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "mw_test", 4, 8, ELEMS, &opts);

	if (fd < 0) {
		CHECK(0, "an mmap()able BPF array: %s (root?)", strerror(errno));
		return;
	}
	CHECK(map_window_init(&w, fd, len) == 0, "init");
	base = w.base;
	kb = rss_kb_in(w.base, w.len);
	/* mapped whole, all 16 MiB were resident at once */
	CHECK(kb >= 0 && kb <= MAP_WINDOW_CHUNK / 1024, "%ld kB resident at first (want <= %u)", kb,
	      MAP_WINDOW_CHUNK / 1024);
	CHECK(map_window_cover(&w, (size_t)key * 8 + 8) == 0, "cover 5 MiB");
	slot = (uint64_t *)w.base + key;
	*slot = 0x1234567890abcdefull;
	CHECK(bpf_map_lookup_elem(fd, &key, &v) == 0 && v == 0x1234567890abcdefull,
	      "the write lands in element %u (read back %#" PRIx64 ")", key, v);
	kb = rss_kb_in(w.base, w.len);
	CHECK(kb > 0 && (size_t)kb * 1024 < len / 2, "%ld kB resident after covering 5 MiB", kb);
	CHECK(w.base == base && w.mapped >= (size_t)key * 8 + 8 && w.mapped % MAP_WINDOW_CHUNK == 0,
	      "base moved or %zu bytes mapped", w.mapped);
	CHECK(map_window_cover(&w, len) == 0 && w.mapped == len, "cover all: %zu mapped", w.mapped);
	CHECK(map_window_cover(&w, len + 1) == -ERANGE, "a cover past the end is refused");
	/* the element's first bytes, through the mapping, from the other end */
	key = 0;
	v = 42;
	CHECK(bpf_map_update_elem(fd, &key, &v, 0) == 0 && *(uint64_t *)w.base == 42,
	      "element 0 through the mapping");
	map_window_free(&w);
	close(fd);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_map_window);
	return HARNESS_DONE();
}
