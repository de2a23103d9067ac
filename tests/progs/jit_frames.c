// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CFI, code no FDE covers and JIT code in one stack, for the replay tests:
 * main -> jf_run -> jf_nocfi (hand-written, a frame pointer, no CFI) ->
 * [code copied into anonymous executable memory, a frame pointer, no CFI]
 * -> jf_leaf, which spins.  Usage: jit_frames SECONDS
 *
 * JIT_FRAMES_LATE_MS=N (test_deferred): the code is placed as JITs with W^X
 * place it (V8, HotSpot's code heap): N ms after the start, when the
 * profiler has loaded the process, into memory mapped writable, then made
 * executable with mprotect.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "spin.h"

volatile unsigned long jf_counter;

NOINLINE int jf_leaf(void)
{
	SPIN_LOOP(jf_counter);
	return 1;
}

/* jf_nocfi(fn): calls fn with a frame pointer; top-level asm gets no FDE */
__asm__(".text\n"
	".globl jf_nocfi\n"
	".type jf_nocfi, @function\n"
	"jf_nocfi:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	call *%rdi\n"
	"	pop %rbp\n"
	"	ret\n"
	".size jf_nocfi, .-jf_nocfi\n");
int jf_nocfi(int (*fn)(void));

NOINLINE int jf_run(int (*jit)(void))
{
	volatile int keep = jf_nocfi(jit);

	return keep;
}

int main(int argc, char **argv)
{
	/* push %rbp; mov %rsp,%rbp; movabs $jf_leaf,%rax; call *%rax; pop %rbp; ret */
	unsigned char code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8, 0, 0, 0, 0,
				0,    0,    0,    0,    0xff, 0xd0, 0x5d, 0xc3};
	uint64_t leaf = (uint64_t)(uintptr_t)jf_leaf;
	const char *late = getenv("JIT_FRAMES_LATE_MS");
	unsigned char *jit;

	spin_init(argc, argv);
	memcpy(code + 6, &leaf, sizeof(leaf));
	if (late) {
		struct timespec ts = {atoi(late) / 1000, atoi(late) % 1000 * 1000000L};

		nanosleep(&ts, NULL);
		spin_init(argc, argv);
		jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (jit == MAP_FAILED)
			return 3;
		memcpy(jit, code, sizeof(code));
		if (mprotect(jit, 4096, PROT_READ | PROT_EXEC))
			return 3;
		return jf_run((int (*)(void))jit) == 1 ? 0 : 1;
	}
	jit = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (jit == MAP_FAILED)
		return 3;
	memcpy(jit, code, sizeof(code));
	return jf_run((int (*)(void))jit) == 1 ? 0 : 1;
}
