// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * V8 as a runtime (user/runtimes/runtime.h): the Node.js processes found
 * (v8_detect, through runtime_detect) and the names of their JavaScript
 * functions (v8_names), with what the summary and /metrics say of them.
 */
#include <stdlib.h>

#include "user/runtimes/runtime_parts.h"
#include "user/runtimes/v8/v8_detect.h"
#include "user/runtimes/v8/v8_names.h"
#include "user/runtimes/v8/v8_runtime.h"

static void namer(void *rt, struct interp_namer *out)
{
	v8_names_namer(rt ? ((struct runtime_parts *)rt)->names : NULL, out);
}

/* JavaScript frames in the summary (only when a V8 process was seen) and /metrics. */
static const struct runtime_frames_desc desc = {
    .rt = RT_V8,
    .name = "v8",
    .what = "JavaScript",
    .ok_text = "with their frames",
    .none_text = "without a JavaScript frame",
    .status = {"", "ok", "no_js", "truncated", "unreadable"},
    .units = "functions",
    .procs_help = "Processes found running V8 with its layout exported (v8dbg_* symbols): "
		  "JavaScript frames named.",
    .samples_help = "Samples of V8 processes by how their JavaScript frames were read.",
    .reads_help = "JavaScript functions (SharedFunctionInfos) read from their process to name "
		  "frames: read, unreadable, refused (over the reads per second or the cache's "
		  "bounds, or the process's memory blocked a read).",
};
_Static_assert(V8_STATUS_OK == 1 && V8_STATUS_NO_JS == 2 && V8_STATUS_TRUNCATED == 3 &&
		   V8_STATUS_UNREADABLE == 4 && V8_STATUS_MAX == 5,
	       "the statuses runtime_frames_desc says");

static void *create(int procs_fd)
{
	return runtime_parts_new(&v8_detect_ops, &v8_name_ops, &desc, procs_fd);
}

const struct runtime_ops v8_runtime = RUNTIME_PARTS_OPS(RT_V8, create, namer);
