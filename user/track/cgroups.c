// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* cgroup v2 lookups for container-wide sampling; see cgroups.h. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <stdbool.h>

#include "common/vec.h"
#include "user/track/cgroups.h"

/* How deep container cgroups sit: kubepods.slice/.../cri-containerd-ID.scope is about 5. */
#define WALK_DEPTH 12

int cgroup_mount(char *out, size_t len)
{
	static const char *const candidates[] = {"/sys/fs/cgroup", "/sys/fs/cgroup/unified"};
	struct statfs sf;
	size_t i;

	for (i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++) {
		if (!statfs(candidates[i], &sf) && sf.f_type == CGROUP2_SUPER_MAGIC) {
			snprintf(out, len, "%s", candidates[i]);
			return 0;
		}
	}
	return -ENOENT;
}

int cgroup_resolve(const char *arg, char *out, size_t len)
{
	char mnt[PATH_MAX], path[PATH_MAX * 2];
	struct statfs sf;
	struct stat st;

	if (cgroup_mount(mnt, sizeof(mnt))) {
		fprintf(stderr, "cfiprof: no cgroup v2 hierarchy is mounted (looked at /sys/fs/cgroup "
				"and /sys/fs/cgroup/unified)\n");
		return -ENOENT;
	}
	if (arg[0] == '/')
		snprintf(path, sizeof(path), "%s", arg);
	else
		snprintf(path, sizeof(path), "%s/%s", mnt, arg);
	if (stat(path, &st) || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "cfiprof: cgroup %s: no such directory\n", path);
		return -ENOENT;
	}
	if (statfs(path, &sf) || sf.f_type != CGROUP2_SUPER_MAGIC) {
		fprintf(stderr, "cfiprof: %s is not in a cgroup v2 hierarchy (cgroup v2 is at %s)\n",
			path, mnt);
		return -EINVAL;
	}
	if (strlen(path) >= len)
		return -ENAMETOOLONG;
	snprintf(out, len, "%s", path);
	return 0;
}

/* The id inside one path component, by runtime naming convention; NULL if none. */
static const char *component_id(const char *name, const char *parent, char *out, size_t len)
{
	static const char *const prefixes[] = {"docker-", "cri-containerd-", "crio-", "libpod-",
					       "machine-"};
	const char *dot;
	size_t i, n;

	if (!strncmp(name, "libpod-conmon-", 14) || !strncmp(name, "crio-conmon-", 12))
		return NULL;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		n = strlen(prefixes[i]);
		if (strncmp(name, prefixes[i], n))
			continue;
		dot = strstr(name + n, ".scope");
		if (!dot || dot[6] != 0 || dot == name + n)
			return NULL;
		snprintf(out, len, "%.*s", (int)(dot - (name + n)), name + n);
		return out;
	}
	/* cgroupfs driver: /docker/<64 hex> */
	if (parent && !strcmp(parent, "docker") && strlen(name) >= 12 &&
	    strspn(name, "0123456789abcdef") == strlen(name)) {
		snprintf(out, len, "%s", name);
		return out;
	}
	return NULL;
}

const char *cgroup_container_id(const char *path, char *out, size_t len)
{
	char copy[PATH_MAX], *save = NULL, *tok, *parent = NULL;
	const char *found = NULL;

	snprintf(copy, sizeof(copy), "%s", path);
	/* the innermost match wins: nested cgroups inside a container belong to it */
	for (tok = strtok_r(copy, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
		char id[256];

		if (component_id(tok, parent, id, sizeof(id))) {
			snprintf(out, len, "%s", id);
			found = out;
		}
		parent = tok;
	}
	return found;
}

/* Whether s (n bytes) is a UID, '-' or (systemd) '_' between its 8-4-4-4-12 hex digits. */
static bool pod_uid_ok(const char *s, size_t n)
{
	if (n != 36)
		return false;
	for (size_t i = 0; i < n; i++) {
		bool sep = i == 8 || i == 13 || i == 18 || i == 23;

		if (sep ? s[i] != '-' && s[i] != '_' : !isxdigit((unsigned char)s[i]))
			return false;
	}
	return true;
}

const char *cgroup_pod_uid(const char *path, char *out, size_t len)
{
	const char *p = path, *end, *uid, *found = NULL;
	bool kubepods = false;
	size_t n;

	for (; *p; p = *end ? end + 1 : end) {
		end = strchrnul(p, '/');
		n = (size_t)(end - p);
		if (n >= 8 && !memcmp(p, "kubepods", 8))
			kubepods = true;
		if (!kubepods)
			continue;
		/* cgroupfs: "pod" UID; systemd: "...-pod" UID ".slice" */
		uid = NULL;
		if (n == 39 && !memcmp(p, "pod", 3))
			uid = p + 3;
		else if (n >= 46 && !memcmp(end - 6, ".slice", 6) && !memcmp(end - 46, "-pod", 4))
			uid = end - 42;
		if (!uid || !pod_uid_ok(uid, 36) || len <= 36)
			continue;
		for (size_t i = 0; i < 36; i++)
			out[i] = uid[i] == '_' ? '-' : (char)tolower((unsigned char)uid[i]);
		out[36] = 0;
		found = out;
	}
	return found;
}

const char *cgroup_unit_name(const char *path, char *out, size_t len)
{
	const char *p = path, *end, *found = NULL;
	size_t n;

	while (*p) {
		end = strchrnul(p, '/');
		n = (size_t)(end - p);
		if (n > 8 && !memcmp(end - 8, ".service", 8) && n - 8 < len) {
			memcpy(out, p, n - 8);
			out[n - 8] = 0;
			found = out;
		}
		p = *end ? end + 1 : end;
	}
	return found;
}

/* "user@UID" when path lies in a user's own service manager (user@UID.service), else NULL. */
static const char *user_manager(const char *path, char *out, size_t len)
{
	const char *p = strstr(path, "/user@");
	size_t digits;

	for (; p; p = strstr(p + 1, "/user@")) {
		digits = strspn(p + 6, "0123456789");
		if (digits && !strncmp(p + 6 + digits, ".service", 8) &&
		    (p[14 + digits] == '/' || !p[14 + digits])) {
			snprintf(out, len, "%.*s", (int)(5 + digits), p + 1);
			return out;
		}
	}
	return NULL;
}

const char *cgroup_service_name(const char *path, char *out, size_t len)
{
	char id[256], unit[256], user[64];
	const char *leaf;

	if (cgroup_container_id(path, id, sizeof(id))) {
		snprintf(out, len, "container-%.12s", id);
		return out;
	}
	if (cgroup_unit_name(path, unit, sizeof(unit))) {
		/* a user's manager names its units as the user likes: never as the system's */
		if (user_manager(path, user, sizeof(user)) && strcmp(unit, user))
			snprintf(out, len, "%s.%s", user, unit);
		else
			snprintf(out, len, "%s", unit);
		return out;
	}
	leaf = strrchr(path, '/');
	if (!leaf || !leaf[1])
		return NULL; /* the root cgroup: no one named it */
	snprintf(out, len, "%s", leaf + 1);
	return out;
}

static struct {
	const char *want;
	char match[PATH_MAX];
	int count;
} find_state;

static int find_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	char id[256], parent[PATH_MAX];
	const char *name = path + ftw->base, *p;

	(void)st;
	if (flag != FTW_D || ftw->level > WALK_DEPTH)
		return 0;
	snprintf(parent, sizeof(parent), "%.*s", ftw->base > 0 ? ftw->base - 1 : 0, path);
	p = strrchr(parent, '/');
	if (!component_id(name, p ? p + 1 : parent, id, sizeof(id)))
		return 0;
	if (strncmp(id, find_state.want, strlen(find_state.want)))
		return 0;
	/* a container's cgroup may have sub-cgroups of its own: count it once */
	if (find_state.count && !strncmp(path, find_state.match, strlen(find_state.match)))
		return 0;
	snprintf(find_state.match, sizeof(find_state.match), "%s", path);
	find_state.count++;
	return 0;
}

int cgroup_find_container(const char *id, char *out, size_t len)
{
	char mnt[PATH_MAX];

	if (strlen(id) < 3 || strchr(id, '/')) {
		fprintf(stderr, "cfiprof: container id '%s': give at least 3 characters of the id "
				"or the machine name\n", id);
		return -EINVAL;
	}
	if (cgroup_mount(mnt, sizeof(mnt))) {
		fprintf(stderr, "cfiprof: no cgroup v2 hierarchy is mounted\n");
		return -ENOENT;
	}
	memset(&find_state, 0, sizeof(find_state));
	find_state.want = id;
	nftw(mnt, find_cb, 32, FTW_PHYS | FTW_MOUNT);
	if (!find_state.count) {
		fprintf(stderr, "cfiprof: no container '%s' under %s (docker, containerd, CRI-O, "
				"podman and systemd-nspawn scopes were searched)\n", id, mnt);
		return -ENOENT;
	}
	if (find_state.count > 1) {
		fprintf(stderr, "cfiprof: container id '%s' is ambiguous (%d matches): give more of "
				"it\n", id, find_state.count);
		return -EINVAL;
	}
	snprintf(out, len, "%s", find_state.match);
	return 0;
}

static uint32_t *pid_list;
static int pid_count, pid_cap;

static int pids_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	char file[PATH_MAX + 16];
	unsigned int pid;
	FILE *f;

	(void)st;
	(void)ftw;
	if (flag != FTW_D)
		return 0;
	snprintf(file, sizeof(file), "%s/cgroup.procs", path);
	f = fopen(file, "re");
	if (!f)
		return 0;
	while (fscanf(f, "%u", &pid) == 1) {
		if (pid_count == pid_cap) {
			int ncap = pid_cap ? pid_cap * 2 : 64;
			uint32_t *n = realloc(pid_list, (size_t)ncap * sizeof(*n));

			if (!n)
				break;
			pid_list = n;
			pid_cap = ncap;
		}
		pid_list[pid_count++] = pid;
	}
	fclose(f);
	return 0;
}

int cgroup_pids(const char *path, uint32_t **pids)
{
	pid_list = NULL;
	pid_count = pid_cap = 0;
	if (nftw(path, pids_cb, 32, FTW_PHYS | FTW_MOUNT) < 0) {
		free(pid_list);
		return -errno;
	}
	*pids = pid_list;
	return pid_count;
}

struct cgroup_entry {
	uint64_t id;
	char *path;
};

struct cgroup_names {
	char mnt[PATH_MAX];
	bool saved;  /* entries come from a recording: never walk */
	bool sorted; /* v by id: a user's delegated cgroups cost a lookup log n, not n */
	struct cgroup_entry *v;
	size_t nr, cap;
	int walks;
	uint64_t max_entries, seen; /* the walk's bound, and entries it visited */
};

static uint64_t walks_cut;

uint64_t cgroup_names_cut_total(void)
{
	return __atomic_load_n(&walks_cut, __ATOMIC_RELAXED);
}

int cgroup_names_walks(const struct cgroup_names *cn)
{
	return cn->walks;
}

static int by_id(const void *a, const void *b)
{
	const struct cgroup_entry *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static struct cgroup_names *walk_target;

static int names_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	struct cgroup_names *cn = walk_target;
	size_t mlen = strlen(cn->mnt);

	(void)ftw;
	/* every entry costs its stat, a cgroup's files (dozens each) too */
	if (++cn->seen > cn->max_entries) {
		__atomic_fetch_add(&walks_cut, 1, __ATOMIC_RELAXED);
		return FTW_STOP;
	}
	if (flag != FTW_D)
		return 0;
	if (VEC_RESERVE(cn->v, cn->nr, cn->cap, 256))
		return 1;
	/* on cgroup v2 a cgroup's id is the inode number of its directory */
	cn->v[cn->nr].id = st->st_ino;
	cn->v[cn->nr].path = strdup(path[mlen] ? path + mlen : "/");
	if (cn->v[cn->nr].path)
		cn->nr++;
	return 0;
}

static void names_walk(struct cgroup_names *cn)
{
	walk_target = cn;
	cn->seen = 0;
	nftw(cn->mnt, names_cb, 32, FTW_PHYS | FTW_MOUNT);
	cn->sorted = false;
	cn->walks++;
}

struct cgroup_names *cgroup_names_new_at(const char *mnt, uint64_t max_entries)
{
	struct cgroup_names *cn = calloc(1, sizeof(*cn));

	if (!cn)
		return NULL;
	snprintf(cn->mnt, sizeof(cn->mnt), "%s", mnt ? mnt : "");
	cn->max_entries = max_entries;
	return cn;
}

struct cgroup_names *cgroup_names_new(void)
{
	char mnt[PATH_MAX];

	return cgroup_names_new_at(cgroup_mount(mnt, sizeof(mnt)) ? NULL : mnt,
				   CGROUP_NAMES_MAX_ENTRIES);
}

struct cgroup_names *cgroup_names_new_saved(void)
{
	struct cgroup_names *cn = calloc(1, sizeof(*cn));

	if (cn)
		cn->saved = true;
	return cn;
}

int cgroup_names_add(struct cgroup_names *cn, uint64_t id, const char *path)
{
	if (VEC_RESERVE(cn->v, cn->nr, cn->cap, 64))
		return -1;
	cn->v[cn->nr].id = id;
	cn->v[cn->nr].path = strdup(path);
	if (!cn->v[cn->nr].path)
		return -1;
	cn->nr++;
	cn->sorted = false;
	return 0;
}

const char *cgroup_names_get(struct cgroup_names *cn, uint64_t id)
{
	struct cgroup_entry key = {.id = id}, *e;
	int pass;

	if (!cn || (!cn->mnt[0] && !cn->saved) || !id)
		return NULL;
	/*
	 * One walk per table, at the first lookup: the samples named were taken
	 * before it, so their cgroups are in it unless removed since (or past
	 * the walk's bound).  Unknown ids walking again made a user's churn of
	 * delegated cgroups cost a walk of the whole tree per new id.
	 */
	for (pass = 0; pass < 2; pass++) {
		/* none yet: no array to sort (qsort and bsearch want one) */
		if (cn->nr && !cn->sorted) {
			qsort(cn->v, cn->nr, sizeof(*cn->v), by_id);
			cn->sorted = true;
		}
		e = cn->nr ? bsearch(&key, cn->v, cn->nr, sizeof(*cn->v), by_id) : NULL;
		if (e)
			return e->path;
		if (pass || cn->saved || cn->walks)
			break;
		names_walk(cn);
	}
	return NULL;
}

void cgroup_names_free(struct cgroup_names *cn)
{
	size_t i;

	if (!cn)
		return;
	for (i = 0; i < cn->nr; i++)
		free(cn->v[i].path);
	free(cn->v);
	free(cn);
}
