// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The recording writer and reader: a recording of this process (its maps,
 * libc's build id and CFI, the stacks) reads back to the same folded lines,
 * with and without processes, kernel names included.
 */
#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/agg_samples.h"
#include "tests/lib/table_mem.h"
#include "elf/build_id.h"
#include "user/output/folded.h"
#include "user/profile/recording.h"
#include "user/profile/frame_names.h"
#include "user/runtimes/python/python_names.h"
#include "user/session/runtimes.h"
#include "user/symbolize/kallsyms.h"
#include "user/profile/frame_names.h"
#include "user/track/proc_maps.h"
#include "user/track/proc_tracker.h"
#include "user/track/table_store.h"

#define LIBC_PATH "/lib/x86_64-linux-gnu/libc.so.6"

/* Distinct bodies keep identical-code folding from merging them into one symbol. */
__attribute__((noinline)) int cfiprof_test_leaf(int x);
__attribute__((noinline)) int cfiprof_test_leaf(int x)
{
	return x * 3 + 1;
}

__attribute__((noinline)) int cfiprof_test_caller(int x);
__attribute__((noinline)) int cfiprof_test_caller(int x)
{
	return cfiprof_test_leaf(x) ^ 0x55;
}

static void test_recording(void)
{
	static const uint64_t k1[] = {0xffffffff81000010ull, 0xffffffff81abcdefull};
	static const uint64_t u1[] = {0x401000, 0x7f00deadbeefull, 0x1};
	LIBBPF_OPTS(bpf_map_create_opts, lpm_opts, .map_flags = BPF_F_NO_PREALLOC);
	struct maps_entry *ents = NULL;
	int pages_fd, procs_fd, maps_fd, nents, i, map_lines = 0, stack_lines = 0, other = 0;
	int maps_matched = 0, libc_cfi = 0, libc_bid_ok = 0, bad_stack = 0;
	char libc_bid[ELF_BUILD_ID_HEX_LEN] = "", *buf = NULL, *line, *save = NULL;
	struct proc_tracker *pt;
	struct sym_cache *syms;
	struct aggregator a;
	struct table_store ts;
	bool overflow_ok = false, header_ok = false;
	int meta_ok = 0, gen_lines = 0;
	size_t len = 0;
	FILE *f;

	pages_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_pages", sizeof(struct cfi_page_key),
				  sizeof(struct cfi_page_val), 65536, NULL);
	procs_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_procs", sizeof(uint32_t),
				  sizeof(struct cfi_proc_val), 1024, NULL);
	maps_fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "t_maps", sizeof(struct cfi_mapping_key),
				 sizeof(struct cfi_mapping_val), 65536, &lpm_opts);
	if (pages_fd < 0 || procs_fd < 0 || maps_fd < 0)
		CHECK(0, "BPF maps: %d %d %d", pages_fd, procs_fd, maps_fd);
	table_store_init(&ts, rows_mem, ROWS_MAX, rules_mem, RULES_MAX, pages_fd, 65536);
	syms = sym_cache_new();
	pt = proc_tracker_new(&(struct proc_tracker_opts){
	    .ts = &ts, .syms = syms, .procs_fd = procs_fd, .mappings_fd = maps_fd});
	CHECK(pt && syms, "tracker");
	if (!pt || !syms)
		return;
	CHECK(proc_tracker_load_now(pt, (uint32_t)getpid()) == 0, "load self");
	{
		int fd = open(LIBC_PATH, O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			elf_build_id_hex_fd(fd, libc_bid, sizeof(libc_bid));
			close(fd);
		}
	}

	agg_init(&a, 3);
	add_n(&a, 5, 4242, "my comm", STOP_COMPLETE, 2, k1, 3, u1);
	add_n(&a, 2, 4243, "", STOP_NO_RULE, 0, NULL, 1, u1);
	add_n(&a, 1, 4244, "kthread", STOP_NO_USER, 1, k1, 0, NULL);
	add_n(&a, 3, 4245, "over", STOP_COMPLETE, 0, NULL, 1, u1);

	f = open_memstream(&buf, &len);
	CHECK(recording_write(f, &a, pt,
			      &(struct recording_meta){.freq = 499, .event = "cpu-clock"},
			      NULL) == 0,
	      "recording_write");
	fclose(f);

	nents = proc_maps_read(getpid(), true, &ents);
	for (line = strtok_r(buf, "\n", &save), i = 0; line;
	     line = strtok_r(NULL, "\n", &save), i++) {
		uint64_t start, end, off, bias, count;
		unsigned int pid, flags, tid, reason, sflags;
		char bid[128], path[512], comm[64], klist[512], ulist[512];
		int e;

		if (i == 0) {
			header_ok = streq(line, "# cfiprof recording v1");
			continue;
		}
		if (i == 1) {
			meta_ok = streq(line, "meta 499 cpu-clock 0 0");
			continue;
		}
		if (sscanf(line,
			   "map %u %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %u %127s %511s",
			   &pid, &start, &end, &off, &bias, &flags, bid, path) == 8) {
			map_lines++;
			for (e = 0; e < nents; e++) {
				if (pid == (unsigned int)getpid() && ents[e].start == start &&
				    ents[e].end == end && ents[e].offset == off &&
				    streq(ents[e].path, path)) {
					maps_matched++;
					break;
				}
			}
			if (streq(path, LIBC_PATH) || strstr(path, "/libc.so.6")) {
				libc_cfi += (flags & CFI_MAPPING_CFI) != 0;
				libc_bid_ok += libc_bid[0] && streq(bid, libc_bid);
			}
			continue;
		}
		if (sscanf(line, "stack %" SCNu64 " %u %u %u %u %63s k %511s u %511s", &count, &pid,
			   &tid, &reason, &sflags, comm, klist, ulist) == 8) {
			stack_lines++;
			if (pid == 4242)
				bad_stack += !(count == 5 && tid == 4242 && reason == 0 &&
					       sflags == 0 && streq(comm, "my_comm") &&
					       streq(klist, "ffffffff81000010,ffffffff81abcdef") &&
					       streq(ulist, "401000,7f00deadbeef,1"));
			else if (pid == 4243)
				bad_stack +=
				    !(count == 2 && reason == STOP_NO_RULE && streq(comm, "-") &&
				      streq(klist, "-") && streq(ulist, "401000"));
			else if (pid == 4244)
				bad_stack +=
				    !(count == 1 && reason == STOP_NO_USER &&
				      streq(comm, "kthread") && streq(klist, "ffffffff81000010") &&
				      streq(ulist, "-"));
			else
				bad_stack++;
			if (bad_stack)
				fprintf(stderr, "bad stack line: %s\n", line);
			continue;
		}
		if (!strncmp(line, "overflow ", 9)) {
			overflow_ok = streq(line, "overflow 3");
			continue;
		}
		/* the generation the following map lines belong to: our own pid, once */
		if (!strncmp(line, "gen ", 4)) {
			unsigned int gpid, gen;

			gen_lines += sscanf(line, "gen %u %u", &gpid, &gen) == 2 &&
				     gpid == (unsigned int)getpid() && gen > 0;
			continue;
		}
		other++;
		fprintf(stderr, "unexpected recording line: %s\n", line);
	}
	CHECK(meta_ok, "meta line");
	CHECK(gen_lines == 1, "%d gen lines for this process (want 1)", gen_lines);
	CHECK(header_ok, "header line");
	CHECK(nents > 0 && map_lines == nents && maps_matched == nents,
	      "map lines %d, matching /proc/self/maps %d of %d", map_lines, maps_matched, nents);
	CHECK(libc_cfi > 0, "libc mapping loaded with CFI");
	CHECK(libc_bid_ok > 0, "libc build-id %s", libc_bid);
	CHECK(stack_lines == 3 && !bad_stack, "stack lines %d, bad %d", stack_lines, bad_stack);
	CHECK(overflow_ok, "overflow line");
	CHECK(!other, "%d unexpected lines", other);

	/* with a tracker, user frames are named from the ELF symbols, root first */
	{
		uint64_t u[2] = {(uint64_t)(uintptr_t)&cfiprof_test_leaf,
				 (uint64_t)(uintptr_t)&cfiprof_test_caller + 1};
		struct parsed_line l[4];
		struct frame_namer fn;
		struct aggregator b;
		char *out = NULL;
		size_t olen = 0;
		int nl, malformed;

		CHECK(cfiprof_test_caller(1) == (4 ^ 0x55), "helper");
		agg_init(&b, 10);
		add_n(&b, 2, (uint32_t)getpid(), "self", STOP_COMPLETE, 0, NULL, 2, u);
		frame_namer_init(&fn, pt, NULL);
		f = open_memstream(&out, &olen);
		folded_write(f, &b, &fn);
		fclose(f);
		nl = parse_folded(out, l, 4, &malformed);
		CHECK(nl == 1 && !malformed &&
			  streq(l[0].text, "self;cfiprof_test_caller;cfiprof_test_leaf") &&
			  l[0].count == 2,
		      "symbolized folded line '%s'", nl ? l[0].text : "");
		frame_namer_free(&fn);
		free(out);
		agg_free(&b);
	}

	/* the tracker's LPM entries resolve our own code to the object it loaded */
	{
		uint64_t pc = (uint64_t)(uintptr_t)&printf;
		struct proc *p = proc_tracker_find(pt, (uint32_t)getpid());
		const struct proc_mapping *m = p ? proc_find_mapping(p, pc) : NULL;
		struct cfi_mapping_key q = {
		    .prefixlen = 96, .pid = (uint32_t)getpid(), .addr_be = __builtin_bswap64(pc)};
		struct cfi_mapping_val val = {0};
		int r = bpf_map_lookup_elem(maps_fd, &q, &val);

		CHECK(m && m->obj && r == 0 && val.obj_id == m->obj->id && val.bias == m->bias &&
			  val.flags == m->flags,
		      "LPM lookup of printf: r=%d obj %u flags %u", r, val.obj_id, val.flags);
	}
	free(ents);
	free(buf);
	agg_free(&a);
	proc_tracker_free(pt);
	sym_cache_free(syms);
	CHECK(ts.alloc.used == 0, "tracker released every object: %u rows still used",
	      ts.alloc.used);
	table_store_destroy(&ts);
	close(pages_fd);
	close(procs_fd);
	close(maps_fd);
}

/* An empty tracker writes only the header and the stacks. */
static void test_recording_no_procs(void)
{
	struct proc_tracker *pt = proc_tracker_new_names(NULL);
	static const uint64_t u[] = {0xabc};
	struct aggregator a;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	agg_init(&a, 10);
	add_n(&a, 1, 7, "a b\nc", STOP_COMPLETE, 0, NULL, 1, u);
	f = open_memstream(&buf, &len);
	CHECK(pt && recording_write(
			f, &a, pt,
			&(struct recording_meta){
			    .freq = 99, .event = "cycles", .start_unix_ns = 12, .duration_ns = 34},
			NULL) == 0,
	      "recording_write");
	fclose(f);
	CHECK(streq(buf, "# cfiprof recording v1\nmeta 99 cycles 12 34\n"
			 "stack 1 7 7 0 0 a_b_c k - u abc\n"),
	      "empty tracker output:\n%s", buf);
	/* and back: the reader rebuilds the same stack and meta */
	{
		struct recording_meta meta = {0};
		struct aggregator back;
		struct sym_cache *sc = sym_cache_new();
		struct proc_tracker *pt2 = sc ? proc_tracker_new_names(sc) : NULL;
		struct agg_stack **v;
		uint64_t bad = 0, nr = 0;
		char err[128];
		FILE *in = fmemopen(buf, strlen(buf), "r");

		agg_init(&back, 10);
		CHECK(in && pt2 &&
			  recording_read(in, &back, pt2, &meta, NULL, &bad, err, sizeof(err)) == 0,
		      "recording_read: %s", err);
		v = agg_sorted(&back, &nr);
		CHECK(bad == 0 && nr == 1 && v && v[0]->count == 1 && v[0]->pid == 7 &&
			  streq(v[0]->comm, "a_b_c") && v[0]->nr_user == 1 && v[0]->pcs[0] == 0xabc,
		      "round trip: bad %" PRIu64 " stacks %" PRIu64, bad, nr);
		CHECK(meta.freq == 99 && streq(meta.event, "cycles") && meta.start_unix_ns == 12 &&
			  meta.duration_ns == 34,
		      "meta round trip");
		free(v);
		if (in)
			fclose(in);
		agg_free(&back);
		proc_tracker_free(pt2);
		sym_cache_free(sc);
	}
	free(buf);
	agg_free(&a);
	proc_tracker_free(pt);
}

/*
 * A recording's text read into a (agg_init'ed here; agg_free it), with a
 * tracker of its own: the stacks sorted (free them), their number in *nr,
 * malformed lines in *bad.
 */
static struct agg_stack **read_text(const char *text, struct aggregator *a, uint64_t *nr,
				    uint64_t *bad)
{
	struct sym_cache *sc = sym_cache_new();
	struct proc_tracker *pt = sc ? proc_tracker_new_names(sc) : NULL;
	struct recording_meta meta = {0};
	char err[128] = "";
	FILE *in = fmemopen((void *)text, strlen(text), "r");

	*bad = *nr = 0;
	agg_init(a, 10);
	CHECK(in && pt && recording_read(in, a, pt, &meta, NULL, bad, err, sizeof(err)) == 0,
	      "recording_read: %s", err);
	if (in)
		fclose(in);
	proc_tracker_free(pt);
	sym_cache_free(sc);
	return agg_sorted(a, nr);
}

/*
 * A recording written by a newer cfiprof, with a stop reason this one does
 * not list: read, not refused, and the reason kept and named "unknown(N)".
 */
static void test_recording_unknown_reason(void)
{
	static const char text[] = "# cfiprof recording v1\nmeta 99 cycles 12 34\n"
				   "stack 3 7 7 200 0 newer k - u abc\n"
				   "stack 2 7 7 1 0 newer k - u abd\n";
	struct agg_stack **v;
	uint64_t bad, nr;
	struct aggregator a;

	v = read_text(text, &a, &nr, &bad);
	CHECK(bad == 0 && nr == 2 && v, "read %" PRIu64 " stacks, %" PRIu64 " malformed", nr, bad);
	for (uint64_t i = 0; v && i < nr; i++)
		if (v[i]->count == 3)
			CHECK(v[i]->reason == 200 &&
				  streq(stop_reason_name(v[i]->reason), "unknown(200)"),
			      "the newer reason: %u, named %s", v[i]->reason,
			      stop_reason_name(v[i]->reason));
	CHECK(a.unknown_reason == 3 && a.by_reason[STOP_COMPLETE] == 0 &&
		  a.by_reason[STOP_TRUNCATED] == 2,
	      "counted apart: %" PRIu64 " unknown, %" PRIu64 " complete", a.unknown_reason,
	      a.by_reason[STOP_COMPLETE]);
	free(v);
	agg_free(&a);
}

/*
 * Another runtime's units (Go's labels) on a stack line, " rt RUNTIME:STATUS:HEX":
 * read back byte for byte, also when another field follows (the old reader's
 * %2x skipped the blank into it and refused the line); an odd or partial unit
 * is malformed.
 */
static void test_recording_runtime_units(void)
{
	struct cfi_go_label l = {.key_len = 6, .value_len = 5, .key = "worker", .value = "alpha"};
	char text[1024], hex[2 * sizeof(l) + 1];
	const uint8_t *b = (const uint8_t *)&l;
	struct agg_stack **v;
	uint64_t bad, nr;
	struct aggregator a;

	for (size_t i = 0; i < sizeof(l); i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
	snprintf(text, sizeof(text),
		 "# cfiprof recording v1\nmeta 99 cpu-clock 0 0\n"
		 "stack 3 7 7 0 0 app k - u abc rt 2:1:%s c 1f\n"
		 "stack 1 7 7 0 0 app k - u abd rt 2:1:%.30s\n",
		 hex, hex);
	v = read_text(text, &a, &nr, &bad);
	CHECK(bad == 1 && nr == 1 && v, "read %" PRIu64 " stacks, %" PRIu64 " malformed", nr, bad);
	if (v && nr == 1)
		CHECK(v[0]->runtime == RT_GO && v[0]->rt_status == 1 &&
			  v[0]->nr_rt == GO_LABEL_UNITS && v[0]->cgroup_id == 0x1f &&
			  !memcmp(v[0]->pcs + v[0]->nr_kernel + v[0]->nr_user, &l, sizeof(l)),
		      "runtime %u status %u, %u units, cgroup %" PRIx64, v[0]->runtime,
		      v[0]->rt_status, v[0]->nr_rt, v[0]->cgroup_id);
	free(v);
	agg_free(&a);
}

/* Every stop reason has one distinct name, and the walkable set is the list's. */
static void test_stop_reason_list(void)
{
	for (int i = 0; i < STOP_REASON_MAX; i++) {
		const char *n = stop_reason_name(i);

		CHECK(n && *n && strncmp(n, "unknown", 7), "reason %d has no name: %s", i, n);
		for (int j = 0; j < i; j++)
			CHECK(strcmp(n, stop_reason_name(j)), "reasons %d and %d are both %s", j, i,
			      n);
	}
	/* and the users' page names each (run from the tree) */
	{
		char *doc = slurp("docs/record.md");

		for (int i = 0; i < STOP_REASON_MAX; i++) {
			char quoted[64];

			snprintf(quoted, sizeof(quoted), "`%s`", stop_reason_name(i));
			CHECK(doc && strstr(doc, quoted), "docs/record.md does not name %s",
			      quoted);
		}
		free(doc);
	}
	CHECK(!stop_reason_walkable(STOP_NO_USER) && !stop_reason_walkable(STOP_EXITING) &&
		  !stop_reason_walkable(STOP_IN_EXECVE) && stop_reason_walkable(STOP_COMPLETE) &&
		  stop_reason_walkable(STOP_NO_MAPPING) && stop_reason_walkable(200),
	      "walkable set");
}

/* BPF program frames keep the name they had when recorded (kname lines). */
static void test_recording_kernel_names(void)
{
	char kpath[] = "/tmp/cfiprof-kallsyms.XXXXXX", *buf = NULL, err[128], name[256];
	struct cfi_sample_record *r = calloc(1, sizeof(*r) + 3 * sizeof(uint64_t));
	struct recording_meta wmeta = {.freq = 99, .event = "cpu-clock"}, meta = {0};
	struct aggregator a, back;
	struct sym_cache *sc = sym_cache_new();
	struct proc_tracker *pt = sc ? proc_tracker_new_names(sc) : NULL;
	struct frame_namer fn;
	struct ksyms *ks;
	size_t len = 0;
	uint64_t bad = 0;
	FILE *f;
	int fd = mkstemp(kpath);

	if (fd < 0 || !r) {
		CHECK(0, "mkstemp");
		free(r);
		return;
	}
	f = fdopen(fd, "w");
	fputs("ffffffff81000000 T _stext\nffffffff81000100 T do_exit\n"
	      "ffffffffa0000000 t bpf_prog_0123456789abcdef_on_exit\t[bpf]\n"
	      "ffffffffa0001000 t bpf_prog_fedcba9876543210_other\t[bpf]\n",
	      f);
	fclose(f);
	ks = ksyms_load(kpath, err, sizeof(err));
	CHECK(ks != NULL, "ksyms_load: %s", err);
	agg_init(&a, 10);
	r->type = RECORD_SAMPLE;
	r->pid = r->tid = 7;
	r->nr_kernel = 2;
	r->nr_user = 1;
	r->pcs[0] = 0xffffffffa0000010;
	r->pcs[1] = 0xffffffff81000110;
	r->pcs[2] = 0x401000;
	agg_add(&a, r, sizeof(*r) + 3 * sizeof(uint64_t));
	wmeta.ks = ks;
	f = open_memstream(&buf, &len);
	CHECK(pt && recording_write(f, &a, pt, &wmeta, NULL) == 0, "recording_write");
	fclose(f);
	CHECK(buf &&
		  strstr(buf, "kname ffffffffa0000010 bpf_prog_0123456789abcdef_on_exit [bpf]\n") &&
		  !strstr(buf, "kname ffffffff81000110"),
	      "only the BPF frame is saved by name:\n%s", buf ? buf : "");
	f = fmemopen(buf, len, "r");
	agg_init(&back, 10);
	CHECK(f && pt && recording_read(f, &back, pt, &meta, NULL, &bad, err, sizeof(err)) == 0 &&
		  !bad,
	      "read back: %s", err);
	if (f)
		fclose(f);
	/* report time: no kallsyms at all, the saved name still wins */
	frame_namer_init(&fn, NULL, NULL);
	fn.saved_kernel = &meta.knames;
	CHECK(streq(frame_name_kernel(&fn, 0xffffffffa0000010, name, sizeof(name)),
		    "bpf_prog_0123456789abcdef_on_exit [bpf]"),
	      "saved kernel name: %s", name);
	CHECK(streq(frame_name_kernel(&fn, 0xffffffff81000110, name, sizeof(name)),
		    "0xffffffff81000110"),
	      "other kernel pcs are not saved: %s", name);
	frame_namer_free(&fn);
	/*
	 * report time with kallsyms: a BPF program there now is not the one that
	 * ran then (programs come and go; cfiprof's own linger a moment after it
	 * exits), so a pc the recording did not name stays an address
	 */
	frame_namer_init(&fn, NULL, ks);
	fn.saved_kernel = &meta.knames;
	CHECK(streq(frame_name_kernel(&fn, 0xffffffffa0001010, name, sizeof(name)),
		    "0xffffffffa0001010"),
	      "a BPF program in today's kallsyms names a recorded pc: %s", name);
	CHECK(streq(frame_name_kernel(&fn, 0xffffffff81000110, name, sizeof(name)), "do_exit"),
	      "kernel text is named from kallsyms at report time: %s", name);
	frame_namer_free(&fn);
	kernel_names_free(&meta.knames);
	agg_free(&back);
	agg_free(&a);
	ksyms_free(ks);
	proc_tracker_free(pt);
	sym_cache_free(sc);
	unlink(kpath);
	free(buf);
	free(r);
}

/*
 * report of a recording text: read into a (meta gets the saved frames, for
 * the caller to free), then folded with the recording's names; malloc'd.
 */
static char *report_folded(const char *text, struct aggregator *a, struct proc_tracker *pt,
			   struct recording_meta *meta, uint64_t *bad)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	struct frame_namer fn;
	char err[128], *out = NULL;
	size_t olen = 0;

	meta->frames = saved_frames_new();
	meta->interp_frames = saved_interp_new();
	agg_init(a, 10);
	CHECK(f && pt && meta->frames && meta->interp_frames &&
		  recording_read(f, a, pt, meta, NULL, bad, err, sizeof(err)) == 0,
	      "recording_read: %s", err);
	if (f)
		fclose(f);
	frame_namer_init(&fn, pt, NULL);
	fn.saved_user = meta->frames;
	fn.saved_interp = meta->interp_frames;
	session_runtimes_namers(NULL, &fn, NULL); /* as report's */
	f = open_memstream(&out, &olen);
	CHECK(f && folded_write(f, a, &fn) == 0, "folded_write");
	if (f)
		fclose(f);
	frame_namer_free(&fn);
	return out;
}

/* What report_folded and its caller's setup hold, freed. */
static void report_free(struct recording_meta *meta, struct aggregator *a, struct proc_tracker *pt,
			struct sym_cache *sc)
{
	saved_frames_free(meta->frames);
	saved_interp_free(meta->interp_frames);
	agg_free(a);
	proc_tracker_free(pt);
	sym_cache_free(sc);
}

/*
 * Two libraries mapped in turn at one address (dlopen/dlclose): each
 * generation's samples get the names its own library had, from uframe lines
 * keyed by the mapped file too; a line without the file (an older recording)
 * names its location whatever the file; a generation no set covers (dropped
 * live) is named where every set kept maps one file (main), by none where
 * they disagree.  Fails on the old code: the first line read named both
 * libraries' samples.
 */
static void test_recording_same_address(void)
{
	struct recording_meta meta = {0};
	struct sym_cache *sc = sym_cache_new();
	struct proc_tracker *pt = sc ? proc_tracker_new_names(sc) : NULL;
	struct aggregator a;
	char text[2048], *out;
	uint64_t bad = 0;

	snprintf(text, sizeof(text),
		 "# cfiprof recording v1\n"
		 "meta 99 cpu-clock 0 0\n"
		 "gen 7 4 3\n"
		 "map 7 1000 2000 0 1000 0 - /nonexistent/liba.so\n"
		 "map 7 3000 4000 0 3000 0 - /nonexistent/main\n"
		 "gen 7 8 7\n"
		 "map 7 1000 2000 0 1000 0 - /nonexistent/libb.so\n"
		 "map 7 3000 4000 0 3000 0 - /nonexistent/main\n"
		 "gen 7 12 9\n"
		 "map 7 3000 4000 0 3000 0 - /nonexistent/main\n"
		 "uframe 7 1000 1100 0 0 0\ta_fn\ta_fn\t\t%" PRIx64 "\n"
		 "uframe 7 1000 1100 0 0 0\tb_fn\tb_fn\t\t%" PRIx64 "\n"
		 "uframe 7 3000 3100 0 0 0\tmain\tmain\t\n"
		 "stack 3 7 7 0 0 app k - u 1100,3101 g 4\n"
		 "stack 2 7 7 0 0 app k - u 1100,3101 g 8\n"
		 "stack 1 7 7 0 0 app k - u 1100,3101 g 1\n",
		 saved_frames_file("/nonexistent/liba.so"),
		 saved_frames_file("/nonexistent/libb.so"));
	out = report_folded(text, &a, pt, &meta, &bad);
	CHECK(bad == 0, "%" PRIu64 " malformed lines", bad);
	CHECK(out && strstr(out, "app;main;a_fn 3\n") && strstr(out, "app;main;b_fn 2\n") &&
		  strstr(out, "app;main;[unknown] 1\n"),
	      "report's folded output:\n%s", out ? out : "");
	free(out);
	report_free(&meta, &a, pt, sc);
}

/* Occurrences of what in s. */
static int count_of(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

/*
 * Python frames: pyframe lines and a stack's "py" list read back into the
 * stack, and report splices them above the evaluation loop as record did
 * (the names are the recording's: their process is gone; a frame of another
 * module at the same code address is another frame).  Malformed ones
 * are counted, not taken.  The writer saves each distinct frame once.
 */
static void test_recording_python(void)
{
	static const char text[] =
	    "# cfiprof recording v1\n"
	    "meta 99 cpu-clock 0 0\n"
	    "uframe 7 0 1000 0 0 0\tleaf_c\tleaf_c\t\n"
	    "uframe 7 0 2000 0 0 0\t_PyEval_EvalFrameDefault\t_PyEval_EvalFrameDefault\t\n"
	    "uframe 7 0 3000 0 0 0\tmain\tmain\t\n"
	    "pyframe 7 4 10 20 0 0 ab 0 5\tinner\tapp.py\n"
	    "pyframe 7 4 10 20 0 0 cd 0 7\tother_module\tlib.py\n"
	    "pyframe 7 4 30 40 1 0 ab 2 9\touter\tapp.py\n"
	    "pyframe 7 4 50 60 0 0 ab 1 3\tnot_running\tapp.py\n"
	    "pyframe 7 4 70 80 0 0 ab 9 3\tbad_role\tapp.py\n"
	    "pyframe 7 4 70 80 0 0 ab 0 3\n"
	    "stack 3 7 7 0 0 app k - u 1000,2001,3001 g 4 py "
	    "10:20:0:0:ab,50:60:0:0:ab,30:40:1:0:ab\n"
	    "stack 1 7 7 0 0 app k - u 1000,2001,3001 g 4 py 10:20:0:zz:ab\n";
	struct recording_meta meta = {0}, wmeta = {.freq = 99, .event = "cpu-clock"};
	struct interp_namer namer;
	struct sym_cache *sc = sym_cache_new();
	struct proc_tracker *pt = sc ? proc_tracker_new_names(sc) : NULL;
	struct python_names *pn = python_names_new(NULL, NULL);
	struct aggregator a;
	char *out, *buf = NULL;
	size_t len = 0;
	uint64_t bad = 0;
	FILE *f;

	out = report_folded(text, &a, pt, &meta, &bad);
	CHECK(bad == 3, "%" PRIu64 " malformed lines (want the 2 pyframe and 1 stack)", bad);
	CHECK(pn && out &&
		  streq(out, "app;main;_PyEval_EvalFrameDefault;outer (app.py:9);"
			     "inner (app.py:5);leaf_c 3\n"),
	      "report's folded output:\n%s", out ? out : "");
	/* written again: each frame once, named as the process showed it (here: not read) */
	python_names_namer(pn, &namer);
	wmeta.interp[RT_PYTHON] = &namer;
	f = open_memstream(&buf, &len);
	CHECK(f && recording_write(f, &a, pt, &wmeta, NULL) == 0, "recording_write");
	if (f)
		fclose(f);
	CHECK(buf && strstr(buf, "pyframe 7 4 10 20 0 0 ab 0 0\t[python]\t\n") &&
		  strstr(buf, "pyframe 7 4 30 40 1 0 ab 2 0\t[python]\t\n") &&
		  strstr(buf, " g 4 py 10:20:0:0:ab,50:60:0:0:ab,30:40:1:0:ab\n") &&
		  count_of(buf, "pyframe ") == 3,
	      "written:\n%s", buf ? buf : "");
	free(buf);
	free(out);
	python_names_free(pn);
	report_free(&meta, &a, pt, sc);
}

/*
 * A sample in the evaluation loop's prologue (or epilogue): the innermost
 * native frame is _PyEval_EvalFrameDefault, but the frame it will run is not
 * linked yet, so the chain's innermost group is its caller's.  It goes above
 * the outer evaluation loop, not above the innermost.  A sample with the
 * frame linked (a group per evaluation loop) is spliced as always.
 */
static void test_recording_python_prologue(void)
{
	static const char text[] =
	    "# cfiprof recording v1\n"
	    "meta 99 cpu-clock 0 0\n"
	    "uframe 7 0 2000 0 0 0\t_PyEval_EvalFrameDefault\t_PyEval_EvalFrameDefault\t\n"
	    "uframe 7 0 3000 0 0 0\tPyObject_Vectorcall\tPyObject_Vectorcall\t\n"
	    "uframe 7 0 4000 0 0 0\tmain\tmain\t\n"
	    "pyframe 7 4 10 20 1 0 ab 2 5\tcaller\tapp.py\n"
	    "pyframe 7 4 30 40 1 0 ab 2 9\tcallee\tapp.py\n"
	    "stack 3 7 7 0 0 app k - u 2000,3001,2001,4001 g 4 py 10:20:1:0:ab\n"
	    "stack 2 7 7 0 0 app k - u 2000,3001,2001,4001 g 4 py 30:40:1:0:ab,10:20:1:0:ab\n";
	struct recording_meta meta = {0};
	struct sym_cache *sc = sym_cache_new();
	struct proc_tracker *pt = sc ? proc_tracker_new_names(sc) : NULL;
	struct aggregator a;
	uint64_t bad = 0;
	char *out = report_folded(text, &a, pt, &meta, &bad);

	CHECK(!bad, "%" PRIu64 " malformed lines", bad);
	CHECK(out && strstr(out, "app;main;_PyEval_EvalFrameDefault;caller (app.py:5);"
				 "PyObject_Vectorcall;_PyEval_EvalFrameDefault 3\n"),
	      "prologue sample:\n%s", out ? out : "");
	CHECK(out &&
		  strstr(out, "app;main;_PyEval_EvalFrameDefault;caller (app.py:5);"
			      "PyObject_Vectorcall;_PyEval_EvalFrameDefault;callee (app.py:9) 2\n"),
	      "linked sample:\n%s", out ? out : "");
	free(out);
	report_free(&meta, &a, pt, sc);
}

/*
 * JavaScript frames (V8): each names the native frame whose PC's low half it
 * holds and takes its place, leaf first; one whose PC no native frame has
 * (a chain read through a frame the native walk did not take) names none.
 */
static void test_recording_v8(void)
{
	static const char text[] =
	    "# cfiprof recording v1\n"
	    "meta 99 cpu-clock 0 0\n"
	    "uframe 7 0 1000 0 0 0\tjit_leaf\tjit_leaf\t\n"
	    "uframe 7 0 2000 0 0 0\tBuiltins_Call\tBuiltins_Call\t\n"
	    "uframe 7 0 3000 0 0 0\tjit_caller\tjit_caller\t\n"
	    "uframe 7 0 4000 0 0 0\tmain\tmain\t\n"
	    "v8frame 7 4 10 1000 0 1 0 0 5\tfib\tapp.js\n"
	    "v8frame 7 4 30 3001 0 1 0 0 9\twork\tapp.js\n"
	    "v8frame 7 4 50 9999 0 1 0 0 2\tnowhere\tapp.js\n"
	    "stack 3 7 7 0 0 app k - u 1000,2001,3001,4001 g 4 v8 10:1000:0:1:0,30:3001:0:1:0\n"
	    "stack 2 7 7 0 0 app k - u 1000,2001,3001,4001 g 4 v8 "
	    "10:1000:0:1:0,50:9999:0:1:0,30:3001:0:1:0\n";
	struct recording_meta meta = {0};
	struct sym_cache *sc = sym_cache_new();
	struct proc_tracker *pt = sc ? proc_tracker_new_names(sc) : NULL;
	struct aggregator a;
	uint64_t bad = 0;
	char *out = report_folded(text, &a, pt, &meta, &bad);

	CHECK(!bad, "%" PRIu64 " malformed lines", bad);
	CHECK(out && streq(out, "app;main;work (app.js:9);Builtins_Call;fib (app.js:5) 5\n"),
	      "report's folded output:\n%s", out ? out : "");
	free(out);
	report_free(&meta, &a, pt, sc);
}

/*
 * A JIT's inline levels (HotSpot's): a jvmframe line's NAME FILE LINE
 * triples after its own, innermost first, become inline frames above the
 * frame, in its native frame's place; a frame of the same code at another
 * pc has its own; a triple cut short makes the line malformed.
 */
static void test_recording_jvm_inline(void)
{
	static const char text[] =
	    "# cfiprof recording v1\n"
	    "meta 99 cpu-clock 0 0\n"
	    "uframe 7 0 1000 0 0 0\tjit\tjit\t\n"
	    "uframe 7 0 4000 0 0 0\tmain\tmain\t\n"
	    "jvmframe 7 4 10 1000 0 1 0 0 12\tT.hot\tT.java\t"
	    "T.tiny\tT.java\t0\tT.leaf\tT.java\t21\n"
	    "jvmframe 7 4 10 1010 0 1 0 0 13\tT.hot\tT.java\n"
	    "jvmframe 7 4 10 1020 0 1 0 0 13\tT.hot\tT.java\tT.leaf\tT.java\n"
	    "stack 3 7 7 0 0 app k - u 1000,4001 g 4 jvm 10:1000:0:1:0\n"
	    "stack 2 7 7 0 0 app k - u 1010,4001 g 4 jvm 10:1010:0:1:0\n";
	static const struct prof_view shown, no_inline = {.no_inline = true};
	const struct prof_view *views[] = {&shown, &no_inline};
	static const char *const want[] = {
	    "app;main;T.hot (T.java:12);T.leaf (T.java:21);T.tiny 3\n"
	    "app;main;T.hot (T.java:13) 2\n",
	    "app;main;T.hot (T.java:12) 3\napp;main;T.hot (T.java:13) 2\n"};
	struct recording_meta meta = {0};
	struct sym_cache *sc = sym_cache_new();
	struct proc_tracker *pt = sc ? proc_tracker_new_names(sc) : NULL;
	struct frame_namer fn;
	struct aggregator a;
	uint64_t bad = 0;
	char *out = report_folded(text, &a, pt, &meta, &bad);

	CHECK(bad == 1, "%" PRIu64 " malformed lines (want the cut jvmframe)", bad);
	free(out);
	/* as report writes it: the view splits the levels into frames (or not: --no-inline) */
	frame_namer_init(&fn, pt, NULL);
	fn.saved_user = meta.frames;
	fn.saved_interp = meta.interp_frames;
	session_runtimes_namers(NULL, &fn, NULL);
	for (int i = 0; i < 2; i++) {
		struct profile p;
		size_t olen = 0;
		FILE *f;

		out = NULL;
		f = open_memstream(&out, &olen);
		CHECK(f && profile_build(&p, &a, &fn, NULL) == 0, "profile_build");
		CHECK(profile_apply_view(&p, views[i]) == 0 && folded_write_profile(f, &p) == 0,
		      "folded");
		profile_free(&p);
		if (f)
			fclose(f);
		CHECK(out && streq(out, want[i]), "report's folded output (view %d):\n%s", i,
		      out ? out : "");
		free(out);
	}
	frame_namer_free(&fn);
	report_free(&meta, &a, pt, sc);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!table_mem_alloc())
		return 2;
	RUN_TEST(test_recording);
	RUN_TEST(test_recording_no_procs);
	RUN_TEST(test_recording_unknown_reason);
	RUN_TEST(test_recording_runtime_units);
	RUN_TEST(test_stop_reason_list);
	RUN_TEST(test_recording_kernel_names);
	RUN_TEST(test_recording_same_address);
	RUN_TEST(test_recording_python);
	RUN_TEST(test_recording_python_prologue);
	RUN_TEST(test_recording_v8);
	RUN_TEST(test_recording_jvm_inline);
	table_mem_free();
	return HARNESS_DONE();
}
