// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * PHP as a runtime (user/runtimes/runtime.h): the builds found in processes
 * (php_detect, through runtime_detect) and the names of their functions
 * (php_names), with what the summary and /metrics say of them.
 */
#include <stdlib.h>

#include "user/runtimes/runtime_parts.h"
#include "user/runtimes/php/php_detect.h"
#include "user/runtimes/php/php_names.h"
#include "user/runtimes/php/php_runtime.h"

static void namer(void *rt, struct interp_namer *out)
{
	php_names_namer(rt ? ((struct runtime_parts *)rt)->names : NULL, out);
}

/* PHP frames in the summary (only when a PHP process was seen) and /metrics. */
static const struct runtime_frames_desc desc = {
    .rt = RT_PHP,
    .name = "php",
    .what = "PHP",
    .ok_text = "with their frame chain",
    .none_text = "running no PHP code",
    .status = {"", "ok", "idle", "truncated", "unreadable"},
    .units = "functions",
    .procs_help = "Processes found running PHP: with a supported version (PHP frames), or "
		  "unsupported (native stacks only).",
    .samples_help = "Samples of supported PHP processes by how the executor's frame chain was "
		    "read.",
    .reads_help = "PHP functions read from their process to name frames: read, unreadable, "
		  "refused (over the reads per second or the cache's bounds, or the process's "
		  "memory blocked a read).",
};
_Static_assert(PHP_STATUS_OK == 1 && PHP_STATUS_IDLE == 2 && PHP_STATUS_TRUNCATED == 3 &&
		   PHP_STATUS_UNREADABLE == 4 && PHP_STATUS_MAX == 5,
	       "the statuses runtime_frames_desc says");

static void *create(int procs_fd)
{
	return runtime_parts_new(&php_detect_ops, &php_name_ops, &desc, procs_fd);
}

const struct runtime_ops php_runtime = RUNTIME_PARTS_OPS(RT_PHP, create, namer);
