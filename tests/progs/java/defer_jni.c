// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * DeferJni's library (DeferJni.java).  JNI_OnLoad, which System.load calls
 * once the library is mapped, dlopen()s DEFER_JNI_BIG (progs/libdefer_big.so,
 * whose tables take ~100 ms to build: test_deferred's) and spins in its
 * big_entry -> big_b -> big_c -> big_leaf for DEFER_JNI_SECS (default
 * "0.3c": of the process's CPU time) at once, before those tables exist;
 * with DEFER_JNI_AT_CALL set, DeferJni.spin(1) does instead.
 */
#include <dlfcn.h>
#include <jni.h>
#include <stdio.h>
#include <stdlib.h>

/* dlopen()s DEFER_JNI_BIG and spins in it: 0, or -1 when it cannot */
static int spin_big(void)
{
	const char *lib = getenv("DEFER_JNI_BIG"), *secs = getenv("DEFER_JNI_SECS");
	char *argv[] = {"big", (char *)(secs ? secs : "0.3c"), NULL};
	int (*entry)(int, char **);
	void *h = lib ? dlopen(lib, RTLD_NOW) : NULL;

	entry = h ? (int (*)(int, char **))dlsym(h, "big_entry") : NULL;
	if (!entry) {
		fprintf(stderr, "defer_jni: no big_entry in %s: %s\n", lib ? lib : "(DEFER_JNI_BIG)",
			dlerror());
		return -1;
	}
	entry(2, argv);
	return 0;
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved)
{
	(void)vm;
	(void)reserved;
	if (!getenv("DEFER_JNI_AT_CALL") && spin_big())
		return JNI_ERR;
	return JNI_VERSION_1_8;
}

JNIEXPORT jint JNICALL Java_DeferJni_spin(JNIEnv *env, jclass cls, jint go)
{
	(void)env;
	(void)cls;
	return go ? spin_big() : 0;
}
