/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The largest maps, created in a thread while libbpf opens the object and
 * reads the kernel's BTF: creating them is the kernel allocating and zeroing
 * every page (the rows array, the ring buffer), work the start would
 * otherwise wait for on one CPU.  libbpf is handed each (bpf_map__reuse_fd)
 * only where it is exactly what the object, as sized, declares.
 */
#ifndef CFIPROF_MAP_EARLY_H
#define CFIPROF_MAP_EARLY_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct bpf_object;

#define MAP_EARLY_MAX 10

struct map_early_spec {
	const char *name;
	uint32_t type, key_size, value_size, max_entries, flags;
};

struct map_early {
	pthread_t thread;
	bool started;
	int n, taken; /* taken: handed over and used (-v says so: a map declared anew is not) */
	struct map_early_spec spec[MAP_EARLY_MAX];
	int fd[MAP_EARLY_MAX]; /* -1: not created */
};

/* Creates the n maps of spec in a thread (n <= MAP_EARLY_MAX); without one, none. */
void map_early_start(struct map_early *me, const struct map_early_spec *spec, int n);
/*
 * Waits for them and hands obj (opened, sized, not loaded) each one that
 * matches its map of that name (libbpf creates the others).
 */
void map_early_hand_over(struct map_early *me, struct bpf_object *obj);
/* Closes them: libbpf holds descriptors of its own of the ones it was handed. */
void map_early_free(struct map_early *me);

#endif
