// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Samples no profiler can walk (tests/e2e/test_process_edges.c):
 *   exit_exec exit N MB
 *       N children one after another, each touching MB MiB and exiting:
 *       freeing that memory in do_exit, after exit_mm(), takes a while.
 *   exit_exec exec N
 *       N children one after another, each execve()ing this program as
 *       "exit_exec child", which returns at once: time inside execve.
 *   exit_exec thread-exec PROG ARGS...
 *       a thread other than the main one execve()s PROG: the kernel ends the
 *       main thread first (its exit is the process's pid), then the process
 *       goes on under the same pid and start time as PROG.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

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
	if (argc == 3 && !strcmp(argv[1], "exec"))
		return run_children(atoi(argv[2]), 0, "/proc/self/exe");
	if (argc >= 3 && !strcmp(argv[1], "thread-exec"))
		return thread_exec(argv + 2);
	fprintf(
	    stderr,
	    "usage: exit_exec exit N MB | exit_exec exec N | exit_exec thread-exec PROG ARGS\n");
	return 2;
}
