// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Report mode (no BPF): processes and mappings read back from a saved
 * recording.  There are no tables; symbols come from the files when they are
 * still there (the same build-id), and the vDSO from our own when the kernel
 * is the same.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elf/build_id.h"
#include "user/track/tracker_internal.h"

/*
 * A recorded vDSO is named from our own when the build-ids match (the same
 * kernel), since the recorded process's copy is gone.
 */
static struct sym_obj *saved_vdso_symbols(struct proc_tracker *pt, const char *build_id)
{
	char bid[ELF_BUILD_ID_HEX_LEN], key[ELF_BUILD_ID_HEX_LEN + 8];
	struct maps_entry *ents = NULL;
	struct sym_obj *o = NULL;
	int n, i, fd = -1;

	n = proc_maps_read((int)getpid(), true, &ents);
	for (i = 0; i < n && fd < 0; i++) {
		if (!strcmp(ents[i].path, "[vdso]"))
			fd = vdso_copy_fd((uint32_t)getpid(), ents[i].start, ents[i].end);
	}
	free(ents);
	if (fd < 0)
		return NULL;
	if (!elf_build_id_hex_fd(fd, bid, sizeof(bid)) && !strcmp(bid, build_id)) {
		snprintf(key, sizeof(key), "vdso:%s", bid);
		o = sym_cache_get(pt->opts.syms, key, NULL, fd, 0);
	}
	close(fd);
	return o;
}

/* Symbols of a saved file mapping; NULL when the file is gone (object+offset, not an error). */
static struct sym_obj *saved_file_symbols(struct proc_tracker *pt, uint32_t pid,
					  const struct proc_mapping *m)
{
	char bid[ELF_BUILD_ID_HEX_LEN];
	struct sym_obj *o = NULL;
	int fd;

	if (!access(m->path, R_OK))
		return sym_cache_get(pt->opts.syms, m->key[0] ? m->key : m->path, m->path, -1, 0);
	if (!m->key[0])
		return NULL;
	/* a file only in a container's mount namespace: still there if the process is */
	fd = map_file_open(pid, m->start, m->end, NULL);
	if (fd >= 0 && !elf_build_id_hex_fd(fd, bid, sizeof(bid)) && !strcmp(bid, m->key))
		o = sym_cache_get(pt->opts.syms, m->key, m->path, fd, pid);
	if (fd >= 0)
		close(fd);
	return o;
}

int proc_tracker_add_saved(struct proc_tracker *pt, uint32_t pid, const struct proc_mapping *m)
{
	struct proc_mapping *n;
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = tracker_get_locked(pt, pid);
	pthread_mutex_unlock(&pt->lock);
	if (!p)
		return -ENOMEM;
	n = realloc(p->saved, (p->nr_saved + 1) * sizeof(*n));
	if (!n)
		return -ENOMEM;
	p->saved = n;
	n = &p->saved[p->nr_saved++];
	*n = *m;
	n->obj = NULL;
	n->sym = NULL;
	if (!strcmp(m->path, "[vdso]") && m->key[0])
		n->sym = saved_vdso_symbols(pt, m->key);
	if (strcmp(m->path, "[vdso]") && m->path[0] == '/')
		n->sym = saved_file_symbols(pt, pid, m);
	p->loaded = true;
	p->exited = true;
	return 0;
}

static int by_start(const void *a, const void *b)
{
	const struct proc_mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The mappings read since the last gen line, as a set of generation p->generation. */
static struct map_set *saved_set(struct proc *p)
{
	struct map_set *s = map_set_new(p->nr_saved);

	if (!s)
		return NULL;
	if (p->nr_saved)
		memcpy(s->maps, p->saved, p->nr_saved * sizeof(*p->saved));
	qsort(s->maps, s->nr_maps, sizeof(s->maps[0]), by_start);
	s->generation = p->generation;
	s->first_generation = p->saved_first;
	/* a recording holds the sets its samples were taken under: all stay */
	s->sampled = true;
	s->ns_pid = p->ns_pid;
	free(p->saved);
	p->saved = NULL;
	p->nr_saved = 0;
	return s;
}

void proc_tracker_sort(struct proc_tracker *pt)
{
	struct map_set *s;
	struct proc *p;
	uint32_t b;

	/* a process named only by a proc or gen line gets an empty set (its ns_pid) */
	for (p = proc_tracker_first(pt, &b); p; p = proc_tracker_next(pt, p, &b)) {
		if (p->cur && !p->nr_saved)
			continue;
		s = saved_set(p);
		if (!s)
			continue;
		pthread_mutex_lock(&pt->lock);
		proc_publish_maps(pt, p, s);
		pthread_mutex_unlock(&pt->lock);
	}
}

void proc_tracker_saved_generation(struct proc_tracker *pt, uint32_t pid, uint32_t gen,
				   uint32_t first)
{
	struct map_set *s;
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = tracker_get_locked(pt, pid);
	pthread_mutex_unlock(&pt->lock);
	if (!p)
		return;
	/* the mappings read so far were those of the previous generation */
	if (p->nr_saved) {
		s = saved_set(p);
		pthread_mutex_lock(&pt->lock);
		proc_retire_maps(pt, p, s);
		pthread_mutex_unlock(&pt->lock);
	}
	p->generation = gen;
	p->saved_first = first;
}

void proc_tracker_saved_ns_pid(struct proc_tracker *pt, uint32_t pid, uint32_t ns_pid)
{
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	p = tracker_get_locked(pt, pid);
	if (p)
		p->ns_pid = ns_pid;
	pthread_mutex_unlock(&pt->lock);
}
