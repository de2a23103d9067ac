/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A process's identity and liveness from /proc/PID/stat: the start time tells
 * a reused pid from the process we knew, and the state and PF_EXITING flag
 * tell a process that is still being torn down from a live one.  Its pid as
 * the processes in its container see it comes from /proc/PID/status.
 */
#ifndef CFIPROF_PROC_STAT_H
#define CFIPROF_PROC_STAT_H

#include <stdbool.h>
#include <stdint.h>

struct proc_stat_info {
	uint64_t start_time; /* clock ticks after boot */
	uint32_t flags;	     /* the task's PF_* flags */
	char state;	     /* R, S, D, Z, X, ... */
};

/* Parses the text of a stat file; 0 on success, -1 if malformed. */
int proc_stat_parse(const char *text, struct proc_stat_info *out);
/* Reads /proc/PID/stat; 0, or -errno (-ENOENT when the process is gone). */
int proc_stat_read(uint32_t pid, struct proc_stat_info *out);
/* Exiting (PF_EXITING), a zombie or dead: its tables would only be unloaded again. */
bool proc_stat_dying(const struct proc_stat_info *s);
/* The pid in the innermost PID namespace (the last NSpid field), 0 if unknown. */
uint32_t proc_ns_pid(uint32_t pid);
/*
 * The user owning the process (its /proc/PID) and whether it sees the same
 * root and mount namespace as we do (then a file it writes in /tmp is the one
 * we read there, even after it exits).  0 or -errno.
 */
int proc_read_identity(uint32_t pid, uint32_t *uid, bool *same_tmp);

#endif
