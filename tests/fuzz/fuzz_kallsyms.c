/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* libFuzzer target for /proc/kallsyms: the input is the file ksyms_load reads. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/symbolize/kallsyms.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t addrs[] = {0,
			    0xffffffff81000000ull,
			    0xffffffff81000001ull,
			    UINT64_MAX,
			    fuzz_u64(data, size, 0),
			    fuzz_u64(data, size, size / 3),
			    fuzz_u64(data, size, size / 2)};
	char path[64], err[256];
	struct ksyms *k;
	const char *name;
	uint64_t off;
	size_t i;
	int fd;

	fd = fuzz_memfd("kallsyms", data, size, path, sizeof(path));
	err[0] = '\0';
	k = ksyms_load(path, err, sizeof(err));
	if (!k && !err[0])
		abort(); /* a failure always says why */
	if (k) {
		for (i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
			name = NULL;
			if (ksyms_lookup(k, addrs[i], &name, &off) == 0 &&
			    (!name || off > addrs[i] || strlen(name) > size))
				abort();
		}
		ksyms_count(k);
		ksyms_free(k);
	}
	close(fd);
	return 0;
}
