// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* main -> d_a -> dl_entry (from a dlopen'ed library, mapped after start-up) -> dl_leaf. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "spin.h"

typedef int (*entry_fn)(int, char **);

NOINLINE int d_a(entry_fn fn, int argc, char **argv)
{
	volatile char buf[33];

	buf[0] = argc;
	return fn(argc, argv) + buf[0];
}

int main(int argc, char **argv)
{
	char path[4096], *slash;
	void *h;
	entry_fn fn;

	/* the library sits next to the executable */
	snprintf(path, sizeof(path), "%s", argv[0]);
	slash = strrchr(path, '/');
	snprintf(slash ? slash + 1 : path, sizeof(path) - (slash ? slash + 1 - path : 0),
		 "libdl_target.so");
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return 1;
	}
	fn = (entry_fn)dlsym(h, "dl_entry");
	if (!fn)
		return 1;
	return d_a(fn, argc, argv) > 0 ? 0 : 0;
}
