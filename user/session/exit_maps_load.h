/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * on_exit_maps' object (bpf/exit_maps.bpf.c), loaded in a thread beside the
 * sampling programs' object and handed the same maps: its kfuncs make libbpf
 * parse all of the kernel's BTF, which the other's load then does without.
 */
#ifndef CFIPROF_EXIT_MAPS_LOAD_H
#define CFIPROF_EXIT_MAPS_LOAD_H

struct exit_maps_load;

/* The descriptor of the map called name that the object is to share; -1: none. */
typedef int (*exit_maps_fd_fn)(void *ctx, const char *name);

/*
 * Opens the object, hands it fd_of's maps and loads it, in a thread (with the
 * cached kernel types of core_path, NULL: none); NULL when it cannot start.
 * fd_of is called from the thread, before exit_maps_load_wait returns.
 */
struct exit_maps_load *exit_maps_load_start(exit_maps_fd_fn fd_of, void *ctx,
					    const char *core_path);
/* Waits for the load: 0 or -errno (said on stderr). */
int exit_maps_load_wait(struct exit_maps_load *x);
/* Attaches the loaded program: 0 or -errno. */
int exit_maps_load_attach(struct exit_maps_load *x);
/* Waits for it if it runs, detaches and frees it. */
void exit_maps_load_free(struct exit_maps_load *x);

#endif
