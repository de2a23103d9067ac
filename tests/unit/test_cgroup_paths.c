// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a cgroup v2 path says about its process, by table:
 *  - unit_name: cgroup_unit_name, the systemd service the agent names a
 *    process's service_name by (the innermost ".service" component);
 *  - container_id: cgroup_container_id, the container a path belongs to, by
 *    the runtimes' naming (docker, containerd, CRI-O, podman, machined, and
 *    docker's cgroupfs driver), never a runtime's own monitor (conmon);
 *  - service_name: cgroup_service_name, the service name the agent gives a
 *    process from its cgroup (container, unit, a user's unit, the cgroup);
 *  - names_many: cgroup id -> path among 50,000 cgroups, a million times.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tests/lib/harness.h"
#include "user/track/cgroups.h"

#define HEX64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_unit_name(void)
{
	static const struct {
		const char *path, *want; /* want NULL: no service */
	} cases[] = {
	    {"/system.slice/nginx.service", "nginx"},
	    {"/system.slice/nginx.service/worker", "nginx"},
	    /* the innermost: a service started inside another's cgroup */
	    {"/system.slice/a.service/b.service", "b"},
	    {"/user.slice/user-1000.slice/user@1000.service/app.slice/foo.service", "foo"},
	    {"/user.slice/user-1000.slice/session-3.scope", NULL},
	    {"/", NULL},
	    {"", NULL},
	    {"/.service", NULL},	   /* no name before the suffix */
	    {"/system.slice/x.services", NULL}, /* not the suffix */
	    {"/system.slice/my-app@2.service", "my-app@2"},
	};
	char out[256], small[4];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = cgroup_unit_name(cases[i].path, out, sizeof(out));

		CHECK(cases[i].want ? got && !strcmp(got, cases[i].want) : !got,
		      "cgroup_unit_name(\"%s\") = %s, want %s", cases[i].path, got ? got : "NULL",
		      cases[i].want ? cases[i].want : "NULL");
	}
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

/*
 * Lookups by cgroup id cost log n: a user with a delegated subtree may make
 * tens of thousands of cgroups, and every sample of an interval is looked up.
 * 50,000 cgroups, 1,000,000 lookups: a linear search is 2.5e10 comparisons
 * (over 8 s at 3 a nanosecond), a binary one 1.6e7 (milliseconds); 3 s
 * leaves the second a hundredfold for a loaded host.
 */
static void test_names_many(void)
{
	enum { N = 50000, LOOKUPS = 1000000 };
	struct cgroup_names *cn = cgroup_names_new_saved();
	char path[64];
	size_t wrong = 0;
	double t0, secs;
	struct timespec ts;

	/* added in descending id order, as no walk promises any order */
	for (int i = N; i > 0; i--) {
		snprintf(path, sizeof(path), "/u/c%d", i);
		CHECK(cgroup_names_add(cn, (uint64_t)i * 7, path) == 0, "add %d", i);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	for (int k = 0; k < LOOKUPS; k++) {
		int i = 1 + (int)(((uint64_t)k * 2654435761u) % N);
		const char *got = cgroup_names_get(cn, (uint64_t)i * 7);

		snprintf(path, sizeof(path), "/u/c%d", i);
		wrong += !got || strcmp(got, path);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	secs = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9 - t0;
	CHECK(wrong == 0, "%zu lookups of %d wrong", wrong, LOOKUPS);
	CHECK(!cgroup_names_get(cn, 8), "an unknown id is found");
	printf("FIGURE: cgroup names: %d lookups among %d cgroups in %.3f s\n", LOOKUPS, N, secs);
	CHECK(secs < 3.0, "%d lookups among %d cgroups took %.1f s (want < 3 s)", LOOKUPS, N, secs);
	cgroup_names_free(cn);
}

static void test_container_id(void)
{
	static const struct {
		const char *path, *want;
	} cases[] = {
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
	char out[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *got = cgroup_container_id(cases[i].path, out, sizeof(out));

		CHECK(cases[i].want ? got && !strcmp(got, cases[i].want) : !got,
		      "cgroup_container_id(\"%s\") = %s, want %s", cases[i].path,
		      got ? got : "NULL", cases[i].want ? cases[i].want : "NULL");
	}
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_unit_name);
	RUN_TEST(test_container_id);
	RUN_TEST(test_service_name);
	RUN_TEST(test_names_many);
	return HARNESS_DONE();
}
