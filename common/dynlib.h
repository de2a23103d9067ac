/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Libraries loaded on first use (dlopen) instead of at every start: most runs
 * never fetch a debug file or push a profile, and linking libdebuginfod and
 * libcurl (with their thirty dependencies, TLS and Kerberos among them) cost
 * every start of cfiprof ~5 ms.
 *
 *   static const char *const names[] = {"curl_easy_init", ..., NULL};
 *   static struct { CURL *(*easy_init)(void); ... } fn;  // one pointer per name, in order
 *   static struct dynlib lib = DYNLIB_INIT("libcurl.so.4", names, &fn);
 *   if (!dynlib_load(&lib)) ... lib.err says why
 */
#ifndef CFIPROF_DYNLIB_H
#define CFIPROF_DYNLIB_H

#include <pthread.h>
#include <stdbool.h>

struct dynlib {
	const char *soname;
	const char *const *names; /* NULL-terminated */
	void **fns;		  /* a struct of as many function pointers */
	pthread_mutex_t lock;
	bool tried, ok;
	char err[256];
};

#define DYNLIB_INIT(soname, names, fns)                                                            \
	{                                                                                          \
		(soname), (names), (void **)(fns), PTHREAD_MUTEX_INITIALIZER, false, false, ""     \
	}

/* Loads the library and all its names once (thread-safe); false when any is missing. */
bool dynlib_load(struct dynlib *l);

#endif
