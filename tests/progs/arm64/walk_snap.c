// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * An arm64 program that snapshots its own stack for test_walker_arm64, run
 * under qemu-aarch64: the registers of a true leaf (its return address still
 * in x30), the stack from there to its top, /proc/self/maps, and what each
 * caller says its return address is (__builtin_return_address, stripped of
 * its PAC by the compiler: the oracle).  Modes:
 *   chain:  main -> ca -> cb -> cc -> snap_leaf
 *   signal: main -> sa -> sb -> raise(SIGUSR1) ~> on_signal -> sh -> snap_leaf
 * Writes FILE (replay_world.h's snapshot format) and FILE.txt ("lr", "ra",
 * "tramp" lines).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

extern void *__libc_stack_end;

/* pc, sp, x29, x30 of snap_leaf, which pushes nothing */
struct leaf_regs {
	uint64_t pc, sp, fp, lr;
} leaf_regs;

void snap_leaf(void);
__asm__(".text\n"
	".globl snap_leaf\n"
	".type snap_leaf, %function\n"
	"snap_leaf:\n"
	".cfi_startproc\n"
	"adrp x9, leaf_regs\n"
	"add x9, x9, :lo12:leaf_regs\n"
	"adr x10, .\n"
	"str x10, [x9]\n"
	"mov x10, sp\n"
	"str x10, [x9, 8]\n"
	"str x29, [x9, 16]\n"
	"str x30, [x9, 24]\n"
	"ret\n"
	".cfi_endproc\n"
	".size snap_leaf, .-snap_leaf\n");

static const char *out;
static uint64_t ras[16], tramp;
static int nras;
volatile int sink;

#define RECORD_RA() (ras[nras++] = (uint64_t)__builtin_return_address(0))

/* The snapshot, written while every frame from snap_leaf's caller up is live. */
static NOINLINE void write_snapshot(void)
{
	uint64_t top = ((uint64_t)__libc_stack_end + 4096) & ~4095ull, len = top - leaf_regs.sp;
	uint32_t pid = 1, nr = 0, exec;
	char line[4096], path[4096 + 8];
	FILE *f = fopen(out, "wb"), *maps = fopen("/proc/self/maps", "r"), *txt;
	struct {
		uint64_t start, end, offset;
		uint32_t exec, pad;
		char path[256];
	} m[64];

	if (!f || !maps)
		exit(2);
	while (nr < 64 && fgets(line, sizeof(line), maps)) {
		unsigned long long s, e, o;
		char perms[8], file[4096] = "";

		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095[^\n]", &s, &e, perms, &o, file) <
		    4)
			continue;
		memset(&m[nr], 0, sizeof(m[nr]));
		m[nr].start = s;
		m[nr].end = e;
		m[nr].offset = o;
		exec = perms[2] == 'x';
		m[nr].exec = exec;
		snprintf(m[nr].path, sizeof(m[nr].path), "%s", file + strspn(file, " "));
		nr++;
	}
	fclose(maps);
	fwrite("CFISNAP1", 8, 1, f);
	fwrite(&pid, 4, 1, f);
	fwrite(&pid, 4, 1, f);
	fwrite(&leaf_regs.pc, 8, 1, f);
	fwrite(&leaf_regs.sp, 8, 1, f);
	fwrite(&leaf_regs.fp, 8, 1, f);
	fwrite(&leaf_regs.sp, 8, 1, f);
	fwrite(&len, 8, 1, f);
	fwrite(&nr, 4, 1, f);
	fwrite(m, sizeof(m[0]), nr, f);
	fwrite((const void *)leaf_regs.sp, 1, len, f);
	if (fclose(f))
		exit(3);
	snprintf(path, sizeof(path), "%s.txt", out);
	txt = fopen(path, "w");
	if (!txt)
		exit(4);
	fprintf(txt, "lr %#llx\n", (unsigned long long)leaf_regs.lr);
	for (int i = 0; i < nras; i++)
		fprintf(txt, "ra %#llx\n", (unsigned long long)ras[i]);
	/* the trampoline's code too: the replay reads its two instructions */
	if (tramp)
		fprintf(txt, "tramp %#llx %#llx\n", (unsigned long long)tramp,
			(unsigned long long)*(const uint64_t *)tramp);
	if (fclose(txt))
		exit(5);
}

/* innermost first: each caller records where it returns to, then calls on */
static NOINLINE void cc(int n)
{
	RECORD_RA();
	snap_leaf();
	write_snapshot();
	sink += n;
}

static NOINLINE void cb(int n)
{
	char buf[64];

	RECORD_RA();
	memset(buf, n, sizeof(buf));
	cc(n + buf[n & 63]);
	sink += buf[1];
}

static NOINLINE void ca(int n)
{
	RECORD_RA();
	cb(n + 1);
	sink += n;
}

static NOINLINE void sh(int n)
{
	RECORD_RA();
	snap_leaf();
	write_snapshot();
	sink -= n;
}

static void on_signal(int sig)
{
	/* the handler returns to the sigreturn trampoline */
	tramp = (uint64_t)__builtin_return_address(0);
	sh(sig);
	sink += sig;
}

static NOINLINE void sb(int n)
{
	RECORD_RA();
	raise(SIGUSR1);
	sink += n;
}

static NOINLINE void sa(int n)
{
	RECORD_RA();
	sb(n + 1);
	sink += n;
}

int main(int argc, char **argv)
{
	if (argc != 3)
		return 1;
	out = argv[2];
	if (!strcmp(argv[1], "chain")) {
		ca(argc);
	} else if (!strcmp(argv[1], "signal")) {
		signal(SIGUSR1, on_signal);
		sa(argc);
	} else {
		return 1;
	}
	return sink == 12345;
}
