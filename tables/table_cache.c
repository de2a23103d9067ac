// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Compiled tables kept on disk; see table_cache.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "common/cache_dir.h"
#include "common/hash.h"
#include "common/mkdirs.h"
#include "common/vec.h"
#include "tables/table_cache.h"

#define CACHE_MAGIC  "CFITABLE"
#define CACHE_SUFFIX ".cfitable"
/* what a table can hold: 16-bit rule ids, the rows map's largest setting */
#define CACHE_MAX_RULES (1u << 16)
#define CACHE_MAX_ROWS	(1u << 28)
#define CACHE_MAX_PAGES (1u << 24)
#define CACHE_KEY_MAX	1024
/* linux/stat.h from 6.8; older kernels ignore the bit and answer STATX_MNT_ID */
#ifndef STATX_MNT_ID_UNIQUE
#define STATX_MNT_ID_UNIQUE 0x00004000U
#endif

struct cache_header {
	char magic[8];
	uint32_t version;
	uint32_t layout; /* the sizes of the stored structs: another build's layout is refused */
	uint32_t key_len;
	uint32_t nr_rules, nr_rows, nr_pages;
	uint32_t arch; /* enum cfi_arch: a table of another machine is refused */
	uint64_t min_addr, max_addr;
	uint64_t checksum; /* FNV-1a over everything after the header */
	char build_id[ELF_BUILD_ID_HEX_LEN];
	struct cfi_stats stats;
};

#define CACHE_LAYOUT                                                                               \
	((uint32_t)(sizeof(struct cfi_rule) << 24 | sizeof(struct cfi_row) << 16 |                 \
		    sizeof(struct cfi_page) << 8 | sizeof(struct cache_header) % 251))

struct cfi_table_cache {
	pthread_mutex_t lock;
	int dirfd;
	uint64_t max_bytes;
	uint64_t min_bytes, max_entries;
	struct cfi_table_cache_stats stats;
};

/* The bytes of the entries in the directory; *entries: how many. */
static uint64_t dir_bytes(int dirfd, uint64_t *entries)
{
	uint64_t total = 0;
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd = dup(dirfd);

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	rewinddir(d);
	*entries = 0;
	while ((e = readdir(d))) {
		if (strstr(e->d_name, CACHE_SUFFIX) &&
		    !fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode)) {
			total += (uint64_t)st.st_size;
			(*entries)++;
		}
	}
	closedir(d);
	return total;
}

struct cfi_table_cache *cfi_table_cache_open(const char *dir, uint64_t max_bytes)
{
	struct cfi_table_cache *c;
	struct stat st;
	int fd, err;

	err = mkdirs(dir, 0755, 0700);
	fd = err ? err : open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "cfiprof: table cache %s: %s\n", dir, strerror(err ? -err : errno));
		return NULL;
	}
	/* anyone else who can write here could plant tables for every process */
	if (fstat(fd, &st) || st.st_uid != geteuid() || (st.st_mode & 022)) {
		fprintf(
		    stderr,
		    "cfiprof: table cache %s: not used: it must be a directory owned by this user "
		    "and writable by nobody else\n",
		    dir);
		close(fd);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		close(fd);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	c->dirfd = fd;
	c->max_bytes = max_bytes;
	c->min_bytes = CFI_TABLE_CACHE_MIN_BYTES;
	c->max_entries = CFI_TABLE_CACHE_MAX_ENTRIES;
	c->stats.bytes = dir_bytes(fd, &c->stats.entries);
	return c;
}

void cfi_table_cache_close(struct cfi_table_cache *c)
{
	if (!c)
		return;
	close(c->dirfd);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void cfi_table_cache_stats(struct cfi_table_cache *c, struct cfi_table_cache_stats *out)
{
	pthread_mutex_lock(&c->lock);
	*out = c->stats;
	pthread_mutex_unlock(&c->lock);
}

int cfi_file_key(int fd, const char *build_id, char *buf, size_t len)
{
	struct statx sx;
	uint64_t mnt = 0;
	char kind = 'm';
	int n;

	if (statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_MNT_ID | STATX_MNT_ID_UNIQUE,
		  &sx))
		return -errno;
	if (sx.stx_mask & (STATX_MNT_ID | STATX_MNT_ID_UNIQUE))
		mnt = sx.stx_mnt_id;
	/* the two ids are numbered apart: never let one stand for the other */
	if (sx.stx_mask & STATX_MNT_ID_UNIQUE)
		kind = 'u';
	n = snprintf(buf, len,
		     "%s@%" PRIu64 ":%" PRIu64 ":%" PRId64 ":%" PRId64 ":%" PRId64
		     ".%09u:%c%" PRIu64,
		     build_id, (uint64_t)makedev(sx.stx_dev_major, sx.stx_dev_minor),
		     (uint64_t)sx.stx_ino, (int64_t)sx.stx_size, (int64_t)sx.stx_mtime.tv_sec,
		     (int64_t)sx.stx_ctime.tv_sec, sx.stx_ctime.tv_nsec, kind, mnt);
	/* a key cut short would leave out the parts that tell files apart */
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

static void entry_name(const char *key, char *buf, size_t len)
{
	snprintf(buf, len, "%016" PRIx64 CACHE_SUFFIX, hash_str(key));
}

/* Everything a walk relies on, so a planted or damaged entry cannot mislead it. */
static bool table_valid(const struct cfi_table *t)
{
	uint32_t i, j, next = 0;

	if (!t->nr_rules || t->rules[0].cfa_kind != CFI_CFA_NONE)
		return false;
	for (i = 0; i < t->nr_rules; i++) {
		const struct cfi_rule *r = &t->rules[i];

		if (r->cfa_kind >= CFI_CFA_KIND_MAX || r->rbp_kind >= CFI_REG_KIND_MAX ||
		    r->ra_kind >= CFI_REG_KIND_MAX || r->rbx_kind >= CFI_REG_KIND_MAX ||
		    r->reason >= CFI_UNSUP_MAX ||
		    (r->cfa_kind == CFI_CFA_REG && (__u16)r->aux >= CFI_DW_NR_REGS))
			return false;
		/* a pair's successor: an older rule, itself no pair (see struct cfi_rule) */
		if (r->next_at &&
		    (r->hole_len || r->next_rule >= i || t->rules[r->next_rule].next_at))
			return false;
	}
	for (i = 0; i < t->nr_rows; i++) {
		if (t->rows[i].rule >= t->nr_rules)
			return false;
	}
	/* pages ascend and cover the rows one after another; offsets ascend in a page */
	for (i = 0; i < t->nr_pages; i++) {
		const struct cfi_page *p = &t->pages[i];

		if (p->first_row != next || !p->nr_rows || p->nr_rows > t->nr_rows - next ||
		    (i && p->page <= t->pages[i - 1].page) || p->page >> (64 - CFI_PAGE_SHIFT))
			return false;
		for (j = 1; j < p->nr_rows; j++) {
			if (t->rows[next + j].off <= t->rows[next + j - 1].off)
				return false;
		}
		next += p->nr_rows;
	}
	return next == t->nr_rows;
}

static void drop_entry(struct cfi_table_cache *c, const char *name, uint64_t size)
{
	if (unlinkat(c->dirfd, name, 0))
		return;
	if (c->stats.bytes >= size)
		c->stats.bytes -= size;
	if (c->stats.entries)
		c->stats.entries--;
}

void cfi_table_cache_set_limits(struct cfi_table_cache *c, uint64_t min_bytes, uint64_t max_entries)
{
	pthread_mutex_lock(&c->lock);
	c->min_bytes = min_bytes;
	c->max_entries = max_entries;
	pthread_mutex_unlock(&c->lock);
}

enum entry_check { ENTRY_OK, ENTRY_OTHER_KEY, ENTRY_BAD };

/* Reads and checks the entry in buf (size bytes) into *out. */
static enum entry_check parse_entry(const char *buf, size_t size, const char *key,
				    struct cfi_table **out)
{
	const struct cache_header *h = (const struct cache_header *)buf;
	size_t key_len = strlen(key) + 1, need;
	struct cfi_table *t;
	const char *p;

	if (size < sizeof(*h) || memcmp(h->magic, CACHE_MAGIC, 8) ||
	    h->version != CFI_TABLE_FORMAT_VERSION || h->layout != CACHE_LAYOUT ||
	    h->nr_rules > CACHE_MAX_RULES || h->nr_rows > CACHE_MAX_ROWS ||
	    h->nr_pages > CACHE_MAX_PAGES || h->key_len == 0 || h->key_len > CACHE_KEY_MAX ||
	    h->arch >= CFI_ARCH_MAX)
		return ENTRY_BAD;
	need = sizeof(*h) + h->key_len + (size_t)h->nr_rules * sizeof(struct cfi_rule) +
	       (size_t)h->nr_rows * sizeof(struct cfi_row) +
	       (size_t)h->nr_pages * sizeof(struct cfi_page);
	p = buf + sizeof(*h);
	if (size != need || hash_bytes(HASH_FNV_OFFSET, p, size - sizeof(*h)) != h->checksum ||
	    !memchr(h->build_id, 0, sizeof(h->build_id)) || p[h->key_len - 1])
		return ENTRY_BAD;
	/* two keys with one file name: the newer store wins, this one is a miss */
	if (h->key_len != key_len || memcmp(p, key, key_len))
		return ENTRY_OTHER_KEY;
	p += key_len;
	t = calloc(1, sizeof(*t));
	if (!t)
		return ENTRY_OTHER_KEY;
	/* +1: malloc(0) may be NULL */
	t->rules = malloc((size_t)h->nr_rules * sizeof(*t->rules) + 1);
	t->rows = malloc((size_t)h->nr_rows * sizeof(*t->rows) + 1);
	t->pages = malloc((size_t)h->nr_pages * sizeof(*t->pages) + 1);
	if (!t->rules || !t->rows || !t->pages) {
		cfi_table_free(t);
		return ENTRY_OTHER_KEY;
	}
	t->nr_rules = h->nr_rules;
	t->nr_rows = h->nr_rows;
	t->nr_pages = h->nr_pages;
	memcpy(t->rules, p, (size_t)t->nr_rules * sizeof(*t->rules));
	p += (size_t)t->nr_rules * sizeof(*t->rules);
	memcpy(t->rows, p, (size_t)t->nr_rows * sizeof(*t->rows));
	p += (size_t)t->nr_rows * sizeof(*t->rows);
	memcpy(t->pages, p, (size_t)t->nr_pages * sizeof(*t->pages));
	t->min_addr = h->min_addr;
	t->max_addr = h->max_addr;
	t->arch = (uint8_t)h->arch;
	memcpy(t->build_id, h->build_id, sizeof(t->build_id));
	t->stats = h->stats;
	if (!table_valid(t)) {
		cfi_table_free(t);
		return ENTRY_BAD;
	}
	*out = t;
	return ENTRY_OK;
}

/* The whole regular file name (at most max bytes) in a malloc'd buffer; NULL if none. */
static char *read_entry(int dirfd, const char *name, uint64_t max, size_t *size)
{
	char *buf = NULL;
	struct stat st;
	size_t got = 0;
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= max && (buf = malloc((size_t)st.st_size))) {
		while (got < (size_t)st.st_size &&
		       (n = read(fd, buf + got, (size_t)st.st_size - got)) > 0)
			got += (size_t)n;
		if (got != (size_t)st.st_size) {
			free(buf);
			buf = NULL;
		}
	}
	close(fd);
	*size = got;
	return buf;
}

int cfi_table_cache_load(struct cfi_table_cache *c, const char *key, struct cfi_table **out)
{
	enum entry_check check = ENTRY_OTHER_KEY;
	char name[64], *buf;
	size_t size = 0;

	*out = NULL;
	if (strlen(key) >= CACHE_KEY_MAX)
		return -1;
	entry_name(key, name, sizeof(name));
	buf = read_entry(c->dirfd, name, c->max_bytes, &size);
	if (buf)
		check = parse_entry(buf, size, key, out);
	free(buf);
	pthread_mutex_lock(&c->lock);
	if (check == ENTRY_OK) {
		c->stats.hits++;
		/* its mtime is its last use: the least recently used go first */
		utimensat(c->dirfd, name, NULL, 0);
	} else if (check == ENTRY_BAD) {
		c->stats.refused++;
		drop_entry(c, name, size);
	} else {
		c->stats.misses++;
	}
	pthread_mutex_unlock(&c->lock);
	return check == ENTRY_OK ? 0 : -1;
}

struct entry_age {
	char name[64];
	struct timespec used;
	uint64_t size;
};

static int oldest_first(const void *a, const void *b)
{
	const struct entry_age *x = a, *y = b;

	if (x->used.tv_sec != y->used.tv_sec)
		return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
	return x->used.tv_nsec < y->used.tv_nsec ? -1 : x->used.tv_nsec > y->used.tv_nsec;
}

static bool full(const struct cfi_table_cache *c, uint64_t need)
{
	return c->stats.bytes + need > c->max_bytes || c->stats.entries >= c->max_entries;
}

/* Removes the least recently used entries until one more of need bytes fits.  Lock held. */
static void make_room(struct cfi_table_cache *c, uint64_t need)
{
	struct entry_age *v = NULL;
	uint64_t n = 0, cap = 0, i;
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd;

	/* the running count is enough until it says full: then what is really there */
	if (!full(c, need))
		return;
	c->stats.bytes = dir_bytes(c->dirfd, &c->stats.entries);
	if (!full(c, need))
		return;
	fd = dup(c->dirfd);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(d);
	while ((e = readdir(d))) {
		if (!strstr(e->d_name, CACHE_SUFFIX) || strlen(e->d_name) >= sizeof(v->name) ||
		    fstatat(c->dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			continue;
		if (VEC_RESERVE(v, n, cap, 64))
			break;
		snprintf(v[n].name, sizeof(v[n].name), "%.63s", e->d_name);
		v[n].used = st.st_mtim;
		v[n++].size = (uint64_t)st.st_size;
	}
	closedir(d);
	qsort(v, n, sizeof(*v), oldest_first);
	for (i = 0; i < n && full(c, need); i++) {
		drop_entry(c, v[i].name, v[i].size);
		c->stats.evicted++;
	}
	free(v);
}

void cfi_table_cache_store(struct cfi_table_cache *c, const char *key, const struct cfi_table *t)
{
	size_t key_len = strlen(key) + 1;
	size_t rules = (size_t)t->nr_rules * sizeof(*t->rules);
	size_t rows = (size_t)t->nr_rows * sizeof(*t->rows);
	size_t pages = (size_t)t->nr_pages * sizeof(*t->pages);
	uint64_t size = sizeof(struct cache_header) + key_len + rules + rows + pages;
	char name[64], tmp[96];
	struct cache_header h;
	int fd, err;

	if (key_len > CACHE_KEY_MAX || size > c->max_bytes)
		return;
	/*
	 * Reading an entry costs a file open and a checksum: a small table,
	 * rebuilt about as fast, is not kept.  It would only take a file (and
	 * disk blocks) in the cache, and a process mapping thousands of small
	 * files would fill the directory until every lookup and scan is slow.
	 */
	pthread_mutex_lock(&c->lock);
	if (size < c->min_bytes) {
		/* the lookup before this build was a miss: it is counted as this instead */
		c->stats.cheap++;
		if (c->stats.misses)
			c->stats.misses--;
		pthread_mutex_unlock(&c->lock);
		return;
	}
	pthread_mutex_unlock(&c->lock);
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, CACHE_MAGIC, 8);
	h.version = CFI_TABLE_FORMAT_VERSION;
	h.layout = CACHE_LAYOUT;
	h.key_len = (uint32_t)key_len;
	h.nr_rules = t->nr_rules;
	h.nr_rows = t->nr_rows;
	h.nr_pages = t->nr_pages;
	h.arch = t->arch;
	h.min_addr = t->min_addr;
	h.max_addr = t->max_addr;
	memcpy(h.build_id, t->build_id, sizeof(h.build_id));
	h.build_id[sizeof(h.build_id) - 1] = 0;
	h.stats = t->stats;
	h.checksum = hash_bytes(HASH_FNV_OFFSET, key, key_len);
	h.checksum = hash_bytes(h.checksum, t->rules, rules);
	h.checksum = hash_bytes(h.checksum, t->rows, rows);
	h.checksum = hash_bytes(h.checksum, t->pages, pages);
	entry_name(key, name, sizeof(name));
	snprintf(tmp, sizeof(tmp), ".%s.%d.%lu", name, getpid(), (unsigned long)pthread_self());
	pthread_mutex_lock(&c->lock);
	make_room(c, size);
	fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	err = fd < 0;
	if (!err) {
		err = cache_write_all(fd, &h, sizeof(h)) || cache_write_all(fd, key, key_len) ||
		      cache_write_all(fd, t->rules, rules) || cache_write_all(fd, t->rows, rows) ||
		      cache_write_all(fd, t->pages, pages);
		err |= close(fd) != 0;
		/* readers see the old entry or the whole new one */
		err = err || renameat(c->dirfd, tmp, c->dirfd, name);
		if (err)
			unlinkat(c->dirfd, tmp, 0);
	}
	if (err) {
		c->stats.store_errors++;
	} else {
		c->stats.stores++;
		c->stats.bytes += size;
		c->stats.entries++;
	}
	pthread_mutex_unlock(&c->lock);
}
