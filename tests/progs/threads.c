// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * NR_THREADS (4; make bench builds a 2-thread copy) threads, each
 * start_thread -> worker -> t_a -> t_b -> t_leaf, spinning.
 */
#include <pthread.h>

#include "spin.h"

#ifndef NR_THREADS
#define NR_THREADS 4
#endif

volatile unsigned long counters[NR_THREADS * 8];

NOINLINE int t_leaf(int i)
{
	SPIN_LOOP(counters[i * 8]);
	return i;
}

NOINLINE int t_b(int i)
{
	volatile char buf[40];

	buf[0] = i;
	return t_leaf(i) + buf[0];
}

NOINLINE int t_a(int i)
{
	volatile long buf[9];

	buf[2] = i;
	return t_b(i) + buf[2];
}

NOINLINE void *worker(void *arg)
{
	long i = (long)arg;

	return (void *)(long)(t_a(i) + 1);
}

int main(int argc, char **argv)
{
	pthread_t th[NR_THREADS];
	long i;

	spin_init(argc, argv);
	for (i = 0; i < NR_THREADS; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i))
			return 1;
	for (i = 0; i < NR_THREADS; i++)
		pthread_join(th[i], NULL);
	return 0;
}
