// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Issue 26, items 2 and 3: the files the readers of ELF objects open belong
 * to whoever made them (elf/elf_read.h).
 *   - truncated once opened: the table build, the symbolizer, the build-id,
 *     Python detection and the debug file search return an error, counted as
 *     "truncated"; no SIGBUS (a mapped file cut under its reader kills the
 *     process: each case runs in a child, whose death is the failure);
 *   - a SHF_COMPRESSED .debug_frame declaring 256 MiB: refused before it is
 *     inflated (the child's peak RSS, getrusage);
 *   - a .gnu_debuglink candidate of 4 GiB (sparse): refused from its size,
 *     not read for its CRC (the child's /proc/self/io rchar and peak RSS).
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/tmpdir.h"
#include "elf/build_id.h"
#include "elf/debug_file.h"
#include "elf/elf_read.h"
#include "tables/cfi_table.h"
#include "user/symbolize/sym_cache.h"
#include "user/runtimes/python/python_detect.h"

#define BUILD_ID "5a0123456789abcdef0123456789abcdef012345"
#define CC	 "gcc -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables"
/* what the crafted .debug_frame declares it inflates to: 4 times the default budget */
#define INFLATED (256u << 20)

static const char prog_c[] =
    "#define F __attribute__((noinline, used))\n"
    "F int leaf(int x) { return x * 3; }\n"
    "F int nonleaf(int x) { return leaf(x) + leaf(x + 1) + 1; }\n"
    "int main(int argc, char **argv) { (void)argv; return nonleaf(argc); }\n";

/* ---- truncation the moment a reader opens the file ---- */

static struct {
	dev_t dev;
	ino_t ino;
	char path[PATH_MAX];
	bool armed;
} cut;

/* Truncates @path to 64 bytes (its ELF header) when a reader next opens it. */
static void arm_cut(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return;
	cut.dev = st.st_dev;
	cut.ino = st.st_ino;
	snprintf(cut.path, sizeof(cut.path), "%s", path);
	cut.armed = true;
}

/*
 * Every reader opens with elf_begin: this one, which cuts the armed file just
 * after libelf has it, before any section or symbol is read. A mapping of
 * it would now fault (SIGBUS) at the first byte past 64.
 */
Elf *elf_begin(int fd, Elf_Cmd cmd, Elf *ref)
{
	static Elf *(*real)(int, Elf_Cmd, Elf *);
	struct stat st;
	Elf *e;

	if (!real)
		real = (Elf * (*)(int, Elf_Cmd, Elf *)) dlsym(RTLD_NEXT, "elf_begin");
	e = real(fd, cmd, ref);
	if (cut.armed && fd >= 0 && !fstat(fd, &st) && st.st_dev == cut.dev &&
	    st.st_ino == cut.ino) {
		cut.armed = false;
		if (truncate(cut.path, 64) < 0)
			perror("truncate");
	}
	return e;
}

/* What a child saw, for the parent to check (children's CHECKs do not count). */
struct outcome {
	int rc;
	uint64_t truncated, inflate_refused, debug_refused;
	long rss_kb;	/* peak RSS growth over the call (a mapping's pages included) */
	uint64_t rchar; /* bytes read by read/pread over the call */
	char msg[192];
};

static struct outcome *out;

static uint64_t io_rchar(void)
{
	char *s = slurp("/proc/self/io"), *p;
	uint64_t v = 0;

	p = s ? strstr(s, "rchar:") : NULL;
	if (p)
		v = strtoull(p + 6, NULL, 10);
	free(s);
	return v;
}

/*
 * Runs @fn in a child; true when it ended normally. A SIGBUS there is the
 * bug: reported, and the rest of the test goes on.
 */
static bool in_child(const char *what, void (*fn)(void))
{
	int st = 0;
	pid_t pid;

	memset(out, 0, sizeof(*out));
	out->rc = INT_MIN;
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		fn();
		_exit(0);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		st = -1;
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the reader died: %s", what,
	      WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "did not exit 0");
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void child_table(void)
{
	uint64_t before = elf_read_refused_total(ELF_READ_TRUNCATED);
	struct cfi_diag diag = {0};
	struct cfi_table *t = NULL;
	int fd = open(tpath("cut"), O_RDONLY);

	arm_cut(tpath("cut"));
	out->rc = cfi_table_build_fd(fd, NULL, &t, &diag);
	out->truncated = elf_read_refused_total(ELF_READ_TRUNCATED) - before;
	snprintf(out->msg, sizeof(out->msg), "%s", diag.count ? diag.msg[diag.count - 1] : "");
	cfi_table_free(t);
}

static void child_symbols(void)
{
	uint64_t before = elf_read_refused_total(ELF_READ_TRUNCATED);
	struct sym_cache *c = sym_cache_new();
	int fd = open(tpath("cut"), O_RDONLY);

	arm_cut(tpath("cut"));
	out->rc = sym_cache_get(c, "cut", tpath("cut"), fd, 0) ? 0 : -1;
	out->truncated = elf_read_refused_total(ELF_READ_TRUNCATED) - before;
	sym_cache_free(c);
}

static void child_build_id(void)
{
	char id[ELF_BUILD_ID_HEX_LEN];
	int fd = open(tpath("cut"), O_RDONLY);

	arm_cut(tpath("cut"));
	out->rc = elf_build_id_hex_fd(fd, id, sizeof(id));
}

static void child_python(void)
{
	uint64_t before = elf_read_refused_total(ELF_READ_TRUNCATED), vaddr;
	int fd = open(tpath("cut"), O_RDONLY);
	uint16_t version;

	arm_cut(tpath("cut"));
	out->rc = python_elf_info(fd, tpath("cut"), &version, &vaddr);
	out->truncated = elf_read_refused_total(ELF_READ_TRUNCATED) - before;
}

/* The object is intact; its debug file (by build-id) is cut once opened. */
static void child_debug_file(void)
{
	uint64_t before = elf_read_refused_total(ELF_READ_TRUNCATED);
	struct cfi_build_opts opts = {.debug_root = tpath("root")};
	struct cfi_diag diag = {0};
	struct cfi_table *t = NULL;
	char dbg[256];

	snprintf(dbg, sizeof(dbg), "%s/root/.build-id/%.2s/%s.debug", tmpdir, BUILD_ID,
		 BUILD_ID + 2);
	arm_cut(dbg);
	out->rc = cfi_table_build_file(tpath("stripped"), &opts, &t, &diag);
	out->truncated = elf_read_refused_total(ELF_READ_TRUNCATED) - before;
	/* the object's own .eh_frame still builds; the cut file gave nothing */
	if (t && (t->stats.sources & (1 << CFI_SRC_DEBUG_FRAME_SEP)))
		out->rc = 1;
	cfi_table_free(t);
}

static bool fresh_copy(const char *from)
{
	return shell_ok("cp %s %s", from, tpath("cut"));
}

static void test_truncated(void)
{
	if (!fresh_copy(tpath("prog")) || !in_child("table build", child_table))
		goto symbols;
	CHECK(out->rc == CFI_ERR_IO && out->truncated == 1,
	      "table build of a file cut once opened: %s (%s), %" PRIu64 " counted truncated",
	      cfi_strerror(out->rc), out->msg, out->truncated);
symbols:
	if (!fresh_copy(tpath("prog")) || !in_child("symbolizer", child_symbols))
		goto build_id;
	CHECK(out->rc < 0 && out->truncated == 1,
	      "symbolizer on a file cut once opened: rc %d, %" PRIu64 " counted truncated", out->rc,
	      out->truncated);
build_id:
	if (!fresh_copy(tpath("prog")) || !in_child("build-id", child_build_id))
		goto python;
	CHECK(out->rc < 0, "build-id of a file cut once opened: rc %d", out->rc);
python:
	if (!fresh_copy(tpath("prog")) || !in_child("python detect", child_python))
		goto debug_file;
	CHECK(out->rc < 0 && out->truncated == 1,
	      "python detection on a file cut once opened: rc %d, %" PRIu64 " counted truncated",
	      out->rc, out->truncated);
debug_file:
	if (!shell_ok("cd %s && mkdir -p root/.build-id/%.2s && objcopy --only-keep-debug prog "
		      "root/.build-id/%.2s/%s.debug",
		      tmpdir, BUILD_ID, BUILD_ID, BUILD_ID + 2) ||
	    !in_child("debug file", child_debug_file))
		return;
	CHECK(out->rc == CFI_OK && out->truncated == 1,
	      "debug file cut once opened: rc %d (1: its rows were used), %" PRIu64
	      " counted truncated",
	      out->rc, out->truncated);
}

/* ---- a compressed .debug_frame declaring more than the budget ---- */

/* Chdr + zlib stream of @n zero bytes (1032:1 at best: 256 MiB is ~260 KiB). */
static unsigned char *zeros_deflated(uint64_t n, size_t *len)
{
	static unsigned char zero[1 << 16];
	size_t cap = sizeof(Elf64_Chdr) + n / 1000 + 65536;
	unsigned char *buf = malloc(cap);
	Elf64_Chdr ch = {.ch_type = ELFCOMPRESS_ZLIB, .ch_size = n, .ch_addralign = 8};
	z_stream z = {0};
	int flush;

	if (!buf || deflateInit(&z, Z_BEST_COMPRESSION) != Z_OK) {
		free(buf);
		return NULL;
	}
	memcpy(buf, &ch, sizeof(ch));
	z.next_out = buf + sizeof(ch);
	z.avail_out = (uInt)(cap - sizeof(ch));
	do {
		uint64_t chunk = n < sizeof(zero) ? n : sizeof(zero);

		n -= chunk;
		z.next_in = zero;
		z.avail_in = (uInt)chunk;
		flush = n ? Z_NO_FLUSH : Z_FINISH;
		if (deflate(&z, flush) == Z_STREAM_ERROR || (z.avail_in && !z.avail_out))
			break;
	} while (flush != Z_FINISH);
	*len = cap - z.avail_out;
	deflateEnd(&z);
	return buf;
}

/* @src with its .debug_frame replaced by @blob (compressed), appended at the end. */
static bool put_compressed(const char *src, const char *dst, const unsigned char *blob,
			   size_t blob_len)
{
	size_t len, off, i;
	char *img = slurp_len(src, &len), *names;
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh;
	bool ok = false;
	FILE *f;

	if (!img || len < sizeof(*eh) || eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(*sh) > len)
		goto out;
	sh = (Elf64_Shdr *)(img + eh->e_shoff);
	names = img + sh[eh->e_shstrndx].sh_offset;
	off = (len + 7) & ~(size_t)7;
	for (i = 0; i < eh->e_shnum; i++) {
		if (strcmp(names + sh[i].sh_name, ".debug_frame"))
			continue;
		sh[i].sh_offset = off;
		sh[i].sh_size = blob_len;
		sh[i].sh_flags |= SHF_COMPRESSED;
		sh[i].sh_addralign = 8;
		f = fopen(dst, "w");
		ok = f && fwrite(img, 1, len, f) == len &&
		     fwrite("\0\0\0\0\0\0\0", 1, off - len, f) == off - len &&
		     fwrite(blob, 1, blob_len, f) == blob_len;
		ok = f && !fclose(f) && ok;
		break;
	}
out:
	free(img);
	return ok;
}

static void child_inflate(void)
{
	uint64_t before = elf_read_refused_total(ELF_READ_INFLATE_OVER_BUDGET);
	struct cfi_diag diag = {0};
	struct cfi_table *t = NULL;
	struct rusage r0, r1;

	getrusage(RUSAGE_SELF, &r0);
	out->rc = cfi_table_build_file(tpath("zframe"), NULL, &t, &diag);
	getrusage(RUSAGE_SELF, &r1);
	out->rss_kb = r1.ru_maxrss - r0.ru_maxrss;
	out->inflate_refused = elf_read_refused_total(ELF_READ_INFLATE_OVER_BUDGET) - before;
	snprintf(out->msg, sizeof(out->msg), "%s", diag.count ? diag.msg[diag.count - 1] : "");
	cfi_table_free(t);
}

static void test_compressed_over_budget(void)
{
	unsigned char *blob;
	struct stat st;
	size_t len = 0;

	blob = zeros_deflated(INFLATED, &len);
	CHECK(blob && put_compressed(tpath("prog"), tpath("zframe"), blob, len),
	      "cannot craft the compressed .debug_frame");
	free(blob);
	if (!blob || stat(tpath("zframe"), &st) < 0)
		return;
	/* readelf, not us: the section is compressed and declares 256 MiB */
	CHECK(shell_ok("readelf -SW %s | grep -q ' .debug_frame .* C '", tpath("zframe")),
	      "readelf does not see a compressed .debug_frame");
	if (!in_child("compressed .debug_frame", child_inflate))
		return;
	CHECK(out->rc == CFI_ERR_BUDGET && out->inflate_refused == 1,
	      "a .debug_frame inflating to 256 MiB (%lld bytes on disk): %s (%s), %" PRIu64
	      " refused",
	      (long long)st.st_size, cfi_strerror(out->rc), out->msg, out->inflate_refused);
	/*
	 * Refused from its header: the compressed bytes (~260 KiB) are read, and
	 * nothing near the budget (64 MiB) is allocated; inflating it is 256 MiB.
	 */
	CHECK(out->rss_kb < 64 * 1024, "peak RSS grew %ld KiB over the build", out->rss_kb);
}

/* ---- a 4 GiB debuglink candidate ---- */

static void child_debuglink(void)
{
	uint64_t before = debug_file_refused_total(), rchar0;
	struct cfi_build_opts opts = {.debug_root = tpath("none")};
	struct cfi_diag diag = {0};
	struct cfi_table *t = NULL;
	struct rusage r0, r1;
	unsigned int i;

	rchar0 = io_rchar();
	getrusage(RUSAGE_SELF, &r0);
	out->rc = cfi_table_build_file(tpath("big/noid.linked"), &opts, &t, &diag);
	getrusage(RUSAGE_SELF, &r1);
	out->rchar = io_rchar() - rchar0;
	out->rss_kb = r1.ru_maxrss - r0.ru_maxrss;
	out->debug_refused = debug_file_refused_total() - before;
	for (i = 0; i < diag.count && i < CFI_DIAG_KEEP; i++)
		if (strstr(diag.msg[i], "noid.debug"))
			snprintf(out->msg, sizeof(out->msg), "%s", diag.msg[i]);
	cfi_table_free(t);
}

static void test_debuglink_huge(void)
{
	if (!shell_ok("cd %s && mkdir -p big/.debug && " CC " -Wl,--build-id=none -o big/noid "
		      "prog.c && objcopy --only-keep-debug big/noid big/.debug/noid.debug && "
		      "objcopy --strip-all --add-gnu-debuglink=big/.debug/noid.debug big/noid "
		      "big/noid.linked && truncate -s 4G big/.debug/noid.debug",
		      tmpdir)) {
		CHECK(0, "cannot build the 4 GiB debuglink candidate");
		return;
	}
	if (!in_child("4 GiB debuglink", child_debuglink))
		return;
	CHECK(out->rc == CFI_OK && out->debug_refused >= 1 && strstr(out->msg, "too large"),
	      "4 GiB debuglink candidate: %s, %" PRIu64 " refused (%s)", cfi_strerror(out->rc),
	      out->debug_refused, out->msg);
	/*
	 * Its headers and the object are a few KiB of reads; its CRC would be
	 * 4 GiB of reads, or of a mapping's pages (resident while read: the
	 * peak RSS; the kernel maps them in large folios, so page faults would
	 * undercount).
	 */
	CHECK(out->rchar + (uint64_t)out->rss_kb * 1024 < (64u << 20),
	      "reading the refused candidate cost %" PRIu64 " bytes read, peak RSS +%ld KiB",
	      out->rchar, out->rss_kb);
}

int main(int argc, char **argv)
{
	FILE *f;

	harness_init(argc, argv);
	out = mmap(NULL, sizeof(*out), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/cfireadsXXXXXX");
	if (out == MAP_FAILED || !mkdtemp(tmpdir)) {
		perror("setup");
		return 2;
	}
	f = fopen(tpath("prog.c"), "w");
	if (!f || fputs(prog_c, f) < 0 || fclose(f) ||
	    !shell_ok("cd %s && " CC " -Wl,--build-id=0x%s -o prog prog.c && "
		      "objcopy --strip-all prog stripped",
		      tmpdir, BUILD_ID)) {
		perror("prog");
		return 2;
	}
	RUN_TEST(test_truncated);
	RUN_TEST(test_compressed_over_budget);
	RUN_TEST(test_debuglink_huge);
	if (!getenv("KEEP"))
		shell_ok("rm -rf %s", tmpdir);
	return HARNESS_DONE();
}
