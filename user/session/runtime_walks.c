// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The runtimes' walks, loaded a second time while sampling runs (runtime_walks.h). */
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
#include "user/session/runtime_walks.h"

struct runtime_walks {
	pthread_t thread;
	/* held while the thread touches first, and over the hand-over at the end */
	pthread_mutex_t lock;
	struct cfiprof_bpf *first; /* the loaded object whose maps this one shares */
	struct cfiprof_bpf *skel;  /* this load's */
	int sample_progs_fd;	   /* first's sample_progs, a descriptor of its own */
	int core_fd;		   /* the cached kernel types first loaded with, its own (-1) */
	bool cancel;		   /* stopped: first is not to be touched */
	bool finished;		   /* the thread is done with everything */
	bool abandoned;		   /* the thread frees all this itself */
	/* mono_ns() when it took the first's place (0: not yet), and its open and load took */
	uint64_t in_place_ns, load_ns;
};

/*
 * Every map of the first load but its settings (.rodata, copied with the
 * runtimes' walks switched on): the two objects come from one ELF, so their
 * maps are in the same order with the same layouts, .bss included.
 */
static int share_maps(struct cfiprof_bpf *skel, struct cfiprof_bpf *first)
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
	skel->rodata->runtime_walks_later = 0;
	return 0;
}

/* share_maps while first is there to share, under the lock */
static int share_first(struct runtime_walks *rw)
{
	int err = -ECANCELED;

	pthread_mutex_lock(&rw->lock);
	if (!rw->cancel) {
		err = share_maps(rw->skel, rw->first);
		rw->sample_progs_fd =
		    err ? -1 : fcntl(bpf_map__fd(rw->first->maps.sample_progs), F_DUPFD_CLOEXEC, 0);
		if (!err && rw->sample_progs_fd < 0)
			err = -errno;
	}
	pthread_mutex_unlock(&rw->lock);
	return err;
}

static int second_load(struct runtime_walks *rw, uint64_t t0)
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
	err = share_first(rw);
	if (err)
		return err;
	bpf_object__for_each_program(prog, rw->skel->obj)
	    bpf_program__set_autoload(prog, prog == rw->skel->progs.on_sample);
	err = cfiprof_bpf__load(rw->skel);
	if (err)
		return err;
	fd = bpf_program__fd(rw->skel->progs.on_sample);
	if (bpf_map_update_elem(rw->sample_progs_fd, &zero, &fd, BPF_ANY))
		return -errno;
	/* read by the summary while this thread may still run */
	__atomic_store_n(&rw->load_ns, mono_ns() - t0, __ATOMIC_RELAXED);
	__atomic_store_n(&rw->in_place_ns, mono_ns(), __ATOMIC_RELEASE);
	return 0;
}

static void runtime_walks_free(struct runtime_walks *rw)
{
	if (rw->sample_progs_fd >= 0)
		close(rw->sample_progs_fd);
	if (rw->core_fd >= 0)
		close(rw->core_fd);
	pthread_mutex_destroy(&rw->lock);
	free(rw);
}

static void *second_load_main(void *arg)
{
	struct runtime_walks *rw = arg;
	int err = second_load(rw, mono_ns());
	bool abandoned;

	/*
	 * Once loaded, the program array holds the program: the object, its
	 * copy of the ELF and its descriptors of the first's maps are needed no
	 * more (a long-running agent would keep their memory).
	 */
	cfiprof_bpf__destroy(rw->skel);
	rw->skel = NULL;
	pthread_mutex_lock(&rw->lock);
	if (err && !rw->cancel)
		fprintf(
		    stderr,
		    "cfiprof: the language runtimes' walks could not be loaded (%s): their "
		    "frames are not read (cfiprof_runtime_walk_pending_total counts the samples)\n",
		    strerror(-err));
	abandoned = rw->abandoned;
	rw->finished = true;
	pthread_mutex_unlock(&rw->lock);
	if (abandoned)
		runtime_walks_free(rw);
	return NULL;
}

struct runtime_walks *runtime_walks_start(struct cfiprof_bpf *first, int core_fd)
{
	struct runtime_walks *rw = calloc(1, sizeof(*rw));

	if (!rw)
		return NULL;
	rw->first = first;
	rw->sample_progs_fd = -1;
	/* the thread may outlive the first load's descriptor of the file */
	rw->core_fd = core_fd >= 0 ? fcntl(core_fd, F_DUPFD_CLOEXEC, 0) : -1;
	pthread_mutex_init(&rw->lock, NULL);
	if (pthread_create(&rw->thread, NULL, second_load_main, rw)) {
		runtime_walks_free(rw);
		return NULL;
	}
	pthread_setname_np(rw->thread, "cfiprof-verify");
	return rw;
}

uint64_t runtime_walks_in_place(const struct runtime_walks *rw, uint64_t *load_ns)
{
	uint64_t t = rw ? __atomic_load_n(&rw->in_place_ns, __ATOMIC_ACQUIRE) : 0;

	*load_ns = t ? __atomic_load_n(&rw->load_ns, __ATOMIC_RELAXED) : 0;
	return t;
}

void runtime_walks_stop(struct runtime_walks *rw)
{
	bool finished;

	if (!rw)
		return;
	pthread_mutex_lock(&rw->lock);
	rw->cancel = true;
	finished = rw->finished;
	/* a command shorter than the load (record -- true) does not wait for it */
	rw->abandoned = !finished;
	pthread_mutex_unlock(&rw->lock);
	if (!finished) {
		pthread_detach(rw->thread);
		return;
	}
	pthread_join(rw->thread, NULL);
	runtime_walks_free(rw);
}
