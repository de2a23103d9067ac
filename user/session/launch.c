// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A command started stopped at its entry point: see launch.h. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "user/session/launch.h"

pid_t launch_stopped(char **cmd, const struct rlimit *nofile, int stderr_fd, int *go_fd,
		     bool *held)
{
	int p[2], st[2];
	pid_t pid;
	char c = 0;

	if (pipe2(p, O_CLOEXEC))
		return -1;
	if (pipe2(st, O_CLOEXEC)) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		close(st[0]);
		close(st[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[1]);
		close(st[0]);
		/* record -q holds its own stderr back, never the command's */
		if (stderr_fd > STDERR_FILENO)
			dup2(stderr_fd, STDERR_FILENO);
		/* stop right after exec, so its tables are in place before it runs */
		c = ptrace(PTRACE_TRACEME, 0, NULL, NULL) ? 'n' : 'y';
		if (write(st[1], &c, 1) != 1)
			_exit(127);
		close(st[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(127);
		/* the command gets the limit it would have had without cfiprof */
		setrlimit(RLIMIT_NOFILE, nofile);
		execvp(cmd[0], cmd);
		fprintf(stderr, "cfiprof: cannot run '%s': %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	close(p[0]);
	close(st[1]);
	/* the child answers at once; EOF: it died before */
	while (read(st[0], &c, 1) < 0 && errno == EINTR)
		;
	close(st[0]);
	if (c != 'y' && c != 'n') {
		close(p[1]);
		waitpid(pid, NULL, 0);
		errno = ECHILD;
		return -1;
	}
	*held = c == 'y';
	*go_fd = p[1];
	return pid;
}

/* AT_ENTRY from /proc/PID/auxv: where the program starts once ld.so has mapped its libraries. */
static uint64_t auxv_entry(pid_t pid)
{
	char path[64];
	Elf64_auxv_t av;
	uint64_t entry = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/auxv", pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fread(&av, sizeof(av), 1, f) == 1 && av.a_type != AT_NULL) {
		if (av.a_type == AT_ENTRY) {
			entry = av.a_un.a_val;
			break;
		}
	}
	fclose(f);
	return entry;
}

/*
 * The breakpoint at the entry: int3 on x86-64, after which the pc is one byte
 * on; brk #0 on arm64, whose pc stays on it.
 */
#if defined(__aarch64__)
#define BREAK_INSN     0xd4200000L
#define BREAK_MASK     0xffffffffL
#define BREAK_PC_AFTER 0
#define REGS_PC(r)     ((r).pc)
#else
#define BREAK_INSN     0xccL
#define BREAK_MASK     0xffL
#define BREAK_PC_AFTER 1
#define REGS_PC(r)     ((r).rip)
#endif

bool launch_run_to_entry(pid_t pid, int *exit_status)
{
	struct user_regs_struct regs;
	struct iovec iov = {&regs, sizeof(regs)};
	uint64_t entry = auxv_entry(pid);
	long word;
	int status;

	if (!entry)
		return true;
	errno = 0;
	word = ptrace(PTRACE_PEEKTEXT, pid, (void *)entry, NULL);
	if (errno)
		return true;
	if (ptrace(PTRACE_POKETEXT, pid, (void *)entry,
		   (void *)((word & ~BREAK_MASK) | BREAK_INSN)))
		return true;
	for (;;) {
		if (ptrace(PTRACE_CONT, pid, NULL, NULL) || waitpid(pid, &status, 0) != pid)
			return false;
		if (!WIFSTOPPED(status))
			goto gone;
		if (WSTOPSIG(status) == SIGTRAP)
			break;
		/* other signals before main are the program's own: deliver them */
		if (ptrace(PTRACE_CONT, pid, NULL, (void *)(long)WSTOPSIG(status)))
			return false;
		if (waitpid(pid, &status, 0) != pid)
			return false;
		if (!WIFSTOPPED(status))
			goto gone;
		if (WSTOPSIG(status) == SIGTRAP)
			break;
	}
	if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &iov) ||
	    REGS_PC(regs) != entry + BREAK_PC_AFTER)
		return true;
	REGS_PC(regs) = entry;
	ptrace(PTRACE_POKETEXT, pid, (void *)entry, (void *)word);
	ptrace(PTRACE_SETREGSET, pid, (void *)NT_PRSTATUS, &iov);
	return true;
gone:
	*exit_status = status;
	return false;
}

void launch_release(pid_t pid)
{
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
}
