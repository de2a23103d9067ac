/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libFuzzer target for perf-PID.map files (JIT symbols): the input is the
 * file, read through perfmap_new / perfmap_lookup, then the file shrinks (a
 * JIT rewriting it) and perfmap_refresh reloads it.
 */
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "user/symbolize/perfmap.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void perfmap_probe(struct perfmap *pm, const uint8_t *data, size_t size)
{
	uint64_t addrs[] = {0,
			    1,
			    0x1000,
			    0x7fffffff,
			    UINT64_MAX - 1,
			    UINT64_MAX,
			    fuzz_u64(data, size, 0),
			    fuzz_u64(data, size, 8),
			    fuzz_u64(data, size, size / 2)};
	const char *name;
	uint64_t off;
	size_t i;

	for (i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		name = NULL;
		off = ~0ull;
		if (perfmap_lookup(pm, addrs[i], &name, &off) == 0 && (!name || off > addrs[i]))
			abort();
	}
	perfmap_count(pm);
	perfmap_malformed(pm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[64];
	struct perfmap *pm;
	int fd;

	fd = fuzz_memfd("perf.map", data, size, path, sizeof(path));
	pm = perfmap_new(path);
	if (!pm)
		abort();
	perfmap_probe(pm, data, size);
	/* the JIT rewrote its map: the new size triggers a reload */
	fuzz_fill_fd(fd, data + size / 2, size - size / 2);
	perfmap_refresh(pm);
	perfmap_probe(pm, data, size);
	perfmap_free(pm);
	close(fd);
	return 0;
}
