/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A process tracker as a record session builds it, without the BPF program:
 * real BPF maps (procs, the LPM mappings trie, pages) and a table store over
 * plain memory.  Needs root (bpf_map_create).  Static inline: the tracker
 * tests each use it.
 */
#ifndef CFIPROF_TESTS_TRACKER_WORLD_H
#define CFIPROF_TESTS_TRACKER_WORLD_H

#include <bpf/bpf.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bpf/cfiprof_abi.h"
#include "user/symbolize/sym_cache.h"
#include "user/track/proc_tracker.h"
#include "user/track/table_store.h"

#define TRACKER_WORLD_ROWS  (1u << 21)
#define TRACKER_WORLD_RULES 65536

struct tracker_world {
	int pages_fd, procs_fd, maps_fd;
	struct cfi_row *rows;
	struct cfi_rule *rules;
	struct table_store ts;
	bool ts_ready;
	struct sym_cache *syms;
	struct proc_tracker *pt;
};

static inline void tracker_world_free(struct tracker_world *w)
{
	proc_tracker_free(w->pt);
	if (w->syms)
		sym_cache_free(w->syms);
	if (w->ts_ready)
		table_store_destroy(&w->ts);
	free(w->rows);
	free(w->rules);
	if (w->pages_fd >= 0)
		close(w->pages_fd);
	if (w->procs_fd >= 0)
		close(w->procs_fd);
	if (w->maps_fd >= 0)
		close(w->maps_fd);
	memset(w, 0, sizeof(*w));
	w->pages_fd = w->procs_fd = w->maps_fd = -1;
}

/* 0, or -1 (what is missing is freed; the caller reports it). */
static inline int tracker_world_init(struct tracker_world *w)
{
	LIBBPF_OPTS(bpf_map_create_opts, lpm_opts, .map_flags = BPF_F_NO_PREALLOC);

	memset(w, 0, sizeof(*w));
	w->pages_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_pages", sizeof(struct cfi_page_key),
				     sizeof(struct cfi_page_val), 65536, NULL);
	w->procs_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_procs", sizeof(uint32_t),
				     sizeof(struct cfi_proc_val), 4096, NULL);
	w->maps_fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "t_maps", sizeof(struct cfi_mapping_key),
				    sizeof(struct cfi_mapping_val), 262144, &lpm_opts);
	w->rows = calloc(TRACKER_WORLD_ROWS, sizeof(*w->rows));
	w->rules = calloc(TRACKER_WORLD_RULES, sizeof(*w->rules));
	w->syms = sym_cache_new();
	if (w->pages_fd < 0 || w->procs_fd < 0 || w->maps_fd < 0 || !w->rows || !w->rules ||
	    !w->syms ||
	    table_store_init(&w->ts, w->rows, TRACKER_WORLD_ROWS, w->rules, TRACKER_WORLD_RULES,
			     w->pages_fd, 65536))
		goto fail;
	w->ts_ready = true;
	w->pt = proc_tracker_new(&(struct proc_tracker_opts){
	    .ts = &w->ts, .syms = w->syms, .procs_fd = w->procs_fd, .mappings_fd = w->maps_fd});
	if (!w->pt)
		goto fail;
	return 0;
fail:
	tracker_world_free(w);
	return -1;
}

/*
 * A child that (after mapping extra executable pages of its own binary, one
 * vma each, if asked) says so and waits to be killed; -1 on failure.
 */
static inline pid_t spawn_mapping_child(int extra_maps)
{
	int pipefd[2], i;
	pid_t pid;
	char c;

	if (pipe2(pipefd, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid == 0) {
		int fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);

		/* same file, same offset, one page each: the kernel keeps them apart */
		for (i = 0; i < extra_maps; i++) {
			if (fd < 0 || mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) ==
					  MAP_FAILED)
				_exit(1);
		}
		if (write(pipefd[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pipefd[1]);
	if (pid > 0 && read(pipefd[0], &c, 1) != 1) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(pipefd[0]);
	return pid;
}

#endif
