/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's structured log: one `ts=... level=... msg="..." key=value` line
 * per event on stderr (or --log-file, reopened on SIGHUP for logrotate).
 * Under systemd each line also starts with a <N> syslog priority, which
 * journald strips and turns into the entry's priority.
 */
#ifndef CFIPROF_AGENT_LOG_H
#define CFIPROF_AGENT_LOG_H

enum alog_level {
	ALOG_DEBUG = 0,
	ALOG_INFO,
	ALOG_WARN,
	ALOG_ERROR,
};

/* "debug", "info", "warn", "error"; -1 if none of them. */
int alog_parse_level(const char *s);
void alog_set_level(enum alog_level l);
/* Sends the log to path (appending), or back to the original stderr when path is NULL. */
int alog_open(const char *path);
/* kv: printf format of the key=value pairs after msg; may be NULL. Thread-safe. */
void alog(enum alog_level l, const char *msg, const char *kv, ...)
    __attribute__((format(printf, 3, 4)));
/* A value safe to print as key=%s: quoted and escaped when it has spaces, quotes or '='. */
const char *alog_quote(const char *s, char *buf, unsigned long len);

#endif
