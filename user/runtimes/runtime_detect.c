// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Which processes run a runtime; see runtime_detect.h. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "user/runtimes/runtime_detect.h"
#include "user/track/proc_maps.h"
#include "user/track/proc_tracker.h"
#include "user/track/runtime_procs.h"

#define DETECT_OBJS    256 /* objects remembered, a ring of the newest (Go: one per program) */
#define DETECT_BUCKETS 1024

struct detect_obj {
	char key[PROC_MAPPING_KEY_LEN];
	uint64_t info[DETECT_INFO_BYTES / 8];
};

struct detect_proc {
	struct detect_proc *next;
	uint32_t pid;
	bool supported;
	uint16_t version;
	uint64_t data[RT_PROC_BYTES / 8]; /* its entry's part, when supported */
};

struct runtime_detect {
	struct detect_ops ops;
	int map_fd;
	pthread_mutex_t lock;
	struct detect_obj objs[DETECT_OBJS];
	uint32_t nr_objs, next_obj;
	struct detect_proc *buckets[DETECT_BUCKETS];
	struct runtime_detect_stats stats;
};

struct runtime_detect *runtime_detect_new(const struct detect_ops *ops, int procs_fd)
{
	struct runtime_detect *rd = calloc(1, sizeof(*rd));

	if (!rd)
		return NULL;
	rd->ops = *ops;
	rd->map_fd = procs_fd;
	pthread_mutex_init(&rd->lock, NULL);
	return rd;
}

void runtime_detect_free(struct runtime_detect *rd)
{
	struct detect_proc *p, *n;

	if (!rd)
		return;
	for (uint32_t b = 0; b < DETECT_BUCKETS; b++)
		for (p = rd->buckets[b]; p; p = n) {
			n = p->next;
			free(p);
		}
	pthread_mutex_destroy(&rd->lock);
	free(rd);
}

static struct detect_obj *find_obj(struct runtime_detect *rd, const char *key)
{
	for (uint32_t i = 0; i < rd->nr_objs; i++)
		if (!strcmp(rd->objs[i].key, key))
			return &rd->objs[i];
	return NULL;
}

void runtime_detect_object(struct runtime_detect *rd, const char *key, const char *path, int fd)
{
	struct detect_obj o = {0};
	bool known;

	if (fd < 0 || (rd->ops.may_be && !rd->ops.may_be(path)))
		return;
	pthread_mutex_lock(&rd->lock);
	known = find_obj(rd, key) != NULL;
	pthread_mutex_unlock(&rd->lock);
	if (known || rd->ops.object(fd, path, o.info))
		return;
	snprintf(o.key, sizeof(o.key), "%s", key);
	pthread_mutex_lock(&rd->lock);
	/* a ring of the newest */
	rd->objs[rd->next_obj] = o;
	rd->next_obj = (rd->next_obj + 1) % DETECT_OBJS;
	if (rd->nr_objs < DETECT_OBJS)
		rd->nr_objs++;
	pthread_mutex_unlock(&rd->lock);
}

static struct detect_proc **find_proc(struct runtime_detect *rd, uint32_t pid)
{
	struct detect_proc **pp = &rd->buckets[pid % DETECT_BUCKETS];

	while (*pp && (*pp)->pid != pid)
		pp = &(*pp)->next;
	return pp;
}

/* A process of an unsupported version: its version kept for the summary (the first few). */
static void count_unsupported(struct runtime_detect_stats *st, uint16_t version)
{
	uint32_t i;

	st->unsupported++;
	for (i = 0; i < st->nr_unsup_versions && st->unsup_version[i] != version; i++)
		;
	if (i == DETECT_UNSUPPORTED_VERSIONS)
		return;
	if (i == st->nr_unsup_versions) {
		st->unsup_version[i] = version;
		st->nr_unsup_versions++;
	}
	st->unsup_procs[i]++;
}

void runtime_detect_proc(struct runtime_detect *rd, uint32_t pid, const struct proc_mapping *maps,
			 uint32_t nr, uint64_t read_ns, bool early)
{
	uint64_t data[RT_PROC_BYTES / 8] = {0}, info[DETECT_INFO_BYTES / 8];
	const struct detect_obj *obj = NULL;
	struct detect_proc **pp, *p;
	uint64_t bias = 0;
	uint16_t version = 0;
	size_t size = 0;
	bool ok = false, entry_ok;

	pthread_mutex_lock(&rd->lock);
	/* no object seen yet (most hosts): no scan of every mapping */
	for (uint32_t i = 0; rd->nr_objs && i < nr && !obj; i++) {
		obj = find_obj(rd, maps[i].key);
		bias = maps[i].bias;
	}
	if (obj)
		memcpy(info, obj->info, sizeof(info));
	pthread_mutex_unlock(&rd->lock);
	if (!obj && early)
		return;
	/*
	 * The process's memory is read without the lock: every sample of every
	 * process of this runtime looks its process up under it (the consumer's
	 * code_names_note), and a JVM's layout is hundreds of reads of a process
	 * that may be slow to answer (its pages swapped out, or a FUSE file's).
	 * The writers (a load, a forget) hold the tracker's load lock, one at a
	 * time: what was found stays what is written.
	 */
	entry_ok = obj && !rd->ops.entry(info, bias, pid, read_ns, data, &size, &version) &&
		   size <= sizeof(data);
	pthread_mutex_lock(&rd->lock);
	/* the kernel's entry and ours change together: no sample finds one alone */
	if (entry_ok)
		ok = !runtime_procs_put(rd->map_fd, pid, rd->ops.runtime, rd->ops.keep_bp, data,
					size);
	if (!ok)
		runtime_procs_drop(rd->map_fd, pid, rd->ops.runtime);
	pp = find_proc(rd, pid);
	p = *pp;
	if (!obj && p) {
		*pp = p->next;
		free(p);
	} else if (obj) {
		if (!p) {
			p = calloc(1, sizeof(*p));
			if (p) {
				p->pid = pid;
				p->next = rd->buckets[pid % DETECT_BUCKETS];
				rd->buckets[pid % DETECT_BUCKETS] = p;
			}
		}
		/* counted once per process, and again when an exec changes what it runs */
		if (p &&
		    (!p->version || p->supported != ok || p->version != (version ? version : 1))) {
			if (ok)
				rd->stats.procs++;
			else
				count_unsupported(&rd->stats, version);
		}
		if (p) {
			p->supported = ok;
			p->version = version ? version : 1;
			memcpy(p->data, data, sizeof(data));
		}
	}
	pthread_mutex_unlock(&rd->lock);
}

bool runtime_detect_lookup(struct runtime_detect *rd, uint32_t pid, void *data, size_t size)
{
	const struct detect_proc *p;
	bool found;

	if (!rd || size > RT_PROC_BYTES)
		return false;
	pthread_mutex_lock(&rd->lock);
	p = *find_proc(rd, pid);
	found = p && p->supported;
	if (found)
		memcpy(data, p->data, size);
	pthread_mutex_unlock(&rd->lock);
	return found;
}

void runtime_detect_stats(struct runtime_detect *rd, struct runtime_detect_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!rd)
		return;
	pthread_mutex_lock(&rd->lock);
	*out = rd->stats;
	pthread_mutex_unlock(&rd->lock);
	out->variant = rd->ops.variant;
}

void runtime_detect_describe_unsupported(const struct runtime_detect_stats *st, const char *what,
					 char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	if (!st->unsupported || !len)
		return;
	n += (size_t)snprintf(buf, len, "%" PRIu64 " %s process%s of unsupported version%s",
			      st->unsupported, what, st->unsupported == 1 ? "" : "es",
			      st->nr_unsup_versions > 1 ? "s" : "");
	for (uint32_t i = 0; i < st->nr_unsup_versions && n < len; i++) {
		uint16_t v = st->unsup_version[i] & (uint16_t)~DETECT_VERSION_VARIANT;
		bool variant = st->unsup_version[i] & DETECT_VERSION_VARIANT;

		if (v > 1)
			n += (size_t)snprintf(buf + n, len - n, "%s %u.%u%s%s", i ? "," : "",
					      v >> 8, v & 0xff, variant ? " " : "",
					      variant && st->variant ? st->variant : "");
		else
			n += (size_t)snprintf(buf + n, len - n, "%s unknown", i ? "," : "");
		if (st->nr_unsup_versions > 1 && n < len)
			n += (size_t)snprintf(buf + n, len - n, " (%" PRIu64 ")",
					      st->unsup_procs[i]);
	}
}

static void hook_object(void *ctx, const char *key, const char *path, int fd)
{
	runtime_detect_object(ctx, key, path, fd);
}

static void hook_early(void *ctx, uint32_t pid, const struct proc_mapping *maps,
		       const struct maps_entry *ents, const int *fds, uint32_t nr, uint64_t read_ns)
{
	/* the objects this load opened first: a kept mapping's key is still "" */
	for (uint32_t i = 0; i < nr; i++)
		if (fds[i] >= 0)
			runtime_detect_object(ctx, maps[i].key, ents[i].path, fds[i]);
	runtime_detect_proc(ctx, pid, maps, nr, read_ns, true);
}

static void hook_proc(void *ctx, uint32_t pid, const struct proc_mapping *maps, uint32_t nr,
		      uint64_t read_ns)
{
	runtime_detect_proc(ctx, pid, maps, nr, read_ns, false);
}

static void hook_unload(void *ctx, uint32_t pid)
{
	struct runtime_detect *rd = ctx;

	runtime_procs_drop(rd->map_fd, pid, rd->ops.runtime);
}

static void hook_forget(void *ctx, uint32_t pid)
{
	struct runtime_detect *rd = ctx;
	struct detect_proc **pp, *p;

	pthread_mutex_lock(&rd->lock);
	pp = find_proc(rd, pid);
	p = *pp;
	if (p) {
		*pp = p->next;
		free(p);
	}
	pthread_mutex_unlock(&rd->lock);
	runtime_procs_drop(rd->map_fd, pid, rd->ops.runtime);
}

void runtime_detect_hooks(struct runtime_detect *rd, struct runtime_hooks *out)
{
	*out = (struct runtime_hooks){.ctx = rd,
				      .object = hook_object,
				      .early = hook_early,
				      .proc = hook_proc,
				      .unload = hook_unload,
				      .forget = hook_forget};
}
