// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Libraries loaded on first use; see dynlib.h. */
#include "common/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>

bool dynlib_load(struct dynlib *l)
{
	void *h;
	size_t i;

	pthread_mutex_lock(&l->lock);
	if (l->tried)
		goto out;
	l->tried = true;
	h = dlopen(l->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(l->err, sizeof(l->err), "cannot load %s: %s", l->soname, dlerror());
		goto out;
	}
	for (i = 0; l->names[i]; i++) {
		/* the caller's struct of function pointers, seen as void *s (as POSIX allows) */
		l->fns[i] = dlsym(h, l->names[i]);
		if (!l->fns[i]) {
			snprintf(l->err, sizeof(l->err), "%s has no %s", l->soname, l->names[i]);
			/* kept loaded: a library is not unloaded once its code may have run */
			goto out;
		}
	}
	l->ok = true;
out:
	pthread_mutex_unlock(&l->lock);
	return l->ok;
}
