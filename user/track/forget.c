// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Forgetting exited processes (the agent, after each interval), with the
 * symbols of objects no kept process maps: memory returns to its baseline
 * after process churn.  Live processes that are gone without an exit event
 * are found by a sweep of /proc first.
 */
#include <stdlib.h>
#include <string.h>

#include "common/clock.h"
#include "user/track/proc_stat.h"
#include "user/track/tracker_internal.h"

/* Live processes that are gone, or another process under the same pid, are unloaded. */
static void sweep_gone(struct proc_tracker *pt)
{
	struct proc_stat_info stat;
	struct proc **live;
	uint32_t b, n = 0, i;
	struct proc *p;

	pthread_mutex_lock(&pt->lock);
	live = malloc((pt->nr_live + 1) * sizeof(*live));
	for (b = 0; live && b < NR_BUCKETS; b++) {
		for (p = pt->buckets[b]; p && n < pt->nr_live; p = p->next) {
			if (is_live(p))
				live[n++] = p;
		}
	}
	pthread_mutex_unlock(&pt->lock);
	/* processes leave the lists only below, on this thread, with load_lock held */
	for (i = 0; i < n; i++) {
		p = live[i];
		if (!proc_stat_read(p->pid, &stat) && stat.start_time == p->start_time &&
		    !proc_stat_dying(&stat))
			continue;
		unload_proc(pt, p, false);
		TRACKER_COUNT(pt, exits_swept, 1);
	}
	free(live);
}

static int by_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Keys of the mappings in s that have symbols, appended to keys (room for them is there). */
static size_t add_keys(const char **keys, size_t n, const struct map_set *s)
{
	uint32_t m;

	for (m = 0; s && m < s->nr_maps; m++) {
		if (s->maps[m].sym && s->maps[m].key[0])
			keys[n++] = s->maps[m].key;
	}
	return n;
}

static size_t nr_mappings(const struct proc *p)
{
	size_t n = p->cur ? p->cur->nr_maps : 0;
	uint32_t h;

	for (h = 0; h < p->nr_history; h++)
		n += p->history[h]->nr_maps;
	return n;
}

/*
 * Symbols are shared by key: those of the forgotten processes go unless a kept
 * process (an exited one kept for naming included) maps the key, now or in a
 * generation kept for names.  One pass over the kept mappings against the
 * sorted keys of the forgotten ones.  load_lock held: nothing changes.
 */
static void drop_symbols(struct proc_tracker *pt, struct proc *gone)
{
	const char **keys, **hit;
	size_t n = 0, k, d;
	struct proc *p;
	uint32_t b, h, m;
	bool *kept;

	for (p = gone; p; p = p->next)
		n += nr_mappings(p);
	keys = malloc((n + 1) * sizeof(*keys));
	kept = calloc(n + 1, sizeof(*kept));
	if (!keys || !kept)
		goto cleanup; /* out of memory: the symbols stay, cached */
	n = 0;
	for (p = gone; p; p = p->next) {
		n = add_keys(keys, n, p->cur);
		for (h = 0; h < p->nr_history; h++)
			n = add_keys(keys, n, p->history[h]);
	}
	qsort(keys, n, sizeof(*keys), by_key);
	for (k = 0, d = 0; k < n; k++) {
		if (!d || strcmp(keys[d - 1], keys[k]))
			keys[d++] = keys[k];
	}
	n = d;
	for (b = 0; n && b < NR_BUCKETS; b++) {
		for (p = pt->buckets[b]; p; p = p->next) {
			for (h = 0; h <= p->nr_history; h++) {
				const struct map_set *s =
				    h < p->nr_history ? p->history[h] : p->cur;

				for (m = 0; s && m < s->nr_maps; m++) {
					const char *key = s->maps[m].key;

					hit = bsearch(&key, keys, n, sizeof(*keys), by_key);
					if (hit)
						kept[hit - keys] = true;
				}
			}
		}
	}
	for (k = 0; k < n; k++) {
		if (!kept[k])
			sym_cache_remove(pt->opts.syms, keys[k]);
	}
cleanup:
	free(keys);
	free(kept);
}

/*
 * pt->lock held: processes seen exited at the last pass leave the registry
 * (their unload, if still due, is done by the caller); returns them linked
 * by next.  One walk over the registry, nothing else: the consumer waits.
 */
/*
 * The samples waiting on p's older sets were named (the caller's interval):
 * past the PROC_HISTORY newest, those sets go.
 */
static void release_named_sets(struct proc *p)
{
	uint32_t h;

	for (h = 0; h < p->nr_history; h++)
		p->history[h]->sampled = false;
	proc_trim_history(p);
}

static struct proc *unlink_exited(struct proc_tracker *pt, size_t *n)
{
	struct proc *gone = NULL, *p;
	uint32_t b;

	for (b = 0; b < NR_BUCKETS; b++) {
		struct proc **pp = &pt->buckets[b];

		while ((p = *pp)) {
			bool forget = p->exited && p->exit_seen;

			p->exit_seen = p->exited;
			if (!forget) {
				release_named_sets(p);
				pp = &p->next;
				continue;
			}
			/* an interval shorter than the unload delay: unloaded now, below */
			clear_unload_due(pt, p);
			*pp = p->next;
			p->next = gone;
			gone = p;
			pt->nr_procs--;
			(*n)++;
		}
	}
	return gone;
}

size_t proc_tracker_forget_exited(struct proc_tracker *pt)
{
	struct proc *gone, *p, *next;
	uint64_t t0;
	size_t n = 0;

	/*
	 * A load under way may take a while (thousands of mappings): the caller
	 * (the agent's interval) must not wait for it.  The exited stay one more
	 * pass.
	 */
	if (pthread_mutex_trylock(&pt->load_lock)) {
		TRACKER_COUNT(pt, forgets_deferred, 1);
		return 0;
	}
	sweep_gone(pt);
	if (pt->opts.ts)
		table_store_expire(pt->opts.ts, mono_ns());
	pthread_mutex_lock(&pt->lock);
	t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	gone = unlink_exited(pt, &n);
	pt->forget_lock_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	pthread_mutex_unlock(&pt->lock);
	/* off the registry: no reader finds them; readers holding their sets keep those */
	for (p = gone; p; p = p->next) {
		if (p->tables_held)
			drop_kernel_state(pt, p);
	}
	if (gone && pt->opts.syms)
		drop_symbols(pt, gone);
	for (p = gone; p; p = next) {
		next = p->next;
		FOR_EACH_RUNTIME(pt, h)
		if (h->forget)
			h->forget(h->ctx, p->pid);
		proc_destroy(p);
	}
	pthread_mutex_unlock(&pt->load_lock);
	return n;
}
