// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a cgroup v2 path says about its process, by table:
 *  - unit_name: cgroup_unit_name, the systemd service the agent names a
 *    process's service_name by (the innermost ".service" component);
 *  - container_id: cgroup_container_id, the container a path belongs to, by
 *    the runtimes' naming (docker, containerd, CRI-O, podman, machined, and
 *    docker's cgroupfs driver), never a runtime's own monitor (conmon);
 *  - pod_uid: cgroup_pod_uid, the Kubernetes pod of a path, as the kubelet
 *    names pod cgroups with the cgroupfs and with the systemd driver;
 *  - service_name: cgroup_service_name, the service name the agent gives a
 *    process from its cgroup (container, unit, a user's unit, the cgroup);
 *  - names_many: cgroup id -> path among 50,000 cgroups, a million times;
 *  - names_walk_once, names_walk_bound: the table of a live hierarchy (here
 *    a directory tree standing in for the mount) walks it once however many
 *    unknown ids come, and no further than its bound, counted.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "tests/lib/harness.h"
#include "user/track/cgroups.h"

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

/* A path and what a function of cgroups.h should make of it (NULL: nothing). */
struct path_case {
	const char *path, *want;
};

/* fn (named what) on each case's path, against its want. */
static void check_paths(const char *what, const char *(*fn)(const char *, char *, size_t),
			const struct path_case *cases, size_t n)
{
	char out[256];

	for (size_t i = 0; i < n; i++) {
		const char *got = fn(cases[i].path, out, sizeof(out));

		CHECK(cases[i].want ? got && !strcmp(got, cases[i].want) : !got,
		      "%s(\"%s\") = %s, want %s", what, cases[i].path, got ? got : "NULL",
		      cases[i].want ? cases[i].want : "NULL");
	}
}

static void test_unit_name(void)
{
	static const struct path_case cases[] = {
	    {"/system.slice/nginx.service", "nginx"},
	    {"/system.slice/nginx.service/worker", "nginx"},
	    /* the innermost: a service started inside another's cgroup */
	    {"/system.slice/a.service/b.service", "b"},
	    {"/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", "foo"},
	    {"/user.slice/user-1000.slice/session-3.scope", NULL},
	    {"/", NULL},
	    {"", NULL},
	    {"/.service", NULL},		/* no name before the suffix */
	    {"/system.slice/x.services", NULL}, /* not the suffix */
	    {"/system.slice/my-app@2.service", "my-app@2"},
	};
	char small[4];

	check_paths("cgroup_unit_name", cgroup_unit_name, cases, sizeof(cases) / sizeof(cases[0]));
	/* a name longer than the buffer is no name, never a cut one */
	CHECK(!cgroup_unit_name("/system.slice/longname.service", small, sizeof(small)),
	      "a unit name that does not fit is returned cut");
	CHECK(cgroup_unit_name("/system.slice/abc.service", small, sizeof(small)) &&
		  !strcmp(small, "abc"),
	      "a unit name that just fits is lost");
}

/*
 * The service a process is named by comes from names whoever started it
 * chose, never from the process; NULL (the caller falls back to comm) only
 * for the root cgroup.
 */
static void test_service_name(void)
{
	static const struct {
		const char *path, *want;
	} cases[] = {
	    {"/system.slice/nginx.service", "nginx"},
	    {"/system.slice/docker-" HEX64 ".scope", "container-0123456789ab"},
	    /* a unit inside a container is the container's */
	    {"/machine.slice/docker-" HEX64 ".scope/system.slice/nginx.service",
	     "container-0123456789ab"},
	    /* a user's manager names its own units: never a system service's name */
	    {"/user.slice/user-1000.slice/user@1000.service/app.slice/nginx.service",
	     "user@1000.nginx"},
	    {"/user.slice/user-1000.slice/user@1000.service/app.slice/x.scope", "user@1000"},
	    {"/user.slice/user-1000.slice/session-3.scope", "session-3.scope"},
	    {"/cfiprof-web-42", "cfiprof-web-42"},
	    {"/", NULL},
	    {"", NULL},
	};
	char out[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = cgroup_service_name(cases[i].path, out, sizeof(out));

		CHECK(cases[i].want ? got && !strcmp(got, cases[i].want) : !got,
		      "cgroup_service_name(\"%s\") = %s, want %s", cases[i].path,
		      got ? got : "NULL", cases[i].want ? cases[i].want : "NULL");
	}
}

/* a saved table of n cgroups, ids 7, 14, ..., added in descending order (no walk promises one) */
static struct cgroup_names *names_of(int n)
{
	struct cgroup_names *cn = cgroup_names_new_saved();
	char path[64];

	for (int i = n; i > 0 && cn; i--) {
		snprintf(path, sizeof(path), "/u/c%d", i);
		CHECK(cgroup_names_add(cn, (uint64_t)i * 7, path) == 0, "add %d", i);
	}
	return cn;
}

/* the thread's CPU time for lookups of ids among n (a loaded host's waits are not in it) */
static double lookups_cpu_s(struct cgroup_names *cn, int n, int lookups)
{
	uint64_t t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	uintptr_t sum = 0;

	for (int k = 0; k < lookups; k++)
		sum += (uintptr_t)cgroup_names_get(cn, 7 * (1 + ((uint64_t)k * 2654435761u) % n));
	__asm__ volatile("" : : "r"(sum));
	return (double)(clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0) / 1e9;
}

/*
 * Lookups by cgroup id cost log n: a user with a delegated subtree may make
 * tens of thousands of cgroups, and every sample of an interval is looked up.
 * Among 50,000 cgroups a linear search is ~25,000 comparisons a lookup, a
 * binary one ~16; among 64, ~6. So the same lookups cost about as much among
 * 50,000 as among 64 but for the cache misses of the larger table (8-10
 * times, ~130 ns against ~16 ns a lookup) if binary, and over 25,000
 * comparisons (microseconds, hundreds of times) if linear: the bound is 50
 * times, in CPU times measured in the same run.
 */
static void test_names_many(void)
{
	enum { N = 50000, SMALL = 64, LOOKUPS = 1000000 };
	struct cgroup_names *cn = names_of(N), *few = names_of(SMALL);
	char path[64];
	size_t wrong = 0;
	double secs, few_secs;

	for (int k = 0; k < N; k++) {
		int i = 1 + (int)(((uint64_t)k * 2654435761u) % N);
		const char *got = cgroup_names_get(cn, (uint64_t)i * 7);

		snprintf(path, sizeof(path), "/u/c%d", i);
		wrong += !got || strcmp(got, path);
	}
	CHECK(wrong == 0, "%zu lookups of %d wrong", wrong, N);
	CHECK(!cgroup_names_get(cn, 8), "an unknown id is found");
	few_secs = lookups_cpu_s(few, SMALL, LOOKUPS);
	secs = lookups_cpu_s(cn, N, LOOKUPS);
	printf("FIGURE: cgroup names: %d lookups among %d cgroups in %.3f s CPU, among %d in "
	       "%.3f s\n",
	       LOOKUPS, N, secs, SMALL, few_secs);
	CHECK(secs <= few_secs * 50, "%d lookups: %.3f s CPU among %d cgroups, %.3f s among %d",
	      LOOKUPS, secs, N, few_secs, SMALL);
	cgroup_names_free(few);
	cgroup_names_free(cn);
}

/* A stand-in for the cgroup mount: n directories d<i>, each with a file (a cgroup has dozens). */
struct fake_tree {
	char root[64];
	int n;
	uint64_t *ids; /* of d<i>: on cgroup v2 a cgroup's id is its directory's inode */
};

static bool fake_tree_make(struct fake_tree *t, int n, bool nested)
{
	char path[128];
	struct stat st;

	snprintf(t->root, sizeof(t->root), "/tmp/cfiprof-cg.XXXXXX");
	t->n = n;
	t->ids = calloc((size_t)n, sizeof(*t->ids));
	if (!t->ids || !mkdtemp(t->root))
		return false;
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/d%d", t->root, i);
		if (mkdir(path, 0755) || stat(path, &st))
			return false;
		t->ids[i] = st.st_ino;
		snprintf(path, sizeof(path), "%s/d%d/cgroup.procs", t->root, i);
		if (close(open(path, O_CREAT | O_WRONLY, 0644)))
			return false;
		snprintf(path, sizeof(path), "%s/d%d/sub", t->root, i);
		if (nested && mkdir(path, 0755))
			return false;
	}
	return true;
}

static void fake_tree_free(struct fake_tree *t)
{
	char cmd[96];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", t->root);
	if (t->root[0] && system(cmd))
		fprintf(stderr, "cannot remove %s\n", t->root);
	free(t->ids);
}

/* IN_OPEN events read from fd: of the watched directory itself, and of its entries. */
static void count_opens(int fd, int *self, int *entries)
{
	char buf[8192] __attribute__((aligned(__alignof__(struct inotify_event))));
	const struct inotify_event *ev;
	ssize_t len;

	while ((len = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + len; p += sizeof(*ev) + ev->len) {
			ev = (const struct inotify_event *)p;
			if (ev->mask & IN_OPEN)
				(*(ev->len ? entries : self))++;
		}
	}
}

static bool known(const struct fake_tree *t, uint64_t id)
{
	for (int i = 0; i < t->n; i++)
		if (t->ids[i] == id)
			return true;
	return false;
}

/*
 * Every unknown id used to walk the whole hierarchy again (up to 65 times a
 * table): a user who creates and removes cgroups in a delegated subtree made
 * every interval walk a large tree that often.  One walk, whatever comes.
 */
static void test_names_walk_once(void)
{
	enum { DIRS = 300, LOOKUPS = 1000 };
	struct fake_tree t = {0};
	struct cgroup_names *cn = NULL;
	int ino_fd = -1, self = 0, entries = 0, wrong = 0, unknown_named = 0;
	char path[64], late[128];
	const char *got;

	bool ok = fake_tree_make(&t, DIRS, true);

	CHECK(ok, "cannot make a tree under %s", t.root);
	/* the kernel's count of directory opens: a walk opens the root once */
	ino_fd = ok ? inotify_init1(IN_NONBLOCK | IN_CLOEXEC) : -1;
	ok = ino_fd >= 0 && inotify_add_watch(ino_fd, t.root, IN_OPEN) >= 0 &&
	     (cn = cgroup_names_new_at(t.root, CGROUP_NAMES_MAX_ENTRIES));
	CHECK(ok, "inotify, or no table");
	if (!ok)
		goto out;
	for (int k = 0; k < LOOKUPS; k++) {
		uint64_t id = UINT64_MAX - (uint64_t)k;

		if (k % 10 == 0) {
			/* the cgroups there are named among the unknown ids */
			got = cgroup_names_get(cn, t.ids[k % DIRS]);
			snprintf(path, sizeof(path), "/d%d", k % DIRS);
			wrong += !got || strcmp(got, path);
		} else if (!known(&t, id)) {
			unknown_named += cgroup_names_get(cn, id) != NULL;
		}
		/* read as they come: the kernel merges an event with an identical one queued */
		count_opens(ino_fd, &self, &entries);
	}
	/* a cgroup made after the walk waits for the next interval's table */
	snprintf(late, sizeof(late), "%s/late", t.root);
	CHECK(mkdir(late, 0755) == 0, "mkdir %s", late);
	{
		struct stat st;

		CHECK(stat(late, &st) == 0 && !cgroup_names_get(cn, st.st_ino),
		      "a cgroup made after the walk is named");
	}
	count_opens(ino_fd, &self, &entries);
	CHECK(wrong == 0, "%d of %d lookups of known cgroups wrong", wrong, LOOKUPS / 10);
	CHECK(unknown_named == 0, "%d unknown ids named", unknown_named);
	CHECK(cgroup_names_walks(cn) == 1 && self == 1,
	      "%d unknown ids: %d walks, the root opened %d times (want 1)", LOOKUPS - LOOKUPS / 10,
	      cgroup_names_walks(cn), self);
	/* the one walk reached every directory: DIRS entries of the root opened (late: after it) */
	CHECK(entries == DIRS, "the walk opened %d of the root's %d directories", entries, DIRS);
out:
	if (ino_fd >= 0)
		close(ino_fd);
	cgroup_names_free(cn);
	fake_tree_free(&t);
}

/*
 * A walk stops at its bound of entries (directories and files), counted: a
 * user's delegated subtree may hold as many cgroups as it likes.
 */
static void test_names_walk_bound(void)
{
	/* 300 directories and 300 files under the root: 601 entries, six times the bound */
	enum { DIRS = 300, BOUND = 100 };
	struct fake_tree t = {0};
	struct cgroup_names *cn = NULL, *whole = NULL;
	int ino_fd = -1, self = 0, entries = 0, named = 0, whole_named = 0;
	uint64_t cut0 = cgroup_names_cut_total();

	bool ok = fake_tree_make(&t, DIRS, false);

	CHECK(ok, "cannot make a tree under %s", t.root);
	ino_fd = ok ? inotify_init1(IN_NONBLOCK | IN_CLOEXEC) : -1;
	cn = cgroup_names_new_at(t.root, BOUND);
	whole = cgroup_names_new_at(t.root, CGROUP_NAMES_MAX_ENTRIES);
	ok = ino_fd >= 0 && inotify_add_watch(ino_fd, t.root, IN_OPEN) >= 0 && cn && whole;
	CHECK(ok, "inotify, or no table");
	if (!ok)
		goto out;
	for (int i = 0; i < DIRS; i++)
		named += cgroup_names_get(cn, t.ids[i]) != NULL;
	count_opens(ino_fd, &self, &entries);
	CHECK(cgroup_names_cut_total() == cut0 + 1, "the cut walk counted %llu times (want 1)",
	      (unsigned long long)(cgroup_names_cut_total() - cut0));
	/* a directory is opened after its entry is visited: at most BOUND of them */
	CHECK(self == 1 && entries <= BOUND, "the cut walk opened %d directories (bound %d)",
	      entries, BOUND);
	CHECK(named > 0 && named < BOUND, "the cut walk named %d of %d cgroups (bound %d entries)",
	      named, DIRS, BOUND);
	for (int i = 0; i < DIRS; i++)
		whole_named += cgroup_names_get(whole, t.ids[i]) != NULL;
	CHECK(whole_named == DIRS && cgroup_names_cut_total() == cut0 + 1,
	      "under the default bound: %d of %d named, %llu cut", whole_named, DIRS,
	      (unsigned long long)(cgroup_names_cut_total() - cut0));
out:
	if (ino_fd >= 0)
		close(ino_fd);
	cgroup_names_free(cn);
	cgroup_names_free(whole);
	fake_tree_free(&t);
}

static void test_container_id(void)
{
	static const struct path_case cases[] = {
	    {"/system.slice/docker-" HEX64 ".scope", HEX64},
	    {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1.slice/"
	     "cri-containerd-" HEX64 ".scope",
	     HEX64},
	    {"/kubepods.slice/kubepods-pod2.slice/crio-" HEX64 ".scope", HEX64},
	    {"/machine.slice/libpod-" HEX64 ".scope", HEX64},
	    {"/machine.slice/libpod-" HEX64 ".scope/container", HEX64},
	    {"/machine.slice/libpod-conmon-" HEX64 ".scope", NULL},
	    {"/kubepods.slice/crio-conmon-" HEX64 ".scope", NULL},
	    {"/docker/" HEX64, HEX64}, /* cgroupfs driver */
	    {"/other/" HEX64, NULL},
	    {"/docker/not-hex", NULL},
	    {"/system.slice/docker-.scope", NULL},
	    {"/system.slice/docker-" HEX64 ".scope.x", NULL},
	    {"/system.slice/nginx.service", NULL},
	};
	check_paths("cgroup_container_id", cgroup_container_id, cases,
		    sizeof(cases) / sizeof(cases[0]));
}

#define UID  "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
#define UIDS "0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0" /* the systemd driver's spelling */

static void test_pod_uid(void)
{
	static const struct path_case cases[] = {
	    {"/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UIDS ".slice/"
	     "cri-containerd-" HEX64 ".scope",
	     UID},
	    {"/kubepods.slice/kubepods-pod" UIDS ".slice/crio-" HEX64 ".scope", UID},
	    {"/kubepods/besteffort/pod" UID "/" HEX64, UID},
	    {"/kubepods/pod" UID "/" HEX64, UID},
	    {"/kubepods/pod" UID, UID},
	    {"/kubepods.slice/kubepods-pod" UIDS ".slice", UID},
	    /* not the kubelet's: no kubepods above it, or not a UID */
	    {"/system.slice/pod" UID, NULL},
	    {"/user.slice/x-pod" UIDS ".slice", NULL},
	    {"/kubepods/pod1234", NULL},
	    {"/kubepods/pod" UID "x", NULL},
	    {"/kubepods.slice/kubepods-pod2.slice/crio-" HEX64 ".scope", NULL},
	    {"/kubepods/podzf1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", NULL},
	    {"/docker/" HEX64, NULL},
	};
	char small[36];

	check_paths("cgroup_pod_uid", cgroup_pod_uid, cases, sizeof(cases) / sizeof(cases[0]));
	CHECK(!cgroup_pod_uid("/kubepods/pod" UID, small, sizeof(small)),
	      "a buffer too small for the UID gets none");
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_unit_name);
	RUN_TEST(test_container_id);
	RUN_TEST(test_pod_uid);
	RUN_TEST(test_service_name);
	RUN_TEST(test_names_many);
	RUN_TEST(test_names_walk_once);
	RUN_TEST(test_names_walk_bound);
	return HARNESS_DONE();
}
