// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Unwind rows for HotSpot's code cache (user/runtimes/hotspot/hotspot_rows.c).
 *
 * Synthetic blobs first: the rules each kind of blob gets, at its edges.
 *
 * Then a live JVM run with no flags (Debian's OpenJDK 17, or the JDK home
 * CFIPROF_TEST_JAVA_HOME names; a missing JDK fails), whose main thread
 * goes down main -> down x5 (interpreted: each runs once) -> fib x20
 * (compiled, warmed up first) -> leaf, which then loops for ever: its Java
 * stack never changes again.  The oracle is the JVM's own stack walk, jcmd
 * Thread.print: its vframes, from inside, with the compiled frames' inlined
 * methods.  Thread.print needs a safepoint, which a thread stopped by
 * ptrace never reaches: so the dump is taken before the stop and again
 * after it, and used only when the two list the same frames (they must:
 * leaf never returns).  In between, the main thread (its nid in the dump)
 * is stopped with PTRACE_SEIZE + PTRACE_INTERRUPT, its registers read,
 * its stack copied (process_vm_readv) and it is let go.  Its stack is then
 * walked by bpf/walker.h built as plain C (tests/lib/replay.h) over the
 * rows of the code cache as the code heaps' only mappings (bias 0), every
 * frame named by hotspot_blob_at and hotspot_method_name (an interpreted
 * frame's Method* from its frame, rbp - 24), and the walk must name the
 * dump's methods in its order: each interpreted frame one method, each
 * compiled frame the last (outermost) of a run of methods it inlines.
 * -XX:+PreserveFramePointer in a second run was the other oracle: it would
 * check frame sizes against an rbp chain, but not names, and not the code
 * a JVM with no flags makes.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/replay.h"
#include "user/runtimes/hotspot/hotspot_codecache.h"
#include "user/runtimes/hotspot/hotspot_rows.h"
#include "user/runtimes/hotspot/hotspot_vmstructs.h"
#include "user/runtimes/target_mem.h"

#define JAVA_HOME_DEFAULT "/usr/lib/jvm/java-17-openjdk-amd64"
#define MAX_FRAMES	  128
#define MAX_NAMES	  256
#define STACK_MAX	  (512 << 10)
#define INTERP_METHOD_OFF 24 /* frame::interpreter_frame_method_offset: rbp - 3 words */

/*
 * leaf loops reps times: warmed with 1 and 2 so that its loop's back edge
 * and exit are both in the profile C2 compiles from (a branch never taken
 * is an uncommon trap, and leaf would be deoptimized when called for ever).
 */
static const char rows_java[] =
    "import java.io.File;\n"
    "public class Rows {\n"
    "    static volatile int sink;\n"
    "    static int leaf(int n, long reps) {\n"
    "        int s = n;\n"
    "        for (long r = 0; r < reps; r++) {\n"
    "            for (int i = 0; i < 50; i++) s = s * 31 + i;\n"
    "            sink = s;\n"
    "        }\n"
    "        return s;\n"
    "    }\n"
    "    static int fib(int n, long reps) {\n"
    "        if (n < 2) return leaf(n, reps);\n"
    "        return fib(n - 1, reps) + fib(n - 2, reps);\n"
    "    }\n"
    "    static int down(int d, long reps) {\n"
    "        return d == 0 ? fib(20, reps) : down(d - 1, reps) + 1;\n"
    "    }\n"
    "    static void warm(File go) {\n"
    "        for (long i = 0; !go.exists(); i++) fib(12, 1 + (i & 1));\n"
    "    }\n"
    "    public static void main(String[] a) {\n"
    "        System.out.println(\"warming\");\n"
    "        warm(new File(a[0]));\n"
    "        System.out.println(\"down\");\n"
    "        down(4, Long.MAX_VALUE);\n"
    "    }\n"
    "}\n";

static struct {
	char home[PATH_MAX], dir[64], libjvm[PATH_MAX];
	pid_t pid;
	uint64_t bias;
	struct hotspot_symbols syms;
} jvm;

/* ---- synthetic blobs ---- */

static struct hotspot_blob blob(uint64_t begin, uint64_t end, int32_t frame, int32_t complete,
				bool nmethod, bool interp, int32_t id)
{
	return (struct hotspot_blob){.addr = begin - 0x100,
				     .code_begin = begin,
				     .code_end = end,
				     .frame_size = frame,
				     .frame_complete = complete,
				     .is_nmethod = nmethod,
				     .is_interpreter = interp,
				     .compile_id = id};
}

#define NONE  "cfa=none rbp=same+0 ra=same+0 rbx=same+0"
#define ENTRY "cfa=rsp+8 rbp=same+0 ra=at-8 rbx=same+0"

/* Whether the rule at addr of t is described (cfi_rule_describe) as want. */
static bool rule_is(const struct cfi_table *t, uint64_t addr, const char *want)
{
	char got[128];

	cfi_rule_describe(cfi_table_lookup(t, addr), CFI_ARCH_X86_64, got, sizeof(got));
	CHECK(!strcmp(got, want), "at %#" PRIx64 ": %s, not %s", addr, got, want);
	return !strcmp(got, want);
}

/*
 * An nmethod of 6 words whose frame is complete 0x20 bytes in, one complete
 * at its first byte, the interpreter, a BufferBlob (frame size 0), a stub
 * of unknown frame (-1), one never complete (its frame's rule from its
 * first byte: it is found as a caller): each kind's rules at its first
 * byte, around its frame-complete offset, at its last byte and just past.
 */
static void test_synthetic(void)
{
	const uint64_t base = 0x7f0012340000ull;
	struct hotspot_blob b[] = {
	    blob(base + 0x100, base + 0x400, 6, 0x20, true, false, 7),
	    blob(base + 0x500, base + 0x600, 2, 0, true, false, 8),
	    blob(base + 0x700, base + 0x10700, 0, -1, false, true, 0),
	    blob(base + 0x10800, base + 0x10900, 0, -1, false, false, 0),
	    blob(base + 0x10a00, base + 0x10b00, -1, -1, false, false, 0),
	    blob(base + 0x10c00, base + 0x10d00, 4, -1, false, false, 0),
	};
	struct hotspot_code code = {.blob = b, .n = sizeof(b) / sizeof(b[0])};
	struct hotspot_rows_stats st;
	struct cfi_table *t = NULL;
	uint64_t digest;
	int rc;

	rc = hotspot_rows_build(b, code.n, NULL, &t, &st, NULL);
	CHECK(rc == 0 && t, "build: %d", rc);
	if (rc || !t)
		return;
	CHECK(st.sized == 3 && st.fp == 1 && st.none == 2 && st.bad == 0,
	      "stats: %u sized, %u fp, %u none, %u bad", st.sized, st.fp, st.none, st.bad);
	rule_is(t, base + 0xff, NONE);
	rule_is(t, base + 0x100, ENTRY);
	rule_is(t, base + 0x11f, ENTRY);
	rule_is(t, base + 0x120, "cfa=rsp+48 rbp=at-16 ra=at-8 rbx=same+0");
	rule_is(t, base + 0x3ff, "cfa=rsp+48 rbp=at-16 ra=at-8 rbx=same+0");
	rule_is(t, base + 0x400, NONE);
	rule_is(t, base + 0x500, "cfa=rsp+16 rbp=at-16 ra=at-8 rbx=same+0");
	rule_is(t, base + 0x700, "cfa=rbp+16 rbp=at-16 ra=at-8 rbx=same+0");
	/* past a page's edge */
	rule_is(t, base + 0x106ff, "cfa=rbp+16 rbp=at-16 ra=at-8 rbx=same+0");
	rule_is(t, base + 0x10800, NONE);
	rule_is(t, base + 0x10a00, NONE);
	rule_is(t, base + 0x10c00, "cfa=rsp+32 rbp=at-16 ra=at-8 rbx=same+0");
	rule_is(t, base + 0x10d00, NONE);
	cfi_table_free(t);

	/* a freed nmethod's address reused by another compile: another digest */
	digest = hotspot_code_digest(&code);
	b[0].compile_id = 9;
	CHECK(hotspot_code_digest(&code) != digest, "a new compile id, the same digest");
	b[0].compile_id = 7;
	CHECK(hotspot_code_digest(&code) == digest, "the digest is not a function of the blobs");

	/* a frame complete past its code, a range no row holds: refused, not guessed */
	b[0].frame_complete = 0x301;
	b[1].code_end = b[1].code_begin;
	rc = hotspot_rows_build(b, code.n, NULL, &t, &st, NULL);
	CHECK(rc == 0 && t && st.bad == 2 && st.sized == 1, "bad blobs: rc %d, %u bad", rc, st.bad);
	if (t)
		CHECK(cfi_table_lookup(t, base + 0x120)->cfa_kind == CFI_CFA_NONE,
		      "a refused blob has rows");
	cfi_table_free(t);
}

/* ---- the live JVM ---- */

/* A command's whole output (malloc'ed), NULL when it failed. */
static char *capture_cmd(const char *cmd)
{
	size_t len = 0, cap = 1 << 16, n;
	char *buf = malloc(cap);
	FILE *p = popen(cmd, "r");

	if (!buf || !p) {
		free(buf);
		if (p)
			pclose(p);
		return NULL;
	}
	while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (len + 1 == cap) {
			char *more = realloc(buf, cap *= 2);

			if (!more)
				break;
			buf = more;
		}
	}
	buf[len] = 0;
	if (pclose(p)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static char *jcmd(const char *what)
{
	char cmd[PATH_MAX + 128];

	snprintf(cmd, sizeof(cmd), "%s/bin/jcmd %d %s 2>&1", jvm.home, (int)jvm.pid, what);
	return capture_cmd(cmd);
}

/* Whether jcmd Compiler.codelist lists Rows.fib and Rows.leaf compiled by C2 (tier 4). */
static bool rows_compiled(void)
{
	char *out = jcmd("Compiler.codelist"), *line, *save = NULL;
	bool fib = false, leaf = false;

	for (line = out ? strtok_r(out, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[512];
		int id, level, state;

		if (sscanf(line, "%d %d %d %511s", &id, &level, &state, name) != 4 || level != 4)
			continue;
		fib |= !strncmp(name, "Rows.fib(", 9);
		leaf |= !strncmp(name, "Rows.leaf(", 10);
	}
	free(out);
	return fib && leaf;
}

/* Where path is mapped at offset 0 in pid, 0 if not. */
static uint64_t map_base(pid_t pid, const char *path)
{
	char maps[64], line[PATH_MAX + 128], file[PATH_MAX];
	unsigned long long start, off, base = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	while (f && !base && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%*x %*s %llx %*s %*s %4095s", &start, &off, file) == 3 &&
		    !off && !strcmp(file, path))
			base = start;
	if (f)
		fclose(f);
	return base;
}

/* Whether the JVM's output holds what. */
static bool printed(const char *out, const char *what)
{
	char *text = slurp(out);
	bool yes = text && strstr(text, what);

	free(text);
	return yes;
}

/*
 * Starts Rows under the JDK at jvm.home, waits until C2 compiled fib and
 * leaf, then lets it go down to leaf's endless loop; jvm.pid stays 0 when
 * it cannot (the live test fails).
 */
static void start_jvm(void)
{
	char path[PATH_MAX + 64], out[PATH_MAX + 64], go[PATH_MAX + 64], lib[PATH_MAX + 32];
	double deadline;
	int fd;
	FILE *f;

	snprintf(jvm.dir, sizeof(jvm.dir), "/tmp/cfiprof-hsrows.XXXXXX");
	snprintf(path, sizeof(path), "%s/bin/java", jvm.home);
	CHECK(access(path, X_OK) == 0,
	      "%s missing: the tests need a JDK (make test-deps installs default-jdk-headless)",
	      path);
	if (access(path, X_OK) || !mkdtemp(jvm.dir))
		return;
	snprintf(path, sizeof(path), "%s/Rows.java", jvm.dir);
	f = fopen(path, "w");
	CHECK(f && fputs(rows_java, f) >= 0 && !fclose(f) &&
		  shell_ok("%s/bin/javac -d %s %s", jvm.home, jvm.dir, path),
	      "cannot write or compile %s", path);
	snprintf(out, sizeof(out), "%s/out.txt", jvm.dir);
	snprintf(go, sizeof(go), "%s/go", jvm.dir);
	jvm.pid = fork();
	if (jvm.pid == 0) {
		/* the JVM goes with the test, even one that crashes */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 1);
		dup2(fd, 2);
		snprintf(path, sizeof(path), "%s/bin/java", jvm.home);
		execl(path, "java", "-cp", jvm.dir, "Rows", go, (char *)NULL);
		_exit(127);
	}
	/* a loaded machine compiles slowly: C2 takes seconds, not minutes */
	deadline = mono_sec() + 180;
	while (jvm.pid > 0 && mono_sec() < deadline && !printed(out, "warming"))
		sleep_s(0.2);
	while (jvm.pid > 0 && mono_sec() < deadline && !rows_compiled())
		sleep_s(1);
	CHECK(rows_compiled(), "C2 did not compile Rows.fib and Rows.leaf");
	fd = open(go, O_WRONLY | O_CREAT, 0644);
	if (fd >= 0)
		close(fd);
	while (jvm.pid > 0 && mono_sec() < deadline && !printed(out, "down"))
		sleep_s(0.2);
	CHECK(printed(out, "down"), "Rows did not go down");
	snprintf(lib, sizeof(lib), "%s/lib/server/libjvm.so", jvm.home);
	CHECK(realpath(lib, jvm.libjvm) != NULL, "no %s", lib);
	jvm.bias = jvm.pid > 0 ? map_base(jvm.pid, jvm.libjvm) : 0;
	fd = open(jvm.libjvm, O_RDONLY | O_CLOEXEC);
	CHECK(jvm.bias && fd >= 0 && !hotspot_elf_symbols(fd, &jvm.syms),
	      "libjvm.so (%s) not mapped in %d, or its symbols not found", jvm.libjvm,
	      (int)jvm.pid);
	if (fd >= 0)
		close(fd);
	printf("  java pid %d, libjvm.so at %#" PRIx64 "\n", (int)jvm.pid, jvm.bias);
}

static void stop_jvm(void)
{
	if (jvm.pid > 0) {
		kill(jvm.pid, SIGKILL);
		waitpid(jvm.pid, NULL, 0);
	}
	if (jvm.dir[0] && !strstr(jvm.dir, "XXXXXX"))
		tmpdir_done(jvm.dir, harness_failed);
}

/* The Java frames of one thread, innermost first: "Rows.fib". */
struct names {
	int n;
	char name[MAX_NAMES][128];
};

/*
 * The main thread's frames in jcmd Thread.print, and its native id (nid):
 * 0, or -1 when the dump has no main thread.
 */
static int main_frames(struct names *out, pid_t *nid)
{
	char *dump = jcmd("Thread.print"), *p, *line, *save = NULL;
	unsigned int id;

	out->n = 0;
	p = dump ? strstr(dump, "\n\"main\" #1 ") : NULL;
	if (!p || !(line = strstr(p, " nid=0x")) || sscanf(line, " nid=0x%x", &id) != 1) {
		free(dump);
		return -1;
	}
	*nid = (pid_t)id;
	strtok_r(p + 1, "\n", &save);
	/* "\tat Rows.fib(Rows.java:14)" lines until the blank line after the thread */
	while ((line = strtok_r(NULL, "\n", &save)) && strncmp(line, "\"", 1) &&
	       out->n < MAX_NAMES) {
		char *at = strstr(line, "\tat ");

		if (at && strchr(at, '('))
			snprintf(out->name[out->n++], sizeof(out->name[0]), "%.*s",
				 (int)(strchr(at, '(') - at - 4), at + 4);
	}
	free(dump);
	return 0;
}

/* The stopped thread's registers and stack. */
struct snap {
	struct user_regs_struct regs;
	uint64_t sp;
	uint8_t *stack;
	size_t len;
};

/* The end of the mapping of pid holding addr, 0 if none. */
static uint64_t map_end(pid_t pid, uint64_t addr)
{
	char maps[64], line[PATH_MAX + 128];
	unsigned long long start, end, found = 0;
	FILE *f;

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	f = fopen(maps, "r");
	while (f && !found && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx", &start, &end) == 2 && start <= addr && addr < end)
			found = end;
	if (f)
		fclose(f);
	return found;
}

/*
 * Thread tid of jvm.pid stopped (PTRACE_SEIZE, PTRACE_INTERRUPT), its
 * registers and stack read, and let go: 0, or -1.
 */
static int snap_thread(pid_t tid, struct snap *s)
{
	uint64_t end;
	int status, rc = -1;

	memset(s, 0, sizeof(*s));
	if (ptrace(PTRACE_SEIZE, tid, 0, 0))
		return -1;
	if (!ptrace(PTRACE_INTERRUPT, tid, 0, 0) && waitpid(tid, &status, __WALL) == tid &&
	    !ptrace(PTRACE_GETREGS, tid, 0, &s->regs)) {
		s->sp = s->regs.rsp;
		end = map_end(jvm.pid, s->sp);
		s->len = end > s->sp ? (size_t)(end - s->sp) : 0;
		if (s->len > STACK_MAX)
			s->len = STACK_MAX;
		s->stack = s->len ? malloc(s->len) : NULL;
		if (s->stack && !target_read((uint32_t)jvm.pid, s->sp, s->stack, s->len))
			rc = 0;
	}
	ptrace(PTRACE_DETACH, tid, 0, 0);
	return rc;
}

/* One frame of a walk: where it is, what holds its pc. */
struct frame {
	uint64_t ip, sp, bp;
	bool is_ra;			   /* ip is a return address: its call is at ip - 1 */
	bool java;			   /* an nmethod's or the interpreter's */
	bool interp;			   /* the interpreter's */
	char name[2 * HOTSPOT_STRING_MAX]; /* its method, or its blob's name */
	char kind[32];
};

/*
 * What holds frame f's pc: an nmethod (its method's name, its tier), the
 * interpreter (the Method* its frame holds at rbp - 24, read from the
 * stack copied), another blob, or nothing of the code cache.
 */
static void name_frame(const struct hotspot_layout *l, const struct hotspot_heaps *h,
		       const struct snap *s, struct frame *f)
{
	uint64_t pc = f->ip - f->is_ra, method = 0, at = f->bp - INTERP_METHOD_OFF;
	struct hotspot_method_name mn;
	struct hotspot_blob b;

	snprintf(f->name, sizeof(f->name), "?");
	if (hotspot_blob_at((uint32_t)jvm.pid, l, h, pc, &b)) {
		snprintf(f->kind, sizeof(f->kind), "no blob");
		return;
	}
	snprintf(f->name, sizeof(f->name), "%s", b.name);
	snprintf(f->kind, sizeof(f->kind), "blob");
	if (b.is_nmethod) {
		method = b.method;
		snprintf(f->kind, sizeof(f->kind), "tier %d id %d", b.comp_level, b.compile_id);
	} else if (b.is_interpreter) {
		if (at >= s->sp && at + 8 <= s->sp + s->len)
			memcpy(&method, s->stack + (at - s->sp), sizeof(method));
		snprintf(f->kind, sizeof(f->kind), "interpreted");
		f->interp = true;
	} else {
		return;
	}
	f->java = true;
	if (method && !hotspot_method_name((uint32_t)jvm.pid, l, method, &mn))
		snprintf(f->name, sizeof(f->name), "%s", mn.name);
}

/*
 * The walk of snapshot s over the rows of table t as the code heaps'
 * mappings: its frames into fr (MAX_FRAMES), how many; *reason the walk's
 * stop.
 */
static int walk(const struct cfi_table *t, const struct hotspot_heaps *h, const struct snap *s,
		struct frame *fr, int *reason)
{
	struct replay_env *env = malloc(sizeof(*env));
	struct walker_state st;
	__u64 out[MAX_FRAMES];
	int n = 0;

	if (!env)
		return 0;
	replay_env_init(env, (uint32_t)jvm.pid);
	CHECK(replay_add_table(env, 1, t) == 0, "the rows do not load");
	for (uint32_t i = 0; i < h->n; i++)
		replay_add_mapping(env, h->heap[i].low_boundary, h->heap[i].high_boundary, 1,
				   CFI_MAPPING_CFI, 0);
	replay_add_mem(env, s->sp, s->stack, s->len);
	replay_cur = env;
	walker_init(&st, (uint32_t)jvm.pid, s->regs.rip, s->regs.rsp, s->regs.rbp);
	/* each frame as the walker holds it when it emits it: its sp and rbp */
	for (int i = 0; i <= MAX_FRAMES && !st.done; i++) {
		if (st.nr < MAX_FRAMES)
			fr[st.nr] = (struct frame){
			    .ip = st.ip, .sp = st.sp, .bp = st.bp, .is_ra = st.ip_is_ra != 0};
		if (walker_frame(&st, out, MAX_FRAMES))
			break;
	}
	n = st.nr;
	*reason = st.reason;
	replay_env_free(env);
	free(env);
	return n;
}

/*
 * Whether the Java frames fr[i, n) name the methods v->name[j, v->n): an
 * interpreted frame its one method, a compiled one the last of a run of
 * methods (those it inlined, then its own).  memo: 0 unknown, 1 no, 2 yes.
 */
static bool names_match(const struct frame *fr, int i, int n, const struct names *v, int j,
			uint8_t (*memo)[MAX_NAMES + 1])
{
	bool yes = false;

	if (i == n)
		return j == v->n;
	if (memo[i][j])
		return memo[i][j] == 2;
	for (int k = j; k < v->n && !yes; k++) {
		if (!strcmp(v->name[k], fr[i].name))
			yes = names_match(fr, i + 1, n, v, k + 1, memo);
		if (fr[i].interp)
			break;
	}
	memo[i][j] = yes ? 2 : 1;
	return yes;
}

static bool same_names(const struct names *a, const struct names *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (strcmp(a->name[i], b->name[i]))
			return false;
	return true;
}

/*
 * The main thread stopped where its leaf runs compiled code, between two
 * thread dumps that agree, into *s and *dump: 0, or -1 after 20 tries.
 */
static int snap_main(const struct hotspot_layout *l, const struct hotspot_heaps *h, struct snap *s,
		     struct names *dump, int *tries)
{
	struct names *after = malloc(sizeof(*after));
	pid_t nid = 0, nid2 = 0;
	int rc = -1;

	for (*tries = 1; after && *tries <= 20 && rc; ++*tries) {
		struct hotspot_blob b;

		if (main_frames(dump, &nid) || snap_thread(nid, s)) {
			free(s->stack);
			continue;
		}
		/* stopped in the VM, a stub or libc: not the leaf's loop; again */
		if (!main_frames(after, &nid2) && nid2 == nid && same_names(dump, after) &&
		    !hotspot_blob_at((uint32_t)jvm.pid, l, h, s->regs.rip, &b) && b.is_nmethod &&
		    s->regs.rip >= b.code_begin + (uint64_t)b.frame_complete) {
			rc = 0;
			break;
		}
		free(s->stack);
		sleep_s(0.1);
	}
	free(after);
	return rc;
}

/* The rows of the code cache of the JVM as it is now: 0, or -1 (a failed check). */
static int build_rows(const struct hotspot_layout *l, const struct hotspot_heaps *h,
		      struct cfi_table **t)
{
	struct hotspot_code code = {0};
	struct hotspot_walk_stats ws;
	struct hotspot_rows_stats st;
	int rc;

	rc = hotspot_blobs_walk((uint32_t)jvm.pid, l, h, NULL, hotspot_code_add, &code, &ws);
	CHECK(rc == 0 && code.n == ws.blobs, "walk: rc %d, %zu blobs of %u", rc, code.n, ws.blobs);
	rc = hotspot_rows_build(code.blob, code.n, NULL, t, &st, NULL);
	CHECK(rc == 0 && *t, "rows: %d", rc);
	if (*t)
		printf("  %zu blobs: %u with frame-size rows, %u frame-pointer, %u none, %u bad; "
		       "%u rows in %u pages, %u rules\n",
		       code.n, st.sized, st.fp, st.none, st.bad, (*t)->nr_rows, (*t)->nr_pages,
		       (*t)->nr_rules);
	hotspot_code_free(&code);
	return rc || !*t ? -1 : 0;
}

/*
 * The main thread's stack walked over the rows names the methods jcmd
 * Thread.print lists, in its order (see the top of the file), down to
 * main, then the call stub that called main.
 */
static void test_unwind(void)
{
	struct names *dump = malloc(sizeof(*dump));
	struct frame *fr = calloc(MAX_FRAMES, sizeof(*fr));
	uint8_t(*memo)[MAX_NAMES + 1] = calloc(MAX_FRAMES + 1, sizeof(*memo));
	int n = 0, java = 0, interp = 0, reason = 0, tries = 0;
	struct cfi_table *t = NULL;
	struct hotspot_layout l;
	struct hotspot_heaps h;
	struct snap s = {0};

	CHECK(jvm.pid > 0 && jvm.bias, "no JVM to read (see main's failures)");
	if (!dump || !fr || !memo || jvm.pid <= 0 || !jvm.bias)
		goto out;
	if (hotspot_layout_read((uint32_t)jvm.pid, &jvm.syms, jvm.bias, &l) ||
	    hotspot_heaps_read((uint32_t)jvm.pid, &l, &h)) {
		CHECK(0, "no layout or code heaps read from %d", (int)jvm.pid);
		goto out;
	}
	if (snap_main(&l, &h, &s, dump, &tries)) {
		CHECK(0, "main never stopped in compiled code between two thread dumps that agree");
		goto out;
	}
	if (build_rows(&l, &h, &t))
		goto out;
	n = walk(t, &h, &s, fr, &reason);
	for (int i = 0; i < n; i++)
		name_frame(&l, &h, &s, &fr[i]);
	while (java < n && fr[java].java)
		interp += fr[java++].interp;
	printf("  stopped on try %d at %#llx; the walk: %d frames, %d Java (%d interpreted), "
	       "stop %d\n",
	       tries, (unsigned long long)s.regs.rip, n, java, interp, reason);
	for (int i = 0; i < n; i++)
		printf("    #%d %#" PRIx64 " sp %#" PRIx64 " %s [%s]\n", i, fr[i].ip, fr[i].sp,
		       fr[i].name, fr[i].kind);
	printf("  jcmd Thread.print, main:");
	for (int i = 0; i < dump->n; i++)
		printf(" %s", dump->name[i]);
	printf("\n");
	CHECK(dump->n >= 26 && !strcmp(dump->name[0], "Rows.leaf") &&
		  !strcmp(dump->name[dump->n - 1], "Rows.main"),
	      "the dump lists %d frames for main, not leaf ... main", dump->n);
	CHECK(java > 1 && names_match(fr, 0, java, dump, 0, memo),
	      "the walk's %d Java frames do not name the dump's %d methods", java, dump->n);
	/* down (5 deep) and main ran once each: interpreted, with rbp their frame pointer */
	CHECK(interp == 6 && fr[java - 1].interp && !strcmp(fr[java - 1].name, "Rows.main"),
	      "%d interpreted frames, not down x5 and main", interp);
	/* main's return address: into the call stub (StubRoutines), found from its rbp */
	CHECK(java < n && !strncmp(fr[java].name, "StubRoutines", 12),
	      "main returns to '%s', not to the call stub", java < n ? fr[java].name : "");
out:
	cfi_table_free(t);
	free(s.stack);
	free(memo);
	free(fr);
	free(dump);
}

int main(int argc, char **argv)
{
	const char *home = getenv("CFIPROF_TEST_JAVA_HOME");

	harness_init(argc, argv);
	snprintf(jvm.home, sizeof(jvm.home), "%s", home && *home ? home : JAVA_HOME_DEFAULT);
	RUN_TEST(test_synthetic);
	if (!harness.list && harness_selected("unwind"))
		start_jvm();
	RUN_TEST(test_unwind);
	stop_jvm();
	return HARNESS_DONE();
}
