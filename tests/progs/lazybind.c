// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Spends its time in lazy PLT binding: main -> lz_round -> (dlopen'd liblazy.so)
 * lz_all, whose 512 calls into liblazyext.so each go through an unbound PLT slot,
 * so through ld.so's _dl_runtime_resolve_xsavec (CFA in rbx) and _dl_fixup.  Both
 * libraries are unloaded again each round, so every round binds afresh.
 * Run with LD_BIND_NOW unset.
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "spin.h"

volatile int sink;

NOINLINE int lz_round(const char *lib)
{
	void *h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL);
	int (*all)(int);

	if (!h) {
		fprintf(stderr, "lazybind: %s\n", dlerror());
		return -1;
	}
	all = (int (*)(int))dlsym(h, "lz_all");
	sink = all ? all(1) : -1;
	dlclose(h);
	return 0;
}

int main(int argc, char **argv)
{
	char lib[PATH_MAX];
	char *slash;

	spin_init(argc, argv);
	snprintf(lib, sizeof(lib), "%s", argv[0]);
	slash = strrchr(lib, '/');
	snprintf(slash ? slash + 1 : lib, sizeof(lib) - (slash ? (size_t)(slash + 1 - lib) : 0),
		 "liblazy.so");
	while (!spin_done())
		if (lz_round(lib))
			return 1;
	/*
	 * The library stays mapped to the exit, where every round mapped it: a
	 * sample of the last rounds still waiting for a load that saw it mapped
	 * (a loaded host's loads come late) finds it in the kernel's list of the
	 * process's mappings at its exit, which holds no dlclose'd library.
	 */
	return dlopen(lib, RTLD_LAZY | RTLD_LOCAL) ? 0 : 1;
}
