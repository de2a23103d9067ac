// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * bpf/walker.h for AArch64, built as plain C on this host (WALKER_ARCH_ARM64)
 * and run over real arm64 stacks: tests/progs/arm64/walk_snap runs under
 * qemu-aarch64 (-cpu max: pointer authentication on) and snapshots its own
 * stack from a true leaf, whose return address is still in x30.  Tables are
 * built from the arm64 objects it mapped, the snapshot is walked, and the
 * oracle is the program itself: each caller's __builtin_return_address(0)
 * (the compiler strips the PAC), the handler's return to the sigreturn
 * trampoline, and its ELF symbols.
 *
 *  - chain: snap_leaf <- cc (x30) <- cb <- ca <- main <- libc <- _start,
 *    complete: x30 used at frame 0 only, every saved RA stripped of its PAC;
 *  - signal: snap_leaf <- sh <- on_signal <- the trampoline (found by its
 *    instructions: no CFI) <- the interrupted libc code (its x30 from the
 *    sigcontext) <- sb <- sa <- main ... complete;
 * for GCC with pac-ret (B key; signed RAs must be on the stack) and clang
 * (CFA on x29).  Every return address follows a bl/blr in its file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define WALKER_ARCH_ARM64 1
#include "tests/lib/harness.h"
#include "tests/lib/replay_world.h"

#define MAX_FRAMES 128
#define QEMU	   "qemu-aarch64 -cpu max,pauth-impdef=on -L /usr/aarch64-linux-gnu"

static char tmp[] = "/tmp/cfiprof-arm64.XXXXXX";

/* What walk_snap wrote beside its snapshot. */
struct oracle {
	uint64_t lr, ras[16], tramp, tramp_insns;
	int nr_ras;
};

static int read_oracle(const char *path, struct oracle *o)
{
	char line[256];
	FILE *f = fopen(path, "re");

	memset(o, 0, sizeof(*o));
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b;

		if (sscanf(line, "lr %llx", &a) == 1)
			o->lr = a;
		else if (sscanf(line, "ra %llx", &a) == 1 && o->nr_ras < 16)
			o->ras[o->nr_ras++] = a;
		else if (sscanf(line, "tramp %llx %llx", &a, &b) == 2)
			o->tramp = a, o->tramp_insns = b;
	}
	fclose(f);
	return 0;
}

/* The instruction before ra is a call: bl, blr, or pointer-authenticated blr. */
static int arm64_follows_call(const struct object *o, const struct snap_map *m, uint64_t ra)
{
	uint64_t off = ra - m->start + m->offset;
	uint32_t insn;

	if (!o->file || off < 4 || off > o->file_len)
		return 0;
	memcpy(&insn, o->file + off - 4, 4);
	return (insn & 0xfc000000) == 0x94000000 || /* bl */
	       (insn & 0xfffffc1f) == 0xd63f0000 || /* blr */
	       (insn & 0xfefff800) == 0xd63f0800;   /* blraa(z), blrab(z) */
}

/* Saved return addresses on the stack that carry a PAC and strip to one of the oracle's. */
static int signed_ras_on_stack(const struct snapshot *s, const struct oracle *o)
{
	int n = 0;

	for (uint64_t i = 0; i + 8 <= s->stack_len; i += 8) {
		uint64_t v;

		memcpy(&v, s->stack + i, 8);
		if ((v & WALKER_RA_MASK) == v)
			continue;
		for (int k = 0; k < o->nr_ras; k++)
			n += (v & WALKER_RA_MASK) == o->ras[k];
	}
	return n;
}

/* Index of pc in pcs[from..nr), or -1. */
static int find_pc(const __u64 *pcs, unsigned int nr, unsigned int from, uint64_t pc)
{
	for (unsigned int i = from; i < nr; i++)
		if (pcs[i] == pc)
			return (int)i;
	return -1;
}

static const char *frame_name(const struct world *w, const struct snapshot *s, uint64_t pc,
			      int is_ra, const struct object **obj, const struct snap_map **map)
{
	const char *n = world_sym(w, s, pc - (is_ra ? 1 : 0), obj, map);

	return n ? n : "?";
}

static void run_case(const char *variant, const char *mode)
{
	char prog[PATH_MAX], out[PATH_MAX + 64], txt[PATH_MAX + 80], cmd[3 * PATH_MAX];
	const char *progs = getenv("OUT") ? getenv("OUT") : "build";
	__u64 pcs[MAX_FRAMES];
	struct walker_state st;
	struct snapshot s;
	struct oracle o;
	struct world w;
	unsigned int nr, i, calls = 0, bad_calls = 0;
	char chain[2048] = "";
	int signal_mode = !strcmp(mode, "signal"), at;

	snprintf(prog, sizeof(prog), "%s/progs/arm64/walk_snap_%s", progs, variant);
	snprintf(out, sizeof(out), "%s/%s-%s.snap", tmp, variant, mode);
	snprintf(txt, sizeof(txt), "%s.txt", out);
	snprintf(cmd, sizeof(cmd), QEMU " %s %s %s", prog, mode, out);
	CHECK(access(prog, X_OK) == 0, "%s is missing (make %s)", prog, prog);
	if (system(cmd) != 0) {
		CHECK(0, "%s failed (qemu-user, the arm64 libc)", cmd);
		return;
	}
	if (snap_read(&s, out) || read_oracle(txt, &o)) {
		CHECK(0, "%s: cannot read the snapshot", out);
		return;
	}
	CHECK(world_build(&w, &s) == 0, "%s: tables", out);
	if (o.tramp)
		replay_add_mem(&w.env, o.tramp, &o.tramp_insns, sizeof(o.tramp_insns));
	nr = replay_walk_lr(&w.env, s.rip, s.rsp, s.rbp, o.lr, pcs, MAX_FRAMES, &st);
	for (i = 0; i < nr; i++) {
		const struct object *obj;
		const struct snap_map *map;
		/* frame 0 and the interrupted pc a signal frame gives are no return addresses */
		int is_ra = i > 0 && !(signal_mode && o.tramp && i > 0 && pcs[i - 1] == o.tramp);
		const char *name = frame_name(&w, &s, pcs[i], is_ra, &obj, &map);
		size_t n = strlen(chain);

		snprintf(chain + n, sizeof(chain) - n, "%s%s", i ? " <- " : "", name);
		if (!is_ra || pcs[i] == o.tramp || !obj)
			continue;
		calls++;
		bad_calls += !arm64_follows_call(obj, map, pcs[i]);
	}
	printf("  %s %s: %u frames, stop %d: %s\n", variant, mode, nr, st.reason, chain);
	CHECK(st.reason == STOP_COMPLETE &&
		  !strcmp(frame_name(&w, &s, pcs[nr - 1], 1, &(const struct object *){0},
				     &(const struct snap_map *){0}),
			  "_start"),
	      "%s %s: the walk ends at %d, not complete at _start: %s", variant, mode, st.reason,
	      chain);
	CHECK(nr >= 2 && pcs[1] == o.lr, "%s %s: frame 1 is %#llx, not x30 %#llx", variant, mode,
	      nr >= 2 ? (unsigned long long)pcs[1] : 0ull, (unsigned long long)o.lr);
	CHECK(bad_calls == 0 && calls >= 3, "%s %s: %u of %u return addresses follow no call: %s",
	      variant, mode, bad_calls, calls, chain);
	/* innermost recorded first in pcs: ras[] holds them outermost first */
	at = 1;
	for (int k = o.nr_ras - 1; k >= 0; k--) {
		int next = find_pc(pcs, nr, (unsigned int)at + 1, o.ras[k]);

		CHECK(next > at,
		      "%s %s: return address %#llx (recorded %d of %d) not after frame %d: %s",
		      variant, mode, (unsigned long long)o.ras[k], k, o.nr_ras, at, chain);
		if (next > at)
			at = next;
	}
	if (signal_mode) {
		at = find_pc(pcs, nr, 0, o.tramp);
		CHECK(o.tramp && at == 3 && (st.flags & SAMPLE_SIGNAL) && st.nr_signal == 1,
		      "%s signal: the trampoline %#llx at frame %d (want 3), %u signal frames: %s",
		      variant, (unsigned long long)o.tramp, at, st.nr_signal, chain);
	}
	/*
	 * pac-ret is on when a saved return address carries a PAC.  One whose
	 * PAC happens to be all zero bits looks unsigned (1 in 2^7: the bits
	 * between a 48-bit VA and the ignored top byte; the keys are random per
	 * process), so asking for two failed now and then; one shows it.
	 */
	if (!strcmp(variant, "gcc"))
		CHECK(signed_ras_on_stack(&s, &o) >= 1,
		      "%s %s: %d saved return addresses carry a PAC (pac-ret is on)", variant, mode,
		      signed_ras_on_stack(&s, &o));
	world_free(&w);
	snap_free(&s);
}

static void test_chain(void)
{
	run_case("gcc", "chain");
	run_case("clang", "chain");
}

static void test_signal(void)
{
	run_case("gcc", "signal");
	run_case("clang", "signal");
}

/* Without the link register, a leaf's return address is lost: counted, never guessed. */
static void test_no_lr(void)
{
	char out[PATH_MAX + 64], txt[PATH_MAX + 80];
	__u64 pcs[MAX_FRAMES];
	struct walker_state st;
	struct snapshot s;
	struct oracle o;
	struct world w;
	unsigned int nr;

	snprintf(out, sizeof(out), "%s/gcc-chain.snap", tmp);
	snprintf(txt, sizeof(txt), "%s.txt", out);
	if (snap_read(&s, out) || read_oracle(txt, &o)) {
		CHECK(0, "%s: no snapshot (chain runs first)", out);
		return;
	}
	CHECK(world_build(&w, &s) == 0, "%s: tables", out);
	replay_cur = &w.env;
	walker_init(&st, w.env.pid, s.rip, s.rsp, s.rbp);
	nr = replay_run(&st, pcs, MAX_FRAMES);
	CHECK(nr == 1 && st.reason == STOP_UNSUPPORTED && st.unsup == CFI_UNSUP_REG_LOST,
	      "a leaf without x30: %u frames, stop %d (%d), want 1 frame, unsupported "
	      "cfa-register-lost",
	      nr, st.reason, st.unsup);
	world_free(&w);
	snap_free(&s);
}

int main(int argc, char **argv)
{
	char cmd[64];
	int rc;

	harness_init(argc, argv);
	if (!mkdtemp(tmp)) {
		perror("mkdtemp");
		return 1;
	}
	RUN_TEST(test_chain);
	RUN_TEST(test_signal);
	RUN_TEST(test_no_lr);
	rc = HARNESS_DONE();
	if (!rc) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", tmp);
	} else {
		printf("files kept in %s\n", tmp);
	}
	return rc;
}
