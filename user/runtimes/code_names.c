// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * A runtime's code objects read from their process, once per (pid,
 * generation, address, scope, owner), limited per second and in bytes kept.  The
 * consumer only queues a code object it has not seen; reader threads read
 * it (the runtime's read), off the lock: memory the process controls may
 * block a read for ever (a FUSE mount's file, a userfaultfd region), and
 * with it no more than the thread reading it.  A read stalled past
 * PN_STALL_NS gets another thread for the others (PN_MAX_READERS at most),
 * and its process no more reads.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/hash.h"
#include "user/runtimes/code_names.h"

#define PN_BUCKETS	 4096
#define PN_MAX_ENTRIES	 65536	     /* code objects remembered, all processes */
#define PN_MAX_BYTES	 (64u << 20) /* their strings and location tables */
#define PN_READS_PER_SEC 4096	     /* code objects read per second */
#define PN_MAX_QUEUED	 1024	     /* code objects waiting for a reader */
#define PN_MAX_READERS	 4	     /* threads reading; each stalled read holds one */
/* a read of a few hundred bytes takes microseconds: one this long is blocked */
#define PN_STALL_NS	(200ull * 1000 * 1000)
#define PN_FREE_WAIT_MS 500 /* code_names_free waits this long for a stalled read */

enum pn_state { PN_READY, PN_QUEUED, PN_READING };

struct pn_entry {
	struct pn_entry *next, *qnext;
	uint32_t pid, gen;
	uint64_t code;
	uint16_t scope; /* struct cfi_interp_frame's: a code object of another module at code */
	uint8_t owner;	/* ... its owner: what kind of object code is, for some runtimes */
	uint8_t state;	/* enum pn_state: only a READY entry names a frame or is freed */
	bool ok;	 /* it was a code object */
	struct code_proc proc; /* what the runtime knew of its process when it was queued */
	void *obj;	 /* the runtime's read of it (NULL: out of memory) */
	size_t bytes;	 /* obj's */
};

struct pn_reader {
	struct code_names *pn;
	pthread_t thread;
	bool busy, stalled, done;
	uint32_t pid;	   /* of the read under way */
	uint64_t since_ns; /* its start */
};

struct code_names {
	struct code_names_ops ops;
	void *ctx;
	pthread_mutex_t lock;
	pthread_cond_t work, progress;
	struct pn_entry *buckets[PN_BUCKETS];
	struct pn_entry *qhead, *qtail;
	uint32_t queued;
	struct pn_reader readers[PN_MAX_READERS];
	uint32_t nr_readers;
	bool stopping;
	bool orphaned; /* code_names_free returned: the last stalled reader frees pn */
	uint64_t nr, bytes;
	uint64_t window_start_ns;
	uint32_t window_reads;
	struct code_names_stats stats;
};

int code_name_set(struct code_name *n, const char *name, const char *file)
{
	size_t nl = strlen(name) + 1, fl = strlen(file) + 1;

	n->name = malloc(nl + fl);
	if (!n->name)
		return -1;
	memcpy(n->name, name, nl);
	n->file = n->name + nl;
	memcpy(n->file, file, fl);
	n->bytes = nl + fl;
	n->ok = true;
	return 0;
}

static bool name_read(const struct code_names_ops *ops, const struct code_proc *proc, uint32_t pid,
		      uint64_t code, uint8_t owner, void **obj, size_t *bytes)
{
	struct code_name *n = calloc(1, sizeof(*n));

	*obj = n;
	if (!n)
		return false;
	ops->read_name(proc, pid, code, owner, n);
	*bytes = sizeof(*n) + n->bytes;
	return n->ok;
}

static void *name_copy(const void *obj)
{
	const struct code_name *from = obj;
	struct code_name *n = malloc(sizeof(*n));

	if (!n)
		return NULL;
	*n = *from;
	if (!from->name)
		return n;
	n->name = malloc(from->bytes);
	if (!n->name) {
		free(n);
		return NULL;
	}
	memcpy(n->name, from->name, from->bytes);
	n->file = n->name + (from->file - from->name);
	return n;
}

static void name_free(void *obj)
{
	struct code_name *n = obj;

	free(n->name);
	free(n);
}

struct code_names *code_names_new(const struct code_names_ops *ops, void *ctx)
{
	struct code_names *pn = calloc(1, sizeof(*pn));
	pthread_condattr_t ca;

	if (!pn)
		return NULL;
	pn->ops = *ops;
	if (ops->read_name) {
		pn->ops.copy = name_copy;
		pn->ops.free = name_free;
	}
	pn->ctx = ctx;
	pthread_mutex_init(&pn->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&pn->work, &ca);
	pthread_cond_init(&pn->progress, &ca);
	pthread_condattr_destroy(&ca);
	return pn;
}

static void entry_free(const struct code_names *pn, struct pn_entry *e)
{
	if (e->obj)
		pn->ops.free(e->obj);
	free(e);
}

/* The stalled reads past PN_STALL_NS marked and counted, once each; lock held. */
static void mark_stalled(struct code_names *pn, uint64_t now)
{
	for (uint32_t i = 0; i < pn->nr_readers; i++) {
		struct pn_reader *r = &pn->readers[i];

		if (r->busy && !r->stalled && now - r->since_ns > PN_STALL_NS) {
			r->stalled = true;
			pn->stats.stalled++;
		}
	}
}

/* Whether a read of pid's memory is stalled: its process gets no more.  lock held. */
static bool pid_stalled(const struct code_names *pn, uint32_t pid)
{
	for (uint32_t i = 0; i < pn->nr_readers; i++)
		if (pn->readers[i].busy && pn->readers[i].stalled && pn->readers[i].pid == pid)
			return true;
	return false;
}

static struct pn_entry *dequeue(struct code_names *pn)
{
	struct pn_entry *e = pn->qhead;

	pn->qhead = e->qnext;
	if (!pn->qhead)
		pn->qtail = NULL;
	pn->queued--;
	e->qnext = NULL;
	return e;
}

/* Every entry, and pn; no reader runs any more. */
static void names_destroy(struct code_names *pn)
{
	struct pn_entry *e, *n;

	for (uint32_t b = 0; b < PN_BUCKETS; b++)
		for (e = pn->buckets[b]; e; e = n) {
			n = e->next;
			entry_free(pn, e);
		}
	pthread_cond_destroy(&pn->work);
	pthread_cond_destroy(&pn->progress);
	pthread_mutex_destroy(&pn->lock);
	free(pn);
}

static void *reader_main(void *arg)
{
	struct pn_reader *r = arg;
	struct code_names *pn = r->pn;
	struct pn_entry *e;
	size_t bytes;
	void *obj;
	bool last, ok;

	pthread_mutex_lock(&pn->lock);
	for (;;) {
		while (!pn->qhead && !pn->stopping)
			pthread_cond_wait(&pn->work, &pn->lock);
		if (pn->stopping)
			break;
		e = dequeue(pn);
		e->state = PN_READING;
		r->busy = true;
		r->pid = e->pid;
		r->since_ns = mono_ns();
		pthread_mutex_unlock(&pn->lock);
		/* the entry stays: nothing frees one that is not READY */
		bytes = 0;
		ok =
		    pn->ops.read_name
			? name_read(&pn->ops, &e->proc, e->pid, e->code, e->owner, &obj, &bytes)
			: pn->ops.read(&e->proc, e->pid, e->code, e->owner, e->scope, &obj, &bytes);
		pthread_mutex_lock(&pn->lock);
		r->busy = r->stalled = false;
		e->obj = obj;
		e->ok = ok && obj;
		e->bytes = obj ? bytes : 0;
		e->state = PN_READY;
		pn->bytes += e->bytes;
		pn->stats.read++;
		if (!e->ok)
			pn->stats.unreadable++;
		pthread_cond_broadcast(&pn->progress);
	}
	r->done = true;
	pthread_cond_broadcast(&pn->progress);
	last = pn->orphaned;
	for (uint32_t i = 0; i < pn->nr_readers; i++)
		last &= pn->readers[i].done;
	pthread_mutex_unlock(&pn->lock);
	/* code_names_free left pn to the stalled readers: the last one out frees it */
	if (last)
		names_destroy(pn);
	return NULL;
}

/*
 * Another reader when every one is busy and the longest-running has
 * stalled (or none runs yet); lock held.  Signals are left to the threads
 * that handle them.
 */
static void readers_grow(struct code_names *pn)
{
	struct pn_reader *r;
	sigset_t all, old;
	uint32_t i;

	for (i = 0; i < pn->nr_readers; i++)
		if (!pn->readers[i].busy || !pn->readers[i].stalled)
			return;
	if (pn->nr_readers == PN_MAX_READERS)
		return;
	r = &pn->readers[pn->nr_readers];
	memset(r, 0, sizeof(*r));
	r->pn = pn;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (!pthread_create(&r->thread, NULL, reader_main, r)) {
		pthread_setname_np(r->thread, "cfiprof-jitread");
		pn->nr_readers++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * Every reader stopped (joined), or, past a bound, the stalled ones left
 * behind (detached, pn theirs to free: orphaned); true if all stopped.
 */
static bool readers_stop(struct code_names *pn)
{
	pthread_t threads[PN_MAX_READERS];
	bool done[PN_MAX_READERS], all = true;
	struct timespec until;
	uint32_t i, n;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += PN_FREE_WAIT_MS * 1000000L;
	until.tv_sec += until.tv_nsec / 1000000000L;
	until.tv_nsec %= 1000000000L;
	pthread_mutex_lock(&pn->lock);
	pn->stopping = true;
	pthread_cond_broadcast(&pn->work);
	for (i = 0; i < pn->nr_readers; i++)
		while (!pn->readers[i].done &&
		       pthread_cond_timedwait(&pn->progress, &pn->lock, &until) != ETIMEDOUT)
			;
	/* once unlocked, a reader left behind may free pn: only copies from here */
	n = pn->nr_readers;
	for (i = 0; i < n; i++) {
		threads[i] = pn->readers[i].thread;
		done[i] = pn->readers[i].done;
		all &= done[i];
	}
	pn->orphaned = !all;
	pthread_mutex_unlock(&pn->lock);
	for (i = 0; i < n; i++) {
		if (done[i])
			pthread_join(threads[i], NULL);
		else
			pthread_detach(threads[i]);
	}
	return all;
}

void code_names_free(struct code_names *pn)
{
	if (!pn)
		return;
	/*
	 * A read blocked for ever would block this too: pn is left to the
	 * stalled reader, which frees it if its read ever ends (the process's
	 * exit ends it otherwise), so a stop takes PN_FREE_WAIT_MS at most.
	 */
	if (readers_stop(pn))
		names_destroy(pn);
}

bool code_names_wait(struct code_names *pn, double timeout)
{
	uint64_t deadline = mono_ns() + (uint64_t)(timeout * 1e9), now;
	struct timespec until;
	bool pending = true, can_read;

	if (!pn)
		return true;
	pthread_mutex_lock(&pn->lock);
	while ((now = mono_ns()) < deadline) {
		mark_stalled(pn, now);
		/* a stalled read does not end: not waited for, nor what only it could take */
		can_read = pn->nr_readers < PN_MAX_READERS;
		pending = false;
		for (uint32_t i = 0; i < pn->nr_readers; i++) {
			pending |= pn->readers[i].busy && !pn->readers[i].stalled;
			can_read |= !pn->readers[i].stalled;
		}
		pending |= pn->qhead && can_read && !pn->stopping;
		if (!pending)
			break;
		readers_grow(pn);
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += 20 * 1000000L; /* to see a read stall */
		until.tv_sec += until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		pthread_cond_timedwait(&pn->progress, &pn->lock, &until);
	}
	pthread_mutex_unlock(&pn->lock);
	return !pending;
}

static uint32_t bucket_of(uint32_t pid, uint32_t gen, uint64_t code)
{
	uint64_t k[2] = {(uint64_t)pid << 32 | gen, code};

	return (uint32_t)(hash_bytes(HASH_FNV_OFFSET, k, sizeof(k)) % PN_BUCKETS);
}

/* The entry of frame f's code object in (pid, gen). */
static struct pn_entry *find(struct code_names *pn, uint32_t pid, uint32_t gen,
			     const struct cfi_interp_frame *f)
{
	struct pn_entry *e = pn->buckets[bucket_of(pid, gen, f->code)];

	while (e && (e->pid != pid || e->gen != gen || e->code != f->code || e->scope != f->scope ||
		     e->owner != f->owner))
		e = e->next;
	return e;
}

/* May another code object be read now?  lock held. */
static bool read_allowed(struct code_names *pn)
{
	uint64_t now = mono_ns();

	if (pn->nr >= PN_MAX_ENTRIES || pn->bytes >= PN_MAX_BYTES)
		return false;
	if (now - pn->window_start_ns >= 1000000000ull) {
		pn->window_start_ns = now;
		pn->window_reads = 0;
	}
	return pn->window_reads++ < PN_READS_PER_SEC;
}

/* A copy of e under generation gen; NULL when out of memory. */
static struct pn_entry *entry_copy(const struct code_names *pn, const struct pn_entry *e,
				   uint32_t gen)
{
	struct pn_entry *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	*c = *e;
	c->gen = gen;
	c->qnext = NULL;
	if (!e->obj)
		return c;
	c->obj = pn->ops.copy(e->obj);
	if (!c->obj) {
		free(c);
		return NULL;
	}
	return c;
}

/* A new entry for frame f of r, queued for a reader; NULL when out of memory.  lock held. */
static struct pn_entry *entry_queue(struct code_names *pn, const struct cfi_sample_record *r,
				    const struct cfi_interp_frame *f, const struct code_proc *proc)
{
	struct pn_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->pid = r->pid;
	e->gen = r->generation;
	e->code = f->code;
	e->scope = f->scope;
	e->owner = f->owner;
	e->proc = *proc;
	e->state = PN_QUEUED;
	if (pn->qtail)
		pn->qtail->qnext = e;
	else
		pn->qhead = e;
	pn->qtail = e;
	pn->queued++;
	return e;
}

/*
 * The code objects of r's frames kept under r's generation: from
 * taken_gen's entries, or queued for a reader.  Never reads memory itself:
 * the consumer calls this.
 */
static void note(struct code_names *pn, const struct cfi_sample_record *r, size_t size,
		 bool carry, uint32_t taken_gen)
{
	const struct cfi_interp_frame *f;
	struct pn_entry *e, *from;
	struct code_proc proc = {0};
	bool queued = false;
	uint32_t i, b, nr;

	if (!pn || r->runtime != pn->ops.runtime || !r->nr_rt ||
	    r->nr_rt > runtime_max_frames(r->runtime) || r->nr_kernel > MAX_KERNEL_FRAMES ||
	    r->nr_user > MAX_USER_FRAMES_LIMIT ||
	    size < sizeof(*r) + ((size_t)r->nr_kernel + r->nr_user) * sizeof(__u64) +
		       (size_t)r->nr_rt * sizeof(*f))
		return;
	if (pn->ops.proc_of)
		pn->ops.proc_of(pn->ctx, r->pid, &proc);
	f = interp_frames_of(r, &nr);
	pthread_mutex_lock(&pn->lock);
	mark_stalled(pn, mono_ns());
	for (i = 0; i < r->nr_rt; i++) {
		if (!f[i].code || find(pn, r->pid, r->generation, &f[i]))
			continue;
		from = carry ? find(pn, r->pid, taken_gen, &f[i]) : NULL;
		if (from && from->state != PN_READY)
			from = NULL; /* still being read: read again for this generation */
		if (from && (pn->nr >= PN_MAX_ENTRIES || pn->bytes >= PN_MAX_BYTES)) {
			pn->stats.refused++;
			continue;
		} else if (from) {
			e = entry_copy(pn, from, r->generation);
			if (!e)
				break;
			pn->bytes += e->bytes;
		} else {
			/* a process whose memory blocked a read: its others would block too */
			if (pid_stalled(pn, r->pid) || pn->queued >= PN_MAX_QUEUED ||
			    !read_allowed(pn)) {
				pn->stats.refused++;
				continue; /* named "[NAME]"; a later sample may read it */
			}
			e = entry_queue(pn, r, &f[i], &proc);
			if (!e)
				break;
			queued = true;
		}
		b = bucket_of(e->pid, e->gen, e->code);
		e->next = pn->buckets[b];
		pn->buckets[b] = e;
		pn->nr++;
	}
	if (queued) {
		readers_grow(pn);
		pthread_cond_signal(&pn->work);
	}
	pthread_mutex_unlock(&pn->lock);
}

void code_names_note(struct code_names *pn, const struct cfi_sample_record *r, size_t size)
{
	note(pn, r, size, false, 0);
}

void code_names_carry(struct code_names *pn, const struct cfi_sample_record *r, size_t size,
			uint32_t taken_gen)
{
	note(pn, r, size, true, taken_gen);
}

void code_names_sweep(struct code_names *pn)
{
	struct pn_entry **pp, *e;
	uint32_t b;

	if (!pn)
		return;
	pthread_mutex_lock(&pn->lock);
	for (b = 0; b < PN_BUCKETS; b++) {
		for (pp = &pn->buckets[b]; (e = *pp);) {
			/* one queued or being read is the readers' until they are done */
			if (e->state == PN_READY && kill((pid_t)e->pid, 0) && errno == ESRCH) {
				*pp = e->next;
				pn->nr--;
				pn->bytes -= e->bytes;
				entry_free(pn, e);
			} else {
				pp = &e->next;
			}
		}
	}
	pthread_mutex_unlock(&pn->lock);
}

void code_names_stats(struct code_names *pn, struct code_names_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!pn)
		return;
	pthread_mutex_lock(&pn->lock);
	*out = pn->stats;
	pthread_mutex_unlock(&pn->lock);
}

const void *code_names_find(struct code_names *pn, uint32_t pid, uint32_t gen,
			    const struct cfi_interp_frame *f, const struct code_proc **proc,
			    bool *ok)
{
	const struct pn_entry *e;

	pthread_mutex_lock(&pn->lock);
	e = find(pn, pid, gen, f);
	if (e && e->state != PN_READY)
		e = NULL; /* not read yet: as if not read */
	pthread_mutex_unlock(&pn->lock);
	/* a READY entry is freed only by code_names_sweep, after the profile is written */
	*proc = e ? &e->proc : NULL;
	*ok = e && e->ok;
	return e ? e->obj : NULL;
}

const void *code_names_show_begin(struct code_names *names, uint32_t pid, uint32_t gen,
				  const struct cfi_interp_frame *f, const char *unnamed,
				  struct interp_frame_shown *out, bool *ok)
{
	const struct code_proc *proc;

	*ok = false;
	*out =
	    (struct interp_frame_shown){.role = f->is_entry ? INTERP_FRAME_LAST : INTERP_FRAME_SHOW,
					.name = unnamed,
					.file = ""};
	return names && f->code ? code_names_find(names, pid, gen, f, &proc, ok) : NULL;
}
