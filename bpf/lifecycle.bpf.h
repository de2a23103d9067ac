/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Exec, mapping changes, fork, exit and free of the processes being
 * profiled: what the tracker in user space must hear about.  Included by
 * cfiprof.bpf.c after its maps and helpers.
 */
#ifndef CFIPROF_LIFECYCLE_BPF_H
#define CFIPROF_LIFECYCLE_BPF_H

/* BTF tracepoints: no tracefs needed, so CAP_BPF + CAP_PERFMON suffice. */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;

	/*
	 * Its runtime's addresses were the old image's: the new one's are
	 * found by the load its exec asks for (none if it runs none).
	 */
	if (runtime_exec(tgid))
		pid_time_set(tgid, PT_EXEC, bpf_ktime_get_ns());
	if (wanted(tgid)) {
		note_change(tgid, bpf_ktime_get_ns());
		emit_event(RECORD_EXEC, tgid, 0);
	}
	return 0;
}

/*
 * Mapping changes the walker cannot see: a library dlclose()d and another
 * mapped at the same address would otherwise be unwound and named with the
 * old one's tables.  munmap of a range we have a mapping for, mmap with
 * PROT_EXEC, and mprotect adding PROT_EXEC to a range no known mapping
 * covers (a JIT's code written, then made executable: V8, HotSpot's code
 * heap), ask user space to re-read the process's mappings.  Every syscall
 * passes here, so the syscall number is checked first.
 */
#define PROT_EXEC_BIT 4

SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id)
{
	__u32 tgid;

	if (id != NR_MUNMAP)
		return 0;
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (!bpf_map_lookup_elem(&procs, &tgid) ||
	    !walker_lookup_mapping(tgid, ARCH_SYSCALL_ARG(regs, 0)))
		return 0;
	mapping_changed(tgid, ARCH_SYSCALL_ARG(regs, 0));
	return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 nr = ARCH_SYSCALL_NR(regs), addr;
	__u32 tgid;

	if ((nr != NR_MMAP && nr != NR_MPROTECT) || ret < 0 ||
	    !(ARCH_SYSCALL_ARG(regs, 2) & PROT_EXEC_BIT))
		return 0;
	addr = nr == NR_MMAP ? (__u64)ret : ARCH_SYSCALL_ARG(regs, 0);
	tgid = bpf_get_current_pid_tgid() >> 32;
	if (bpf_map_lookup_elem(&procs, &tgid)) {
		/* a JIT flipping known code between writable and executable changes nothing */
		if (nr == NR_MPROTECT && walker_lookup_mapping(tgid, addr))
			return 0;
		mapping_changed(tgid, addr);
	}
	/*
	 * No entry yet, but a load may be under way: one that read the maps
	 * before this mmap must not pass for one that saw it (its first sample
	 * asks for the tables; ld.so maps the libraries right after exec).
	 */
	else if (wanted(tgid))
		note_change(tgid, bpf_ktime_get_ns());
	return 0;
}

/*
 * A process forked by one being profiled is profiled too, as perf record
 * follows a command's children: a shell script or make shows its commands.
 * Threads share the tgid and are covered already.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid, ctgid;

	if (!follow_children || !filter_enabled)
		return 0;
	ptgid = parent->tgid;
	ctgid = child->tgid;
	if (ctgid == ptgid || !is_target(ptgid) || is_target(ctgid))
		return 0;
	/*
	 * An add, the only atomic OR BPF has without -mcpu=v3: the bit was clear,
	 * and a new tgid has no other writer (user space adds only processes
	 * that exist already, on_free only tgids that were set).
	 */
	__sync_fetch_and_add(target_word(ctgid), 1ULL << (ctgid & 63));
	/* over the budget, the child's first sample asks for it instead */
	if (request_budget_left(bpf_ktime_get_ns())) {
		walker_count(CNT_REQUESTS, 1);
		emit_event(RECORD_REQUEST, ctgid, 0);
	}
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(on_exit, struct task_struct *p)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tgid = pid_tgid >> 32;

	offcpu_thread_exit((__u32)pid_tgid);
	runtime_thread_exit((__u32)pid_tgid);
	/* a thread exiting is not a process exiting */
	if ((__u32)pid_tgid != tgid)
		return 0;
	if (wanted(tgid))
		emit_event(RECORD_EXIT, tgid, 0);
	/*
	 * on_exit_maps, on the same tracepoint in no set order, reads its
	 * deferred and changed times and removes the entry; without it the
	 * entry goes now.  A pid used again starts without the old process's
	 * times.
	 */
	if (!exit_maps_on) {
		bpf_map_delete_elem(&pid_times, &tgid);
	} else {
		struct pid_times *t = bpf_map_lookup_elem(&pid_times, &tgid);

		if (t) {
			t->ns[PT_REQUEST] = 0;
			t->ns[PT_CHANGE_REQUEST] = 0;
		}
	}
	return 0;
}

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
 * (6.7+): user space turns autoload on.
 */
extern int bpf_iter_task_vma_new(struct bpf_iter_task_vma *it, struct task_struct *task,
				 __u64 addr) __weak __ksym;
extern struct vm_area_struct *bpf_iter_task_vma_next(struct bpf_iter_task_vma *it) __weak __ksym;
extern void bpf_iter_task_vma_destroy(struct bpf_iter_task_vma *it) __weak __ksym;

#define VM_EXEC_BIT 0x4

SEC("?tp_btf/sched_process_exit")
int BPF_PROG(on_exit_maps, struct task_struct *p)
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
	bpf_iter_task_vma_new(&it, task, 0);
	while ((vma = bpf_iter_task_vma_next(&it))) {
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
	bpf_iter_task_vma_destroy(&it);
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

/*
 * The pid may be reused by a process that is none of ours: it leaves the
 * filter when the process is freed, not at sched_process_exit, which comes
 * before exit_mm(): the exit itself (freeing the memory) is the process's
 * CPU time too, and perf counts it.
 */
SEC("tp_btf/sched_process_free")
int BPF_PROG(on_free, struct task_struct *p)
{
	__u32 tgid = p->tgid;

	if (filter_enabled && p->pid == tgid && is_target(tgid))
		__sync_fetch_and_sub(target_word(tgid), 1ULL << (tgid & 63));
	return 0;
}

#endif
