// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Labels a runtime read with a sample (profile_internal.h): its units,
 * decoded by the runtime (Go's goroutine labels, bpf/go.bpf.h), become the
 * sample's labels, as the runtime's own profiler writes them in pprof.
 */
#include <stdio.h>
#include <string.h>

#include "user/profile/profile.h"
#include "user/profile/profile_internal.h"

/* the most labels a sample carries: what the largest runtime record could hold */
#define MAX_SAMPLE_LABELS 32

/*
 * One string of a label, as much as the kernel kept: control characters
 * (the process chose these bytes) become '?', and one cut short ends in
 * "..." so that it is not taken for the whole.
 */
static const char *label_string(struct profile *p, const char *s, uint32_t room, uint32_t len)
{
	char buf[128 + 4];
	size_t n = len < room ? len : room, i;

	if (n > sizeof(buf) - 4)
		n = sizeof(buf) - 4;
	for (i = 0; i < n; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	if (len > n)
		memcpy(buf + n, "...", 4);
	else
		buf[n] = 0;
	return profile_intern(p, buf);
}

int profile_runtime_labels(struct profile *p, struct prof_sample *ps, const struct agg_stack *s,
			   runtime_labels_fn decode)
{
	struct runtime_label in[MAX_SAMPLE_LABELS];
	struct prof_label *out;
	uint32_t n, i;

	if (!decode || !s->nr_rt)
		return 0;
	n = decode(s->pcs + s->nr_kernel + s->nr_user, s->nr_rt, in, MAX_SAMPLE_LABELS);
	if (!n)
		return 0;
	out = profile_alloc_labels(p, n);
	if (!out)
		return -1;
	for (i = 0; i < n; i++) {
		out[i].key = label_string(p, in[i].key, in[i].key_room, in[i].key_len);
		out[i].value = label_string(p, in[i].value, in[i].value_room, in[i].value_len);
		if (!out[i].key || !out[i].value)
			return -1;
	}
	ps->rt_labels = out;
	ps->nr_rt_labels = n;
	return 0;
}
