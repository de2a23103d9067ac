// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Frame names without a tracker: perf-PID.map, then "[unknown]"; stop reasons.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/harness.h"
#include "tests/lib/agg_samples.h"
#include "user/profile/frame_names.h"

/* frame_name_user with no tracker falls back to perf-PID.map, then "[unknown]". */
static void test_frame_names_perfmap(void)
{
	/*
	 * No process can have it (above pid_max's limit, 2^22), and it is this
	 * run's own: the suite's sanitizer twins run beside it (tests/run.sh)
	 */
	uint32_t fake_pid = FAKE_PID2 - (uint32_t)getpid();
	char path[64], fake[64], buf[256];
	struct frame_namer fn;
	const char *name;
	FILE *f, *g;

	CHECK(streq(stop_reason_name(STOP_NO_RULE), "no-rule") &&
		  streq(stop_reason_name(200), "unknown(200)") &&
		  streq(stop_reason_name(-1), "unknown(-1)"),
	      "stop_reason_name");
	/* a live process (this one): its map, read through its root, owned by its user */
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	snprintf(fake, sizeof(fake), "/tmp/perf-%d.map", (int)fake_pid);
	f = fopen(path, "w");
	g = fopen(fake, "w");
	if (!f || !g) {
		CHECK(0, "writing %s and %s", path, fake);
		return;
	}
	fputs("7f0000001000 100 jit;func\n", f);
	fputs("7f0000001000 100 jit;func\n", g);
	fclose(f);
	fclose(g);
	frame_namer_init(&fn, NULL, NULL);
	name = frame_name_user(&fn, FAKE_PID1, 0, 0x7f0000001010ull, true, buf, sizeof(buf));
	CHECK(streq(name, "[unknown]"), "no tracker, no perf map: '%s'", name);
	name = frame_name_user(&fn, (uint32_t)getpid(), 0, 0x7f0000001010ull, true, buf, sizeof(buf));
	CHECK(streq(name, "jit;func"), "perf-PID.map name expected, got '%s'", name);
	/* a return address is looked up at pc-1: the end of the symbol still belongs to it */
	name = frame_name_user(&fn, (uint32_t)getpid(), 0, 0x7f0000001100ull, false, buf,
			       sizeof(buf));
	CHECK(streq(name, "jit;func"), "return address at symbol end: '%s'", name);
	/* no such process: a map in our /tmp under its pid names nothing live ... */
	name = frame_name_user(&fn, fake_pid, 0, 0x7f0000001010ull, true, buf, sizeof(buf));
	CHECK(streq(name, "[unknown]"), "a map for a pid with no process: '%s'", name);
	frame_namer_free(&fn);
	/* ... but report reads /tmp/perf-PID.map of whoever runs it */
	frame_namer_init(&fn, NULL, NULL);
	fn.perfmaps_by_path = true;
	name = frame_name_user(&fn, fake_pid, 0, 0x7f0000001010ull, true, buf, sizeof(buf));
	CHECK(streq(name, "jit;func"), "report: perf-PID.map by path, got '%s'", name);
	unlink(fake);
	frame_namer_free(&fn);
	unlink(path);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_frame_names_perfmap);
	return HARNESS_DONE();
}
