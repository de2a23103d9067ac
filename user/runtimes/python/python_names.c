// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Python code objects read from their process, once per (pid, generation,
 * address), limited per second and in bytes kept.  The consumer only queues
 * a code object it has not seen; reader threads read it (python_code.c), off
 * the lock: memory the process controls may block a read for ever (a FUSE
 * mount's file, a userfaultfd region), and with it no more than the thread
 * reading it.  A read stalled past PN_STALL_NS gets another thread for the
 * others (PN_MAX_READERS at most), and its process no more reads.
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
#include "user/runtimes/python/python_code.h"
#include "user/runtimes/python/python_names.h"
#include "user/runtimes/python/python_offsets.h"

#define PN_BUCKETS	 4096
#define PN_MAX_ENTRIES	 65536	     /* code objects remembered, all processes */
#define PN_MAX_BYTES	 (64u << 20) /* their strings and location tables */
#define PN_READS_PER_SEC 4096	     /* code objects read per second */
#define PN_MAX_QUEUED	 1024	     /* code objects waiting for a reader */
#define PN_MAX_READERS	 4	     /* threads reading; each stalled read holds one */
/* a read of a few hundred bytes takes microseconds: one this long is blocked */
#define PN_STALL_NS	(200ull * 1000 * 1000)
#define PN_FREE_WAIT_MS 500 /* python_names_free waits this long for a stalled read */

enum pn_state { PN_READY, PN_QUEUED, PN_READING };

struct pn_entry {
	struct pn_entry *next, *qnext;
	uint32_t pid, gen;
	uint64_t code;
	uint16_t scope; /* struct cfi_interp_frame's: a code object of another module at code */
	uint8_t state;	/* enum pn_state: only a READY entry names a frame or is freed */
	const struct python_offsets *off;
	struct python_code c;
};

struct pn_reader {
	struct python_names *pn;
	pthread_t thread;
	bool busy, stalled, done;
	uint32_t pid;	   /* of the read under way */
	uint64_t since_ns; /* its start */
};

struct python_names {
	python_offsets_of offsets_of;
	void *offsets_ctx;
	pthread_mutex_t lock;
	pthread_cond_t work, progress;
	struct pn_entry *buckets[PN_BUCKETS];
	struct pn_entry *qhead, *qtail;
	uint32_t queued;
	struct pn_reader readers[PN_MAX_READERS];
	uint32_t nr_readers;
	bool stopping;
	bool orphaned; /* python_names_free returned: the last stalled reader frees pn */
	uint64_t nr, bytes;
	uint64_t window_start_ns;
	uint32_t window_reads;
	struct python_names_stats stats;
};

struct python_names *python_names_new(python_offsets_of offsets_of, void *ctx)
{
	struct python_names *pn = calloc(1, sizeof(*pn));
	pthread_condattr_t ca;

	if (!pn)
		return NULL;
	pn->offsets_of = offsets_of;
	pn->offsets_ctx = ctx;
	pthread_mutex_init(&pn->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&pn->work, &ca);
	pthread_cond_init(&pn->progress, &ca);
	pthread_condattr_destroy(&ca);
	return pn;
}

static void entry_free(struct pn_entry *e)
{
	free(e->c.name);
	free(e);
}

/* The stalled reads past PN_STALL_NS marked and counted, once each; lock held. */
static void mark_stalled(struct python_names *pn, uint64_t now)
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
static bool pid_stalled(const struct python_names *pn, uint32_t pid)
{
	for (uint32_t i = 0; i < pn->nr_readers; i++)
		if (pn->readers[i].busy && pn->readers[i].stalled && pn->readers[i].pid == pid)
			return true;
	return false;
}

static struct pn_entry *dequeue(struct python_names *pn)
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
static void names_destroy(struct python_names *pn)
{
	struct pn_entry *e, *n;

	for (uint32_t b = 0; b < PN_BUCKETS; b++)
		for (e = pn->buckets[b]; e; e = n) {
			n = e->next;
			entry_free(e);
		}
	pthread_cond_destroy(&pn->work);
	pthread_cond_destroy(&pn->progress);
	pthread_mutex_destroy(&pn->lock);
	free(pn);
}

static void *reader_main(void *arg)
{
	struct pn_reader *r = arg;
	struct python_names *pn = r->pn;
	struct python_code c;
	struct pn_entry *e;
	bool last;

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
		python_code_read(e->pid, e->off, e->code, &c);
		pthread_mutex_lock(&pn->lock);
		r->busy = r->stalled = false;
		e->c = c;
		e->state = PN_READY;
		pn->bytes += c.bytes;
		pn->stats.read++;
		if (!c.ok)
			pn->stats.unreadable++;
		pthread_cond_broadcast(&pn->progress);
	}
	r->done = true;
	pthread_cond_broadcast(&pn->progress);
	last = pn->orphaned;
	for (uint32_t i = 0; i < pn->nr_readers; i++)
		last &= pn->readers[i].done;
	pthread_mutex_unlock(&pn->lock);
	/* python_names_free left pn to the stalled readers: the last one out frees it */
	if (last)
		names_destroy(pn);
	return NULL;
}

/*
 * Another reader when every one is busy and the longest-running has
 * stalled (or none runs yet); lock held.  Signals are left to the threads
 * that handle them.
 */
static void readers_grow(struct python_names *pn)
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
	if (!pthread_create(&r->thread, NULL, reader_main, r))
		pn->nr_readers++;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/*
 * Every reader stopped (joined), or, past a bound, the stalled ones left
 * behind (detached, pn theirs to free: orphaned); true if all stopped.
 */
static bool readers_stop(struct python_names *pn)
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

void python_names_free(struct python_names *pn)
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

bool python_names_wait(struct python_names *pn, double timeout)
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
static struct pn_entry *find(struct python_names *pn, uint32_t pid, uint32_t gen,
			     const struct cfi_interp_frame *f)
{
	struct pn_entry *e = pn->buckets[bucket_of(pid, gen, f->code)];

	while (e && (e->pid != pid || e->gen != gen || e->code != f->code || e->scope != f->scope))
		e = e->next;
	return e;
}

/* May another code object be read now?  lock held. */
static bool read_allowed(struct python_names *pn)
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
static struct pn_entry *entry_copy(const struct pn_entry *e, uint32_t gen)
{
	struct pn_entry *c = malloc(sizeof(*c));

	if (!c)
		return NULL;
	*c = *e;
	c->gen = gen;
	c->qnext = NULL;
	if (!e->c.name)
		return c;
	c->c.name = malloc(e->c.bytes);
	if (!c->c.name) {
		free(c);
		return NULL;
	}
	memcpy(c->c.name, e->c.name, e->c.bytes);
	c->c.file = c->c.name + (e->c.file - e->c.name);
	c->c.linetable = (uint8_t *)c->c.name + ((char *)e->c.linetable - e->c.name);
	return c;
}

/* A new entry for frame f of r, queued for a reader; NULL when out of memory.  lock held. */
static struct pn_entry *entry_queue(struct python_names *pn, const struct cfi_sample_record *r,
				    const struct cfi_interp_frame *f,
				    const struct python_offsets *off)
{
	struct pn_entry *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	e->pid = r->pid;
	e->gen = r->generation;
	e->code = f->code;
	e->scope = f->scope;
	e->off = off;
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
static void note(struct python_names *pn, const struct cfi_sample_record *r, size_t size,
		 bool carry, uint32_t taken_gen)
{
	const struct cfi_interp_frame *f;
	const struct python_offsets *off;
	struct pn_entry *e, *from;
	bool queued = false;
	uint32_t i, b;

	if (!pn || r->runtime != RT_PYTHON || !r->nr_rt || r->nr_rt > PY_MAX_FRAMES ||
	    r->nr_kernel > MAX_KERNEL_FRAMES || r->nr_user > MAX_USER_FRAMES_LIMIT ||
	    size < sizeof(*r) + ((size_t)r->nr_kernel + r->nr_user) * sizeof(__u64) +
		       (size_t)r->nr_rt * sizeof(*f))
		return;
	off = pn->offsets_of ? pn->offsets_of(pn->offsets_ctx, r->pid) : NULL;
	f = python_frames_of(r);
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
			e = entry_copy(from, r->generation);
			if (!e)
				break;
			pn->bytes += e->c.bytes;
		} else {
			/* a process whose memory blocked a read: its others would block too */
			if (pid_stalled(pn, r->pid) || pn->queued >= PN_MAX_QUEUED ||
			    !read_allowed(pn)) {
				pn->stats.refused++;
				continue; /* named "[python]"; a later sample may read it */
			}
			e = entry_queue(pn, r, &f[i], off);
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

void python_names_note(struct python_names *pn, const struct cfi_sample_record *r, size_t size)
{
	note(pn, r, size, false, 0);
}

void python_names_carry(struct python_names *pn, const struct cfi_sample_record *r, size_t size,
			uint32_t taken_gen)
{
	note(pn, r, size, true, taken_gen);
}

void python_names_sweep(struct python_names *pn)
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
				pn->bytes -= e->c.bytes;
				entry_free(e);
			} else {
				pp = &e->next;
			}
		}
	}
	pthread_mutex_unlock(&pn->lock);
}

void python_names_stats(struct python_names *pn, struct python_names_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!pn)
		return;
	pthread_mutex_lock(&pn->lock);
	*out = pn->stats;
	pthread_mutex_unlock(&pn->lock);
}

/* The code unit the frame runs, or -1 (before its first instruction, or no offsets). */
static int64_t code_unit(const struct pn_entry *e, const struct cfi_interp_frame *f)
{
	const struct python_offsets *o = e->off;

	if (!o || f->instr == 0xffffffff || (int32_t)f->instr < 0)
		return -1;
	switch (o->code_kind) {
	case PY_CODE_LINETABLE_310: /* f_lasti in code units */
		return f->instr;
	case PY_CODE_LNOTAB: /* f_lasti in bytes */
		return f->instr / 2;
	default: /* the instruction pointer less the code object */
		if (f->instr < o->code_bytecode)
			return -1;
		return (f->instr - o->code_bytecode) / 2;
	}
}

/*
 * The code object was read after the sample was taken: one freed since (a
 * module's body after its import) may hold another one now.  Its frame's
 * instruction must at least lie inside its bytecode.
 */
static bool frame_fits(const struct pn_entry *e, const struct cfi_interp_frame *f)
{
	int64_t unit = code_unit(e, f);

	return e->c.ok && (unit < 0 || (uint64_t)unit < e->c.nr_units);
}

unsigned int python_frame_role(struct python_names *pn, uint32_t pid, uint32_t gen,
			       const struct cfi_interp_frame *f)
{
	const struct python_offsets *o;
	const struct pn_entry *e;
	unsigned int role = INTERP_FRAME_SHOW;
	int64_t unit;

	pthread_mutex_lock(&pn->lock);
	e = find(pn, pid, gen, f);
	if (e && e->state != PN_READY)
		e = NULL; /* not read yet: as if not read */
	o = e ? e->off : NULL;
	if (o && o->entry == PY_ENTRY_SHIM_FRAME && f->owner == o->owner_cstack) {
		role = INTERP_FRAME_SKIP | INTERP_FRAME_LAST;
	} else if (o) {
		if ((o->entry == PY_ENTRY_IS_ENTRY && f->is_entry) ||
		    o->entry == PY_ENTRY_EVERY_FRAME)
			role |= INTERP_FRAME_LAST;
		/* _PyFrame_IsIncomplete: set up, but its first instruction not reached yet */
		unit = e->c.ok ? code_unit(e, f) : 0;
		if (f->owner != o->owner_generator && unit < (int64_t)e->c.firsttraceable)
			role |= INTERP_FRAME_SKIP;
	} else if (f->is_entry) {
		/* not read: 3.11's flag is the best guess there is */
		role |= INTERP_FRAME_LAST;
	}
	pthread_mutex_unlock(&pn->lock);
	return role;
}

bool python_frame_name(struct python_names *pn, uint32_t pid, uint32_t gen,
		       const struct cfi_interp_frame *f, const char **name, const char **file,
		       uint32_t *line)
{
	const struct pn_entry *e;
	int64_t unit;

	*name = "[python]";
	*file = "";
	*line = 0;
	pthread_mutex_lock(&pn->lock);
	e = find(pn, pid, gen, f);
	if (e && (e->state != PN_READY || !frame_fits(e, f)))
		e = NULL;
	if (e) {
		*name = e->c.name;
		*file = e->c.file;
		unit = code_unit(e, f);
		*line = unit < 0 ? (uint32_t)e->c.firstlineno
				 : python_code_line(e->off->code_kind, e->c.linetable,
						    e->c.linetable_len, e->c.firstlineno,
						    (uint32_t)unit);
	}
	pthread_mutex_unlock(&pn->lock);
	/* entries are freed only by python_names_sweep, after the profile is written */
	return e != NULL;
}

void python_frame_show(struct python_names *pn, uint32_t pid, uint32_t gen,
		       const struct cfi_interp_frame *f, struct interp_frame_shown *out)
{
	if (!pn) {
		*out = (struct interp_frame_shown){.role = f->is_entry ? INTERP_FRAME_LAST
								       : INTERP_FRAME_SHOW,
						   .name = "[python]",
						   .file = ""};
		return;
	}
	out->role = python_frame_role(pn, pid, gen, f);
	python_frame_name(pn, pid, gen, f, &out->name, &out->file, &out->line);
}

bool python_is_eval_frame(const char *native_name)
{
	static const char eval[] = "_PyEval_EvalFrameDefault";

	/* LTO may split it: _PyEval_EvalFrameDefault.cold */
	return !strncmp(native_name, eval, sizeof(eval) - 1) &&
	       (!native_name[sizeof(eval) - 1] || native_name[sizeof(eval) - 1] == '.');
}

static void python_namer_show(void *ctx, uint32_t pid, uint32_t gen,
			      const struct cfi_interp_frame *f, struct interp_frame_shown *out)
{
	python_frame_show(ctx, pid, gen, f, out);
}

void python_names_namer(struct python_names *pn, struct interp_namer *out)
{
	*out = (struct interp_namer){
	    .ctx = pn, .show = python_namer_show, .is_eval_frame = python_is_eval_frame};
}
