// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* JIT symbols from perf-PID.map files ("START SIZE name", hex). */
#include "common/clock.h"
#include "elf/safe_open.h"
#include "user/symbolize/perfmap.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/symbolize/sym_table.h"

/* A JIT's map is text, a line per function: beyond this it is refused, not parsed. */
#define PERFMAP_MAX_BYTES (64ull << 20)
/* A process that keeps appending is re-read at most this often on misses. */
#define PERFMAP_REREAD_NS (1000ull * 1000 * 1000)

static uint64_t refused_total, lines_refused_total;

struct perfmap {
	char *path;
	struct perfmap_owner owner; /* pid 0: path is the reader's own (report, tests) */
	uint64_t next_read; /* mono ns: no re-read before */
	struct sym_table tab;
	size_t malformed;
	/* Identity of the file last read; a change triggers a reload. */
	bool seen;
	off_t size;
	struct timespec mtime;
	ino_t ino;
	dev_t dev;
	struct perfmap *next; /* in the pool of maps kept between uses */
};

/*
 * Every map's table, in use or pooled, counts in held; a load reserves its
 * room there first.  Maps of processes, once freed, wait in the pool (newest
 * first) to be taken again unchanged: the agent's namer lives for one
 * interval, and reading a big map every interval cost more than the interval.
 */
static struct {
	pthread_mutex_t lock;
	uint64_t held;
	struct perfmap *pool;
	unsigned int pooled;
} maps = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void map_destroy(struct perfmap *pm)
{
	sym_table_release(&pm->tab);
	free(pm->path);
	free(pm);
}

/* maps.lock held: frees the oldest pooled map. false when the pool is empty. */
static bool pool_drop_oldest(void)
{
	struct perfmap **pp = &maps.pool;

	if (!*pp)
		return false;
	while ((*pp)->next)
		pp = &(*pp)->next;
	maps.held -= sym_table_bytes(&(*pp)->tab);
	map_destroy(*pp);
	*pp = NULL;
	maps.pooled--;
	return true;
}

/* The pooled map of @path for @o, taken out of the pool; or NULL. */
static struct perfmap *pool_take(const char *path, const struct perfmap_owner *o)
{
	struct perfmap **pp, *pm = NULL;

	pthread_mutex_lock(&maps.lock);
	for (pp = &maps.pool; *pp; pp = &(*pp)->next) {
		if ((*pp)->owner.pid == o->pid && (*pp)->owner.uid == o->uid &&
		    (*pp)->owner.same_tmp == o->same_tmp && !strcmp((*pp)->path, path)) {
			pm = *pp;
			*pp = pm->next;
			pm->next = NULL;
			maps.pooled--;
			break;
		}
	}
	pthread_mutex_unlock(&maps.lock);
	return pm;
}

/*
 * Reserves the room a load of @pm may fill: its bound, within what the other
 * maps leave (its own table goes when the new one is in).  Pooled maps go
 * first to make that room.
 */
static uint64_t room_reserve(const struct perfmap *pm)
{
	uint64_t own = sym_table_bytes(&pm->tab), left;

	pthread_mutex_lock(&maps.lock);
	while (maps.held - own + PERFMAP_MAX_TABLE_BYTES > PERFMAP_TOTAL_BYTES &&
	       pool_drop_oldest())
		;
	left = maps.held - own < PERFMAP_TOTAL_BYTES ? PERFMAP_TOTAL_BYTES - (maps.held - own) : 0;
	if (left > PERFMAP_MAX_TABLE_BYTES)
		left = PERFMAP_MAX_TABLE_BYTES;
	maps.held += left;
	pthread_mutex_unlock(&maps.lock);
	return left;
}

/* Gives back the reservation; @add and @sub are tables coming in and going. */
static void room_settle(uint64_t reserved, uint64_t add, uint64_t sub)
{
	pthread_mutex_lock(&maps.lock);
	maps.held = maps.held - reserved - sub + add;
	pthread_mutex_unlock(&maps.lock);
}

uint64_t perfmap_held_bytes(void)
{
	uint64_t n;

	pthread_mutex_lock(&maps.lock);
	n = maps.held;
	pthread_mutex_unlock(&maps.lock);
	return n;
}

void perfmap_pool_clear(void)
{
	pthread_mutex_lock(&maps.lock);
	while (pool_drop_oldest())
		;
	pthread_mutex_unlock(&maps.lock);
}

int perfmap_path(char *buf, size_t len, const char *dir, int pid)
{
	return snprintf(buf, len, "%s/perf-%d.map", dir ? dir : "/tmp", pid);
}

struct perfmap *perfmap_new(const char *path)
{
	static const struct perfmap_owner nobody;

	return perfmap_new_proc(path, &nobody);
}

struct perfmap *perfmap_new_proc(const char *path, const struct perfmap_owner *owner)
{
	struct perfmap *pm = owner->pid ? pool_take(path, owner) : NULL;

	if (pm) {
		perfmap_refresh(pm);
		return pm;
	}
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return NULL;
	pm->owner = *owner;
	pm->path = strdup(path);
	if (!pm->path) {
		free(pm);
		return NULL;
	}
	pm->tab.ranked = true;
	perfmap_refresh(pm);
	return pm;
}

static bool parse_hex(const char **p, uint64_t *out)
{
	const char *s = *p;
	char *end;

	if (!isxdigit((unsigned char)*s))
		return false;
	errno = 0;
	*out = strtoull(s, &end, 16);
	if (errno || end == s)
		return false;
	*p = end;
	return true;
}

/* One "START SIZE name" line into @t, if it fits @max_bytes: 1, 0 (no room), -1 (ENOMEM). */
static int add_line(struct sym_table *t, uint64_t start, uint64_t size, const char *name,
		    uint32_t rank, size_t max_bytes)
{
	size_t nlen = strlen(name);
	int64_t off;
	int room;

	if (t->n >= PERFMAP_MAX_ENTRIES)
		return 0;
	room = sym_table_room(t, nlen + 1, max_bytes);
	if (room <= 0)
		return room;
	off = sym_table_intern(t, name, nlen);
	if (off < 0 || sym_table_add(t, start, start + size, (uint32_t)off, rank) < 0)
		return -1;
	return 1;
}

/* Lines left in @f, counted without parsing them. */
static uint64_t lines_left(FILE *f)
{
	char buf[65536];
	uint64_t n = 0;
	bool partial = false;
	size_t len;

	while ((len = fread(buf, 1, sizeof(buf), f)) > 0) {
		for (char *p = buf; (p = memchr(p, '\n', (size_t)(buf + len - p))); p++)
			n++;
		partial = buf[len - 1] != '\n';
	}
	return n + partial;
}

/*
 * Parses the whole file into @t, holding at most @max_bytes: the lines from
 * the first past the bound on (room never grows back) are counted in
 * *@refused, not parsed.  Returns the malformed line count, or -1.
 */
static long load(FILE *f, struct sym_table *t, size_t max_bytes, uint64_t *refused)
{
	size_t cap = 0, seq = 0;
	char *line = NULL;
	long bad = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, f)) >= 0) {
		const char *p = line;
		uint64_t start, size;
		int ret;

		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		if (len == 0)
			continue;
		/* The name is the rest of the line: JIT names may hold spaces. */
		if (!parse_hex(&p, &start) || *p++ != ' ' || !parse_hex(&p, &size) || *p++ != ' ' ||
		    !*p || size == 0 || start + size < start) {
			bad++;
			continue;
		}
		/* Later lines rank lower (win): they describe the newest code there. */
		ret = add_line(t, start, size, p, UINT32_MAX - seq++, max_bytes);
		if (ret < 0) {
			bad = -1;
			break;
		}
		if (ret == 0) {
			*refused += 1 + lines_left(f);
			break;
		}
	}
	free(line);
	return bad;
}

/*
 * The map file: for a process, as it sees its /tmp (its root, so a container's
 * or a PrivateTmp's), no symlink, regular, owned by the process's own user;
 * else the path as given.  NULL with errno; a refusal is counted.
 */
static FILE *open_map(struct perfmap *pm, struct stat *st)
{
	const struct perfmap_owner *o = &pm->owner;
	char proc[32];
	struct stat now;
	uint32_t uid = o->uid;
	FILE *f;
	int fd;

	if (!o->pid) {
		f = fopen_regular(pm->path);
		if (f && fstat(fileno(f), st)) {
			fclose(f);
			return NULL;
		}
		return f;
	}
	fd = open_in_proc_root(o->pid, pm->path);
	snprintf(proc, sizeof(proc), "/proc/%u", o->pid);
	if (fd >= 0 && !stat(proc, &now))
		uid = now.st_uid;
	/* gone (a JIT dumps its map at exit): our /tmp, if it was the process's /tmp */
	if (fd == -ENOENT && o->same_tmp && stat(proc, &now))
		fd = open_regular_nofollow(pm->path);
	if (fd == -ELOOP || fd == -EINVAL)
		__atomic_fetch_add(&refused_total, 1, __ATOMIC_RELAXED);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	/* another user could name this process's frames: perf refuses that too */
	if (fstat(fd, st) || st->st_uid != uid) {
		__atomic_fetch_add(&refused_total, 1, __ATOMIC_RELAXED);
		close(fd);
		errno = EPERM;
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

int perfmap_refresh(struct perfmap *pm)
{
	struct sym_table t = {.ranked = true};
	uint64_t refused = 0, room;
	struct stat st;
	FILE *f;
	long bad;

	if (pm->owner.pid && mono_ns() < pm->next_read)
		return 0;
	f = open_map(pm, &st);
	if (!f)
		return -1;
	if (pm->seen && st.st_size == pm->size && st.st_ino == pm->ino && st.st_dev == pm->dev &&
	    st.st_mtim.tv_sec == pm->mtime.tv_sec && st.st_mtim.tv_nsec == pm->mtime.tv_nsec) {
		fclose(f);
		return 0;
	}
	if ((uint64_t)st.st_size > PERFMAP_MAX_BYTES) {
		__atomic_fetch_add(&refused_total, 1, __ATOMIC_RELAXED);
		goto fail;
	}
	if (pm->owner.pid)
		pm->next_read = mono_ns() + PERFMAP_REREAD_NS;
	room = room_reserve(pm);
	bad = load(f, &t, room, &refused);
	fclose(f);
	if (refused)
		__atomic_fetch_add(&lines_refused_total, refused, __ATOMIC_RELAXED);
	if (bad < 0) {
		room_settle(room, 0, 0);
		sym_table_release(&t);
		return -1;
	}
	sym_table_finish(&t);
	room_settle(room, sym_table_bytes(&t), sym_table_bytes(&pm->tab));
	sym_table_release(&pm->tab);
	pm->tab = t;
	pm->malformed = (size_t)bad;
	pm->seen = true;
	pm->size = st.st_size;
	pm->ino = st.st_ino;
	pm->dev = st.st_dev;
	pm->mtime = st.st_mtim;
	return 1;
fail:
	fclose(f);
	return -1;
}

int perfmap_lookup(struct perfmap *pm, uint64_t addr, const char **name, uint64_t *offset)
{
	long i = sym_table_find(&pm->tab, addr);

	/* A miss in JIT code usually means code newer than our copy. */
	if (i < 0 && perfmap_refresh(pm) == 1)
		i = sym_table_find(&pm->tab, addr);
	if (i < 0)
		return -1;
	if (name)
		*name = sym_table_name(&pm->tab, i);
	if (offset)
		*offset = addr - pm->tab.r[i].start;
	return 0;
}

uint64_t perfmap_refused_total(void)
{
	return __atomic_load_n(&refused_total, __ATOMIC_RELAXED);
}

uint64_t perfmap_lines_refused_total(void)
{
	return __atomic_load_n(&lines_refused_total, __ATOMIC_RELAXED);
}

size_t perfmap_count(const struct perfmap *pm)
{
	return pm->tab.n;
}

size_t perfmap_malformed(const struct perfmap *pm)
{
	return pm->malformed;
}

void perfmap_free(struct perfmap *pm)
{
	if (!pm)
		return;
	pthread_mutex_lock(&maps.lock);
	if (pm->owner.pid && pm->seen) {
		pm->next = maps.pool;
		maps.pool = pm;
		if (++maps.pooled > PERFMAP_POOL_MAX)
			pool_drop_oldest();
		pm = NULL;
	} else {
		maps.held -= sym_table_bytes(&pm->tab);
	}
	pthread_mutex_unlock(&maps.lock);
	if (pm)
		map_destroy(pm);
}
