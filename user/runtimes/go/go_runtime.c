// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Go as a runtime (user/runtimes/runtime.h): the programs found in
 * processes (go_detect) and the goroutine labels the kernel read with
 * their samples (struct cfi_go_label units), with what the summary and
 * /metrics say of them.
 */
#include <inttypes.h>
#include <stdbool.h>

#include <stdlib.h>

#include "user/output/prom_text.h"
#include "user/runtimes/runtime_parts.h"
#include "user/runtimes/go/go_detect.h"
#include "user/runtimes/go/go_runtime.h"

/* its detector alone: labels need no reading of the process */
static void *create(int procs_fd)
{
	struct runtime_parts *r = calloc(1, sizeof(*r));

	if (r)
		r->detect = runtime_detect_new(&go_detect_ops, procs_fd);
	if (r && !r->detect) {
		free(r);
		return NULL;
	}
	return r;
}

static void destroy(void *rt)
{
	struct runtime_parts *r = rt;

	if (r)
		runtime_detect_free(r->detect);
	free(r);
}

static uint32_t labels(const void *units, uint32_t nr_units, struct runtime_label *out,
		       uint32_t max)
{
	const struct cfi_go_label *l = units;
	uint32_t n = nr_units / GO_LABEL_UNITS, i;

	if (n > GO_MAX_LABELS)
		n = GO_MAX_LABELS;
	if (n > max)
		n = max;
	for (i = 0; i < n; i++)
		out[i] = (struct runtime_label){.key = l[i].key,
						.value = l[i].value,
						.key_room = sizeof(l[i].key),
						.value_room = sizeof(l[i].value),
						.key_len = l[i].key_len,
						.value_len = l[i].value_len};
	return n;
}

/* Whether pc is in one of gp's functions that call the vDSO on the system stack. */
static bool in_switcher(const struct cfi_go_proc *gp, __u64 pc)
{
	for (int k = 0; k < GO_SWITCHERS; k++)
		if (pc >= gp->switcher_start[k] && pc < gp->switcher_end[k])
			return true;
	return false;
}

/*
 * A deferred sample taken in the vDSO before its process was known to run
 * Go (a new program's first milliseconds, or before the runtimes' BPF
 * program was in place): the kernel could not read m.vdsoPC and m.vdsoSP
 * then (go_vdso_caller in bpf/go.bpf.h), and they are long gone.  The
 * vDSO's own rules are good up to its caller, the function that switched
 * to the system stack; that one's frame is not where its rule says, so what
 * the walk found past it is another stack's words.  It ends there,
 * runtime-pending, unless it reached the outermost frame past that function
 * (a call made on g0 itself, which switched nothing): the function itself
 * is never one, so a walk that ended on it (a zero word where its return
 * address was looked for) ends runtime-pending too.  A sample in that
 * function itself is the same unless its walk is complete past it (taken
 * before its switch): its leaf alone stands.
 */
static size_t deferred_units(void *rt, struct cfi_sample_record *out, size_t size,
			     const struct deferred_view *v, const __u64 *bps)
{
	struct runtime_parts *r = rt;
	struct cfi_go_proc gp;
	bool vdso = v->leaf_flags & CFI_MAPPING_VDSO;
	/* the vDSO's frames (its clock_gettime may call a helper) and their caller */
	__u32 keep = vdso ? v->leaf_run + 1 : 1;
	size_t cut = (out->nr_user > keep ? out->nr_user - keep : 0) * sizeof(__u64);

	(void)bps;
	/* the runtime's units follow the pcs: none in a sample of no runtime */
	if (out->runtime != RT_NONE || out->nr_rt || !out->nr_user ||
	    (out->reason == STOP_COMPLETE && out->nr_user > keep) ||
	    !runtime_detect_lookup(r->detect, out->pid, &gp, sizeof(gp)) ||
	    !(vdso || in_switcher(&gp, out->pcs[out->nr_kernel])))
		return size;
	if (out->nr_user > keep)
		out->nr_user = keep;
	out->reason = STOP_RUNTIME_PENDING;
	return size - cut;
}

/* Go's goroutine labels: only when a Go program was seen. */
static void summary(void *rt, const uint64_t *c, FILE *f)
{
	uint64_t samples = 0;

	for (int i = 1; i < GO_STATUS_MAX; i++)
		samples += c[CNT_RT_STATUS(RT_GO, i)];
	if (!runtime_parts_summary_head(rt, "go", "Go",
					"no goroutine labels (no offsets for the version, or its g "
					"not found in its TLS)",
					samples, f))
		return;
	fprintf(f,
		"%" PRIu64 " with all their labels, %" PRIu64 " truncated, %" PRIu64
		" unreadable; %" PRIu64 " labels\n",
		c[CNT_RT_STATUS(RT_GO, GO_STATUS_OK)], c[CNT_RT_STATUS(RT_GO, GO_STATUS_TRUNCATED)],
		c[CNT_RT_STATUS(RT_GO, GO_STATUS_UNREADABLE)], c[CNT_RT_UNITS(RT_GO)]);
}

/* Go's goroutine labels: processes found, samples by how their labels were read. */
static void metrics(void *rt, const uint64_t *c, FILE *f)
{
	const char *const status[GO_STATUS_MAX] = {"", "ok", "truncated", "unreadable"};

	runtime_parts_metrics_procs(
	    rt, "go",
	    "Processes found running a Go program: of a version whose goroutine "
	    "labels are read (supported), or not (no offsets for the version, or "
	    "g not found in its TLS).",
	    f);
	runtime_parts_metrics_samples(
	    "go", "Samples of goroutines of supported Go processes by how their labels were read.",
	    RT_GO, status, GO_STATUS_MAX, c, f);
	prom_metric(f, "cfiprof_go_labels_total", "counter", "Go goroutine labels recorded.",
		    (double)c[CNT_RT_UNITS(RT_GO)]);
}

const struct runtime_ops go_runtime = {
    .id = RT_GO,
    .create = create,
    .destroy = destroy,
    .hooks = runtime_parts_hooks,
    .labels = labels,
    .deferred_units = deferred_units,
    .summary = summary,
    .metrics = metrics,
};
