// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Samples no profiler can walk (tests/e2e/test_process_edges.c):
 *   exit_exec exit N MB
 *       N children one after another, each touching MB MiB and exiting:
 *       freeing that memory in do_exit, after exit_mm(), takes a while.
 *   exit_exec exec N
 *       N children one after another, each execve()ing this program as
 *       "exit_exec child", which returns at once: time inside execve.
 *   exit_exec exit-late-lib MB LIB
 *       a child dlopen()s LIB (build/progs/libexit_lib.so) and touches MB MiB
 *       of memory it shares with this process, which then maps LIB itself
 *       and exits from LIB's exit_lib_now: freeing the memory in do_exit,
 *       its exiting samples' leaf is in a library it mapped after its load
 *       (the file known from the child's).
 *   exit_exec thread-exec PROG ARGS...
 *       a thread other than the main one execve()s PROG: the kernel ends the
 *       main thread first (its exit is the process's pid), then the process
 *       goes on under the same pid and start time as PROG.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* Maps lib and exits from its exit_lib_now with a raw exit_group. */
static void exit_from(const char *lib)
{
	void *h = dlopen(lib, RTLD_NOW);
	void (*fn)(int) = h ? (void (*)(int))dlsym(h, "exit_lib_now") : NULL;

	if (!fn) {
		fprintf(stderr, "exit_exec: %s: %s\n", lib, dlerror());
		_exit(125);
	}
	fn(0);
	_exit(124);
}

static int run_children(int n, int mb, const char *self)
{
	int i, status;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			if (self) {
				execl(self, self, "child", (char *)NULL);
				_exit(127);
			}
			size_t len = (size_t)mb << 20;
			char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p == MAP_FAILED)
				_exit(126);
			memset(p, 1, len);
			exit(0);
		}
		if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fprintf(stderr, "exit_exec: child %d failed (status %d)\n", i, status);
			return 1;
		}
	}
	fprintf(stderr, "exit_exec: %d children\n", n);
	return 0;
}

static int exit_late_lib(int mb, const char *lib)
{
	size_t len = (size_t)mb << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	pid_t pid;
	int status;

	if (p == MAP_FAILED) {
		perror("exit_exec: mmap");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		if (!dlopen(lib, RTLD_NOW))
			_exit(125);
		memset(p, 1, len);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "exit_exec: child failed (status %d)\n", status);
		return 1;
	}
	fprintf(stderr, "exit_exec: exiting from %s\n", lib);
	/* the last to map it: the exit frees the memory */
	exit_from(lib);
	return 1;
}

static void *exec_args(void *argv)
{
	char **args = argv;

	execv(args[0], args);
	perror("exit_exec: execv");
	_exit(127);
}

static int thread_exec(char **args)
{
	pthread_t t;

	if (pthread_create(&t, NULL, exec_args, args)) {
		fprintf(stderr, "exit_exec: pthread_create failed\n");
		return 1;
	}
	pthread_join(t, NULL);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "child"))
		return 0;
	if (argc == 4 && !strcmp(argv[1], "exit"))
		return run_children(atoi(argv[2]), atoi(argv[3]), NULL);
	if (argc == 4 && !strcmp(argv[1], "exit-late-lib"))
		return exit_late_lib(atoi(argv[2]), argv[3]);
	if (argc == 3 && !strcmp(argv[1], "exec"))
		return run_children(atoi(argv[2]), 0, "/proc/self/exe");
	if (argc >= 3 && !strcmp(argv[1], "thread-exec"))
		return thread_exec(argv + 2);
	fprintf(stderr,
		"usage: exit_exec exit N MB | exit_exec exit-late-lib MB LIB | exit_exec exec N | "
		"exit_exec thread-exec PROG ARGS\n");
	return 2;
}
