/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * cgroup v2 for container-wide sampling: where the hierarchy is mounted
 * (/sys/fs/cgroup, or /sys/fs/cgroup/unified in the hybrid layout), finding a
 * container's cgroup from its id, the processes inside, and cgroup ids (as
 * the BPF side records them) back to paths and container ids.
 */
#ifndef CFIPROF_CGROUPS_H
#define CFIPROF_CGROUPS_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

/* Mount point of the cgroup2 hierarchy; 0 or -ENOENT. */
int cgroup_mount(char *out, size_t len);
/* An absolute cgroup2 directory, or one relative to the mount; 0 or -errno (message printed). */
int cgroup_resolve(const char *arg, char *out, size_t len);
/*
 * The cgroup of a container: docker (docker-ID.scope, docker/ID), containerd
 * (cri-containerd-ID.scope), CRI-O (crio-ID.scope), podman (libpod-ID.scope)
 * and systemd-nspawn (machine-NAME.scope); ID may be a unique prefix.
 */
int cgroup_find_container(const char *id, char *out, size_t len);
/* Every pid in the cgroup and below; returns the count (>= 0) with *pids malloc'd. */
int cgroup_pids(const char *path, uint32_t **pids);
/* The container id in a cgroup path, or NULL; out receives it. */
const char *cgroup_container_id(const char *path, char *out, size_t len);
/*
 * The Kubernetes pod UID in a cgroup path, as the kubelet names its cgroups:
 * kubepods/[QOS/]podUID (cgroupfs driver) or kubepods.slice/...
 * kubepods[-QOS]-podUID.slice with '_' for '-' (systemd driver); NULL if
 * none.  out receives it in its usual spelling (8-4-4-4-12 hex digits).
 */
const char *cgroup_pod_uid(const char *path, char *out, size_t len);
/*
 * The systemd service a cgroup path belongs to: "nginx" for
 * /system.slice/nginx.service (the innermost .service component, without the
 * suffix); NULL if none.
 */
const char *cgroup_unit_name(const char *path, char *out, size_t len);
/*
 * The service name of a process in cgroup path, from names whoever started
 * it chose, not the process: "container-" and the container id's first 12
 * characters; else its systemd service (a unit of a user's own manager as
 * "user@UID.UNIT"); else the cgroup's own name.  NULL for the root cgroup.
 */
const char *cgroup_service_name(const char *path, char *out, size_t len);

/*
 * cgroup id -> path (relative to the mount), walked once, at the first
 * lookup (the agent makes a table per interval).  The walk stops after
 * CGROUP_NAMES_MAX_ENTRIES entries (cgroups and their files: a user with a
 * delegated subtree makes as many as it likes), counted in
 * cgroup_names_cut_total; ids it did not reach have no name, as those of
 * cgroups removed before it.
 */
#define CGROUP_NAMES_MAX_ENTRIES 100000
struct cgroup_names;
struct cgroup_names *cgroup_names_new(void);
/* The same over a directory standing in for the mount (tests), walking at most max_entries. */
struct cgroup_names *cgroup_names_new_at(const char *mnt, uint64_t max_entries);
/* Walks of the hierarchy the table made: 0 or 1. */
int cgroup_names_walks(const struct cgroup_names *cn);
/* Walks cut short at their bound, in this process. */
uint64_t cgroup_names_cut_total(void);
/* For saved recordings: only what cgroup_names_add gives, never the live hierarchy. */
struct cgroup_names *cgroup_names_new_saved(void);
int cgroup_names_add(struct cgroup_names *cn, uint64_t id, const char *path);
const char *cgroup_names_get(struct cgroup_names *cn, uint64_t id);
void cgroup_names_free(struct cgroup_names *cn);

#endif
