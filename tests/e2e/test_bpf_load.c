// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The BPF program must load on this kernel in every configuration the loader
 * may pick: bpf_loop or bounded loops + tail calls, at 127, 512 and 1024 user
 * frames; with bpf_loop also the programs of other events (uprobe, usdt, raw tracepoint,
 * off-CPU).  A load failure is a test failure (never a skip): it prints the
 * tail of the verifier log.
 */
/* run.sh: samples apart (only the commands it starts), beside other suites */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <bpf/btf.h>

#include "bpf/cfiprof_abi.h"
#include "cfiprof.skel.h"
#include "exit_maps.skel.h"
#include "tests/lib/harness.h"
#include "user/session/core_btf.h"
#include "user/session/exit_maps_load.h"
#include "user/session/kernel_btf.h"
#include "user/session/kfuncs.h"

/* libbpf prints the verifier log at warning level: keep its tail for the failure message. */
static char log_tail[32768];
static size_t log_len;

static int capture_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *line = NULL;
	size_t n, keep = sizeof(log_tail) - 1;
	int len;

	if (level == LIBBPF_DEBUG)
		return 0;
	len = vasprintf(&line, fmt, ap);
	if (len <= 0) {
		free(line);
		return 0;
	}
	n = len;
	/* the verifier's verdict is at the end of its log: keep the last bytes */
	if (n >= keep) {
		memcpy(log_tail, line + n - keep, keep);
		log_len = keep;
	} else {
		if (log_len + n > keep) {
			memmove(log_tail, log_tail + log_len + n - keep, keep - n);
			log_len = keep - n;
		}
		memcpy(log_tail + log_len, line, n);
		log_len += n;
	}
	log_tail[log_len] = 0;
	free(line);
	return 0;
}

static void prog_stats(struct bpf_program *prog, const char *cfg)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);
	int fd = bpf_program__fd(prog);

	memset(&info, 0, sizeof(info));
	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len)) {
		printf("  %-24s %-10s: no info (%s)\n", cfg, bpf_program__name(prog),
		       strerror(errno));
		return;
	}
	printf("  %-24s %-10s: xlated %u insns, jited %u bytes, verifier processed %u insns\n", cfg,
	       bpf_program__name(prog), info.xlated_prog_len / 8, info.jited_prog_len,
	       info.verified_insns);
}

static void try_load(int use_loop, unsigned int frames)
{
	struct cfiprof_bpf *skel;
	char cfg[64];
	int err;

	snprintf(cfg, sizeof(cfg), "%s/%u frames", use_loop ? "bpf_loop" : "tail calls", frames);
	log_len = 0;
	log_tail[0] = 0;
	skel = cfiprof_bpf__open();
	CHECK(skel != NULL, "%s: open failed: %s", cfg, strerror(errno));
	if (!skel)
		return;
	skel->rodata->use_bpf_loop = use_loop;
	/* with bpf_loop, the programs of other events too (not fentry: its target is the user's) */
	if (use_loop) {
		bpf_program__set_autoload(skel->progs.on_uprobe, true);
		bpf_program__set_autoload(skel->progs.on_usdt, true);
		bpf_program__set_autoload(skel->progs.on_tp0, true);
		bpf_program__set_autoload(skel->progs.on_switch, true);
	}
	skel->rodata->max_user_frames = frames;
	skel->rodata->collect_kernel = 1;
	/* what the loader does: rows sized to the tables, a smaller ring for the test */
	CHECK(bpf_map__set_max_entries(skel->maps.rows, 1 << 20) == 0, "%s: rows size", cfg);
	CHECK(bpf_map__set_max_entries(skel->maps.events, 1 << 20) == 0, "%s: events size", cfg);
	err = kfuncs_patch_object(skel->obj);
	err = err ? err : cfiprof_bpf__load(skel);
	CHECK(err == 0, "%s: load failed: %d (%s)\n--- libbpf / verifier log (tail) ---\n%s", cfg,
	      err, strerror(-err), log_tail);
	if (!err) {
		prog_stats(skel->progs.on_sample, cfg);
		prog_stats(skel->progs.walk_tc, cfg);
		if (use_loop) {
			prog_stats(skel->progs.on_uprobe, cfg);
			prog_stats(skel->progs.on_tp0, cfg);
			prog_stats(skel->progs.on_switch, cfg);
		}
		CHECK(bpf_map__max_entries(skel->maps.rows) == 1 << 20, "%s: rows resized", cfg);
	}
	cfiprof_bpf__destroy(skel);
}

/* Every program, so that every CO-RE relocation of the object is made. */
static struct cfiprof_bpf *open_all(const char *core_path)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = core_path);
	struct cfiprof_bpf *skel = cfiprof_bpf__open_opts(&oo);
	struct bpf_program *p;

	if (!skel)
		return NULL;
	bpf_object__for_each_program(p, skel->obj)
	{
		/* fentry / fexit / kprobe need a target the user names */
		enum bpf_attach_type t = bpf_program__expected_attach_type(p);

		if (t != BPF_TRACE_FENTRY && t != BPF_TRACE_FEXIT)
			bpf_program__set_autoload(p, true);
	}
	skel->rodata->use_bpf_loop = 1;
	skel->rodata->collect_kernel = 1;
	bpf_map__set_max_entries(skel->maps.rows, 1 << 16);
	bpf_map__set_max_entries(skel->maps.events, 1 << 20);
	return skel;
}

/* Instructions of p and q, both loaded, that differ but for map descriptors; printed. */
static int insns_differ(struct bpf_program *p, struct bpf_program *q)
{
	const struct bpf_insn *a = bpf_program__insns(p), *b = bpf_program__insns(q);
	size_t n = bpf_program__insn_cnt(p);
	int differ = 0;

	CHECK(bpf_program__insn_cnt(q) == n, "%s: %zu against %zu instructions",
	      bpf_program__name(p), bpf_program__insn_cnt(q), n);
	for (size_t i = 0; i < n && bpf_program__insn_cnt(q) == n; i++) {
		bool map_fd =
		    a[i].code == (BPF_LD | BPF_IMM | BPF_DW) &&
		    (a[i].src_reg == BPF_PSEUDO_MAP_FD || a[i].src_reg == BPF_PSEUDO_MAP_VALUE);

		if (a[i].code != b[i].code || a[i].dst_reg != b[i].dst_reg ||
		    a[i].src_reg != b[i].src_reg || a[i].off != b[i].off ||
		    (!map_fd && a[i].imm != b[i].imm)) {
			if (differ++ < 5)
				printf("  %s insn %zu: %02x %d %d %d %d against %02x %d %d %d %d\n",
				       bpf_program__name(p), i, a[i].code, a[i].dst_reg,
				       a[i].src_reg, a[i].off, a[i].imm, b[i].code, b[i].dst_reg,
				       b[i].src_reg, b[i].off, b[i].imm);
		}
	}
	return differ;
}

/*
 * The cached kernel types (user/session/core_btf.c) must relocate every
 * program of both objects exactly as the kernel's whole BTF does: libbpf's
 * relocation against the whole BTF is the oracle.  Instructions are compared
 * but for the map descriptors libbpf writes into ld_imm64 (each object has
 * its own).
 */
static void core_btf_same_relocations(void)
{
	struct btf *kernel = btf__load_vmlinux_btf(), *reduced = NULL;
	struct cfiprof_bpf *whole = open_all(NULL), *cut = NULL;
	struct exit_maps_bpf *exit_whole = exit_maps_bpf__open(), *exit_cut = NULL;
	char path[] = "/tmp/cfiprof-core-btf-XXXXXX";
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = path);
	struct bpf_program *p, *q;
	const struct btf *local[2];
	const void *raw;
	__u32 len = 0;
	int fd = -1, progs = 0, differ = 0, err;

	CHECK(kernel && whole && exit_whole, "kernel BTF %p, objects %p %p", (void *)kernel,
	      (void *)whole, (void *)exit_whole);
	if (!kernel || !whole || !exit_whole)
		goto cleanup;
	local[0] = bpf_object__btf(whole->obj);
	local[1] = bpf_object__btf(exit_whole->obj);
	reduced = core_btf_reduce(kernel, local, 2);
	CHECK(reduced != NULL, "reduce: %s", strerror(errno));
	if (!reduced)
		goto cleanup;
	CHECK(btf__type_cnt(reduced) * 20 < btf__type_cnt(kernel),
	      "%u of the kernel's %u types kept: not reduced", btf__type_cnt(reduced),
	      btf__type_cnt(kernel));
	raw = btf__raw_data(reduced, &len);
	fd = mkstemp(path);
	CHECK(fd >= 0 && raw && write(fd, raw, len) == (ssize_t)len, "write %s", path);
	cut = open_all(path);
	exit_cut = exit_maps_bpf__open_opts(&oo);
	CHECK(cut && exit_cut, "open with %s", path);
	if (!cut || !exit_cut)
		goto cleanup;
	/* the kfunc calls, as the loader makes them (kfuncs.h) */
	err = kfuncs_patch_object(whole->obj);
	err = err ? err : kfuncs_patch_object(cut->obj);
	err = err ? err : kfuncs_patch(exit_whole->progs.on_exit_maps, kfunc_ids());
	err = err ? err : kfuncs_patch(exit_cut->progs.on_exit_maps, kfunc_ids());
	CHECK(!err, "kfunc calls: %s", strerror(-err));
	err = err ? err : cfiprof_bpf__load(whole);
	err = err ? err : exit_maps_bpf__load(exit_whole);
	CHECK(!err, "load with the kernel's BTF: %s\n%s", strerror(-err), log_tail);
	err = err ? err : cfiprof_bpf__load(cut);
	err = err ? err : exit_maps_bpf__load(exit_cut);
	CHECK(!err, "load with the reduced BTF: %s\n%s", strerror(-err), log_tail);
	if (err)
		goto cleanup;
	q = NULL;
	bpf_object__for_each_program(p, whole->obj)
	{
		q = bpf_object__next_program(cut->obj, q);
		if (!q || !bpf_program__autoload(p))
			continue;
		progs++;
		differ += insns_differ(p, q);
	}
	/* on_sample, the walkers, lifecycle and events' programs at least */
	CHECK(progs >= 10, "only %d programs compared", progs);
	differ += insns_differ(exit_whole->progs.on_exit_maps, exit_cut->progs.on_exit_maps);
	CHECK(differ == 0, "%d instructions relocated differently", differ);
cleanup:
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	exit_maps_bpf__destroy(exit_cut);
	exit_maps_bpf__destroy(exit_whole);
	cfiprof_bpf__destroy(cut);
	cfiprof_bpf__destroy(whole);
	btf__free(reduced);
	btf__free(kernel);
}

/*
 * Neither the sampling programs' object (raw tracepoints, no kfuncs), nor its
 * second load, nor the exit mappings' object (raw tracepoint, its kfunc calls
 * made by the loader) needs the kernel's BTF once their CO-RE types are
 * cached: libbpf reads it where an object has BTF tracepoints or kfunc
 * externs, ~5 MB parsed (its debug log says "loading kernel BTF"): the
 * exit mappings' object had both.
 */
static char libbpf_log[1 << 16];
static size_t libbpf_log_len;

static int log_all(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	if (libbpf_log_len < sizeof(libbpf_log) - 1) {
		int n = vsnprintf(libbpf_log + libbpf_log_len, sizeof(libbpf_log) - libbpf_log_len,
				  fmt, ap);

		if (n > 0)
			libbpf_log_len += (size_t)n;
		if (libbpf_log_len >= sizeof(libbpf_log))
			libbpf_log_len = sizeof(libbpf_log) - 1;
	}
	return 0;
}

static void no_kernel_btf(void)
{
	struct btf *kernel = btf__load_vmlinux_btf(), *reduced = NULL;
	struct cfiprof_bpf *probe = cfiprof_bpf__open(), *skel = NULL;
	struct exit_maps_bpf *exit_probe = exit_maps_bpf__open(), *exit_skel = NULL;
	char path[] = "/tmp/cfiprof-core-btf-XXXXXX";
	LIBBPF_OPTS(bpf_object_open_opts, oo, .btf_custom_path = path);
	const struct btf *local[2];
	const void *raw;
	__u32 len = 0;
	int fd = -1, err;

	CHECK(kernel && probe && exit_probe, "kernel BTF, objects");
	if (!kernel || !probe || !exit_probe)
		goto cleanup;
	local[0] = bpf_object__btf(probe->obj);
	local[1] = bpf_object__btf(exit_probe->obj);
	reduced = core_btf_reduce(kernel, local, 2);
	raw = reduced ? btf__raw_data(reduced, &len) : NULL;
	fd = mkstemp(path);
	CHECK(fd >= 0 && raw && write(fd, raw, len) == (ssize_t)len, "write %s", path);
	skel = cfiprof_bpf__open_opts(&oo);
	if (!skel)
		goto cleanup;
	bpf_map__set_max_entries(skel->maps.rows, 1 << 16);
	libbpf_log_len = 0;
	libbpf_set_print(log_all);
	err = kfuncs_patch_object(skel->obj);
	err = err ? err : cfiprof_bpf__load(skel);
	CHECK(!err, "load: %s", strerror(-err));
	err = err ? err : exit_maps_supported() ? 0 : -ENOENT;
	exit_skel = err ? NULL : exit_maps_load(skel->obj, path);
	libbpf_set_print(capture_print);
	CHECK(err || exit_skel, "the exit mappings' object: %s", strerror(errno));
	CHECK(!strstr(libbpf_log, "kernel BTF"), "libbpf read the kernel's BTF: %.300s",
	      strstr(libbpf_log, "kernel BTF"));
	/* the log is libbpf's: an empty one would prove nothing */
	CHECK(strstr(libbpf_log, "CO-RE relocating"), "no CO-RE in libbpf's log: %.200s",
	      libbpf_log);
cleanup:
	if (fd >= 0) {
		close(fd);
		unlink(path);
	}
	exit_maps_bpf__destroy(exit_skel);
	exit_maps_bpf__destroy(exit_probe);
	cfiprof_bpf__destroy(skel);
	cfiprof_bpf__destroy(probe);
	btf__free(reduced);
	btf__free(kernel);
}

/* Made-up kfunc calls and type ids (bpf/kfunc_abi.h) in obj's programs to be loaded, and kfunc
 * calls of id. */
static void count_calls(struct bpf_object *obj, int32_t id, int *calls, int *left)
{
	struct bpf_program *p;

	*calls = *left = 0;
	bpf_object__for_each_program(p, obj)
	{
		const struct bpf_insn *in = bpf_program__insns(p);

		for (size_t i = 0; bpf_program__autoload(p) && i < bpf_program__insn_cnt(p); i++) {
			bool call = in[i].code == (BPF_JMP | BPF_CALL);

			*calls += call && in[i].src_reg == BPF_PSEUDO_KFUNC_CALL && in[i].imm == id;
			*left += call && !in[i].src_reg &&
				 (uint32_t)in[i].imm - KFUNC_CALL_BASE < KFUNC_MAX;
			*left += BPF_CLASS(in[i].code) == BPF_ALU64 &&
				 BPF_OP(in[i].code) == BPF_MOV &&
				 (uint32_t)in[i].imm - KTYPE_ID_BASE < KTYPE_MAX;
		}
	}
}

/*
 * The sampling programs' made-up kfunc calls: made this kernel's, with the
 * ids its BTF gives (libbpf's own parse of it, the oracle), and loadable as
 * on a kernel without bpf_rdonly_cast (6.1), where each is a copy of its
 * argument.
 */
static void kfunc_calls(void)
{
	struct btf *kernel = btf__load_vmlinux_btf();
	const struct kfunc_ids *ids = kfunc_ids();
	struct kfunc_ids before_6_2 = *ids;
	struct cfiprof_bpf *skel = NULL;
	struct bpf_program *p;
	int calls, left, err;

	CHECK(kernel != NULL, "the kernel's BTF: %s", strerror(errno));
	if (!kernel)
		return;
	CHECK(ids->func[KFUNC_RDONLY_CAST] > 0 && ids->type[KTYPE_TASK_STRUCT] > 0,
	      "this kernel (6.2 on) has bpf_rdonly_cast: %d, task_struct %d",
	      ids->func[KFUNC_RDONLY_CAST], ids->type[KTYPE_TASK_STRUCT]);
	CHECK(ids->func[KFUNC_RDONLY_CAST] ==
		  btf__find_by_name_kind(kernel, "bpf_rdonly_cast", BTF_KIND_FUNC),
	      "bpf_rdonly_cast: %d", ids->func[KFUNC_RDONLY_CAST]);
	CHECK(ids->func[KFUNC_ITER_TASK_VMA_NEXT] ==
		  btf__find_by_name_kind(kernel, "bpf_iter_task_vma_next", BTF_KIND_FUNC),
	      "bpf_iter_task_vma_next: %d", ids->func[KFUNC_ITER_TASK_VMA_NEXT]);
	CHECK(ids->type[KTYPE_TASK_STRUCT] ==
		  btf__find_by_name_kind(kernel, "task_struct", BTF_KIND_STRUCT),
	      "task_struct: %d", ids->type[KTYPE_TASK_STRUCT]);
	skel = cfiprof_bpf__open();
	CHECK(skel != NULL, "open");
	if (!skel)
		goto cleanup;
	bpf_map__set_max_entries(skel->maps.rows, 1 << 16);
	err = kfuncs_patch_object(skel->obj);
	count_calls(skel->obj, ids->func[KFUNC_RDONLY_CAST], &calls, &left);
	CHECK(!err && calls > 0 && !left, "patched: %s, %d casts, %d made-up left", strerror(-err),
	      calls, left);
	err = err ? err : cfiprof_bpf__load(skel);
	CHECK(!err, "load: %s\n%s", strerror(-err), log_tail);
	cfiprof_bpf__destroy(skel);
	before_6_2.func[KFUNC_RDONLY_CAST] = 0;
	skel = cfiprof_bpf__open();
	if (!skel)
		goto cleanup;
	bpf_map__set_max_entries(skel->maps.rows, 1 << 16);
	err = 0;
	bpf_object__for_each_program(p, skel->obj) err = err ? err : kfuncs_patch(p, &before_6_2);
	count_calls(skel->obj, ids->func[KFUNC_RDONLY_CAST], &calls, &left);
	CHECK(!err && !calls && !left, "patched as before 6.2: %s, %d casts, %d made-up left",
	      strerror(-err), calls, left);
	err = err ? err : cfiprof_bpf__load(skel);
	CHECK(!err, "load as before 6.2: %s\n%s", strerror(-err), log_tail);
cleanup:
	cfiprof_bpf__destroy(skel);
	btf__free(kernel);
}

/* kfunc_ids() of a new process (each reads them once): false if it could not say */
static bool ids_of_child(struct kfunc_ids *out)
{
	int p[2], status = -1;
	bool ok;
	pid_t pid;

	if (pipe(p))
		return false;
	pid = fork();
	if (pid == 0) {
		const struct kfunc_ids *ids = kfunc_ids();

		_exit(write(p[1], ids, sizeof(*ids)) == (ssize_t)sizeof(*ids) ? 0 : 1);
	}
	close(p[1]);
	ok = pid > 0 && read(p[0], out, sizeof(*out)) == (ssize_t)sizeof(*out);
	close(p[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return ok && status == 0;
}

/*
 * The file's layout (kfuncs.c): a magic, the names' hash, then the ids in
 * kfunc_abi.h's order, functions first.
 */
#define IDS_FILE_IDS_AT 16
#define IDS_FILE_BYTES	(IDS_FILE_IDS_AT + 4 * (KFUNC_MAX + KTYPE_MAX))

static bool put_file(const char *path, const void *p, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600);
	bool ok = fd >= 0 && write(fd, p, len) == (ssize_t)len && !fchmod(fd, mode);

	if (fd >= 0)
		close(fd);
	return ok;
}

/*
 * The kfunc ids kept per kernel in the cache directory: written by a first
 * start (the ids libbpf's parse gives), used by the next (a planted id is
 * what it gets), refused where the file is not one the cache can trust (then
 * read from the BTF again and the file made right).
 */
static void kfunc_ids_cache(void)
{
	struct btf *kernel = btf__load_vmlinux_btf();
	char dir[] = "/tmp/cfiprof-kfunc-ids.XXXXXX", id[128], path[256], bytes[IDS_FILE_BYTES];
	int32_t oracle, planted = 4242, got;
	struct kfunc_ids ids;
	struct stat st;
	size_t i;
	struct {
		const char *what;
		size_t len;
		mode_t mode;
		int flip; /* a byte changed, -1: none */
		bool link;
	} refused[] = {
	    {"writable by others", sizeof(bytes), 0666, -1, false},
	    {"truncated", sizeof(bytes) - 1, 0600, -1, false},
	    {"another magic", sizeof(bytes), 0600, 0, false},
	    {"other names' ids", sizeof(bytes), 0600, 8, false},
	    {"a symbolic link", sizeof(bytes), 0600, -1, true},
	};

	CHECK(kernel != NULL && mkdtemp(dir) && !kernel_build_id(id, sizeof(id)),
	      "the kernel's BTF, a directory and the kernel's build ID");
	if (!kernel || !dir[0])
		goto cleanup;
	oracle = btf__find_by_name_kind(kernel, "bpf_rdonly_cast", BTF_KIND_FUNC);
	setenv("CFIPROF_CACHE_DIR", dir, 1);
	snprintf(path, sizeof(path), "%s/kfunc-ids-%s", dir, id);
	CHECK(ids_of_child(&ids) && ids.func[KFUNC_RDONLY_CAST] == oracle,
	      "first start: bpf_rdonly_cast %d (libbpf: %d)", ids.func[KFUNC_RDONLY_CAST], oracle);
	CHECK(!lstat(path, &st) && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600 &&
		  st.st_size == IDS_FILE_BYTES,
	      "%s written: mode %o, %lld bytes", path, st.st_mode & 0777, (long long)st.st_size);
	{
		int fd = open(path, O_RDONLY);

		CHECK(fd >= 0 && read(fd, bytes, sizeof(bytes)) == (ssize_t)sizeof(bytes),
		      "read %s", path);
		if (fd >= 0)
			close(fd);
	}
	memcpy(&got, bytes + IDS_FILE_IDS_AT + 4 * KFUNC_RDONLY_CAST, 4);
	CHECK(got == oracle, "the file holds bpf_rdonly_cast's %d", got);
	memcpy(bytes + IDS_FILE_IDS_AT + 4 * KFUNC_RDONLY_CAST, &planted, 4);
	CHECK(put_file(path, bytes, sizeof(bytes), 0600), "plant %s", path);
	CHECK(ids_of_child(&ids) && ids.func[KFUNC_RDONLY_CAST] == planted,
	      "the next start reads the file: %d (planted %d)", ids.func[KFUNC_RDONLY_CAST],
	      planted);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		char other[300], b[IDS_FILE_BYTES];

		memcpy(b, bytes, sizeof(b));
		if (refused[i].flip >= 0)
			b[refused[i].flip] ^= 0x5a;
		unlink(path);
		snprintf(other, sizeof(other), "%s/planted", dir);
		if (refused[i].link)
			CHECK(put_file(other, b, refused[i].len, refused[i].mode) &&
				  !symlink(other, path),
			      "plant a link");
		else
			CHECK(put_file(path, b, refused[i].len, refused[i].mode), "plant %s",
			      refused[i].what);
		CHECK(ids_of_child(&ids) && ids.func[KFUNC_RDONLY_CAST] == oracle,
		      "%s: refused, bpf_rdonly_cast %d (libbpf: %d)", refused[i].what,
		      ids.func[KFUNC_RDONLY_CAST], oracle);
		CHECK(!lstat(path, &st) && S_ISREG(st.st_mode) && (st.st_mode & 0777) == 0600 &&
			  st.st_size == IDS_FILE_BYTES,
		      "%s: the file made right again", refused[i].what);
		unlink(other);
	}
cleanup:
	unsetenv("CFIPROF_CACHE_DIR");
	if (dir[0]) {
		unlink(path);
		rmdir(dir);
	}
	btf__free(kernel);
}

int main(int argc, char **argv)
{
	static const unsigned int frames[] = {127, 512, MAX_USER_FRAMES_LIMIT};
	char name[64];
	unsigned int i;
	int use_loop;

	harness_init(argc, argv);
	libbpf_set_print(capture_print);
	CHECK(geteuid() == 0, "must run as root to load BPF (euid %u)", geteuid());
	CHECK(libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT, BPF_FUNC_loop, NULL) == 1,
	      "kernel lacks bpf_loop for perf_event programs");
	for (use_loop = 1; use_loop >= 0; use_loop--)
		for (i = 0; i < sizeof(frames) / sizeof(frames[0]); i++) {
			snprintf(name, sizeof(name), "%s-%u", use_loop ? "loop" : "tailcalls",
				 frames[i]);
			RUN_TEST_AS(name, try_load(use_loop, frames[i]));
		}
	RUN_TEST(kfunc_calls);
	RUN_TEST(kfunc_ids_cache);
	RUN_TEST(core_btf_same_relocations);
	RUN_TEST(no_kernel_btf);
	return HARNESS_DONE();
}
