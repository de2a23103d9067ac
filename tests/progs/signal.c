// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * main -> s_a -> s_work spins until SIGALRM arrives; the handler then spins in
 * handler -> h_a -> h_leaf, so the stack crosses __restore_rt back into s_work.
 */
#include <signal.h>
#include <sys/time.h>

#include "spin.h"

volatile unsigned long counter, work;
volatile sig_atomic_t in_handler;

NOINLINE int h_leaf(int x)
{
	SPIN_LOOP(counter);
	return x;
}

NOINLINE int h_a(int x)
{
	volatile char buf[56];

	buf[0] = x;
	return h_leaf(x) + buf[0];
}

NOINLINE void handler(int sig)
{
	in_handler = 1;
	work += h_a(sig);
}

NOINLINE int s_work(int x)
{
	/* an inner loop with no call: the interrupted pc is inside s_work itself */
	while (!in_handler)
		work++;
	return x;
}

NOINLINE int s_a(int x)
{
	volatile long buf[5];

	buf[0] = x;
	return s_work(x) + buf[0];
}

int main(int argc, char **argv)
{
	struct itimerval it = {.it_value = {.tv_sec = 0, .tv_usec = 100000}};
	struct sigaction sa = {.sa_handler = handler};

	spin_init(argc, argv);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	return s_a(argc) > 0 ? 0 : 0;
}
