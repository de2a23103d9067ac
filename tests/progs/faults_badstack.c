// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Corrupted stacks in sampled leaves (tests/e2e/test_faults.c).  One thread per
 * case, named after it; each sets rsp / rbp to something hostile in a
 * hand-written leaf and spins there forever (the process exits after SECS, "2c" its CPU time, by
 * exit_group, which kills them).  Expected stop reason (see bpf/walker.h):
 *   bs_garbage   CFI leaf, rsp = garbage in the kernel's half  unreadable-memory
 *   bs_unmapped  CFI leaf, rsp in an unmapped hole           unreadable-memory
 *   bs_guard     CFI leaf, rsp in the thread's guard page    unreadable-memory
 *   bs_rbpcycle  CFI leaf with CFA = rbp+16, rbp -> a 2-cycle of frames on the
 *                stack: the CFA stops rising                 unreadable-memory
 *   bs_nocfi     leaf without CFI, rsp garbage               no-rule
 * The garbage is canonical: some CPUs (AMD EPYC under Firecracker, seen here)
 * fault the first return to user mode with a non-canonical rsp, which killed
 * the process before anything was sampled.
 *   bs_fpcycle   anonymous executable code (frame pointers), rbp -> 2-cycle
 *                                                            fp-chain-broken
 *   bs_fpunmap   anonymous code, rsp and rbp 4 KiB apart in unmapped memory
 *                                                            unreadable-memory
 *   bs_fpfar     anonymous code, rbp 1 GiB above rsp: not a frame of this stack
 *                (nothing read)                              fp-chain-broken
 *   bs_fplong    anonymous code, a valid rising 8192-frame rbp chain
 *                                                            truncated (max-frames)
 * Usage: faults_badstack SECS.  Exits 2 if a setup assumption does not hold
 * (an "unreadable" address that is readable).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "spin.h"

void bs_rsp_spin(unsigned long new_rsp);
void bs_rbp_spin(unsigned long new_rbp);
void bs_nocfi_spin(unsigned long new_rsp);
void bs_enter(unsigned long rsp, unsigned long rbp, void *code);
extern char bs_rbp_loop[];

/* canonical (bits 63..47 equal) yet in the kernel's half: never readable from user space */
#define GARBAGE_RSP 0xffffdeadbeefbee8ul

/* rsp / rbp are clobbered for good: none of these return */
__asm__(".text\n"
	".globl bs_rsp_spin\n"
	".type bs_rsp_spin,@function\n"
	"bs_rsp_spin:\n"
	"	.cfi_startproc\n"
	"	mov %rdi, %rsp\n"
	"1:	jmp 1b\n"
	"	.cfi_endproc\n"
	".size bs_rsp_spin, .-bs_rsp_spin\n"

	".globl bs_rbp_spin\n"
	".type bs_rbp_spin,@function\n"
	"bs_rbp_spin:\n"
	"	.cfi_startproc\n"
	"	push %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	mov %rdi, %rbp\n"
	".globl bs_rbp_loop\n"
	"bs_rbp_loop:\n"
	"	jmp bs_rbp_loop\n"
	"	nop\n"
	"	.cfi_endproc\n"
	".size bs_rbp_spin, .-bs_rbp_spin\n"

	/* no .cfi_startproc: no FDE covers these two */
	".globl bs_nocfi_spin\n"
	".type bs_nocfi_spin,@function\n"
	"bs_nocfi_spin:\n"
	"	mov %rdi, %rsp\n"
	"1:	jmp 1b\n"
	".size bs_nocfi_spin, .-bs_nocfi_spin\n"

	".globl bs_enter\n"
	".type bs_enter,@function\n"
	"bs_enter:\n"
	"	mov %rdi, %rsp\n"
	"	mov %rsi, %rbp\n"
	"	jmp *%rdx\n"
	".size bs_enter, .-bs_enter\n");

#define FP_LONG_FRAMES 8192

static unsigned char *jit; /* anonymous executable page: "jmp ." at offset 0 */
static pthread_barrier_t barrier;

static int readable(unsigned long addr)
{
	unsigned long v;
	struct iovec l = {&v, sizeof(v)}, r = {(void *)addr, sizeof(v)};

	return process_vm_readv(getpid(), &l, 1, &r, 1, 0) == (ssize_t)sizeof(v);
}

static void must_be_unreadable(const char *what, unsigned long addr)
{
	if (readable(addr)) {
		fprintf(stderr, "faults_badstack: %s: %#lx is readable\n", what, addr);
		_exit(2);
	}
}

/*
 * An address nothing here maps: the first 64 KiB, where mmap() places
 * nothing unless asked with MAP_FIXED (and below vm.mmap_min_addr not even
 * then).  A hole made by munmap() was taken again by another thread's next
 * mmap() (top-down placement reuses it first) and was found readable now
 * and then.
 */
static unsigned long unmapped_hole(unsigned long which)
{
	return 0x8000ul + which * 0x2000ul;
}

static void *thread_main(void *arg)
{
	const char *name = arg;
	volatile unsigned long cyc[4];
	unsigned long *buf;

	pthread_setname_np(pthread_self(), name);
	pthread_barrier_wait(&barrier);

	if (!strcmp(name, "bs_garbage")) {
		bs_rsp_spin(GARBAGE_RSP);
	} else if (!strcmp(name, "bs_unmapped")) {
		unsigned long a = unmapped_hole(0);

		must_be_unreadable(name, a);
		bs_rsp_spin(a);
	} else if (!strcmp(name, "bs_guard")) {
		pthread_attr_t attr;
		void *lo;
		size_t size, guard;

		if (pthread_getattr_np(pthread_self(), &attr) ||
		    pthread_attr_getstack(&attr, &lo, &size) ||
		    pthread_attr_getguardsize(&attr, &guard) || guard < 4096)
			_exit(2);
		/* glibc puts the guard right below the usable stack */
		must_be_unreadable(name, (unsigned long)lo - 64);
		bs_rsp_spin((unsigned long)lo - 64);
	} else if (!strcmp(name, "bs_rbpcycle")) {
		/* frame at cyc[0]: saved rbp -> cyc[2]; frame at cyc[2]: saved rbp -> cyc[0] */
		cyc[0] = (unsigned long)&cyc[2];
		cyc[1] = (unsigned long)bs_rbp_loop + 1;
		cyc[2] = (unsigned long)&cyc[0];
		cyc[3] = (unsigned long)bs_rbp_loop + 1;
		bs_rbp_spin((unsigned long)&cyc[0]);
	} else if (!strcmp(name, "bs_nocfi")) {
		bs_nocfi_spin(GARBAGE_RSP);
	} else if (!strcmp(name, "bs_fpcycle")) {
		buf = aligned_alloc(64, 64 * sizeof(*buf));
		memset(buf, 0, 64 * sizeof(*buf));
		buf[8] = (unsigned long)&buf[10];
		buf[9] = (unsigned long)jit + 1;
		buf[10] = (unsigned long)&buf[8];
		buf[11] = (unsigned long)jit + 1;
		bs_enter((unsigned long)buf, (unsigned long)&buf[8], jit);
	} else if (!strcmp(name, "bs_fpunmap")) {
		unsigned long a = unmapped_hole(1);

		must_be_unreadable(name, a);
		bs_enter(a - 4096, a, jit);
	} else if (!strcmp(name, "bs_fpfar")) {
		volatile unsigned long far[2] = {0, 0};

		bs_enter((unsigned long)&far[0] - (1ul << 30), (unsigned long)&far[0], jit);
	} else if (!strcmp(name, "bs_fplong")) {
		int i;

		buf = aligned_alloc(64, (2 * FP_LONG_FRAMES + 16) * sizeof(*buf));
		for (i = 0; i < FP_LONG_FRAMES; i++) {
			buf[2 * i] = (unsigned long)&buf[2 * i + 2];
			buf[2 * i + 1] = (unsigned long)jit + 1;
		}
		buf[2 * FP_LONG_FRAMES] = 0;
		buf[2 * FP_LONG_FRAMES + 1] = 0;
		bs_enter((unsigned long)buf, (unsigned long)buf, jit);
	}
	fprintf(stderr, "faults_badstack: unknown case %s\n", name);
	_exit(2);
}

static const char *cases[] = {"bs_garbage", "bs_unmapped", "bs_guard",	 "bs_rbpcycle",
			      "bs_nocfi",   "bs_fpcycle",  "bs_fpunmap", "bs_fplong",
			      "bs_fpfar"};
#define NR_CASES (sizeof(cases) / sizeof(cases[0]))

int main(int argc, char **argv)
{
	/* "2c": until the process has had that much CPU, however busy the machine */
	double secs = argc > 1 ? spin_secs(argv[1]) : 3.0, until = spin_now() + secs;
	struct timespec nap = {0, 10 * 1000 * 1000};
	pthread_t t;
	size_t i;

	jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (jit == MAP_FAILED)
		return 2;
	memset(jit, 0x90, 4096);
	jit[0] = 0xeb; /* jmp . */
	jit[1] = 0xfe;
	if (mprotect(jit, 4096, PROT_READ | PROT_EXEC))
		return 2;
	pthread_barrier_init(&barrier, NULL, NR_CASES + 1);
	for (i = 0; i < NR_CASES; i++) {
		if (pthread_create(&t, NULL, thread_main, (void *)cases[i]))
			return 2;
	}
	pthread_barrier_wait(&barrier);
	while (spin_now() < until)
		nanosleep(&nap, NULL);
	/* exit_group: the spinning threads die with the process */
	fflush(stdout);
	_exit(0);
}
