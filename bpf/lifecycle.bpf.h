/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Exec, mapping changes, fork, exit and free of the processes being
 * profiled: what the tracker in user space must hear about.  Included by
 * cfiprof.bpf.c after its maps and helpers.
 */
#ifndef CFIPROF_LIFECYCLE_BPF_H
#define CFIPROF_LIFECYCLE_BPF_H

/*
 * Raw tracepoints: no tracefs needed, so CAP_BPF + CAP_PERFMON suffice, and
 * unlike BTF tracepoints none makes libbpf read the kernel's BTF to find
 * its target (5 MB parsed at every start).  Their arguments are read with
 * CO-RE reads, not followed.
 */
SEC("raw_tp/sched_process_exec")
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

SEC("raw_tp/sys_enter")
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

SEC("raw_tp/sys_exit")
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
SEC("raw_tp/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid, ctgid;
	__u64 *w;

	if (!follow_children || !filter_enabled)
		return 0;
	ptgid = BPF_CORE_READ(parent, tgid);
	ctgid = BPF_CORE_READ(child, tgid);
	if (ctgid == ptgid || !is_target(ptgid))
		return 0;
	w = target_word(ctgid);
	if (!w || (*w & (1ULL << (ctgid & 63))))
		return 0;
	/*
	 * An add, the only atomic OR BPF has without -mcpu=v3: the bit was clear,
	 * and a new tgid has no other writer (user space adds only processes
	 * that exist already, on_free only tgids that were set).
	 */
	__sync_fetch_and_add(w, 1ULL << (ctgid & 63));
	/* over the budget, the child's first sample asks for it instead */
	if (request_budget_left(bpf_ktime_get_ns())) {
		walker_count(CNT_REQUESTS, 1);
		emit_event(RECORD_REQUEST, ctgid, 0);
	}
	return 0;
}

SEC("raw_tp/sched_process_exit")
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
 * The pid may be reused by a process that is none of ours: it leaves the
 * filter when the process is freed, not at sched_process_exit, which comes
 * before exit_mm(): the exit itself (freeing the memory) is the process's
 * CPU time too, and perf counts it.
 */
SEC("raw_tp/sched_process_free")
int BPF_PROG(on_free, struct task_struct *p)
{
	__u32 tgid = BPF_CORE_READ(p, tgid);
	__u64 *w;

	if (!filter_enabled || BPF_CORE_READ(p, pid) != tgid)
		return 0;
	w = target_word(tgid);
	if (w && (*w & (1ULL << (tgid & 63))))
		__sync_fetch_and_sub(w, 1ULL << (tgid & 63));
	return 0;
}

#endif
