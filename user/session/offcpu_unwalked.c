// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Off-CPU time without a stack, into the profile; see offcpu_unwalked.h. */
#include <bpf/bpf.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/vec.h"
#include "user/session/offcpu_unwalked.h"

struct unwalked_seen {
	uint64_t key; /* tgid << 32 | cause */
	uint64_t ns, blocks;
};

static uint64_t seen_key(const struct cfi_unwalked_key *k)
{
	return (uint64_t)k->tgid << 32 | k->cause;
}

static int by_key(const void *x, const void *y)
{
	const struct unwalked_seen *a = x, *b = y;

	return a->key < b->key ? -1 : a->key > b->key;
}

int offcpu_unwalked_init(struct offcpu_unwalked *u, int fd, uint32_t event)
{
	struct cfi_unwalked_val zero = {0};
	struct cfi_unwalked_key k = {0};

	memset(u, 0, sizeof(*u));
	u->fd = fd;
	u->event = event;
	if (fd < 0)
		return 0;
	for (k.cause = UNWALKED_NONE + 1; k.cause < UNWALKED_MAX; k.cause++)
		if (bpf_map_update_elem(fd, &k, &zero, BPF_NOEXIST) && errno != EEXIST)
			return -errno;
	return 0;
}

/* The process of an entry that did not grow is gone: its entry can go (never tgid 0's). */
static bool gone(uint32_t tgid)
{
	return tgid && kill((pid_t)tgid, 0) && errno == ESRCH;
}

static void take_one(struct offcpu_unwalked *u, const struct cfi_unwalked_key *k,
		     const struct cfi_unwalked_val *v, const struct unwalked_seen *was,
		     uint64_t now_ns, unwalked_add_fn add, void *ctx)
{
	struct cfi_sample_record r = {
	    .type = RECORD_SAMPLE,
	    .pid = k->tgid,
	    .tid = k->tgid,
	    .time_ns = now_ns,
	    .cgroup_id = v->cgroup_id,
	    .reason = STOP_COMPLETE,
	    .flags = (uint8_t)(k->cause << SAMPLE_UNWALKED_SHIFT) & SAMPLE_UNWALKED_MASK,
	    .event = u->event,
	};
	uint64_t blocks = v->blocks - (was ? was->blocks : 0);

	r.weight = v->ns - (was ? was->ns : 0);
	/* tgid 0: the processes that found the map full */
	snprintf(r.comm, sizeof(r.comm), "%.*s", COMM_LEN - 1, k->tgid ? v->comm : "[other]");
	add(ctx, &r, blocks);
	__atomic_add_fetch(&u->ns[k->cause], r.weight, __ATOMIC_RELAXED);
	__atomic_add_fetch(&u->blocks[k->cause], blocks, __ATOMIC_RELAXED);
}

/*
 * The seen table is updated in place: an entry's new sums are recorded before
 * its growth is added, and a new entry is taken only once it has its room,
 * so running out of memory delays a sum, never counts one twice.
 */
int offcpu_unwalked_take(struct offcpu_unwalked *u, uint64_t now_ns, unwalked_add_fn add, void *ctx)
{
	struct unwalked_seen *was, probe;
	struct cfi_unwalked_key k, next, *gone_keys = NULL;
	struct cfi_unwalked_val v;
	size_t sorted = u->nr_seen, i, kept = 0;
	uint64_t nr_gone = 0, cap_gone = 0;
	void *prev = NULL;
	int err = 0;

	if (u->fd < 0)
		return 0;
	while (!bpf_map_get_next_key(u->fd, prev, &next)) {
		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(u->fd, &k, &v) || k.cause >= UNWALKED_MAX)
			continue;
		probe.key = seen_key(&k);
		was = sorted ? bsearch(&probe, u->seen, sorted, sizeof(*was), by_key) : NULL;
		if (v.ns == (was ? was->ns : 0) && v.blocks == (was ? was->blocks : 0)) {
			/* forgotten once the walk through the map is done (else next time) */
			if (was && gone(k.tgid) && !VEC_RESERVE(gone_keys, nr_gone, cap_gone, 16))
				gone_keys[nr_gone++] = k;
			continue;
		}
		if (!was) {
			if (VEC_RESERVE(u->seen, u->nr_seen, u->cap_seen, 64)) {
				err = -1;
				continue;
			}
			was = &u->seen[u->nr_seen++];
			*was = (struct unwalked_seen){.key = probe.key};
		}
		take_one(u, &k, &v, was, now_ns, add, ctx);
		was->ns = v.ns;
		was->blocks = v.blocks;
	}
	/* marked by a count no entry reaches: the keys stay sorted for the searches */
	for (i = 0; i < nr_gone; i++) {
		bpf_map_delete_elem(u->fd, &gone_keys[i]);
		probe.key = seen_key(&gone_keys[i]);
		was = bsearch(&probe, u->seen, sorted, sizeof(*was), by_key);
		if (was)
			was->blocks = UINT64_MAX;
	}
	free(gone_keys);
	for (i = 0; i < u->nr_seen; i++)
		if (u->seen[i].blocks != UINT64_MAX)
			u->seen[kept++] = u->seen[i];
	u->nr_seen = kept;
	qsort(u->seen, u->nr_seen, sizeof(*u->seen), by_key);
	return err;
}

void offcpu_unwalked_totals(const struct offcpu_unwalked *u, uint64_t ns[UNWALKED_MAX],
			    uint64_t blocks[UNWALKED_MAX])
{
	int i;

	for (i = 0; i < UNWALKED_MAX; i++) {
		ns[i] = __atomic_load_n(&u->ns[i], __ATOMIC_RELAXED);
		blocks[i] = __atomic_load_n(&u->blocks[i], __ATOMIC_RELAXED);
	}
}

void offcpu_unwalked_free(struct offcpu_unwalked *u)
{
	free(u->seen);
	u->seen = NULL;
	u->nr_seen = 0;
}
