// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ruby as a runtime (user/runtimes/runtime.h): the libruby found in
 * processes (ruby_detect, through runtime_detect) and the names and lines
 * of their iseqs (ruby_names), with what the summary and /metrics say.
 */
#include <stdlib.h>

#include "user/runtimes/ruby/ruby_detect.h"
#include "user/runtimes/ruby/ruby_names.h"
#include "user/runtimes/ruby/ruby_runtime.h"
#include "user/runtimes/runtime_parts.h"

static void namer(void *rt, struct interp_namer *out)
{
	ruby_names_namer(rt ? ((struct runtime_parts *)rt)->names : NULL, out);
}

/* Ruby frames in the summary (only when a Ruby process was seen) and /metrics. */
static const struct runtime_frames_desc desc = {
    .rt = RT_RUBY,
    .name = "ruby",
    .what = "Ruby",
    .ok_text = "with their frames",
    .none_text = "of threads without an execution context",
    .status = {"", "ok", "no_thread", "truncated", "unreadable"},
    .units = "iseqs",
    .procs_help = "Processes found running libruby: with a supported version (Ruby frames), "
		  "or unsupported (native stacks only).",
    .samples_help = "Samples of supported Ruby processes by how the control frames were read.",
    .reads_help = "Ruby iseqs read from their process to name frames: read, unreadable, "
		  "refused (over the reads per second or the cache's bounds, or the process's "
		  "memory blocked a read).",
};
_Static_assert(RUBY_STATUS_OK == 1 && RUBY_STATUS_NO_THREAD == 2 && RUBY_STATUS_TRUNCATED == 3 &&
		   RUBY_STATUS_UNREADABLE == 4 && RUBY_STATUS_MAX == 5,
	       "the statuses runtime_frames_desc says");

static void *create(int procs_fd)
{
	return runtime_parts_new(&ruby_detect_ops, &ruby_name_ops, &desc, procs_fd);
}

const struct runtime_ops ruby_runtime = RUNTIME_PARTS_OPS(RT_RUBY, create, namer);
