/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Go profiler labels: what crosses the kernel/user boundary for this runtime alone
 * (bpf/go.bpf.h, user/runtimes/go/).  Included through bpf/runtime_table.h
 * after cfiprof_abi.h's runtime-generic part.
 */
#ifndef CFIPROF_GO_ABI_H
#define CFIPROF_GO_ABI_H

#define GO_MAX_LABELS	   8
#define GO_LABEL_KEY_MAX   40
#define GO_LABEL_VALUE_MAX 48
#define GO_SWITCHERS	   5

/*
 * One label of the sampled goroutine (pprof.Do, pprof.SetGoroutineLabels):
 * its key and value, cut to the arrays; the lengths are Go's, so a cut one
 * is known.
 */
struct cfi_go_label {
	__u16 key_len;
	__u16 value_len;
	__u32 pad;
	char key[GO_LABEL_KEY_MAX];
	char value[GO_LABEL_VALUE_MAX];
};

#define GO_LABEL_UNITS	(sizeof(struct cfi_go_label) / RT_UNIT_BYTES)
#define GO_RECORD_BYTES (GO_MAX_LABELS * sizeof(struct cfi_go_label))

enum cfi_go_status {
	GO_STATUS_NONE = 0,	  /* no goroutine labels read (not a Go process, no g) */
	GO_STATUS_OK = 1,	  /* the goroutine's labels, all of them (maybe none) */
	GO_STATUS_TRUNCATED = 2,  /* more than GO_MAX_LABELS, or in a bucket not read */
	GO_STATUS_UNREADABLE = 3, /* a pointer on the way could not be read */
	GO_STATUS_MAX,
};

/*
 * A Go process, keyed by tgid: where its g is (the TLS slot below the
 * thread pointer; on arm64 in x28) and its version's field offsets
 * (user/runtimes/go/go_detect.c).
 */
struct cfi_go_proc {
	__s32 tls_g;	/* g's offset from the thread pointer (fs base) */
	__u16 g_m;	/* runtime.g.m */
	__u16 m_curg;	/* runtime.m.curg: the user goroutine, also on the system stack */
	__u16 g_labels; /* runtime.g.labels: a *labelMap (map[string]string up to 1.23) */
	__u16 version;	/* major << 8 | minor */
	__u16 m_vdso_sp; /* runtime.m.vdsoSP: the sp of a vDSO call's caller (0: offsets unknown) */
	__u16 m_vdso_pc; /* runtime.m.vdsoPC: its pc */
	__u64 maps_read_ns; /* as every runtime's: struct cfi_runtime_proc */
	/*
	 * User space's alone: the functions that call the vDSO on the system
	 * stack (go_switchers in user/runtimes/go/go_detect.c), [start, end)
	 * as mapped, unused slots empty: a deferred sample's walk from one
	 * past its switch found no caller the kernel would have walked.
	 */
	__u64 switcher_start[GO_SWITCHERS];
	__u64 switcher_end[GO_SWITCHERS];
};

#endif
