/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * `record -- COMMAND`: the command is started under ptrace so that it can be
 * held at its entry point (every library mapped, no code of its own run yet)
 * while its tables are loaded.
 */
#ifndef CFIPROF_LAUNCH_H
#define CFIPROF_LAUNCH_H

#include <stdbool.h>
#include <sys/resource.h>
#include <sys/types.h>

/*
 * Forks a child that runs cmd once a byte is written to *go_fd (so profiling
 * is armed first), with nofile as its RLIMIT_NOFILE.  *held: it stops with
 * SIGTRAP right after the exec.  It cannot when ptrace is refused to it (a
 * process traced already, under strace -f or gdb; Yama's ptrace_scope 3; a
 * seccomp filter): then it runs straight through its exec.  -1 on failure.
 */
pid_t launch_stopped(char **cmd, const struct rlimit *nofile, int stderr_fd, int *go_fd,
		     bool *held);
/*
 * Runs the child, stopped after its exec, on to its entry point with a
 * one-shot breakpoint, so that the dynamic loader has mapped every needed
 * library.  false if the child died on the way (its wait status in *status:
 * the loader exits 127 on a missing library); true otherwise (even if the
 * breakpoint could not be used).
 */
bool launch_run_to_entry(pid_t pid, int *status);
/* Lets the child run on its own. */
void launch_release(pid_t pid);

#endif
