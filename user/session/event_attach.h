/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The session's events (user/session/event_spec.h) in the kernel: programs, settings, attaching. */
#ifndef CFIPROF_EVENT_ATTACH_H
#define CFIPROF_EVENT_ATTACH_H

#include <stdbool.h>

struct cfiprof_bpf;
struct loader;
struct loader_opts;

/* Before the load: which event programs load and their settings; < 0 (said why) if impossible. */
int events_configure(struct cfiprof_bpf *skel, const struct loader_opts *o, bool uses_bpf_loop);
/* Attaches every event, its index as the cookie; on failure says which and why. */
int events_attach(struct loader *l, const struct loader_opts *o);
void events_detach(struct loader *l);

#endif
