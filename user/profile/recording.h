/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Saved recordings (record --save): the aggregated raw stacks plus every
 * mapping needed to symbolize them later, in a line-based text format:
 *
 *   # cfiprof recording v1
 *   meta FREQ EVENT START-UNIX-NS DURATION-NS
 *   map PID START END OFFSET BIAS FLAGS BUILD-ID PATH
 *   proc PID NS-PID
 *   gen PID GENERATION [FIRST]  (the map lines after it belong to the generations
 *                               FIRST..GENERATION; without FIRST, those after the
 *                               previous gen line's)
 *   cgroup ID PATH
 *   kname PC NAME               (a kernel frame's name when recorded: BPF programs)
 *   uframe PID MAP-START ADDR LEVEL LINE START-LINE<TAB>FUNCTION<TAB>SYSTEM-NAME<TAB>FILE
 *          [<TAB>MAPPED]        (a user location as record named it: one line per
 *                               level of its frame model, profile.h, innermost 0 first;
 *                               MAP-START 0 when unmapped; FILE empty when unknown;
 *                               MAPPED, hex: saved_frames_file of the mapping's path (0: none),
 *                               telling apart files mapped at one address in turn)
 *   TAGframe PID GENERATION CODE INSTR ENTRY OWNER SCOPE ROLE LINE<TAB>NAME<TAB>FILE
 *            [<TAB>NAME<TAB>FILE<TAB>LINE]..
 *                               (an interpreter frame of the stacks as record showed it,
 *                               each distinct one once, TAG its runtime's (CFI_RUNTIMES:
 *                               "pyframe" for Python): the kernel's struct
 *                               cfi_interp_frame, its enum interp_frame_role, line,
 *                               qualified name, file; FILE empty when its code was not
 *                               read; then the levels a JIT inlined into it there,
 *                               innermost first, which older readers skip)
 *   event NAME                  (the profile's events in order, with -e / --off-cpu)
 *   estimated MASK              (bit i: event i's weights estimate hits past --event-budget)
 *   stack COUNT PID TID REASON FLAGS COMM k PC,PC,.. u PC,PC,.. [c CGROUP-ID] [g GENERATION]
 *         [w WEIGHT] [e EVENT]  (with events: the weights summed, the event's index)
 *         [TAG CODE:INSTR:ENTRY:OWNER:SCOPE,..]  (its interpreter frames, innermost
 *                               first: "py" for Python's)
 *         [rt RUNTIME:STATUS:HEX]  (another runtime's units as they came: Go's labels)
 *   overflow COUNT [WEIGHT]
 *
 * Numbers are hex except FREQ, *-NS, COUNT, PID, TID, REASON, FLAGS and TAGframe's
 * GENERATION, ENTRY, OWNER, ROLE, LINE; an empty list is "-"; a stack's FLAGS are
 * its first sample's, but deferred samples (SAMPLE_DEFERRED) have stacks of their own;
 * COMM has spaces replaced by '_'.  PCs are leaf first, as the walker emits them.
 * Tabs and newlines inside uframe strings become spaces.
 *
 * uframe lines make a recording render the same in `report` on a host without
 * the binaries, their debug files or perf maps: names, inline levels, lines.
 * A recording without them is named again from the files it names.
 * TAGframe lines do the same for interpreter frames, whose code lived in
 * the recorded processes only: a recording without them (older ones) shows
 * plain native stacks.
 */
#ifndef CFIPROF_RECORDING_H
#define CFIPROF_RECORDING_H

#include <stdio.h>

#include "user/profile/aggregate.h"
#include "user/profile/profile.h"
#include "user/profile/saved_frames.h"
#include "user/profile/saved_interp.h"
#include "user/track/cgroups.h"
#include "user/profile/frame_names.h"
#include "user/track/proc_tracker.h"

/* as many as -e takes (EVENT_MAX) */
#define RECORDING_MAX_EVENTS 16
/* record keeps, and report reads, this recording by default (as perf.data) */
#define RECORDING_DEFAULT_PATH "cfiprof.data"

struct recording_meta {
	uint32_t freq;
	char event[32];
	uint64_t start_unix_ns, duration_ns;
	const struct ksyms *ks;	   /* write: names of BPF program frames are saved */
	/* the events' names, in order, written and read (none: the default CPU profile) */
	char event_names[RECORDING_MAX_EVENTS][512];
	int nr_events;
	struct kernel_names knames; /* read: those names (kernel_names_free when done) */
	const struct profile *prof; /* write: its user locations are saved (NULL: none) */
	struct saved_frames *frames; /* read: where uframe lines go (NULL: skipped) */
	/*
	 * write: each runtime's namer of its interpreter frames, by enum
	 * cfi_runtime (NULL: its frames are not saved, as none were shown)
	 */
	const struct interp_namer *interp[RT_MAX];
	struct saved_interp *interp_frames; /* read: where TAGframe lines go (NULL: skipped) */
};

int recording_write(FILE *f, struct aggregator *a, struct proc_tracker *pt,
		    const struct recording_meta *meta, struct cgroup_names *cgroups);

/*
 * Reads a recording into a (stacks) and pt (mappings; symbols are loaded
 * from the files named, so a recording can be re-rendered without root).
 * Malformed lines are skipped and counted in *bad (the first one described in
 * err); returns 0, or -1 if the file is not a recording at all.
 */
int recording_read(FILE *f, struct aggregator *a, struct proc_tracker *pt,
		   struct recording_meta *meta, struct cgroup_names *cgroups, uint64_t *bad, char *err,
		   size_t errlen);

#endif
