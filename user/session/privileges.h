/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Which capabilities profiling needs, checked up front so the error names them. */
#ifndef CFIPROF_PRIVILEGES_H
#define CFIPROF_PRIVILEGES_H

#include <stdbool.h>

/*
 * How to let users profile without root, printed with every permission error:
 * a binary only one group may run, holding the capabilities as permitted (+p,
 * not +ep: they are raised by cfiprof itself, never inherited by what it runs),
 * or the agent's systemd unit.
 */
#define PRIVILEGES_ADVICE                                                                          \
	"the README's \"Privileges\": e.g. install it for one group with chgrp profilers "        \
	"cfiprof; chmod 0750 cfiprof; setcap cap_bpf,cap_perfmon,cap_sys_ptrace,"                 \
	"cap_dac_read_search+p cfiprof"

/* Prints what is missing and returns false when BPF or perf events cannot work. */
bool privileges_check(bool other_processes);
/* Makes the permitted capabilities effective (a binary installed with +p); 0 or -errno. */
int privileges_raise(void);
/*
 * Drops every capability for good (effective, permitted, inheritable, ambient;
 * no_new_privs), for commands that read untrusted files and need no privilege:
 * report and tables.  0 or -errno.
 */
int privileges_drop_all(void);

#endif
