// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * fpwalk: loader of fpwalk.bpf.c (make bench).  Starts COMMAND stopped (a
 * pipe handshake: the child blocks reading a pipe before exec), attaches a
 * cpu-clock perf event on every CPU filtered to the child's pid, lets it run,
 * and prints the BPF program's cost from bpf_stats (run_time_ns / run_cnt):
 *
 *   fpwalk [-m kstack|ring|bpfwalk] [-F HZ] [-r RING_BYTES] -- COMMAND [ARGS...]
 *
 * kstack = bpf_get_stack(BPF_F_USER_STACK), the kernel's frame-pointer walk;
 * ring = that walk, its stack sent to a ring buffer this program reads, as
 * cfiprof sends its records (-r: the ring's size, default 8 MiB, woken at an
 * eighth of it, as cfiprof's samples ring); bpfwalk = the same walk in BPF with bpf_loop +
 * bpf_probe_read_user.
 * Like cfiprof's summary, ns/sample = run time of every run (the early exits
 * of other tasks' samples included) / samples of the target.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fpwalk.skel.h"

static int drop_stack(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = "kstack";
	int freq = 999, opt, pfd[2], ncpu, cpu, status, stats_fd;
	unsigned int ring_bytes = 0;
	struct fpwalk_bpf *skel;
	struct bpf_program *prog;
	struct bpf_link **links;
	struct ring_buffer *rb = NULL;
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	__u64 sums[3] = {0};
	pid_t child;
	char c = 0;

	while ((opt = getopt(argc, argv, "m:F:r:")) != -1) {
		if (opt == 'm')
			mode = optarg;
		else if (opt == 'F')
			freq = atoi(optarg);
		else if (opt == 'r')
			ring_bytes = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (optind >= argc ||
	    (strcmp(mode, "kstack") && strcmp(mode, "ring") && strcmp(mode, "bpfwalk"))) {
		fprintf(stderr, "usage: fpwalk [-m kstack|ring|bpfwalk] [-F HZ] [-r RING_BYTES] -- "
				"COMMAND [ARGS...]\n");
		return 2;
	}
	if (pipe(pfd))
		return 1;
	child = fork();
	if (child < 0)
		return 1;
	if (child == 0) {
		close(pfd[1]);
		if (read(pfd[0], &c, 1) != 1)
			_exit(126);
		close(pfd[0]);
		execvp(argv[optind], argv + optind);
		perror("fpwalk: exec");
		_exit(127);
	}
	close(pfd[0]);

	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	skel = fpwalk_bpf__open();
	if (!skel)
		goto fail;
	skel->rodata->target_tgid = child;
	if (ring_bytes && bpf_map__set_max_entries(skel->maps.ring, ring_bytes))
		goto fail;
	skel->rodata->wakeup_bytes = bpf_map__max_entries(skel->maps.ring) / 8;
	bpf_program__set_autoload(skel->progs.kstack, !strcmp(mode, "kstack"));
	bpf_program__set_autoload(skel->progs.kstack_ring, !strcmp(mode, "ring"));
	bpf_program__set_autoload(skel->progs.bpfwalk, !strcmp(mode, "bpfwalk"));
	if (fpwalk_bpf__load(skel))
		goto fail;
	prog = !strcmp(mode, "kstack") ? skel->progs.kstack
	       : !strcmp(mode, "ring") ? skel->progs.kstack_ring
				       : skel->progs.bpfwalk;
	if (!strcmp(mode, "ring")) {
		rb = ring_buffer__new(bpf_map__fd(skel->maps.ring), drop_stack, NULL, NULL);
		if (!rb)
			goto fail;
	}
	ncpu = libbpf_num_possible_cpus();
	links = calloc(ncpu, sizeof(*links));
	for (cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.size = sizeof(attr),
			.freq = 1,
			.sample_freq = freq,
		};
		int fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0)
			continue; /* offline CPU */
		links[cpu] = bpf_program__attach_perf_event(prog, fd);
		if (!links[cpu]) {
			fprintf(stderr, "fpwalk: attach on CPU %d: %s\n", cpu, strerror(errno));
			goto fail;
		}
	}
	if (write(pfd[1], &c, 1) != 1)
		goto fail;
	close(pfd[1]);
	/* read the ring as a profiler does: woken past its fill level, else every 100 ms */
	for (;;) {
		pid_t w = waitpid(child, &status, rb ? WNOHANG : 0);

		if (w < 0)
			goto fail;
		if (w == child)
			break;
		ring_buffer__poll(rb, 100);
	}
	if (rb)
		ring_buffer__consume(rb);
	for (cpu = 0; cpu < ncpu; cpu++)
		bpf_link__destroy(links[cpu]);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		goto fail;
	for (__u32 k = 0; k < 3; k++) {
		__u64 v[ncpu];

		memset(v, 0, sizeof(v));
		if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.counters), &k, v))
			for (cpu = 0; cpu < ncpu; cpu++)
				sums[k] += v[cpu];
	}
	printf("fpwalk: mode %s samples %llu frames %llu empty %llu run_time_ns %llu run_cnt %llu "
	       "ns_per_sample %.0f ns_per_frame %.2f frames_per_sample %.1f\n",
	       mode, (unsigned long long)sums[0], (unsigned long long)sums[1],
	       (unsigned long long)sums[2], (unsigned long long)info.run_time_ns,
	       (unsigned long long)info.run_cnt,
	       sums[0] ? (double)info.run_time_ns / sums[0] : 0.0,
	       sums[1] ? (double)info.run_time_ns / sums[1] : 0.0,
	       sums[0] ? (double)sums[1] / sums[0] : 0.0);
	ring_buffer__free(rb);
	fpwalk_bpf__destroy(skel);
	if (stats_fd >= 0)
		close(stats_fd);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
fail:
	fprintf(stderr, "fpwalk: %s\n", strerror(errno));
	kill(child, SIGKILL);
	return 1;
}
