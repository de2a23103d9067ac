// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Each runtime's BPF program, loaded at its first process; see runtime_progs.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cfiprof.skel.h"
#include "common/clock.h"
#include "user/session/bpf_program.h"
#include "user/session/runtime_progs.h"
#include "user/track/runtime_procs.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct loader *loader; /* NULL: nothing loaded lazily */
static struct runtime_progs_stats stats;
static bool done[RT_MAX];

static const char *const prog_names[RT_MAX] = {
#define RT_PROG_NAME(id, value, name, tag, frames, type) [id] = "rt_emit_" #name,
    CFI_RUNTIMES(RT_PROG_NAME)
#undef RT_PROG_NAME
};

/* rt's program loaded from a second instance of the session's object, its maps the session's. */
static int load(struct loader *l, uint8_t rt)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "cfiprof_rt");
	struct bpf_object *obj;
	struct bpf_program *p, *want = NULL;
	struct bpf_map *m;
	const void *elf;
	size_t size;
	__u32 key = rt;
	int err, fd;

	/* the session's own copy of the object's bytes (another reference would embed another) */
	elf = l->skel->skeleton->data;
	size = l->skel->skeleton->data_sz;
	obj = bpf_object__open_mem(elf, size, &oo);
	if (!obj)
		return -errno;
	bpf_object__for_each_program(p, obj)
	{
		bool it = !strcmp(bpf_program__name(p), prog_names[rt]);

		bpf_program__set_autoload(p, it);
		want = it ? p : want;
	}
	err = want ? 0 : -ENOENT;
	bpf_object__for_each_map(m, obj)
	{
		struct bpf_map *own = bpf_object__find_map_by_name(l->skel->obj, bpf_map__name(m));

		if (err)
			break;
		/* a map the session did not make (none of its programs uses it) is not made here */
		if (!own || bpf_map__fd(own) < 0)
			err = bpf_map__set_autocreate(m, false);
		else
			err = bpf_map__reuse_fd(m, bpf_map__fd(own));
	}
	if (!err)
		err = bpf_object__load(obj);
	fd = err ? -1 : bpf_program__fd(want);
	if (!err && bpf_map_update_elem(bpf_map__fd(l->skel->maps.rt_progs), &key, &fd, BPF_ANY))
		err = -errno;
	/* the array holds the program: the object's own references go */
	bpf_object__close(obj);
	return err;
}

static int ensure(void *ctx, uint8_t rt)
{
	(void)ctx;
	return runtime_progs_ensure(rt);
}

void runtime_progs_start(struct loader *l)
{
	pthread_mutex_lock(&lock);
	/* a session's own: another one (the agent's next) starts from none loaded */
	loader = l->rt_lazy ? l : NULL;
	memset(done, 0, sizeof(done));
	memset(&stats, 0, sizeof(stats));
	pthread_mutex_unlock(&lock);
	runtime_procs_set_hook(ensure, NULL);
}

void runtime_progs_stop(void)
{
	pthread_mutex_lock(&lock);
	loader = NULL;
	pthread_mutex_unlock(&lock);
}

int runtime_progs_ensure(uint8_t rt)
{
	uint64_t t0;
	int err;

	if (rt == RT_NONE || rt >= RT_MAX)
		return -EINVAL;
	pthread_mutex_lock(&lock);
	if (!loader || done[rt]) {
		err = loader ? stats.err[rt] : 0;
		pthread_mutex_unlock(&lock);
		return err;
	}
	t0 = mono_ns();
	err = load(loader, rt);
	done[rt] = true;
	stats.err[rt] = err;
	stats.load_ns[rt] = err ? 0 : mono_ns() - t0;
	pthread_mutex_unlock(&lock);
	if (err)
		fprintf(
		    stderr,
		    "cfiprof: %s: its frames are not read: its BPF program failed to load: %s\n",
		    prog_names[rt] + 8, strerror(-err));
	return err;
}

void runtime_progs_stats(struct runtime_progs_stats *out)
{
	pthread_mutex_lock(&lock);
	*out = stats;
	pthread_mutex_unlock(&lock);
}
