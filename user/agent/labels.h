/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Host-level labels on an agent profile.  pprof_write labels samples with
 * pid, tid and comm; a fleet store also needs to know which host (and which
 * deployment labels) a sample came from once profiles are merged, so every
 * sample gets those labels as well, and the profile's comments list them.
 */
#ifndef CFIPROF_AGENT_LABELS_H
#define CFIPROF_AGENT_LABELS_H

#include <stddef.h>

struct agent_label {
	const char *key, *value;
};

/*
 * Rewrites the gzip'd pprof in (as pprof_write makes it) with the labels added
 * to every sample and "key=value" comments.  *out is malloc'd, gzip'd too.
 * Returns 0, or -1 if in is not a pprof profile or memory ran out.
 */
int agent_pprof_add_labels(const void *in, size_t in_len, const struct agent_label *labels,
			   int nr_labels, void **out, size_t *out_len);

#endif
