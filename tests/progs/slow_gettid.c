// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * LD_PRELOADed into python3.11 by test_python_frames:tstate_id_late: its
 * first syscall(SYS_gettid) spins SLOW_GETTID_SECS (default 0.2) of the
 * thread's CPU time first.  Debian's python3.11 links the main thread's
 * state into the interpreter's list (interp->threads.head) before it stores
 * the thread's ids in it (new_threadstate: PyThread_get_thread_ident, then
 * PyThread_get_thread_native_id, whose syscall(SYS_gettid) goes through the
 * PLT): this widens that window from a syscall's length to many samples, so
 * that a sample always finds the head without the thread's id.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>

static double thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

long syscall(long nr, ...)
{
	static long (*real)(long, ...);
	static int slowed;
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (!real)
		real = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
	if (nr == SYS_gettid && !slowed) {
		const char *s = getenv("SLOW_GETTID_SECS");
		double until = thread_cpu() + (s ? atof(s) : 0.2);
		volatile unsigned long n = 0;

		slowed = 1;
		while (thread_cpu() < until)
			n++;
	}
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
