// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Address-space and thread churn while profiled (tests/e2e/test_faults.c):
 *   faults_churn mmap SECS FILE1 FILE2
 *       a thread ("fc_churn") maps FILE1 / FILE2 in turn PROT_READ|PROT_EXEC
 *       (whole file, then one page at a fixed spot inside a reserved area),
 *       touches it and unmaps it, as fast as it can; the main thread spins in
 *       main -> fc_a -> fc_leaf for SECS.
 *   faults_churn threads SECS
 *       creates and joins short-lived threads (fc_worker -> fc_tleaf, a few
 *       microseconds of work each) for SECS.
 * Both print what they did to stderr: "faults_churn: N maps" / "N threads".
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "spin.h"

volatile unsigned long counter, tcounter, sink;
static volatile int stop;
static const char *files[2];
static unsigned long nr_maps;

NOINLINE int fc_leaf(int x)
{
	SPIN_LOOP(counter);
	return x + 1;
}

NOINLINE int fc_a(int x)
{
	volatile char buf[40];

	buf[0] = x;
	return fc_leaf(x) + buf[0];
}

static void *churn(void *arg)
{
	int fds[2], i;
	size_t sizes[2];
	/* a reserved area: MAP_FIXED maps of both files land at the same address */
	char *area = mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	(void)arg;
	pthread_setname_np(pthread_self(), "fc_churn");
	for (i = 0; i < 2; i++) {
		struct stat st;

		fds[i] = open(files[i], O_RDONLY);
		if (fds[i] < 0 || fstat(fds[i], &st)) {
			perror(files[i]);
			_exit(1);
		}
		sizes[i] = (size_t)st.st_size;
	}
	if (area == MAP_FAILED)
		_exit(1);
	for (i = 0; !stop; i ^= 1) {
		char *p = mmap(NULL, sizes[i], PROT_READ | PROT_EXEC, MAP_PRIVATE, fds[i], 0);
		char *q;

		if (p == MAP_FAILED) {
			perror("mmap");
			_exit(1);
		}
		sink += (unsigned char)p[0] + (unsigned char)p[sizes[i] - 1];
		munmap(p, sizes[i]);
		q = mmap(area + 4096 * 16, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED,
			 fds[i], 0);
		if (q == MAP_FAILED) {
			perror("mmap fixed");
			_exit(1);
		}
		sink += (unsigned char)q[1];
		/* back to an inaccessible reservation */
		mmap(area + 4096 * 16, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1,
		     0);
		nr_maps += 2;
	}
	return NULL;
}

NOINLINE int fc_tleaf(int x)
{
	int i;

	for (i = 0; i < 2000; i++)
		tcounter++;
	return x;
}

static void *fc_worker(void *arg)
{
	return (void *)(long)fc_tleaf((int)(long)arg);
}

int main(int argc, char **argv)
{
	double secs = argc > 2 ? atof(argv[2]) : 1.0;

	if (argc > 4 && !strcmp(argv[1], "mmap")) {
		pthread_t t;

		files[0] = argv[3];
		files[1] = argv[4];
		/* "2c": seconds of the process's CPU time (spin.h), the churner's included */
		secs = spin_secs(argv[2]);
		if (pthread_create(&t, NULL, churn, NULL))
			return 1;
		spin_deadline = spin_now() + secs;
		fc_a(1);
		stop = 1;
		pthread_join(t, NULL);
		fprintf(stderr, "faults_churn: %lu maps in %.1f s\n", nr_maps, secs);
		return 0;
	}
	if (argc > 2 && !strcmp(argv[1], "threads")) {
		/* "2c": seconds of the process's CPU time (spin.h), its threads' included; the
		 * clock chosen before it is read */
		double span = spin_secs(argv[2]), end = spin_now() + span;
		unsigned long n = 0;

		while (spin_now() < end) {
			pthread_t t[8];
			int i;

			for (i = 0; i < 8; i++) {
				if (pthread_create(&t[i], NULL, fc_worker, (void *)(long)i)) {
					perror("pthread_create");
					return 1;
				}
			}
			for (i = 0; i < 8; i++)
				pthread_join(t[i], NULL);
			n += 8;
		}
		fprintf(stderr, "faults_churn: %lu threads in %.1f s\n", n, secs);
		return 0;
	}
	fprintf(stderr, "usage: faults_churn mmap SECS FILE1 FILE2 | threads SECS[c]\n");
	return 2;
}
