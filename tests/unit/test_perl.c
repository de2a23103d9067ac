// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Perl frames without a kernel: the offsets table against perl's own
 * headers (tests/progs/perl/layout.c built against the installed perl's
 * CORE headers, field by field), detection on Debian's perl (its version,
 * PL_current_context's place below the thread pointer, checked against
 * this process's own TLS arithmetic with readelf's PT_TLS), and a CV read
 * from a perl process's memory: the oracle is perl itself, which prints
 * its subs' addresses (B::svref_2object) and names, and waits.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tables/cfi_table.h"
#include "tests/lib/layout_check.h"
#include "user/runtimes/perl/perl_detect.h"
#include "user/runtimes/perl/perl_names.h"
#include "user/runtimes/perl/perl_offsets.h"

#define PERL "/usr/bin/perl"

/* The value of the field a line of layout.c names; -1 if none. */
static long entry_field(const void *entry, const char *name)
{
	const struct perl_offsets *o = entry;

	const struct {
		const char *name;
		long value;
	} f[] = {
	    {"version", o->version},
	    {"bpf.interp_curstackinfo", o->bpf.interp_curstackinfo},
	    {"bpf.interp_curcop", o->bpf.interp_curcop},
	    {"bpf.si_cxstack", o->bpf.si_cxstack},
	    {"bpf.si_cxix", o->bpf.si_cxix},
	    {"bpf.si_prev", o->bpf.si_prev},
	    {"bpf.cx_size", o->bpf.cx_size},
	    {"bpf.cx_oldcop", o->bpf.cx_oldcop},
	    {"bpf.cx_sub_cv", o->bpf.cx_sub_cv},
	    {"bpf.cop_line", o->bpf.cop_line},
	    {"bpf.cxt_sub", o->bpf.cxt_sub},
	    {"bpf.interp_phase", o->bpf.interp_phase},
	    {"bpf.phase_run", o->bpf.phase_run},
	    {"phase_is_int", 1},
	    {"cop_file", o->cop_file},
	    {"sv_any", o->sv_any},
	    {"sv_flags", o->sv_flags},
	    {"svf_ook", o->svf_ook},
	    {"xcv_stash", o->xcv_stash},
	    {"xcv_gv_u", o->xcv_gv_u},
	    {"xcv_file", o->xcv_file},
	    {"xcv_flags", o->xcv_flags},
	    {"cvf_named", o->cvf_named},
	    {"xgv_namehek", o->xgv_namehek},
	    {"xgv_stash", o->xgv_stash},
	    {"hek_len", o->hek_len},
	    {"hek_key", o->hek_key},
	    {"xhv_aux", o->xhv_aux},
	    {"aux_name", o->aux_name},
	    {"aux_name_count", o->aux_name_count},
	    {"fits", 1},
	    {"cx_type_first", 1},
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (!strcmp(f[i].name, name))
			return f[i].value;
	return -1;
}

/* The 5.36 entry is the installed perl's layout, field by field. */
static const void *find_entry(uint16_t version)
{
	return perl_offsets_find(version);
}

static void test_layout(void)
{
	char cmd[2048];

	snprintf(cmd, sizeof(cmd),
		 "cc -w $(perl -MExtUtils::Embed -e ccopts) -DPERL_CX_READ_CHECK=%d "
		 "-DPERL_SI_READ_CHECK=%d tests/progs/perl/layout.c -o $B/layout && $B/layout",
		 PERL_CX_READ, PERL_SI_READ);
	layout_check("perl", cmd, find_entry, entry_field, 28);
}

/* Debian's arm64 perl's entry (perl_offsets.h: PL_phase moves). */
static const void *find_entry_arm64(uint16_t version)
{
	return perl_offsets_find_arch(version, CFI_ARCH_ARM64);
}

/*
 * The arm64 entry against Debian's arm64 perl headers (libperl5.36:arm64,
 * unpacked for the arm64 guest), the program cross-built and run under
 * qemu-aarch64; the compiler flags are the host perl's, its CORE swapped.
 */
static void test_layout_arm64(void)
{
	const char *out = getenv("OUT") ? getenv("OUT") : "build";
	char cmd[2 * PATH_MAX + 1024], core[PATH_MAX];

	snprintf(core, sizeof(core), "%s/arm64-guest/rt/usr/lib/aarch64-linux-gnu/perl/5.36/CORE",
		 out);
	CHECK(access(core, R_OK) == 0, "%s missing (make test unpacks it)", core);
	snprintf(cmd, sizeof(cmd),
		 "aarch64-linux-gnu-gcc -w -static $(perl -MExtUtils::Embed -e ccopts | sed "
		 "'s,-I/usr/lib/x86_64-linux-gnu/perl/[^ ]*,-I%s,') -DPERL_CX_READ_CHECK=%d "
		 "-DPERL_SI_READ_CHECK=%d tests/progs/perl/layout.c -o $B/layout && "
		 "qemu-aarch64 $B/layout",
		 core, PERL_CX_READ, PERL_SI_READ);
	layout_check("perl (arm64)", cmd, find_entry_arm64, entry_field, 28);
}

/*
 * Debian's perl: its version from PL_revision / PL_version, and
 * PL_current_context's offset from the thread pointer from its PT_TLS
 * (readelf's), which x86-64 places right below the thread pointer.
 */
static void test_detect(void)
{
	struct perl_object o;
	unsigned long long memsz = 0, align = 0, vaddr = 0;
	int fd = open(PERL, O_RDONLY | O_CLOEXEC), rc;
	FILE *rd;

	CHECK(fd >= 0, "%s missing", PERL);
	if (fd < 0)
		return;
	rc = perl_elf_info(fd, &o);
	close(fd);
	rd = popen("readelf -lW " PERL " | awk '$1 == \"TLS\" {print $3, $6, $NF}'", "r");
	CHECK(rd && fscanf(rd, "%llx %llx %llx", &vaddr, &memsz, &align) == 3,
	      "readelf found no PT_TLS");
	if (rd)
		pclose(rd);
	CHECK(rc == 0 && o.version == 0x0524 && align &&
		  o.tls_context == -(int32_t)((memsz + align - 1) / align * align),
	      "perl: rc %d, version %#x, PL_current_context at %d (PT_TLS memsz %llu align %llu)",
	      rc, o.version, o.tls_context, memsz, align);
	fd = open("/bin/sh", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && perl_elf_info(fd, &o) < 0, "/bin/sh taken for perl");
	if (fd >= 0)
		close(fd);
}

/*
 * Debian's arm64 perl (unpacked for the arm64 guest): PL_current_context
 * sits after the 16-byte thread control block (TLS variant I).  The oracle
 * is perl's own code: every local-exec access reads tpidr_el0 and adds the
 * offset the linker resolved (movz/movk), which aarch64-linux-gnu-objdump
 * shows; the one TLS variable makes them all one offset.
 */
static void test_detect_arm64(void)
{
	const char *out = getenv("OUT") ? getenv("OUT") : "build";
	char exe[PATH_MAX], cmd[PATH_MAX + 256], line[256];
	unsigned long long off, first = ~0ull;
	int fd, rc, n = 0, other = 0;
	struct perl_object o;
	FILE *rd;

	snprintf(exe, sizeof(exe), "%s/arm64-guest/rt/usr/bin/perl", out);
	fd = open(exe, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "%s missing (make test unpacks it)", exe);
	if (fd < 0)
		return;
	rc = perl_elf_info(fd, &o);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "aarch64-linux-gnu-objdump -d --no-show-raw-insn %s | grep -A4 'mrs.*tpidr_el0' | "
		 "sed -n 's/.*movk[[:space:]]*x[0-9]*, #\\(0x[0-9a-f]*\\)$/\\1/p'",
		 exe);
	rd = popen(cmd, "r");
	while (rd && fgets(line, sizeof(line), rd))
		if (sscanf(line, "%llx", &off) == 1) {
			first = n++ ? first : off;
			other += off != first;
		}
	if (rd)
		pclose(rd);
	printf("  arm64 perl: %d thread-pointer offsets in its code, all %#llx: %s\n", n, first,
	       other ? "no" : "yes");
	CHECK(n >= 3 && !other, "objdump: %d accesses, %d of another offset", n, other);
	CHECK(rc == 0 && o.version == 0x0524 && (unsigned long long)o.tls_context == first,
	      "arm64 perl: rc %d, version %#x, PL_current_context at %d (its code's: %#llx)", rc,
	      o.version, o.tls_context, first);
}

/*
 * A perl that prints its subs' CV addresses (B) and waits: each read from
 * its memory names itself as perl does, garbage is refused.
 */
static void test_cv_read(void)
{
	const struct perl_offsets *o = perl_offsets_find(0x0524);
	char line[256], name[128];
	unsigned long long addr;
	int pipefd[2], found = 0;
	pid_t pid;
	FILE *in;

	CHECK(pipe(pipefd) == 0, "pipe");
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], 1);
		close(pipefd[0]);
		execl(PERL, "perl", "-e",
		      "package Foo::Bar; sub baz { 1 } package main; sub leaf { 2 }"
		      "my $anon = sub { 3 }; $| = 1;"
		      "printf \"%x Foo::Bar::baz\\n\", 0 + \\&Foo::Bar::baz;"
		      "printf \"%x main::leaf\\n\", 0 + \\&leaf;"
		      "printf \"%x main::__ANON__\\n\", 0 + $anon; print \"end\\n\"; sleep 30;",
		      (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	in = fdopen(pipefd[0], "r");
	while (in && fgets(line, sizeof(line), in) && strncmp(line, "end", 3)) {
		struct code_name cv;

		if (sscanf(line, "%llx %127s", &addr, name) != 2)
			continue;
		perl_cv_read((uint32_t)pid, o, addr, &cv);
		CHECK(cv.ok && !strcmp(cv.name, name) && !strcmp(cv.file, "-e"),
		      "the CV at %#llx: ok %d, '%s' in '%s' (perl: %s)", addr, cv.ok,
		      cv.name ? cv.name : "", cv.file ? cv.file : "", name);
		free(cv.name);
		found++;
	}
	CHECK(found == 3, "perl printed %d subs", found);
	/* garbage: an address in no mapping, one that is not an SV */
	{
		struct code_name cv;

		perl_cv_read((uint32_t)pid, o, 16, &cv);
		CHECK(!cv.ok && !cv.name, "address 16 read as a CV");
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (in)
		fclose(in);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_layout);
	RUN_TEST(test_layout_arm64);
	RUN_TEST(test_detect);
	RUN_TEST(test_detect_arm64);
	RUN_TEST(test_cv_read);
	return HARNESS_DONE();
}
