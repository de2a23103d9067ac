// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * /proc/PID/stat: a comm with ") " inside, dying and zombie states, malformed
 * lines refused, this process and a zombie child read back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/harness.h"
#include "user/track/proc_stat.h"

static void test_proc_stat(void)
{
	struct proc_stat_info st, self;
	int status;
	pid_t child;

	CHECK(!proc_stat_parse("1 (a) b) c) S 0 1 1 0 -1 4194560 1 0 0 0 0 0 0 0 20 0 1 0 "
			       "123456 0 0",
			       &st) &&
		  st.state == 'S' && st.flags == 4194560 && st.start_time == 123456,
	      "comm with ') ' inside: state %c flags %u start %" PRIu64, st.state, st.flags,
	      st.start_time);
	CHECK(!proc_stat_dying(&st), "sleeping is not dying");
	CHECK(!proc_stat_parse("7 (x) R 0 1 1 0 -1 4194308 1 0 0 0 0 0 0 0 20 0 1 0 9", &st) &&
		  proc_stat_dying(&st),
	      "PF_EXITING is dying");
	CHECK(!proc_stat_parse("7 (x) Z 0 1 1 0 -1 0 1 0 0 0 0 0 0 0 20 0 1 0 9", &st) &&
		  proc_stat_dying(&st),
	      "a zombie is dying");
	CHECK(proc_stat_parse("7 (x) S 0 1 1", &st) == -1, "truncated");
	CHECK(proc_stat_parse("7 (x S 0 1 1 0 -1 0 1 0 0 0 0 0 0 0 20 0 1 0 9", &st) == -1,
	      "no ')'");
	CHECK(proc_stat_parse("7 (x) S 0 1 1 0 -1 zz 1 0 0 0 0 0 0 0 20 0 1 0 9", &st) == -1,
	      "not a number");
	CHECK(proc_stat_parse("", &st) == -1, "empty");

	CHECK(!proc_stat_read((uint32_t)getpid(), &self) && self.start_time > 0 &&
		  !proc_stat_dying(&self),
	      "self: start %" PRIu64 " state %c", self.start_time, self.state);
	child = fork();
	if (child == 0)
		_exit(0);
	/* the child is a zombie until reaped */
	for (int i = 0; i < 200; i++) {
		if (!proc_stat_read((uint32_t)child, &st) && st.state == 'Z')
			break;
		usleep(5000);
	}
	CHECK(!proc_stat_read((uint32_t)child, &st) && proc_stat_dying(&st) &&
		  st.start_time >= self.start_time,
	      "zombie child: state %c", st.state);
	waitpid(child, &status, 0);
	CHECK(proc_stat_read((uint32_t)child, &st) == -ENOENT, "reaped child is gone");
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_proc_stat);
	return HARNESS_DONE();
}
