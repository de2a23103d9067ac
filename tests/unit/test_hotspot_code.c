// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The rows hotspot_rows gives a live JVM's nmethods (run with no flags:
 * Debian's OpenJDK 17, or the JDK home CFIPROF_TEST_JAVA_HOME names; a
 * missing JDK fails) against an independent decoder: each in-use nmethod's
 * code is read from the JVM and decoded by objdump, rsp (and rbp, once a
 * prologue makes it the frame pointer) tracked through its instructions
 * in address order, and the rule at every instruction must give the CFA
 * tracked.  That checks where hotspot_frame_marks puts the prologues'
 * and epilogues' rows, found from byte patterns without a decoder (an OSR
 * nmethod's second prologue too: a stack bang starts an entry's state).
 * (test_hotspot_rows walks stacks over the same rows.)
 */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/test_jvm.h"
#include "user/runtimes/hotspot/hotspot_codecache.h"
#include "user/runtimes/hotspot/hotspot_rows.h"
#include "user/runtimes/hotspot/hotspot_vmstructs.h"
#include "user/runtimes/target_mem.h"

/* C2 code of each shape: with a stack bang (fib), without (leaf), recursion (tiny) */
static const char code_java[] =
    "public class Code {\n" TEST_JVM_FIB_METHODS "    public static void main(String[] a) {\n"
    "        System.out.println(\"ready\");\n"
    "        for (long i = 0;; i++) sink = fib(12, 1 + (i & 1)) + tiny(12);\n"
    "    }\n"
    "}\n";

static struct test_jvm jvm;

/* Whether jcmd Compiler.codelist lists Code.fib, leaf and tiny compiled by C2 (tier 4). */
static bool compiled(void)
{
	char cmd[PATH_MAX + 64], *out, *line, *save = NULL;
	int found = 0;

	snprintf(cmd, sizeof(cmd), "%s/bin/jcmd %d Compiler.codelist", jvm.home, (int)jvm.pid);
	out = test_jvm_output(&jvm, cmd);
	for (line = out ? strtok_r(out, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		char name[512];
		int id, level, state;

		if (sscanf(line, "%d %d %d %511s", &id, &level, &state, name) == 4 && level == 4)
			found |= (!strncmp(name, "Code.fib(", 9) ? 1 : 0) |
				 (!strncmp(name, "Code.leaf(", 10) ? 2 : 0) |
				 (!strncmp(name, "Code.tiny(", 10) ? 4 : 0);
	}
	free(out);
	return found == 7;
}

/* Starts Code and waits until C2 compiled its methods; jvm.pid stays 0 when it cannot. */
static void start_jvm(void)
{
	/* a loaded machine compiles slowly: C2 takes seconds, not minutes */
	double deadline = mono_sec() + 180;

	if (!test_jvm_start(&jvm, "/tmp/cfiprof-hscode.XXXXXX", "Code", code_java, NULL))
		return;
	test_jvm_printed(&jvm, "ready", deadline);
	while (jvm.pid > 0 && mono_sec() < deadline && !compiled())
		sleep_s(1);
	CHECK(jvm.pid > 0 && compiled(), "C2 did not compile Code.fib, leaf and tiny");
	test_jvm_libjvm(&jvm);
}

/* rsp and rbp as objdump's instructions move them, from a function's entry. */
struct tracked {
	uint64_t depth;	  /* bytes from rsp to the CFA; UNKNOWN once rsp is set from elsewhere */
	uint64_t rbp_cfa; /* bytes from rbp to the CFA once mov rbp, rsp set it; 0 before */
	uint64_t fp_cfa;  /* ... as the prologue set it: the body's after a return */
	bool reset;	  /* the next instruction starts a block: the whole frame */
	uint32_t pushes, rets;
};
#define UNKNOWN UINT64_MAX

static void track(struct tracked *k, const char *text)
{
	unsigned long long imm;
	int at = 0;

	if (!strncmp(text, "push   %r", 9) && k->depth != UNKNOWN) {
		k->depth += 8;
		k->pushes += !strncmp(text + 7, "%rbp", 4);
	} else if (!strncmp(text, "pop    %r", 9) && k->depth != UNKNOWN) {
		k->depth -= 8;
		if (!strncmp(text + 7, "%rbp", 4))
			k->rbp_cfa = 0;
	} else if (sscanf(text, "sub    $0x%llx,%%rsp%n", &imm, &at) == 1 && at && !text[at]) {
		k->depth += k->depth != UNKNOWN ? imm : 0;
	} else if (sscanf(text, "add    $0x%llx,%%rsp%n", &imm, &at) == 1 && at && !text[at]) {
		k->depth -= k->depth != UNKNOWN ? imm : 0;
	} else if (!strcmp(text, "mov    %rsp,%rbp")) {
		k->rbp_cfa = k->depth;
	} else if (!strncmp(text, "leave", 5)) {
		k->depth = 8;
		k->rbp_cfa = 0;
	} else if (strstr(text, ",%rsp") && strncmp(text, "cmp", 3)) {
		k->depth = UNKNOWN; /* and $-16, mov %r12: alignment around a call */
	} else if (!strncmp(text, "ret", 3) || !strncmp(text, "jmp ", 4)) {
		k->rets += text[0] == 'r';
		k->reset = true;
	}
}

/* Whether rule r gives the CFA k tracked (an rbp rule: where rbp is known). */
static bool tracked_cfa(const struct cfi_rule *r, const struct tracked *k)
{
	if (r->cfa_kind == CFI_CFA_RBP)
		return k->rbp_cfa && (uint64_t)r->cfa_off == k->rbp_cfa;
	return r->cfa_kind == CFI_CFA_RSP && (uint64_t)r->cfa_off == k->depth;
}

/*
 * nmethod b's code (read from the JVM) decoded by objdump, rsp tracked
 * through it in address order (from the entry's 8 bytes: push, sub, add,
 * pop, leave; after a ret or jmp past the prologue the next block has the
 * whole frame): how many of its instructions' rules give another CFA than
 * the depth tracked; *k what was seen.
 */
static int objdump_check(const struct hotspot_blob *b, const struct cfi_table *t, struct tracked *k,
			 int *checked)
{
	uint64_t len = b->code_end - b->code_begin, full = (uint64_t)b->frame_size * 8;
	char path[PATH_MAX], cmd[PATH_MAX + 128], *out, *line, *save = NULL;
	uint8_t *bytes = malloc(len);
	int bad = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/code.bin", jvm.dir);
	f = fopen(path, "w");
	if (!bytes || !f || target_read((uint32_t)jvm.pid, b->code_begin, bytes, len) ||
	    fwrite(bytes, 1, len, f) != len) {
		if (f)
			fclose(f);
		free(bytes);
		return -1;
	}
	fclose(f);
	free(bytes);
	snprintf(cmd, sizeof(cmd),
		 "objdump -D -b binary -mi386:x86-64 --adjust-vma=%#" PRIx64 " %s", b->code_begin,
		 path);
	out = test_jvm_output(&jvm, cmd);
	*k = (struct tracked){.depth = 8};
	for (line = out ? strtok_r(out, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		unsigned long long addr;
		const struct cfi_rule *r;
		char *text = strchr(line, '\t');

		/* "  7f0c28ec8240:\t89 84 24 ... \tmov    %eax,..."; a wrapped one has no text */
		if (sscanf(line, " %llx:", &addr) != 1 || !text || !(text = strchr(text + 1, '\t')))
			continue;
		text++;
		/*
		 * a stack bang opens a prologue, whose first instruction it is: an
		 * entry's state (an OSR nmethod's OSR entry too, jumped to by the
		 * interpreter as if called, after its body's blocks)
		 */
		if (!strncmp(text, "mov    %eax,-0x", 15) && strstr(text, "(%rsp)")) {
			k->depth = 8;
			k->rbp_cfa = 0;
			k->reset = false;
		}
		/* a block after a return: the body's frame (rbp the frame pointer's, if it was) */
		if (k->reset && addr >= b->code_begin + (uint64_t)b->frame_complete) {
			k->rbp_cfa = k->rbp_cfa ? k->rbp_cfa : k->fp_cfa;
			k->depth = k->rbp_cfa ? UNKNOWN : full;
			k->reset = false;
		}
		r = cfi_table_lookup(t, addr);
		/* rsp realigned (and $-16) around a call: no depth to compare with */
		if (r->cfa_kind == CFI_CFA_RSP && k->depth == UNKNOWN) {
			track(k, text);
			continue;
		}
		++*checked;
		if (!tracked_cfa(r, k) && !bad++)
			printf("    at %#llx (%s): rsp+%" PRId64 " / rbp+%" PRIu64
			       " tracked, the rule's %s+%d\n",
			       addr, text, (int64_t)k->depth, k->rbp_cfa,
			       r->cfa_kind == CFI_CFA_RSP   ? "rsp"
			       : r->cfa_kind == CFI_CFA_RBP ? "rbp"
							    : "?",
			       r->cfa_off);
		track(k, text);
		k->fp_cfa = k->rbp_cfa ? k->rbp_cfa : k->fp_cfa;
	}
	free(out);
	return out ? bad : -1;
}

/* Whether blob b is, by now, an nmethod not entrant (its entry patched), or gone. */
static bool made_not_entrant(const struct hotspot_layout *l, const struct hotspot_heaps *h,
			     const struct hotspot_blob *b)
{
	struct hotspot_blob now;

	return hotspot_blob_at((uint32_t)jvm.pid, l, h, b->code_begin, &now) ||
	       now.compile_id != b->compile_id || now.state != 0;
}

/*
 * Every nmethod's rules at every instruction against objdump's decoding of
 * its code (the rsp tracking above): the prologue and epilogue marks read
 * from the code's bytes are where the instructions are.
 */
static void test_code(void)
{
	struct hotspot_code code = {.pid = (uint32_t)jvm.pid};
	struct hotspot_rows_stats st;
	struct cfi_table *t = NULL;
	struct hotspot_layout l;
	struct hotspot_heaps h;
	int checked = 0, bad = 0, nm = 0, failed = 0, skipped = 0;
	int stubs = 0, stubs_bad = 0, stubs_wrong = 0;
	uint32_t pushes = 0, rets = 0;

	CHECK(jvm.pid > 0 && jvm.bias, "no JVM to read (see main's failures)");
	if (jvm.pid <= 0 || !jvm.bias ||
	    hotspot_layout_read((uint32_t)jvm.pid, &jvm.syms, jvm.bias, &l) ||
	    hotspot_heaps_read((uint32_t)jvm.pid, &l, &h) ||
	    hotspot_blobs_walk((uint32_t)jvm.pid, &l, &h, NULL, hotspot_code_add, &code, NULL) ||
	    hotspot_rows_build(&code, NULL, &t, &st, NULL)) {
		CHECK(0, "no layout, heaps, blobs or rows from %d", (int)jvm.pid);
		goto out;
	}
	CHECK(code.scanned > 0 && code.shaped == code.scanned,
	      "%u nmethods' code read, %u of them of a known shape", code.scanned, code.shaped);
	for (size_t i = 0; i < code.n; i++) {
		struct tracked k;
		int n;

		/*
		 * C1's stubs framed by enter: every instruction objdump's, but
		 * after a leave not followed by its ret or jmp (the patching
		 * stubs' add rsp, 8, dropping the return address to run the
		 * patched code again: 3 instructions each in JDK 17)
		 */
		if (!code.blob[i].is_nmethod && code.span[i].n) {
			n = objdump_check(&code.blob[i], t, &k, &checked);
			stubs++;
			stubs_bad += n < 0 || n > 3;
			stubs_wrong += n > 0 ? n : 0;
			if (n < 0 || n > 3)
				printf("    %s at %#" PRIx64 ": %d instructions' rules wrong\n",
				       code.blob[i].name, code.blob[i].code_begin, n);
			continue;
		}
		/* a not entrant one's entry is patched (a jmp over its stack bang): objdump would
		 * decode its prologue out of step */
		if (!code.blob[i].is_nmethod || code.blob[i].state != 0) {
			skipped += code.blob[i].is_nmethod;
			continue;
		}
		nm++;
		n = objdump_check(&code.blob[i], t, &k, &checked);
		/* made not entrant since the walk (its tier 4 compile came): as the ones left out
		 */
		if (n && made_not_entrant(&l, &h, &code.blob[i])) {
			nm--;
			skipped++;
			continue;
		}
		if (n) {
			failed++;
			bad += n > 0 ? n : 0;
			printf("    nmethod %d (tier %d) at %#" PRIx64
			       ": %d instructions' rules wrong\n",
			       code.blob[i].compile_id, code.blob[i].comp_level,
			       code.blob[i].code_begin, n);
		}
		pushes += k.pushes;
		rets += k.rets;
	}
	printf("  objdump: %d nmethods (%d not entrant left out), %d Runtime1 stubs framed by "
	       "enter (%d rules wrong), %d instructions, %u push rbp, %u ret: %d rules wrong\n",
	       nm, skipped, stubs, stubs_wrong, checked, pushes, rets, bad);
	CHECK(nm > 0 && !failed && pushes > 0 && rets > 0,
	      "%d of %d nmethods' rules are not objdump's rsp", failed, nm);
	/* JDK 17 has 28 such stubs (counter_overflow, new_instance, monitorenter...) */
	CHECK(stubs >= 10 && stubs == (int)code.stubs_shaped && !stubs_bad,
	      "%d Runtime1 stubs framed by enter (%u shaped), %d with their rules wrong past a "
	      "leave's",
	      stubs, code.stubs_shaped, stubs_bad);
out:
	cfi_table_free(t);
	hotspot_code_free(&code);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	test_jvm_home(&jvm);
	if (!harness.list)
		start_jvm();
	RUN_TEST(test_code);
	test_jvm_stop(&jvm);
	return HARNESS_DONE();
}
