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
		pt->stats.exits_swept++;
	}
	free(live);
}

/* Whether a process kept after this pass maps key (now, or in a generation kept for names). */
static bool key_still_mapped(struct proc_tracker *pt, const char *key)
{
	uint32_t b, m;
	struct proc *p;

	for (b = 0; b < NR_BUCKETS; b++) {
		for (p = pt->buckets[b]; p; p = p->next) {
			uint32_t h;

			if (p->forget)
				continue;
			for (m = 0; m < p->nr_maps; m++) {
				if (!strcmp(p->maps[m].key, key))
					return true;
			}
			for (h = 0; h < p->nr_history; h++) {
				for (m = 0; m < p->history[h].nr_maps; m++) {
					if (!strcmp(p->history[h].maps[m].key, key))
						return true;
				}
			}
		}
	}
	return false;
}

static void drop_symbols(struct proc_tracker *pt, const struct proc_mapping *maps, uint32_t n)
{
	uint32_t m;

	for (m = 0; m < n; m++) {
		if (maps[m].sym && maps[m].key[0] && !key_still_mapped(pt, maps[m].key))
			sym_cache_remove(pt->syms, maps[m].key);
	}
}

size_t proc_tracker_forget_exited(struct proc_tracker *pt)
{
	size_t n = 0;
	uint32_t b, m;
	struct proc *p;
	uint64_t t0;

	pthread_mutex_lock(&pt->load_lock);
	sweep_gone(pt);
	if (pt->ts)
		table_store_expire(pt->ts, mono_ns());
	pthread_mutex_lock(&pt->lock);
	t0 = mono_ns();
	/*
	 * Which processes go is decided first: symbols are shared by key, and one
	 * kept process that maps a key (an exited one kept for naming included)
	 * keeps its symbols alive.
	 */
	for (b = 0; b < NR_BUCKETS; b++) {
		for (p = pt->buckets[b]; p; p = p->next) {
			p->forget = p->exited && p->exit_seen;
			p->exit_seen = p->exited;
			/* an interval shorter than the unload delay: unload it now */
			if (p->forget && clear_unload_due(pt, p))
				drop_kernel_state(pt, p);
		}
	}
	for (b = 0; b < NR_BUCKETS; b++) {
		struct proc **pp = &pt->buckets[b];

		while (*pp) {
			p = *pp;
			if (!p->forget) {
				pp = &p->next;
				continue;
			}
			drop_symbols(pt, p->maps, p->nr_maps);
			for (m = 0; m < p->nr_history; m++)
				drop_symbols(pt, p->history[m].maps, p->history[m].nr_maps);
			*pp = p->next;
			proc_destroy(p);
			pt->nr_procs--;
			n++;
		}
	}
	pt->forget_lock_ns = mono_ns() - t0;
	pthread_mutex_unlock(&pt->lock);
	pthread_mutex_unlock(&pt->load_lock);
	return n;
}
