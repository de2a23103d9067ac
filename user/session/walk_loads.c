// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The sampling program's later loads, while sampling runs (walk_loads.h). */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfiprof.skel.h"
#include "common/clock.h"
#include "user/session/kfuncs.h"
#include "user/session/walk_loads.h"

struct walk_loads {
	pthread_t thread;
	/* held while the thread touches first, and over the hand-over at the end */
	pthread_mutex_t lock;
	pthread_cond_t wake;	   /* runtimes wanted, or cancel */
	struct cfiprof_bpf *first; /* the loaded object whose maps this one shares */
	struct cfiprof_bpf *skel;  /* this load's */
	int sample_progs_fd;	   /* first's sample_progs, a descriptor of its own */
	int core_fd;		   /* the cached kernel types first loaded with, its own (-1) */
	bool native;		   /* the native walk to load first */
	bool runtimes;		   /* the runtimes' walks wanted */
	bool cancel;		   /* stopped: first is not to be touched */
	bool finished;		   /* the thread is done with everything */
	bool abandoned;		   /* the thread frees all this itself */
	/* mono_ns() when each took its place (0: not yet), and what its open and load took */
	uint64_t in_place_ns[WALK_LOADS], load_ns[WALK_LOADS];
};

/*
 * Every map of the first load but its settings (.rodata, copied, with the
 * runtimes' walks switched on for WALK_RUNTIMES): the objects come from one
 * ELF, so their maps are in the same order with the same layouts, .bss
 * included.
 */
static int share_maps(struct cfiprof_bpf *skel, struct cfiprof_bpf *first, enum walk_load which)
{
	struct bpf_map *m, *from = NULL;
	size_t n_from = 0, n = 0;
	const void *settings;
	int err;

	bpf_object__for_each_map(m, skel->obj)
	{
		from = bpf_object__next_map(first->obj, from);
		if (!from || strcmp(bpf_map__name(m), bpf_map__name(from)))
			return -EINVAL;
		if (m == skel->maps.rodata)
			continue;
		err = bpf_map__reuse_fd(m, bpf_map__fd(from));
		if (err)
			return err;
	}
	settings = bpf_map__initial_value(first->maps.rodata, &n_from);
	bpf_map__initial_value(skel->maps.rodata, &n);
	/* the section's size: the struct's may have padding after its last setting */
	if (!settings || n != n_from || n > sizeof(*skel->rodata))
		return -EINVAL;
	memcpy(skel->rodata, settings, n);
	if (which == WALK_RUNTIMES)
		skel->rodata->runtime_walks_later = 0;
	return 0;
}

/* share_maps while first is there to share, under the lock */
static int share_first(struct walk_loads *rw, enum walk_load which)
{
	int err = -ECANCELED;

	pthread_mutex_lock(&rw->lock);
	if (!rw->cancel) {
		err = share_maps(rw->skel, rw->first, which);
		if (!err && rw->sample_progs_fd < 0)
			rw->sample_progs_fd =
			    fcntl(bpf_map__fd(rw->first->maps.sample_progs), F_DUPFD_CLOEXEC, 0);
		if (!err && rw->sample_progs_fd < 0)
			err = -errno;
	}
	pthread_mutex_unlock(&rw->lock);
	return err;
}

static int load_walk(struct walk_loads *rw, enum walk_load which, uint64_t t0)
{
	struct bpf_program *prog;
	__u32 zero = 0;
	char core_path[64];
	LIBBPF_OPTS(bpf_object_open_opts, oo);
	int err, fd;

	if (rw->core_fd >= 0) {
		snprintf(core_path, sizeof(core_path), "/proc/self/fd/%d", rw->core_fd);
		oo.btf_custom_path = core_path;
	}
	rw->skel = cfiprof_bpf__open_opts(&oo);
	if (!rw->skel)
		return -errno;
	err = share_first(rw, which);
	if (err)
		return err;
	bpf_object__for_each_program(prog, rw->skel->obj)
	    bpf_program__set_autoload(prog, prog == rw->skel->progs.on_sample);
	err = kfuncs_patch_object(rw->skel->obj);
	err = err ? err : cfiprof_bpf__load(rw->skel);
	if (err)
		return err;
	fd = bpf_program__fd(rw->skel->progs.on_sample);
	if (bpf_map_update_elem(rw->sample_progs_fd, &zero, &fd, BPF_ANY))
		return -errno;
	/* read by the summary while this thread may still run */
	__atomic_store_n(&rw->load_ns[which], mono_ns() - t0, __ATOMIC_RELAXED);
	__atomic_store_n(&rw->in_place_ns[which], mono_ns(), __ATOMIC_RELEASE);
	return 0;
}

/*
 * One load, its object destroyed after it: once loaded, the program array
 * holds the program, and the object, its copy of the ELF and its descriptors
 * of the first's maps are needed no more (a long-running agent would keep
 * their memory).
 */
static int load_one(struct walk_loads *rw, enum walk_load which)
{
	int err = load_walk(rw, which, mono_ns());

	cfiprof_bpf__destroy(rw->skel);
	rw->skel = NULL;
	return err;
}

static const char *const load_failed[WALK_LOADS] = {
    [WALK_NATIVE] =
	"cfiprof: the sampling walk could not be loaded (%s): samples are sent unwalked, "
	"for user space to walk within the stack copies' budget "
	"(cfiprof_samples_unwalked_total counts them)\n",
    [WALK_RUNTIMES] =
	"cfiprof: the language runtimes' walks could not be loaded (%s): their frames are "
	"not read (cfiprof_runtime_walk_pending_total counts the samples)\n",
};

/* A load's failure said, unless the session ended first; true: go on. */
static bool load_said(struct walk_loads *rw, enum walk_load which, int err)
{
	bool go;

	pthread_mutex_lock(&rw->lock);
	if (err && !rw->cancel)
		fprintf(stderr, load_failed[which], strerror(-err));
	go = !rw->cancel;
	pthread_mutex_unlock(&rw->lock);
	return go;
}

static void walk_loads_free(struct walk_loads *rw)
{
	if (rw->sample_progs_fd >= 0)
		close(rw->sample_progs_fd);
	if (rw->core_fd >= 0)
		close(rw->core_fd);
	pthread_cond_destroy(&rw->wake);
	pthread_mutex_destroy(&rw->lock);
	free(rw);
}

static void *walk_loads_main(void *arg)
{
	struct walk_loads *rw = arg;
	bool go = true, abandoned;

	if (rw->native)
		go = load_said(rw, WALK_NATIVE, load_one(rw, WALK_NATIVE));
	pthread_mutex_lock(&rw->lock);
	while (go && !rw->runtimes && !rw->cancel)
		pthread_cond_wait(&rw->wake, &rw->lock);
	go = go && !rw->cancel;
	pthread_mutex_unlock(&rw->lock);
	if (go)
		load_said(rw, WALK_RUNTIMES, load_one(rw, WALK_RUNTIMES));
	pthread_mutex_lock(&rw->lock);
	abandoned = rw->abandoned;
	rw->finished = true;
	pthread_mutex_unlock(&rw->lock);
	if (abandoned)
		walk_loads_free(rw);
	return NULL;
}

struct walk_loads *walk_loads_start(struct cfiprof_bpf *first, int core_fd, bool native)
{
	struct walk_loads *rw = calloc(1, sizeof(*rw));

	if (!rw)
		return NULL;
	rw->first = first;
	rw->native = native;
	rw->sample_progs_fd = -1;
	/* the thread may outlive the first load's descriptor of the file */
	rw->core_fd = core_fd >= 0 ? fcntl(core_fd, F_DUPFD_CLOEXEC, 0) : -1;
	pthread_mutex_init(&rw->lock, NULL);
	pthread_cond_init(&rw->wake, NULL);
	if (pthread_create(&rw->thread, NULL, walk_loads_main, rw)) {
		walk_loads_free(rw);
		return NULL;
	}
	pthread_setname_np(rw->thread, "cfiprof-verify");
	return rw;
}

void walk_loads_want_runtimes(struct walk_loads *rw)
{
	if (!rw)
		return;
	pthread_mutex_lock(&rw->lock);
	rw->runtimes = true;
	pthread_cond_signal(&rw->wake);
	pthread_mutex_unlock(&rw->lock);
}

uint64_t walk_loads_in_place(const struct walk_loads *rw, enum walk_load which, uint64_t *load_ns)
{
	uint64_t t = rw ? __atomic_load_n(&rw->in_place_ns[which], __ATOMIC_ACQUIRE) : 0;

	*load_ns = t ? __atomic_load_n(&rw->load_ns[which], __ATOMIC_RELAXED) : 0;
	return t;
}

void walk_loads_stop(struct walk_loads *rw)
{
	pthread_t thread;
	bool finished;

	if (!rw)
		return;
	pthread_mutex_lock(&rw->lock);
	rw->cancel = true;
	pthread_cond_signal(&rw->wake);
	finished = rw->finished;
	/* a command shorter than the load (record -- true) does not wait for it */
	rw->abandoned = !finished;
	/* once unlocked, an abandoned thread may end and free rw at once */
	thread = rw->thread;
	pthread_mutex_unlock(&rw->lock);
	if (!finished) {
		pthread_detach(thread);
		return;
	}
	pthread_join(rw->thread, NULL);
	walk_loads_free(rw);
}
