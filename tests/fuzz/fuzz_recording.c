/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libFuzzer target for saved recordings: what `cfiprof report FILE` does with
 * FILE, minus kernel symbols: recording_read, profile_build (symbolizing
 * through the files the recording names) and every output format, written to
 * /dev/null.  The separate debug file lookup is off, as it is not the input.
 * A hostile recording can name any file: REC_FIFO is a FIFO that exists while
 * the target runs, so a path naming it models a planted FIFO (open blocks).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "user/profile/aggregate.h"
#include "user/track/cgroups.h"
#include "user/profile/frame_names.h"
#include "user/symbolize/sym_cache.h"
#include "user/output/format.h"
#include "user/track/proc_tracker.h"
#include "user/profile/profile.h"
#include "user/profile/recording.h"
#include "user/session/runtimes.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REC_FIFO "/tmp/cfiprof-fuzz.fifo"

static FILE *rec_null;

static void rec_render(struct aggregator *agg, struct proc_tracker *pt, struct cgroup_names *cg,
		       const struct recording_meta *meta, bool by_container)
{
	static const enum out_format fmts[] = {OUT_FOLDED, OUT_PPROF, OUT_SVG,
					       OUT_TEXT,   OUT_SPEEDSCOPE, OUT_OTLP};
	struct profile_info info = {0};
	struct frame_namer fn;
	struct profile prof;
	size_t i;

	frame_namer_init(&fn, pt, NULL);
	fn.saved_kernel = &meta->knames;
	fn.saved_user = meta->frames;
	fn.saved_interp = meta->interp_frames;
	session_runtimes_namers(NULL, &fn, NULL); /* as report's */
	info.cgroups = cg;
	info.group_by_container = by_container;
	info.period_ns = meta->freq ? 1000000000ull / meta->freq : 0;
	info.start_unix_ns = meta->start_unix_ns;
	info.duration_ns = meta->duration_ns;
	info.event = meta->event[0] ? meta->event : "cpu-clock";
	if (profile_build(&prof, agg, &fn, &info) == 0) {
		for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++)
			output_write(rec_null, &prof, fmts[i], "fuzz.rec", NULL);
		fflush(rec_null);
		profile_free(&prof);
	}
	frame_namer_free(&fn);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct recording_meta meta = {0};
	struct aggregator agg;
	struct sym_cache *syms;
	struct proc_tracker *pt;
	struct cgroup_names *cg;
	char path[64], err[256];
	uint64_t bad = 0;
	FILE *f;
	int fd;

	if (!rec_null) {
		rec_null = fopen("/dev/null", "we");
		mkfifo(REC_FIFO, 0600);
	}
	fd = fuzz_memfd("recording", data, size, path, sizeof(path));
	f = fdopen(fd, "r");
	syms = sym_cache_new();
	pt = syms ? proc_tracker_new_names(syms) : NULL;
	cg = cgroup_names_new_saved();
	meta.frames = saved_frames_new();
	meta.interp_frames = saved_interp_new();
	if (!f || !rec_null || !pt || !cg || !meta.frames || !meta.interp_frames ||
	    sym_cache_set_debug_root(syms, NULL) || agg_init(&agg, 4096))
		abort();
	err[0] = '\0';
	if (recording_read(f, &agg, pt, &meta, cg, &bad, err, sizeof(err)) == 0) {
		if (bad && !err[0])
			abort(); /* the first malformed line is always described */
		rec_render(&agg, pt, cg, &meta, size & 1);
	} else if (!err[0]) {
		abort();
	}
	agg_free(&agg);
	kernel_names_free(&meta.knames);
	saved_frames_free(meta.frames);
	saved_interp_free(meta.interp_frames);
	cgroup_names_free(cg);
	proc_tracker_free(pt);
	sym_cache_free(syms);
	fclose(f);
	return 0;
}
