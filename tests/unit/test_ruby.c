// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Ruby frames without a kernel: the offsets table against Ruby's own
 * structures (tests/progs/ruby/layout.c built with the MJIT header the
 * installed Ruby ships, field by field), and detection on Debian's libruby
 * (its version; ruby_current_ec's module-id GOT slot and offset, checked
 * against readelf's relocations and symbols).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "elf/elf_read.h"
#include "elf/symbol_find.h"
#include "tests/lib/layout_check.h"
#include "user/runtimes/ruby/ruby_detect.h"
#include "user/runtimes/ruby/ruby_offsets.h"

#define LIBRUBY "/usr/lib/x86_64-linux-gnu/libruby-3.1.so.3.1"

/* The value of the field a line of layout.c names; -1 if none. */
static long entry_field(const void *entry, const char *name)
{
	const struct ruby_offsets *o = entry;

	const struct {
		const char *name;
		long value;
	} f[] = {
	    {"version", o->version},
	    {"bpf.ec_vm_stack", o->bpf.ec_vm_stack},
	    {"bpf.ec_vm_stack_size", o->bpf.ec_vm_stack_size},
	    {"bpf.ec_cfp", o->bpf.ec_cfp},
	    {"bpf.cfp_size", o->bpf.cfp_size},
	    {"bpf.cfp_pc", o->bpf.cfp_pc},
	    {"bpf.cfp_iseq", o->bpf.cfp_iseq},
	    {"bpf.cfp_ep", o->bpf.cfp_ep},
	    {"bpf.frame_cframe", o->bpf.frame_cframe},
	    {"bpf.frame_finish", o->bpf.frame_finish},
	    {"bpf.frame_magic_mask", o->bpf.frame_magic_mask},
	    {"bpf.frame_cfunc", o->bpf.frame_cfunc},
	    {"me_called_id", o->me_called_id},
	    {"id_scope_shift", o->id_scope_shift},
	    {"last_op_id", o->last_op_id},
	    {"iseq_body", o->iseq_body},
	    {"body_iseq_size", o->body_iseq_size},
	    {"body_iseq_encoded", o->body_iseq_encoded},
	    {"body_path", o->body_path},
	    {"body_label", o->body_label},
	    {"body_first_lineno", o->body_first_lineno},
	    {"body_info_entries", o->body_info_entries},
	    {"body_info_pos", o->body_info_pos},
	    {"body_info_size", o->body_info_size},
	    {"body_info_succ", o->body_info_succ},
	    {"info_entry_size", o->info_entry_size},
	    {"info_entry_line", o->info_entry_line},
	    {"rstring_heap_len", o->rstring_heap_len},
	    {"rstring_heap_ptr", o->rstring_heap_ptr},
	    {"rstring_embed", o->rstring_embed},
	    {"rstring_noembed", o->rstring_noembed},
	    {"rstring_embed_mask", o->rstring_embed_mask},
	    {"rstring_embed_shift", o->rstring_embed_shift},
	    {"rarray_heap_ptr", o->rarray_heap_ptr},
	    {"rarray_embed", o->rarray_embed},
	    {"rarray_embed_flag", o->rarray_embed_flag},
	    {"t_string", o->t_string},
	    {"t_array", o->t_array},
	    {"fits", 1},
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (!strcmp(f[i].name, name))
			return f[i].value;
	return -1;
}

/* The 3.1 entry is the installed Ruby's layout, field by field. */
static const void *find_entry(uint16_t version)
{
	return ruby_offsets_find(version);
}

static void test_layout(void)
{
	char cmd[2048];

	/* the header's inline functions call into libruby: linked against it */
	snprintf(
	    cmd, sizeof(cmd),
	    "ruby -e 'c = RbConfig::CONFIG; print \"-include \", "
	    "File.join(c[\"rubyarchhdrdir\"], \"rb_mjit_min_header-#{RUBY_VERSION}.h\"), \" \", "
	    "\"-L\", c[\"archlibdir\"], \" \", c[\"LIBRUBYARG_SHARED\"]' > $B/flags && "
	    "cc -w -O1 -DRUBY_CFP_READ_CHECK=%d tests/progs/ruby/layout.c $(cat $B/flags) "
	    "-o $B/layout && $B/layout",
	    RUBY_CFP_READ);
	layout_check("ruby", cmd, find_entry, entry_field, 39);
}

/*
 * The same entry against Debian's arm64 headers (ruby3.1-dev:arm64, unpacked
 * for the arm64 guest: vm_core.h's structures have the same layout there),
 * the program cross-built against the arm64 libruby and run under
 * qemu-aarch64 with the unpacked libraries.
 */
static void test_layout_arm64(void)
{
	const char *out = getenv("OUT") ? getenv("OUT") : "build";
	char cmd[2 * PATH_MAX + 1024], debs[PATH_MAX];

	snprintf(debs, sizeof(debs), "%s/arm64-guest/rt", out);
	snprintf(
	    cmd, sizeof(cmd),
	    "D=%s; L=$D/usr/lib/aarch64-linux-gnu; aarch64-linux-gnu-gcc -w -O1 "
	    "-DRUBY_CFP_READ_CHECK=%d tests/progs/ruby/layout.c -include "
	    "$D/usr/include/aarch64-linux-gnu/ruby-3.1.0/rb_mjit_min_header-3.1.2.h "
	    "$L/libruby-3.1.so.3.1 -Wl,-rpath-link,$L:$D/lib/aarch64-linux-gnu -o $B/layout && "
	    "QEMU_LD_PREFIX=/usr/aarch64-linux-gnu LD_LIBRARY_PATH=$L:$D/lib/aarch64-linux-gnu "
	    "qemu-aarch64 $B/layout",
	    debs, RUBY_CFP_READ);
	layout_check("ruby (arm64)", cmd, find_entry, entry_field, 39);
}

/*
 * Debian's libruby: its version, ruby_current_ec's offset in the TLS block
 * (its symbol's value) and the GOT slot of its DTPMOD64 relocation, as
 * readelf gives them; a program without Ruby is not one.
 */
static void test_detect(void)
{
	struct ruby_object o;
	unsigned long long slot = 0, value = 0;
	int fd = open(LIBRUBY, O_RDONLY | O_CLOEXEC), rc;
	FILE *rd;

	CHECK(fd >= 0, "%s missing", LIBRUBY);
	if (fd < 0)
		return;
	rc = ruby_elf_info(fd, &o);
	close(fd);
	rd = popen("readelf -rW " LIBRUBY " | awk '$3 == \"R_X86_64_DTPMOD64\" && "
		   "$5 == \"ruby_current_ec\" {print $1}'; readelf -sW --dyn-syms " LIBRUBY
		   " | awk '$8 == \"ruby_current_ec\" {print $2; exit}'",
		   "r");
	CHECK(rd && fscanf(rd, "%llx %llx", &slot, &value) == 2,
	      "readelf found no DTPMOD64 relocation or symbol for ruby_current_ec");
	if (rd)
		pclose(rd);
	CHECK(rc == 0 && o.version == 0x0301 && o.tls_slot == slot && !o.tls_desc &&
		  o.tls_offset == value,
	      "libruby: rc %d, version %#x, module id slot %#llx (readelf %#llx), offset %llu "
	      "(readelf %llu)",
	      rc, o.version, (unsigned long long)o.tls_slot, slot, (unsigned long long)o.tls_offset,
	      value);
	fd = open("/bin/sh", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && ruby_elf_info(fd, &o) < 0, "/bin/sh taken for a libruby");
	if (fd >= 0)
		close(fd);
}

/*
 * Debian's arm64 libruby (unpacked for the arm64 guest): its accesses to
 * ruby_current_ec go through a TLS descriptor (aarch64's default dialect),
 * whose GOT pair is the slot, as readelf's R_AARCH64_TLSDESC against the
 * symbol gives it; the variable's offset, the symbol's value.
 */
static void test_detect_arm64(void)
{
	const char *out = getenv("OUT") ? getenv("OUT") : "build";
	char lib[PATH_MAX], cmd[2 * PATH_MAX + 256];
	unsigned long long slot = 0, value = 0;
	struct ruby_object o;
	int fd, rc;
	FILE *rd;

	snprintf(lib, sizeof(lib), "%s/arm64-guest/rt/usr/lib/aarch64-linux-gnu/libruby-3.1.so.3.1",
		 out);
	fd = open(lib, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0, "%s missing (make test unpacks it)", lib);
	if (fd < 0)
		return;
	rc = ruby_elf_info(fd, &o);
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "readelf -rW %s | awk '$3 == \"R_AARCH64_TLSDESC\" && $5 == \"ruby_current_ec\" "
		 "{print $1}'; readelf -sW --dyn-syms %s | awk '$8 == \"ruby_current_ec\" {print "
		 "$2; exit}'",
		 lib, lib);
	rd = popen(cmd, "r");
	CHECK(rd && fscanf(rd, "%llx %llx", &slot, &value) == 2,
	      "readelf found no TLSDESC relocation or symbol for ruby_current_ec");
	if (rd)
		pclose(rd);
	CHECK(rc == 0 && o.version == 0x0301 && o.tls_slot == slot && o.tls_desc &&
		  o.tls_offset == value,
	      "arm64 libruby: rc %d, version %#x, descriptor slot %#llx (readelf %#llx, desc %d), "
	      "offset %llu (readelf %llu)",
	      rc, o.version, (unsigned long long)o.tls_slot, slot, o.tls_desc,
	      (unsigned long long)o.tls_offset, value);
}

/*
 * elf_tls_slot on the four global-dynamic relocations: a thread-local
 * variable of a library built by each compiler in each TLS dialect (x86-64's
 * gnu and gnu2, arm64's default descriptors and trad), the slot readelf
 * gives for the variable's DTPMOD64 or TLSDESC relocation.
 */
static void test_tls_dialects(void)
{
	static const struct {
		const char *cc, *flags, *reloc;
		bool desc;
	} builds[] = {
	    {"cc", "", "R_X86_64_DTPMOD64", false},
	    {"cc", "-mtls-dialect=gnu2", "R_X86_64_TLSDESC", true},
	    {"aarch64-linux-gnu-gcc", "", "R_AARCH64_TLSDESC", true},
	    {"aarch64-linux-gnu-gcc", "-mtls-dialect=trad", "R_AARCH64_TLS_DTPMOD64", false},
	};
	char dir[] = "/tmp/cfiprof-ruby-tls.XXXXXX", src[64], lib[64], cmd[512];
	FILE *f;

	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(src, sizeof(src), "%s/tls.c", dir);
	f = fopen(src, "we");
	CHECK(f && fputs("__thread long tls_var;\nlong get(void) { return tls_var; }\n", f) >= 0 &&
		  !fclose(f),
	      "cannot write %s", src);
	for (size_t i = 0; i < sizeof(builds) / sizeof(builds[0]); i++) {
		unsigned long long want = 0;
		uint64_t left = 1 << 20, slot = 0;
		bool desc = !builds[i].desc;
		int fd;
		Elf *e;

		snprintf(lib, sizeof(lib), "%s/tls%zu.so", dir, i);
		snprintf(cmd, sizeof(cmd), "%s -O2 -fPIC -shared %s %s -o %s", builds[i].cc,
			 builds[i].flags, src, lib);
		CHECK(system(cmd) == 0, "%s", cmd);
		snprintf(cmd, sizeof(cmd),
			 "readelf -rW %s | awk '$3 == \"%s\" && $5 == \"tls_var\" {print $1}'", lib,
			 builds[i].reloc);
		f = popen(cmd, "r");
		CHECK(f && fscanf(f, "%llx", &want) == 1, "readelf: no %s for tls_var in %s",
		      builds[i].reloc, lib);
		if (f)
			pclose(f);
		fd = open(lib, O_RDONLY | O_CLOEXEC);
		e = fd >= 0 ? elf_read_begin(fd) : NULL;
		if (e)
			slot = elf_tls_slot(e, "tls_var", &left, &desc);
		elf_end(e);
		if (fd >= 0)
			close(fd);
		CHECK(want && slot == want && desc == builds[i].desc,
		      "%s %s: slot %#llx (readelf's %s at %#llx), descriptor %d", builds[i].cc,
		      builds[i].flags, (unsigned long long)slot, builds[i].reloc, want, desc);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "%s", cmd);
}

/*
 * global_symbols in Debian's libruby, x86-64 and arm64, as binutils'
 * disassembler decodes the same code: x86-64's first rip-relative cmp of
 * rb_id2str's jmp target (objdump's "# ADDR"), arm64's first adrp + ldr w
 * pair of its b target.  The names it gives are test_ruby_frames' (C
 * methods named "times", "each").
 */
static void test_symbols(void)
{
	static const char x86_cmd[] =
	    "L=" LIBRUBY
	    "; A=$(readelf -sW --dyn-syms $L | awk '$8==\"rb_id2str\"{print $2; exit}'); "
	    "T=$(objdump -d --no-show-raw-insn --start-address=0x$A --stop-address=$(printf '0x%x' "
	    "$((0x$A+32))) $L | awk '$2==\"jmp\"{print $3; exit}'); objdump -d --no-show-raw-insn "
	    "--start-address=0x$T --stop-address=$(printf '0x%x' $((0x$T+128))) $L | awk "
	    "'$2==\"cmp\" "
	    "&& /\\(%rip\\)/ {for (i = 1; i <= NF; i++) if ($i == \"#\") {print $(i+1), 0; exit}}'";
	const char *out = getenv("OUT") ? getenv("OUT") : "build";
	char a64[PATH_MAX], cmd[4 * PATH_MAX];
	const char *libs[2] = {LIBRUBY, a64};

	snprintf(a64, sizeof(a64), "%s/arm64-guest/rt/usr/lib/aarch64-linux-gnu/libruby-3.1.so.3.1",
		 out);
	for (int k = 0; k < 2; k++) {
		unsigned long long base = 0, off = 0;
		struct ruby_object o;
		int fd = open(libs[k], O_RDONLY | O_CLOEXEC), rc = -1;
		FILE *p;

		if (k == 0)
			snprintf(cmd, sizeof(cmd), "%s", x86_cmd);
		else
			snprintf(
			    cmd, sizeof(cmd),
			    "L=%s; A=$(aarch64-linux-gnu-readelf -sW --dyn-syms $L | awk "
			    "'$8==\"rb_id2str\"{print $2; exit}'); T=$(aarch64-linux-gnu-objdump "
			    "-d "
			    "--no-show-raw-insn --start-address=0x$A --stop-address=$(printf "
			    "'0x%%x' "
			    "$((0x$A+32))) $L | awk '$2==\"b\"{print $3; exit}'); "
			    "aarch64-linux-gnu-objdump -d --no-show-raw-insn --start-address=0x$T "
			    "--stop-address=$(printf '0x%%x' $((0x$T+128))) $L | awk "
			    "'$2==\"adrp\"{r=$3; sub(\",\",\"\",r); page[r]=$4} $2==\"ldr\" && $3 "
			    "~ "
			    "/^w/ {split($4,a,\"[\\\\[,]\"); o=$5; gsub(/[#\\]]/,\"\",o); if "
			    "(a[2] in page) {print page[a[2]], o; exit}}'",
			    a64);
		p = popen(cmd, "r");
		CHECK(p && fscanf(p, "%llx %llu", &base, &off) == 2, "objdump found no load in %s",
		      libs[k]);
		if (p)
			pclose(p);
		if (fd >= 0) {
			rc = ruby_elf_info(fd, &o);
			close(fd);
		}
		printf("  %s: global_symbols at %#llx, objdump's %#llx\n", libs[k],
		       rc ? 0ull : (unsigned long long)o.symbols, base + off);
		CHECK(rc == 0 && o.symbols && o.symbols == base + off,
		      "%s: global_symbols %#llx, objdump's %#llx", libs[k],
		      rc ? 0ull : (unsigned long long)o.symbols, base + off);
	}
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_layout);
	RUN_TEST(test_layout_arm64);
	RUN_TEST(test_detect);
	RUN_TEST(test_detect_arm64);
	RUN_TEST(test_tls_dialects);
	RUN_TEST(test_symbols);
	return HARNESS_DONE();
}
