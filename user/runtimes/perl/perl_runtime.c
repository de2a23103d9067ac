// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Perl as a runtime (user/runtimes/runtime.h): the perls found in processes
 * (perl_detect, through runtime_detect) and the names of their subs
 * (perl_names), with what the summary and /metrics say of them.
 */
#include <stdlib.h>

#include "user/runtimes/perl/perl_detect.h"
#include "user/runtimes/perl/perl_names.h"
#include "user/runtimes/perl/perl_runtime.h"
#include "user/runtimes/runtime_parts.h"

static void namer(void *rt, struct interp_namer *out)
{
	perl_names_namer(rt ? ((struct runtime_parts *)rt)->names : NULL, out);
}

/* Perl frames in the summary (only when a Perl process was seen) and /metrics. */
static const struct runtime_frames_desc desc = {
    .rt = RT_PERL,
    .name = "perl",
    .what = "Perl",
    .ok_text = "with their frames",
    .none_text = "of threads without an interpreter",
    .status = {"", "ok", "no_thread", "truncated", "unreadable"},
    .units = "subs",
    .procs_help = "Processes found running perl: with a supported version (Perl frames), or "
		  "unsupported (native stacks only).",
    .samples_help = "Samples of supported Perl processes by how the context stacks were read.",
    .reads_help = "Perl subs (CVs) read from their process to name frames: read, unreadable, "
		  "refused (over the reads per second or the cache's bounds, or the process's "
		  "memory blocked a read).",
};
_Static_assert(PERL_STATUS_OK == 1 && PERL_STATUS_NO_THREAD == 2 && PERL_STATUS_TRUNCATED == 3 &&
		   PERL_STATUS_UNREADABLE == 4 && PERL_STATUS_MAX == 5,
	       "the statuses runtime_frames_desc says");

static void *create(int procs_fd)
{
	return runtime_parts_new(&perl_detect_ops, &perl_name_ops, &desc, procs_fd);
}

const struct runtime_ops perl_runtime = RUNTIME_PARTS_OPS(RT_PERL, create, namer);
