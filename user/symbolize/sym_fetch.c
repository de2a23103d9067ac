// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Fetched symbol tables by build-id; see sym_fetch.h. */
#include "user/symbolize/sym_fetch.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/hash.h"
#include "elf/build_id.h"
#include "elf/debug_file.h"
#include "user/symbolize/elf_symbols.h"

enum { PENDING, READY, FAILED };

#define NR_BUCKETS 1024
#define MINUTE_NS  (60ull * 1000 * 1000 * 1000)

struct sym_fetched {
	struct sym_fetched *next; /* hash chain (f->lock) */
	struct sym_fetch *f;
	uint32_t refs;	/* f->lock: objects using it, and its fetch while it runs */
	int state;	/* atomic: READY publishes tab */
	uint64_t bytes; /* of tab, counted in f->table_bytes */
	uint64_t used_ns;
	struct sym_table tab;
	struct sym_dem_cache dem;
	char build_id[ELF_BUILD_ID_HEX_LEN];
};

struct sym_fetch {
	struct sym_fetch_opts o;
	struct dbgd *dbgd;
	pthread_mutex_t lock;
	struct sym_fetched *buckets[NR_BUCKETS];
	uint32_t nr;
	uint64_t window_ns;
	uint32_t window_asked;
	struct sym_fetch_stats stats; /* lock; table_bytes is the live sum */
};

const char *sym_fetch_refusal_name(enum sym_fetch_refusal r)
{
	static const char *const names[SYM_FETCH_REFUSED_MAX] = {
	    [SYM_FETCH_REFUSED_RATE] = "fetch-rate",
	    [SYM_FETCH_REFUSED_QUEUE] = "fetch-queue",
	    [SYM_FETCH_REFUSED_ENTRIES] = "fetch-entries",
	    [SYM_FETCH_REFUSED_MEMORY] = "fetch-memory",
	    [SYM_FETCH_REFUSED_INVALID] = "fetch-invalid",
	};

	return r < SYM_FETCH_REFUSED_MAX ? names[r] : "unknown";
}

struct sym_fetch *sym_fetch_new(const struct sym_fetch_opts *o)
{
	struct sym_fetch *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->o = o ? *o : (struct sym_fetch_opts){0};
	if (!f->o.max_table_bytes)
		f->o.max_table_bytes = SYM_FETCH_TABLE_BYTES_DEFAULT;
	if (!f->o.per_minute)
		f->o.per_minute = SYM_FETCH_PER_MINUTE_DEFAULT;
	if (!f->o.dbgd.timeout_ns)
		f->o.dbgd.timeout_ns = DBGD_TIMEOUT_DEFAULT;
	pthread_mutex_init(&f->lock, NULL);
	f->dbgd = dbgd_new(&f->o.dbgd);
	if (!f->dbgd) {
		pthread_mutex_destroy(&f->lock);
		free(f);
		return NULL;
	}
	return f;
}

static void entry_free(struct sym_fetched *e)
{
	sym_dem_cache_free(&e->dem);
	sym_table_release(&e->tab);
	free(e);
}

/* f->lock held: unlinks and frees @e (unused). */
static void entry_drop(struct sym_fetch *f, struct sym_fetched *e)
{
	struct sym_fetched **pp = &f->buckets[hash_str(e->build_id) & (NR_BUCKETS - 1)];

	for (; *pp; pp = &(*pp)->next) {
		if (*pp == e) {
			*pp = e->next;
			break;
		}
	}
	f->stats.table_bytes -= e->bytes;
	f->nr--;
	entry_free(e);
}

/* f->lock held: drops the least recently used unused entry holding a table (or any, !tables). */
static bool evict_one(struct sym_fetch *f, bool tables)
{
	struct sym_fetched *victim = NULL, *e;
	size_t i;

	for (i = 0; i < NR_BUCKETS; i++)
		for (e = f->buckets[i]; e; e = e->next)
			if (!e->refs && (!tables || e->bytes) &&
			    (!victim || e->used_ns < victim->used_ns))
				victim = e;
	if (!victim)
		return false;
	entry_drop(f, victim);
	return true;
}

void sym_fetch_free(struct sym_fetch *f)
{
	size_t i;

	if (!f)
		return;
	/* cancels the fetches: their callbacks put their references */
	dbgd_free(f->dbgd);
	for (i = 0; i < NR_BUCKETS; i++) {
		struct sym_fetched *e = f->buckets[i], *next;

		for (; e; e = next) {
			next = e->next;
			entry_free(e);
		}
	}
	pthread_mutex_destroy(&f->lock);
	free(f);
}

static const char *no_symtab(Elf *e, void *ctx)
{
	(void)ctx;
	return elf_has_symtab(e) ? NULL : "has no .symtab";
}

/* A fetch ended, on a worker thread: its table is read and published, or the entry fails. */
static void fetch_done(void *ctx, const char *build_id, enum dbgd_outcome outcome, int fd,
		       const char *path)
{
	struct debug_file_search s = {.unusable = no_symtab};
	struct sym_fetched *e = ctx;
	struct sym_fetch *f = e->f;
	struct debug_file dbg = {.fd = -1};
	struct sym_table t = {0};
	bool built = false, invalid = false, over = false;
	uint64_t bytes = 0;
	int ret;

	(void)outcome; /* counted by dbgd; only the file matters here */
	if (fd >= 0) {
		if (debug_file_take(fd, path, build_id, &s, &dbg) == 0) {
			/* bounded as it is built: no table past the whole bound is ever held */
			ret = elf_symbols_read_symtab(&t, dbg.elf, f->o.max_table_bytes);
			built = ret == 0;
			over = ret == 1;
		} else {
			invalid = true;
		}
		debug_file_close(&dbg);
	}
	bytes = sym_table_bytes(&t);
	pthread_mutex_lock(&f->lock);
	if (invalid)
		f->stats.refused[SYM_FETCH_REFUSED_INVALID]++;
	if (over)
		f->stats.refused[SYM_FETCH_REFUSED_MEMORY]++;
	while (built && f->stats.table_bytes + bytes > f->o.max_table_bytes && evict_one(f, true))
		;
	if (built && f->stats.table_bytes + bytes > f->o.max_table_bytes) {
		f->stats.refused[SYM_FETCH_REFUSED_MEMORY]++;
		built = false;
	}
	if (built) {
		e->tab = t;
		e->bytes = bytes;
		f->stats.table_bytes += bytes;
		f->stats.named++;
		memset(&t, 0, sizeof(t));
	}
	/* lookups read tab once they see READY */
	__atomic_store_n(&e->state, built ? READY : FAILED, __ATOMIC_RELEASE);
	e->refs--;
	pthread_mutex_unlock(&f->lock);
	sym_table_release(&t);
}

/* f->lock held: may one more build-id be asked for now? Counts the refusal when not. */
static bool may_ask(struct sym_fetch *f)
{
	uint64_t now = mono_ns();

	if (now - f->window_ns >= MINUTE_NS) {
		f->window_ns = now;
		f->window_asked = 0;
	}
	if (f->window_asked >= f->o.per_minute) {
		f->stats.refused[SYM_FETCH_REFUSED_RATE]++;
		return false;
	}
	while (f->nr >= SYM_FETCH_ENTRIES_MAX)
		if (!evict_one(f, false)) {
			f->stats.refused[SYM_FETCH_REFUSED_ENTRIES]++;
			return false;
		}
	return true;
}

struct sym_fetched *sym_fetch_want(struct sym_fetch *f, const char *build_id)
{
	size_t h = hash_str(build_id) & (NR_BUCKETS - 1);
	struct sym_fetched *e;
	int err;

	if (!build_id[0] || strlen(build_id) >= ELF_BUILD_ID_HEX_LEN)
		return NULL;
	pthread_mutex_lock(&f->lock);
	for (e = f->buckets[h]; e; e = e->next)
		if (!strcmp(e->build_id, build_id))
			break;
	if (e) {
		e->refs++;
		e->used_ns = mono_ns();
		goto out;
	}
	if (!may_ask(f))
		goto out;
	e = calloc(1, sizeof(*e));
	if (!e)
		goto out;
	e->f = f;
	e->refs = 2; /* the caller's, and its fetch's */
	e->used_ns = mono_ns();
	snprintf(e->build_id, sizeof(e->build_id), "%s", build_id);
	err = dbgd_request(f->dbgd, build_id, fetch_done, e);
	if (err) {
		if (err == -EAGAIN)
			f->stats.refused[SYM_FETCH_REFUSED_QUEUE]++;
		free(e);
		e = NULL;
		goto out;
	}
	f->window_asked++;
	f->stats.requested++;
	e->next = f->buckets[h];
	f->buckets[h] = e;
	f->nr++;
out:
	pthread_mutex_unlock(&f->lock);
	return e;
}

void sym_fetched_put(struct sym_fetched *e)
{
	struct sym_fetch *f;

	if (!e)
		return;
	f = e->f;
	pthread_mutex_lock(&f->lock);
	e->refs--;
	e->used_ns = mono_ns();
	pthread_mutex_unlock(&f->lock);
}

struct sym_table *sym_fetched_table(struct sym_fetched *e, struct sym_dem_cache **dem)
{
	if (!e || __atomic_load_n(&e->state, __ATOMIC_ACQUIRE) != READY)
		return NULL;
	*dem = &e->dem;
	return &e->tab;
}

bool sym_fetch_wait(struct sym_fetch *f, uint64_t deadline_ns)
{
	return dbgd_wait(f->dbgd, deadline_ns);
}

void sym_fetch_settle(struct sym_fetch *f, FILE *out)
{
	uint64_t t0 = mono_ns();
	struct sym_fetch_stats st;
	bool done;
	int i;

	if (!f)
		return;
	/* the fetches run side by side: one timeout covers those under way */
	done = dbgd_wait(f->dbgd, t0 + f->o.dbgd.timeout_ns);
	sym_fetch_get_stats(f, &st);
	if (!out || !st.requested)
		return;
	fprintf(out, "cfiprof: debuginfod: %" PRIu64 " debug files asked, %" PRIu64 " name frames",
		st.requested, st.named);
	for (i = 0; i < DBGD_OUTCOME_MAX; i++)
		if (st.dbgd.outcomes[i])
			fprintf(out, ", %" PRIu64 " %s", st.dbgd.outcomes[i], dbgd_outcome_name(i));
	for (i = 0; i < SYM_FETCH_REFUSED_MAX; i++)
		if (st.refused[i])
			fprintf(out, ", %" PRIu64 " refused (%s)", st.refused[i],
				sym_fetch_refusal_name(i));
	fprintf(out, "; waited %.0f ms at the end%s\n", (double)(mono_ns() - t0) / 1e6,
		done ? "" : ", the rest given up");
}

void sym_fetch_get_stats(struct sym_fetch *f, struct sym_fetch_stats *out)
{
	pthread_mutex_lock(&f->lock);
	*out = f->stats;
	pthread_mutex_unlock(&f->lock);
	dbgd_get_stats(f->dbgd, &out->dbgd);
}
