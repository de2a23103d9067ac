/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What the runtimes' tables of versions share: each is an array of one
 * struct per version a runtime supports, the struct's uint16_t version
 * being major << 8 | minor.
 */
#ifndef CFIPROF_RUNTIME_VERSIONS_H
#define CFIPROF_RUNTIME_VERSIONS_H

#include <stddef.h>

/* The entry of array table whose .version is v, NULL when it has none. */
#define RUNTIME_VERSION_FIND(table, v)                                                             \
	({                                                                                         \
		__typeof__(&(table)[0]) found_ = NULL;                                             \
		for (size_t i_ = 0; i_ < sizeof(table) / sizeof((table)[0]) && !found_; i_++)      \
			if ((table)[i_].version == (v))                                            \
				found_ = &(table)[i_];                                             \
		found_;                                                                            \
	})

#endif
