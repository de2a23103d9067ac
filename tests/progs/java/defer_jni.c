// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DeferJni's library (DeferJni.java).  JNI_OnLoad, which System.load calls
 * once the library is mapped, dlopen()s DEFER_JNI_BIG (progs/libdefer_big.so,
 * whose tables take ~100 ms to build: test_deferred's) and spins in its
 * big_entry -> big_b -> big_c -> big_leaf for DEFER_JNI_SECS (default
 * "0.3c": of the process's CPU time) at once, before those tables exist.
 */
#include <dlfcn.h>
#include <jni.h>
#include <stdio.h>
#include <stdlib.h>

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
	const char *lib = getenv("DEFER_JNI_BIG"), *secs = getenv("DEFER_JNI_SECS");
	char *argv[] = {"big", (char *)(secs ? secs : "0.3c"), NULL};
	int (*entry)(int, char **);
	void *h = lib ? dlopen(lib, RTLD_NOW) : NULL;

	(void)vm;
	(void)reserved;
	entry = h ? (int (*)(int, char **))dlsym(h, "big_entry") : NULL;
	if (!entry) {
		fprintf(stderr, "defer_jni: no big_entry in %s: %s\n", lib ? lib : "(DEFER_JNI_BIG)",
			dlerror());
		return JNI_ERR;
	}
	entry(2, argv);
	return JNI_VERSION_1_8;
}
