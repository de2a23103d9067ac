// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* on_exit_maps' object, loaded beside the other (exit_maps_load.h). */
#include <bpf/libbpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exit_maps.skel.h"
#include "user/session/exit_maps_load.h"

struct exit_maps_load {
	pthread_t thread;
	bool running;
	exit_maps_fd_fn fd_of;
	void *ctx;
	char core_path[64];
	struct exit_maps_bpf *skel;
	int err;
};

/* Every map the object declares is the other object's but its own constants. */
static int load(struct exit_maps_load *x)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo,
		    .btf_custom_path = x->core_path[0] ? x->core_path : NULL);
	struct bpf_map *m;
	int err, fd;

	x->skel = exit_maps_bpf__open_opts(&oo);
	if (!x->skel)
		return -errno;
	bpf_object__for_each_map(m, x->skel->obj)
	{
		if (bpf_map__is_internal(m))
			continue;
		fd = x->fd_of(x->ctx, bpf_map__name(m));
		if (fd < 0)
			return -ENOENT;
		err = bpf_map__reuse_fd(m, fd);
		if (err)
			return err;
	}
	return exit_maps_bpf__load(x->skel);
}

static void *load_main(void *arg)
{
	struct exit_maps_load *x = arg;

	x->err = load(x);
	return NULL;
}

struct exit_maps_load *exit_maps_load_start(exit_maps_fd_fn fd_of, void *ctx, const char *core_path)
{
	struct exit_maps_load *x = calloc(1, sizeof(*x));

	if (!x)
		return NULL;
	x->fd_of = fd_of;
	x->ctx = ctx;
	if (core_path)
		snprintf(x->core_path, sizeof(x->core_path), "%s", core_path);
	if (pthread_create(&x->thread, NULL, load_main, x)) {
		free(x);
		return NULL;
	}
	pthread_setname_np(x->thread, "cfiprof-exitmaps");
	x->running = true;
	return x;
}

int exit_maps_load_wait(struct exit_maps_load *x)
{
	if (x->running) {
		pthread_join(x->thread, NULL);
		x->running = false;
		if (x->err)
			fprintf(
			    stderr,
			    "cfiprof: the exiting processes' mappings program could not be loaded "
			    "(%s): the deferred samples of a process that exits are not finished\n",
			    strerror(-x->err));
	}
	return x->err;
}

int exit_maps_load_attach(struct exit_maps_load *x)
{
	int err = exit_maps_load_wait(x);

	return err ? err : exit_maps_bpf__attach(x->skel);
}

void exit_maps_load_free(struct exit_maps_load *x)
{
	if (!x)
		return;
	if (x->running)
		pthread_join(x->thread, NULL);
	exit_maps_bpf__destroy(x->skel);
	free(x);
}
