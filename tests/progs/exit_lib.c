// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * exit_exec exit-dlopen: a library dlopen'd just before its process exits,
 * whose one function ends the process with the exit_group system call itself
 * (not through libc), so the exiting samples' leaf is in code mapped after
 * the process's last load.
 */
#include <unistd.h>

void exit_lib_now(int code)
{
#if defined(__x86_64__)
	__asm__ volatile("syscall" : : "a"(231), "D"((long)code) : "rcx", "r11", "memory");
#elif defined(__aarch64__)
	register long nr __asm__("x8") = 94;
	register long arg __asm__("x0") = code;

	__asm__ volatile("svc 0" : : "r"(nr), "r"(arg) : "memory");
#endif
	/* the return address of the call above stays inside this function */
	for (;;)
		pause();
}
