// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The walker in the kernel, end to end without the CLI: load the skeleton,
 * fill procs / mappings / pages / rows / rules the way the loader must, attach
 * to a cpu-clock event of a running test program, and check that the samples
 * in the ring buffer carry the program's exact chain.  Both loop strategies.
 * Then forget the pid: samples must stop with TABLES_PENDING and ask for it.
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "tests/lib/replay_world.h"
#include "cfiprof.skel.h"
#include "user/session/kfuncs.h"

struct run {
	const struct world *w;
	const struct snapshot *s;
	const struct expect *e;
	unsigned int samples, exact, signal_flag, requests, pending, reasons[STOP_REASON_MAX];
	unsigned int samples_in_events; /* walked samples in the events ring: none belong there */
	char last_bad[4096];
};

/* Waits (up to 10 s) until pid's maps hold libc and read the same twice 100 ms apart. */
static void wait_maps_settled(pid_t pid)
{
	char path[64], *prev = NULL, *cur;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	for (int i = 0; i < 100; i++) {
		cur = slurp(path);
		if (prev && strstr(cur, "libc.so") && !strcmp(prev, cur)) {
			free(cur);
			break;
		}
		free(prev);
		prev = cur;
		usleep(100000);
	}
	free(prev);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct run *r = ctx;
	const struct cfi_sample_record *rec = data;
	char chain[4096], why[256];

	if (size >= sizeof(struct cfi_event_record) && rec->type == RECORD_REQUEST) {
		r->requests++;
		return 0;
	}
	if (size < sizeof(*rec) || rec->type != RECORD_SAMPLE || rec->pid != r->s->pid)
		return 0;
	if (size < sizeof(*rec) + (rec->nr_kernel + rec->nr_user) * sizeof(__u64))
		return 0;
	r->samples++;
	if (rec->reason < STOP_REASON_MAX)
		r->reasons[rec->reason]++;
	if (rec->flags & SAMPLE_SIGNAL)
		r->signal_flag++;
	if (rec->reason == STOP_TABLES_PENDING && rec->nr_user == 1)
		r->pending++;
	if (rec->reason == STOP_COMPLETE &&
	    chain_match(r->w, r->s, rec->pcs + rec->nr_kernel, rec->nr_user, r->e, chain,
			sizeof(chain), why, sizeof(why)))
		r->exact++;
	else
		snprintf(r->last_bad, sizeof(r->last_bad),
			 "reason %d, %u user frames (%s): %.3700s", rec->reason, rec->nr_user, why,
			 chain);
	return 0;
}

/* The events ring: requests; a perf event's walked sample goes to the samples ring */
static int on_event(void *ctx, void *data, size_t size)
{
	struct run *r = ctx;
	const struct cfi_sample_record *rec = data;

	if (size >= sizeof(*rec) && rec->type == RECORD_SAMPLE)
		r->samples_in_events++;
	return on_record(ctx, data, size);
}

/* The LPM trie holds prefixes: split [start, end) into aligned power-of-two blocks. */
static int add_mapping(int fd, __u32 pid, __u64 start, __u64 end, const struct cfi_mapping_val *val)
{
	while (start < end) {
		int bits = start ? __builtin_ctzll(start) : 63;
		struct cfi_mapping_key key;

		while (bits > 0 && (bits >= 64 || start + (1ull << bits) > end))
			bits--;
		key.prefixlen = 32 + 64 - bits;
		key.pid = pid;
		key.addr_be = __builtin_bswap64(start);
		if (bpf_map_update_elem(fd, &key, val, BPF_ANY))
			return -errno;
		start += 1ull << bits;
	}
	return 0;
}

static int fill_maps(struct cfiprof_bpf *skel, const struct world *w, __u32 pid)
{
	const struct replay_env *env = &w->env;
	struct cfi_proc_val proc = {.generation = 1};
	__u32 i;
	int err = 0;

	for (i = 0; i < env->nr_rules && !err; i++)
		err =
		    bpf_map_update_elem(bpf_map__fd(skel->maps.rules), &i, &env->rules[i], BPF_ANY);
	/* the rows map holds two rows per element */
	for (i = 0; i < (env->nr_rows + 1) / 2 && !err; i++) {
		struct cfi_row_pair pair = {{env->rows[2 * i]}};

		if (2 * i + 1 < env->nr_rows)
			pair.row[1] = env->rows[2 * i + 1];
		err = bpf_map_update_elem(bpf_map__fd(skel->maps.rows), &i, &pair, BPF_ANY);
	}
	for (i = 0; i < env->nr_pages && !err; i++)
		err = bpf_map_update_elem(bpf_map__fd(skel->maps.pages), &env->pages[i].key,
					  &env->pages[i].val, BPF_ANY);
	for (i = 0; i < env->nr_maps && !err; i++)
		err = add_mapping(bpf_map__fd(skel->maps.mappings), pid, env->maps[i].start,
				  env->maps[i].end, &env->maps[i].val);
	if (!err)
		err = bpf_map_update_elem(bpf_map__fd(skel->maps.procs), &pid, &proc, BPF_ANY);
	if (!err) {
		__u32 word = pid / 64;
		__u64 bits = 0;

		err = bpf_map_lookup_elem(bpf_map__fd(skel->maps.target_bits), &word, &bits);
		bits |= 1ULL << (pid % 64);
		err = err ? err
			  : bpf_map_update_elem(bpf_map__fd(skel->maps.target_bits), &word, &bits,
						BPF_ANY);
	}
	return err ? -errno : 0;
}

static int open_cpu_clock(pid_t pid)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.freq = 1;
	attr.sample_freq = 499;
	return syscall(__NR_perf_event_open, &attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void poll_for(struct ring_buffer *rb, int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		/* samples do not wake the reader until wakeup_bytes are pending */
		ring_buffer__poll(rb, 50);
		ring_buffer__consume(rb);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static void live(const char *name, const char *prog, const char *arg2, const struct expect *e,
		 int use_loop, unsigned int max_frames, int want_signal)
{
	static struct world w;
	struct snapshot s;
	struct cfiprof_bpf *skel;
	struct ring_buffer *rb = NULL;
	struct bpf_link *link = NULL;
	struct run r;
	char path[256], cfg[96];
	char *argv[] = {path, "6", (char *)arg2, NULL};
	pid_t pid;
	int pfd = -1, err;
	__u32 key = 0;

	snprintf(cfg, sizeof(cfg), "%s (%s, %u frames)", name, use_loop ? "bpf_loop" : "tail calls",
		 max_frames);
	snprintf(path, sizeof(path), "build/progs/%s", prog);
	memset(&s, 0, sizeof(s));
	memset(&r, 0, sizeof(r));
	skel = cfiprof_bpf__open();
	CHECK(skel != NULL, "%s: open", cfg);
	if (!skel)
		return;
	skel->rodata->use_bpf_loop = use_loop;
	skel->rodata->max_user_frames = max_frames;
	skel->rodata->filter_enabled = 1;
	bpf_map__set_max_entries(skel->maps.rows, 1 << 20);
	bpf_map__set_max_entries(skel->maps.events, 1 << 22);
	err = kfuncs_patch_object(skel->obj);
	err = err ? err : cfiprof_bpf__load(skel);
	CHECK(err == 0, "%s: load %d", cfg, err);
	if (err)
		goto out_skel;
	if (!use_loop) {
		int tc = bpf_program__fd(skel->progs.walk_tc);

		CHECK(!bpf_map_update_elem(bpf_map__fd(skel->maps.walk_progs), &key, &tc, BPF_ANY),
		      "%s: tail-call slot: %s", cfg, strerror(errno));
	}

	pid = spawn(argv, NULL, "-");
	usleep(400000); /* dlopen done, signal handler entered */
	/*
	 * The maps are read once: on a fresh machine (cold page cache, a busy
	 * CI) the dynamic loader may still be mapping libraries after 400 ms.
	 */
	wait_maps_settled(pid);
	err = read_maps(pid, &s);
	s.pid = pid;
	CHECK(err == 0, "%s: maps of %d", cfg, pid);
	if (err || world_build(&w, &s)) {
		CHECK(0, "%s: tables", cfg);
		goto out_child;
	}
	err = fill_maps(skel, &w, pid);
	CHECK(err == 0, "%s: filling maps: %s", cfg, strerror(-err));
	rb = ring_buffer__new(bpf_map__fd(skel->maps.samples), on_record, &r, NULL);
	if (rb && ring_buffer__add(rb, bpf_map__fd(skel->maps.events), on_event, &r)) {
		ring_buffer__free(rb);
		rb = NULL;
	}
	pfd = open_cpu_clock(pid);
	CHECK(rb && pfd >= 0, "%s: ring buffer / perf_event_open: %s", cfg, strerror(errno));
	if (!rb || pfd < 0)
		goto out_world;
	link = bpf_program__attach_perf_event(skel->progs.on_sample, pfd);
	CHECK(link != NULL, "%s: attach: %s", cfg, strerror(errno));
	if (!link)
		goto out_world;

	r.w = &w;
	r.s = &s;
	r.e = e;
	/*
	 * 1.5 s, then on until twice the samples judged (its share of a loaded
	 * machine may be small: 47 samples in 1.5 s beside a stress run and a
	 * make test), while the child (6 s) lives
	 */
	{
		struct timespec t0, t;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		poll_for(rb, 1500);
		do {
			poll_for(rb, 100);
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while (r.samples < 2 * ENOUGH_TO_JUDGE && t.tv_sec - t0.tv_sec < 4);
	}
	{
		struct bpf_prog_info info;
		__u32 len = sizeof(info);

		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(bpf_program__fd(skel->progs.on_sample), &info, &len) &&
		    info.run_cnt)
			printf("  %-36s %llu ns per sample (run_time_ns / run_cnt)\n", cfg,
			       (unsigned long long)(info.run_time_ns / info.run_cnt));
	}
	printf("  %-36s %4u samples, %4u exact chains, reasons:", cfg, r.samples, r.exact);
	for (key = 0; key < STOP_REASON_MAX; key++)
		if (r.reasons[key])
			printf(" %u=%u", key, r.reasons[key]);
	printf("\n");
	CHECK(r.samples >= ENOUGH_TO_JUDGE, "%s: only %u samples", cfg, r.samples);
	CHECK(r.samples_in_events == 0, "%s: %u walked samples in the events ring, not samples",
	      cfg, r.samples_in_events);
	/* a sample now and then lands in clock_gettime (vdso, not loaded here) */
	CHECK(r.exact * 10 >= r.samples * 9, "%s: %u of %u samples exact; e.g. %s", cfg, r.exact,
	      r.samples, r.last_bad);
	if (want_signal)
		CHECK(r.signal_flag * 10 >= r.samples * 9, "%s: SAMPLE_SIGNAL on %u of %u", cfg,
		      r.signal_flag, r.samples);

	/* forget the pid: the leaf pc alone, TABLES_PENDING, and a request for the pid */
	if (!strcmp(name, "chain")) {
		bpf_map_delete_elem(bpf_map__fd(skel->maps.procs), &s.pid);
		/* a sample walked before the delete may still be in the ring buffer */
		poll_for(rb, 50);
		memset(r.reasons, 0, sizeof(r.reasons));
		r.samples = r.pending = r.requests = 0;
		poll_for(rb, 500);
		CHECK(r.samples > 0 && r.pending == r.samples, "%s: unknown pid: %u of %u pending",
		      cfg, r.pending, r.samples);
		/* rate limit: about one request per 100 ms */
		CHECK(r.requests >= 1 && r.requests <= 8, "%s: %u requests in 0.5 s", cfg,
		      r.requests);
	}
	/* detached first: a sample still running on the other CPU would count once, not twice */
	bpf_link__destroy(link);
	link = NULL;
	{
		int ncpu = libbpf_num_possible_cpus(), i;
		__u64 vals[256], written = 0, samples = 0;

		key = CNT_WRITTEN;
		if (ncpu > 0 && ncpu <= 256 &&
		    !bpf_map_lookup_elem(bpf_map__fd(skel->maps.counters), &key, vals))
			for (i = 0; i < ncpu; i++)
				written += vals[i];
		key = CNT_SAMPLES;
		if (ncpu > 0 && ncpu <= 256 &&
		    !bpf_map_lookup_elem(bpf_map__fd(skel->maps.counters), &key, vals))
			for (i = 0; i < ncpu; i++)
				samples += vals[i];
		CHECK(written > 0 && written == samples, "%s: counters: %llu samples, %llu written",
		      cfg, (unsigned long long)samples, (unsigned long long)written);
	}
out_world:
	bpf_link__destroy(link);
	if (pfd >= 0)
		close(pfd);
	ring_buffer__free(rb);
	world_free(&w);
out_child:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	snap_free(&s);
out_skel:
	cfiprof_bpf__destroy(skel);
}

#define TOKS(...)                                                                                  \
	.tok = {__VA_ARGS__}, .nr_tok = sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *)

int main(int argc, char **argv)
{
	static const struct expect chain = {
	    TOKS("leaf", "d", "c", "b", "a", "main", "@libc", "@libc", "_start")};
	static const struct expect recurse = {TOKS("leaf", "main", "@libc", "@libc", "_start"),
					      .repeat = "rec", .nr_repeat = 300};
	static const struct expect sig = {TOKS("h_leaf", "h_a", "handler", "@sig", "!s_work", "s_a",
					       "main", "@libc", "@libc", "_start")};
	static const struct expect cxx = {
	    TOKS("x_leaf", "x_b", "x_a", "main", "@libc", "@libc", "_start")};
	int use_loop, stats_fd;
	const char *mode;
	char name[64];

	harness_init(argc, argv);
	/* per-program run time, for the cost per sample */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	CHECK(geteuid() == 0, "must run as root (euid %u)", geteuid());
	for (use_loop = 1; use_loop >= 0; use_loop--) {
		mode = use_loop ? "loop" : "tailcalls";
#define LIVE(prog, ...)                                                                            \
	do {                                                                                       \
		snprintf(name, sizeof(name), "%s-%s", mode, prog);                                 \
		RUN_TEST_AS(name, live(prog, prog, __VA_ARGS__));                                  \
	} while (0)
		LIVE("chain", NULL, &chain, use_loop, 127, 0);
		LIVE("recurse", "300", &recurse, use_loop, 512, 0);
		LIVE("signal", NULL, &sig, use_loop, 127, 1);
		LIVE("cxx_throw", NULL, &cxx, use_loop, 127, 0);
#undef LIVE
	}
	if (stats_fd >= 0)
		close(stats_fd);
	return HARNESS_DONE();
}
