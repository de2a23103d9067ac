/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * systemd's readiness protocol (sd_notify(3)) without libsystemd: a datagram
 * such as "READY=1" to the unix socket named by $NOTIFY_SOCKET, which
 * systemd sets for a Type=notify unit.  The agent says READY=1 once its BPF
 * programs are attached, so `systemctl start` returns when it is sampling.
 */
#ifndef CFIPROF_SD_NOTIFY_H
#define CFIPROF_SD_NOTIFY_H

/* 1 if sent, 0 without $NOTIFY_SOCKET, -errno on failure. */
int agent_sd_notify(const char *state);

#endif
