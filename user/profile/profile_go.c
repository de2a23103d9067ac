// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Go's goroutine labels in a profile's samples (profile_internal.h): the
 * struct cfi_go_label units the kernel read after a sample's PCs (bpf/go.bpf.h)
 * become the sample's labels, as Go's own profiler writes them in pprof.
 */
#include <stdio.h>
#include <string.h>

#include "user/profile/profile.h"
#include "user/profile/profile_internal.h"

/*
 * One string of a label, as much as the kernel kept: control characters
 * (the process chose these bytes) become '?', and one cut short ends in
 * "..." so that it is not taken for the whole.
 */
static const char *label_string(struct profile *p, const char *s, size_t room, uint16_t len)
{
	char buf[64 + 4];
	size_t n = len < room ? len : room, i;

	for (i = 0; i < n; i++)
		buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
	if (len > room)
		memcpy(buf + n, "...", 4);
	else
		buf[n] = 0;
	return profile_intern(p, buf);
}

int profile_go_labels(struct profile *p, struct prof_sample *ps, const struct agg_stack *s)
{
	const struct cfi_go_label *l = (const struct cfi_go_label *)(s->pcs + s->nr_kernel +
								     s->nr_user);
	uint32_t n = s->nr_rt / GO_LABEL_UNITS, i;
	struct prof_label *out;

	if (!n)
		return 0;
	if (n > GO_MAX_LABELS)
		n = GO_MAX_LABELS;
	out = profile_alloc_labels(p, n);
	if (!out)
		return -1;
	for (i = 0; i < n; i++) {
		out[i].key = label_string(p, l[i].key, sizeof(l[i].key), l[i].key_len);
		out[i].value = label_string(p, l[i].value, sizeof(l[i].value), l[i].value_len);
		if (!out[i].key || !out[i].value)
			return -1;
	}
	ps->rt_labels = out;
	ps->nr_rt_labels = n;
	return 0;
}
