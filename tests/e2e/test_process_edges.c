// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Samples no profiler can walk, end to end (build/progs/exit_exec):
 * - in do_exit after exit_mm(), freeing a large address space: the user
 *   memory is gone. Each sample is kept, counted as "exiting", with the one
 *   user frame still known (the exit_group call in _exit) under the kernel
 *   stack. Before, `record -- CMD` dropped them as other processes' (the pid
 *   left the filter at sched_process_exit, which comes before exit_mm()), and
 *   `-a` called them unreadable-memory.
 * - inside execve, where the saved registers may be the old image's while the
 *   address space is the new one: "in-execve", never tables-pending (which
 *   says the tables will come, and they cannot help).
 * - in do_exit of a process that mapped a library after its last load and
 *   exits from it: the leaf is named from the kernel's list of its mappings
 *   at the exit.
 * - an execve by a thread other than the main one: the kernel ends the main
 *   thread first, whose exit is the process's, and the process goes on under
 *   the same pid and start time.  Before, it was taken for gone for good: no
 *   load was made after its exec, every sample tables-pending.
 */
/* run.sh: beside others (only the commands it starts) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/e2e.h"
#include "tests/lib/harness.h"

#define PROG "exit_exec"

struct edge_counts {
	uint64_t samples;	     /* of PROG */
	uint64_t complete;	     /* no [incomplete: ...] frame */
	uint64_t child_complete;     /* ... with the child's memset in it */
	uint64_t exiting, exiting_ok; /* ... whose user part is exactly _exit, do_exit above */
	uint64_t exiting_unnamed;     /* ... exactly one user frame, [unknown], do_exit above */
	uint64_t pending;	      /* tables-pending */
	uint64_t in_execve;
	uint64_t execve_kernel;	   /* kernel stack inside load_elf_binary */
	uint64_t execve_other;	   /* ... with a reason other than in-execve or complete */
	uint64_t unreadable;	   /* unreadable-memory or no-mapping */
	uint64_t cow_window;	   /* unreadable while a copy-on-write fault swaps a page */
	char first_bad[512];
};

static void note_bad(struct edge_counts *c, const char *stack)
{
	if (!c->first_bad[0])
		snprintf(c->first_bad, sizeof(c->first_bad), "%s", stack);
}

/* Folded lines "comm;[incomplete: R];user...;kernel_[k]... N", root first. */
static int count_edges(const char *path, struct edge_counts *c)
{
	char *s = slurp(path), *line, *save = NULL;

	memset(c, 0, sizeof(*c));
	if (!*s) {
		free(s);
		return -1;
	}
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' '), *f, *fs = NULL, copy[512];
		const char *reason = NULL;
		int nuser = 0;
		bool in_exec_kernel = false, do_exit = false, leaf_exit = false,
		     leaf_unknown = false, pte_cleared = false, in_memset = false;
		uint64_t n;

		if (!sp || strncmp(line, PROG ";", strlen(PROG) + 1))
			continue;
		n = strtoull(sp + 1, NULL, 10);
		*sp = '\0';
		snprintf(copy, sizeof(copy), "%s", line);
		f = strtok_r(line, ";", &fs); /* comm */
		for (f = strtok_r(NULL, ";", &fs); f; f = strtok_r(NULL, ";", &fs)) {
			size_t fl = strlen(f);

			if (!strncmp(f, "[incomplete: ", 13)) {
				reason = f + 13;
			} else if (fl > 4 && !strcmp(f + fl - 4, "_[k]")) {
				/*
				 * bprm_execve runs a little before and after the
				 * image is replaced (old, then new registers and
				 * memory, both walkable): load_elf_binary is all
				 * inside the window
				 */
				in_exec_kernel |= !strcmp(f, "load_elf_binary_[k]");
				do_exit |= !strcmp(f, "do_exit_[k]");
				pte_cleared |= !strcmp(f, "ptep_clear_flush_[k]");
			} else {
				nuser++;
				in_memset |= !strncmp(f, "__memset", 8) || !strcmp(f, "memset");
				leaf_exit = !strcmp(f, "_exit");
				leaf_unknown = !strcmp(f, "[unknown]");
			}
		}
		c->samples += n;
		if (!reason)
			c->complete += n;
		if (!reason && in_memset)
			c->child_complete += n;
		if (reason && !strcmp(reason, "exiting]")) {
			c->exiting += n;
			if (nuser == 1 && leaf_exit && do_exit)
				c->exiting_ok += n;
			else if (nuser == 1 && leaf_unknown && do_exit)
				c->exiting_unnamed += n;
			else
				note_bad(c, copy);
		}
		if (reason && !strcmp(reason, "in-execve]"))
			c->in_execve += n;
		if (reason && !strcmp(reason, "tables-pending]"))
			c->pending += n;
		/*
		 * A copy-on-write fault (the parent writing after a fork) clears the
		 * old page's entry and flushes the TLB before the copy is mapped: a
		 * sample in that window cannot read the stack page being copied.  The
		 * flush's IPIs are slow on a paravirtualised guest (PVM), which made
		 * the window big enough to be sampled now and then.
		 */
		if (reason && !strcmp(reason, "unreadable-memory]") && pte_cleared)
			c->cow_window += n;
		else if (reason && (!strcmp(reason, "unreadable-memory]") ||
				    !strcmp(reason, "no-mapping]"))) {
			c->unreadable += n;
			note_bad(c, copy);
		}
		if (in_exec_kernel) {
			c->execve_kernel += n;
			if (reason && strcmp(reason, "in-execve]")) {
				c->execve_other += n;
				note_bad(c, copy);
			}
		}
	}
	free(s);
	return 0;
}

static bool record_prog(const char *name, char *const opts[], char *const mode[], char **log)
{
	char prog[PATH_MAX + 32], *cmd[8] = {prog};
	int i;

	snprintf(prog, sizeof(prog), "%s/" PROG, progs_dir);
	for (i = 0; mode[i] && i < 6; i++)
		cmd[i + 1] = mode[i];
	return e2e_record(name, "999", opts, cmd, log) == 0;
}

/* The number after key in s ("3 exited, 1 vanished" -> 1 for " exited, "); -1 if absent. */
static long number_after(const char *s, const char *key)
{
	const char *p = s ? strstr(s, key) : NULL;

	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static void test_exit(void)
{
	char *mode[] = {"exit", "6", "256", NULL}, path[PATH_MAX], *log = NULL;
	const char *us;
	struct edge_counts c;
	uint64_t pending_causes;
	long vanished;

	if (!record_prog("exit", NULL, mode, &log))
		goto cleanup;
	tpath(path, sizeof(path), "exit");
	CHECK(count_edges(path, &c) == 0, "cannot read %s", path);
	printf("exit: %" PRIu64 " samples of " PROG ", %" PRIu64 " complete (%" PRIu64
	       " in a child's memset), %" PRIu64 " exiting (%" PRIu64
	       " with _exit under do_exit), %" PRIu64 " unreadable/no-mapping, %" PRIu64
	       " inside a copy-on-write page swap\n",
	       c.samples, c.complete, c.child_complete, c.exiting, c.exiting_ok, c.unreadable,
	       c.cow_window);
	/* six 256 MiB address spaces freed: tens of ms each at 999 Hz */
	CHECK(c.exiting >= 20,
	      "only %" PRIu64 " samples in do_exit after exit_mm (the exit's CPU time is lost)",
	      c.exiting);
	/*
	 * A child that exits before its load, with no snapshot of its mappings
	 * (over the snapshot budget beside CPU hogs), keeps its exit_group call
	 * unnamed: the one user frame is still there, and the summary says why.
	 */
	vanished = number_after(log, " exited, ");
	CHECK(c.exiting_ok + c.exiting_unnamed == c.exiting,
	      "exiting samples without their _exit leaf: %s", c.first_bad);
	CHECK(c.exiting_unnamed == 0 || vanished > 0 || strstr(log, "no snapshot of its mappings"),
	      "%" PRIu64 " exiting samples with an unnamed leaf, no process vanished or without a "
	      "snapshot:\n%s",
	      c.exiting_unnamed, log);
	CHECK(c.exiting_ok * 2 >= c.exiting,
	      "%" PRIu64 " of %" PRIu64 " exiting samples name _exit", c.exiting_ok, c.exiting);
	CHECK(c.unreadable == 0, "%" PRIu64 " samples unreadable or in no mapping: %s",
	      c.unreadable, c.first_bad);
	CHECK(c.cow_window * 200 <= c.samples,
	      "%" PRIu64 " of %" PRIu64 " samples unreadable inside a copy-on-write fault",
	      c.cow_window, c.samples);
	/*
	 * tables-pending: the children's samples wait for their loads with a
	 * stack copy; a consumer starved by CPU hogs leaves no ring room for them
	 * (none on an idle machine).  Each must be counted by its cause.  How many
	 * are pending depends on how soon the starved consumer runs (about half
	 * beside hogs, a few percent idle), so no share of them is bounded; that
	 * the children are walked at all is: every child's CPU time is its
	 * memset, all of it after fork, and the parent's tables serve the child
	 * once its load is done, so at least one complete sample names memset
	 * (none were the children never loaded).  The rest: <= 1% (the
	 * lazy-binding trampoline, CFA in rbx, is issue 14's).
	 */
	pending_causes = summary_kept_pending(log);
	CHECK(c.pending <= pending_causes,
	      "%" PRIu64 " tables-pending samples, %" PRIu64 " of them counted by cause:\n%s",
	      c.pending, pending_causes, log);
	CHECK(c.child_complete > 0,
	      "no complete sample of a child (%" PRIu64 " of %" PRIu64 " complete, %" PRIu64
	      " pending)",
	      c.complete, c.samples, c.pending);
	CHECK((c.complete + c.exiting + c.pending) * 100 >= c.samples * 99,
	      "other incomplete samples: %" PRIu64, c.samples - c.complete - c.exiting - c.pending);
	us = strstr(log, "user stacks: ");
	CHECK(strstr(log, " exiting ") && us &&
		  atof(us + 13) * (double)(c.samples - c.exiting) >=
		      99.0 * (double)(c.samples - c.exiting - c.pending),
	      "the summary does not set the exiting samples apart:\n%s", log);
cleanup:
	free(log);
}

static void test_execve(void)
{
	char *mode[] = {"exec", "1500", NULL}, path[PATH_MAX], *log = NULL;
	struct edge_counts c;

	if (!record_prog("exec", NULL, mode, &log))
		goto cleanup;
	tpath(path, sizeof(path), "exec");
	CHECK(count_edges(path, &c) == 0, "cannot read %s", path);
	printf("execve: %" PRIu64 " samples of " PROG ", %" PRIu64 " in load_elf_binary, %" PRIu64
	       " in-execve, %" PRIu64 " in load_elf_binary with another reason\n",
	       c.samples, c.execve_kernel, c.in_execve, c.execve_other);
	CHECK(c.in_execve >= 10, "only %" PRIu64 " samples inside execve", c.in_execve);
	CHECK(c.execve_other == 0, "samples inside execve with another reason: %s", c.first_bad);
cleanup:
	free(log);
}

/*
 * The exec'd program's samples (comm "chain"): of them, complete, and
 * complete with its leaf.
 */
static void count_chain(const char *path, uint64_t *samples, uint64_t *complete, uint64_t *leaf)
{
	char *s = slurp(path), *line, *save = NULL;

	*samples = *complete = *leaf = 0;
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');
		uint64_t n;

		if (strncmp(line, "chain;", 6) || !sp)
			continue;
		n = strtoull(sp + 1, NULL, 10);
		*samples += n;
		if (strstr(line, "[incomplete"))
			continue;
		*complete += n;
		if (strstr(line, ";main;a;b;c;d;leaf"))
			*leaf += n;
	}
	free(s);
}

static void test_thread_exec(void)
{
	char chain[PATH_MAX + 8], *mode[] = {"thread-exec", chain, "1c", NULL}, path[PATH_MAX];
	char *log = NULL;
	uint64_t samples, complete, leaf;

	snprintf(chain, sizeof(chain), "%s/chain", progs_dir);
	if (!record_prog("thread-exec", NULL, mode, &log))
		goto cleanup;
	count_chain(tpath(path, sizeof(path), "thread-exec"), &samples, &complete, &leaf);
	printf("thread-exec: %" PRIu64 " samples of chain, %" PRIu64 " complete, %" PRIu64
	       " of them in leaf under main;a;b;c;d\n",
	       samples, complete, leaf);
	/* 1 s of chain's CPU time at 999 Hz: ~1,000 samples however busy the machine */
	CHECK(samples >= 250, "only %" PRIu64 " samples of the exec'd program", samples);
	/*
	 * Its first samples wait for its load with a stack copy and are finished
	 * then; what is left incomplete is the exec's own moment (in-execve,
	 * the lazy-binding trampoline): a few samples.  Before: none complete.
	 */
	CHECK(complete * 100 >= samples * 95 && leaf * 100 >= samples * 90,
	      "%" PRIu64 " of %" PRIu64 " samples complete, %" PRIu64 " in leaf:\n%s", complete,
	      samples, leaf, log);
cleanup:
	free(log);
}

/*
 * A process exiting from a library it mapped after its last load, with no
 * sample in it before: its exiting samples' one user frame (the exit_group
 * call) is in code no load read.  The kernel's list of its mappings at
 * sched_process_exit names it now.  Before, it was [unknown]: the cause of
 * the rare unnamed _exit of test_exit (exit_exec's parent, loaded at its exec
 * before ld.so mapped libc, sampled only in its exit).  The library's file is
 * known from the child's load, which mapped it before touching the memory.
 */
static void test_exit_late_lib(void)
{
	char lib[PATH_MAX + 32], rec[PATH_MAX + 8], path[PATH_MAX], first[256] = "";
	char *mode[] = {"exit-late-lib", "512", lib, NULL}, *opts[] = {"--save", rec, NULL};
	char *log = NULL, *s = NULL, *recording = NULL, *line, *save;
	uint64_t named = 0, child = 0, unnamed = 0;
	const char *exiting = PROG ";[incomplete: exiting];";

	snprintf(lib, sizeof(lib), "%s/libexit_lib.so", progs_dir);
	tpath(path, sizeof(path), "late_lib");
	snprintf(rec, sizeof(rec), "%s.rec", path);
	if (!record_prog("late_lib", opts, mode, &log))
		goto cleanup;
	s = slurp(path);
	recording = slurp(rec);
	CHECK(s && recording, "cannot read %s or %s", path, rec);
	if (!s || !recording)
		goto cleanup;
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *leaf = line + strlen(exiting), *sp = strrchr(line, ' ');
		size_t len = strcspn(leaf, "; ");
		uint64_t n = sp ? strtoull(sp + 1, NULL, 10) : 0;

		if (strncmp(line, exiting, strlen(exiting)))
			continue;
		if (len == 12 && !strncmp(leaf, "exit_lib_now", len)) {
			named += n;
		} else if (len == 5 && !strncmp(leaf, "_exit", len)) {
			child += n;
		} else {
			unnamed += n;
			if (!first[0])
				snprintf(first, sizeof(first), "%.*s", (int)len, leaf);
		}
	}
	printf("exit-late-lib: %" PRIu64 " exiting samples in exit_lib_now, %" PRIu64
	       " in the child's _exit, %" PRIu64 " with another leaf (%s)\n",
	       named, child, unnamed, first[0] ? first : "none");
	/*
	 * Freeing 512 MiB of shared memory is tens of ms of the parent's CPU time
	 * (test_exit: ~17 samples per 256 MiB at 999 Hz, CPU time however busy
	 * the machine): 5 is far below.
	 */
	CHECK(named >= 5, "only %" PRIu64 " exiting samples name exit_lib_now:\n%s", named, log);
	/* the child's load read the library while it touched the memory (its whole life) */
	CHECK(unnamed == 0 || !strstr(recording, "libexit_lib.so"),
	      "%" PRIu64 " exiting samples with the leaf %s:\n%s", unnamed, first, log);
cleanup:
	free(recording);
	free(s);
	free(log);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!e2e_setup("edges"))
		return HARNESS_DONE();
	RUN_TEST(test_exit);
	RUN_TEST(test_execve);
	RUN_TEST(test_thread_exec);
	RUN_TEST(test_exit_late_lib);
	e2e_finish();
	return HARNESS_DONE();
}
