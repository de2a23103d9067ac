// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * on_exit_maps, an object of its own, loaded after cfiprof.bpf.c's with its
 * maps (user/session/exit_maps_load.c).  Neither makes libbpf read the
 * kernel's BTF: CO-RE types come from a cache (user/session/core_btf.h), the
 * kfuncs' ids from the loader (kfunc_abi.h), and this program is a raw
 * tracepoint's, attached by name, not tp_btf's.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "cfiprof_abi.h"
#include "kfunc_abi.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#include "lifecycle_maps.bpf.h"

/*
 * A process exiting with deferred samples newer than its last load (or never
 * loaded), or a loaded one whose executable mappings changed after its last
 * load: user space will find /proc/PID gone when it reads them, and could
 * not finish the deferred samples nor name the exiting ones (their leaf, the
 * exit_group call, may be in code mapped since: ld.so's libraries after a
 * load at exec, a library dlopen'd just before the exit).  Its executable
 * file mappings and its vDSO go out now, while the address space is still
 * whole (sched_process_exit comes before exit_mm() on the kernels that have
 * the VMA iterator).  Loaded only where the kernel has bpf_iter_task_vma
 * (6.7+).
 */
static int (*const iter_task_vma_new)(struct bpf_iter_task_vma *it, struct task_struct *task,
				      __u64 addr) = (void *)(KFUNC_CALL_BASE +
							     KFUNC_ITER_TASK_VMA_NEW);
static struct vm_area_struct *(*const iter_task_vma_next)(struct bpf_iter_task_vma *it) =
    (void *)(KFUNC_CALL_BASE + KFUNC_ITER_TASK_VMA_NEXT);
static void (*const iter_task_vma_destroy)(struct bpf_iter_task_vma *it) =
    (void *)(KFUNC_CALL_BASE + KFUNC_ITER_TASK_VMA_DESTROY);

#define VM_EXEC_BIT 0x4

/* the exiting task is the current one: the tracepoint's argument is not read */
SEC("raw_tp/sched_process_exit")
int on_exit_maps(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct task_struct *task = bpf_get_current_task_btf();
	__u32 tgid = pid_tgid >> 32, zero = 0, lost = 0, *sent;
	struct pid_times *times;
	__u64 deferred, changed;
	struct cfi_maps_entry_record r = {.type = RECORD_MAPS_ENTRY};
	struct cfi_maps_end_record end = {.type = RECORD_MAPS_END};
	struct bpf_iter_task_vma it;
	struct vm_area_struct *vma;
	struct cfi_proc_val *proc;
	__u64 vdso;

	/*
	 * The process's exit is its last thread's, leader or not (exit() in
	 * main has the other threads end after it; a leader that called
	 * pthread_exit leaves the process to the others): each thread drops
	 * the count of live ones before this tracepoint, and while it is above
	 * zero the process goes on (another thread exec'd, or still exiting).
	 */
	if (BPF_CORE_READ(task, signal, live.counter))
		return 0;
	times = bpf_map_lookup_elem(&pid_times, &tgid);
	if (!times)
		return 0;
	deferred = times->ns[PT_DEFERRED];
	changed = times->ns[PT_CHANGED];
	/* two threads ending at once can both see none live: the one that removes it sends */
	if (bpf_map_delete_elem(&pid_times, &tgid))
		return 0;
	if (!deferred && !changed)
		return 0;
	/* never loaded, only its deferred samples need the list; loaded, what came after the load
	 */
	proc = bpf_map_lookup_elem(&procs, &tgid);
	if (proc ? !(proc->flags & CFI_PROC_UPDATING) && proc->loaded_ns >= deferred &&
		       proc->loaded_ns >= changed
		 : !deferred)
		return 0;
	/*
	 * Pointers are read with CO-RE reads, not followed as BTF pointers: the
	 * verifier looks each such load up by name among vmlinux's 100,000-odd
	 * types (btf_nested_type_is_trusted), ~1 ms a load, 11 ms of the start.
	 */
	if (!BPF_CORE_READ(task, mm)) {
		walker_count(CNT_EXIT_MAPS_NO_MM, 1);
		return 0;
	}
	/* its code has no file, and samples land in it (clock_gettime) */
	vdso = (__u64)BPF_CORE_READ(task, mm, context.vdso);
	sent = bpf_map_lookup_elem(&exit_maps_sent, &zero);
	if (!sent)
		return 0;
	*sent = 0;
	r.pid = tgid;
	iter_task_vma_new(&it, task, 0);
	while ((vma = iter_task_vma_next(&it))) {
		struct file *file = BPF_CORE_READ(vma, vm_file);
		__u64 start = BPF_CORE_READ(vma, vm_start);
		struct inode *inode;

		if (!(BPF_CORE_READ(vma, vm_flags) & VM_EXEC_BIT) || (!file && start != vdso))
			continue;
		/* a process mapping code thousands of times: what user space takes, and one more */
		if (*sent > CFI_MAPS_MAX)
			break;
		*sent += 1;
		r.e.start = start;
		r.e.end = BPF_CORE_READ(vma, vm_end);
		r.e.pgoff = 0;
		r.e.ino = 0;
		r.e.dev = 0;
		r.e.flags = CFI_MAPS_ENTRY_VDSO;
		if (file) {
			inode = BPF_CORE_READ(file, f_inode);
			r.e.pgoff = (__u64)BPF_CORE_READ(vma, vm_pgoff) << 12;
			r.e.ino = BPF_CORE_READ(inode, i_ino);
			r.e.dev = BPF_CORE_READ(inode, i_sb, s_dev);
			r.e.flags = 0;
		}
		if (bpf_ringbuf_output(&exit_maps, &r, sizeof(r), 0))
			lost = 1;
	}
	iter_task_vma_destroy(&it);
	end.pid = tgid;
	end.time_ns = bpf_ktime_get_ns();
	/* the process's start, as /proc/PID/stat gives it: its leader's, not this thread's */
	end.start_boottime_ns = BPF_CORE_READ(task, group_leader, start_boottime);
	end.lost = lost;
	if (bpf_ringbuf_output(&exit_maps, &end, sizeof(end), BPF_RB_FORCE_WAKEUP) || lost)
		walker_count(CNT_EXIT_MAPS_LOST, 1);
	else
		walker_count(CNT_EXIT_MAPS, 1);
	return 0;
}
