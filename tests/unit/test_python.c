// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Python frames without a kernel: the offsets table against CPython's own
 * headers (offsetof over the installed python3.11-dev internal headers), the
 * 3.11 location-table decoder against the interpreter's co_positions() over
 * the standard library, interpreter detection on Debian's python3.11, and
 * naming a code object laid out in this process's memory (and refusing
 * garbage where one should be).
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_code.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>

#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <linux/userfaultfd.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/harness.h"
#include "user/runtimes/python/python_names.h"
#include "user/track/proc_tracker.h"
#include "user/runtimes/python/python_detect.h"
#include "user/runtimes/python/python_offsets.h"

#define PYTHON "/usr/bin/python3.11"

#define SAME(field, expr)                                                                          \
	CHECK(o->field == (expr), #field ": table %u, headers %zu", (unsigned int)o->field,        \
	      (size_t)(expr))

/* The 3.11 entry is CPython 3.11's layout, field by field (headers of the installed 3.11). */
static void test_offsets_table(void)
{
	const struct python_offsets *o = python_offsets_find(0x030b), *all;
	unsigned int n, i;

	CHECK(PY_VERSION_HEX >> 16 == 0x030b, "the headers are 3.11's: %x", PY_VERSION_HEX);
	if (!o) {
		CHECK(0, "no 3.11 entry");
		return;
	}
	SAME(bpf.runtime_interp_head, offsetof(_PyRuntimeState, interpreters.head));
	SAME(bpf.interp_next, offsetof(PyInterpreterState, next));
	SAME(bpf.interp_threads_head, offsetof(PyInterpreterState, threads.head));
	SAME(bpf.tstate_next, offsetof(PyThreadState, next));
	SAME(bpf.tstate_native_tid, offsetof(PyThreadState, native_thread_id));
	SAME(bpf.tstate_frame, offsetof(PyThreadState, cframe));
	SAME(bpf.cframe_current_frame, offsetof(_PyCFrame, current_frame));
	SAME(bpf.frame_code, offsetof(_PyInterpreterFrame, f_code));
	SAME(bpf.frame_previous, offsetof(_PyInterpreterFrame, previous));
	SAME(bpf.frame_instr, offsetof(_PyInterpreterFrame, prev_instr));
	SAME(bpf.frame_is_entry, offsetof(_PyInterpreterFrame, is_entry));
	SAME(bpf.frame_owner, offsetof(_PyInterpreterFrame, owner));
	SAME(bpf.frame_globals, offsetof(_PyInterpreterFrame, f_globals));
	SAME(owner_generator, FRAME_OWNED_BY_GENERATOR);
	SAME(code_type, offsetof(PyObject, ob_type));
	SAME(code_bytecode, offsetof(PyCodeObject, co_code_adaptive));
	SAME(code_firstlineno, offsetof(PyCodeObject, co_firstlineno));
	SAME(code_firsttraceable, offsetof(PyCodeObject, _co_firsttraceable));
	SAME(code_filename, offsetof(PyCodeObject, co_filename));
	SAME(code_qualname, offsetof(PyCodeObject, co_qualname));
	SAME(code_linetable, offsetof(PyCodeObject, co_linetable));
	SAME(str_length, offsetof(PyASCIIObject, length));
	SAME(str_ascii_data, sizeof(PyASCIIObject));
	SAME(str_compact_data, sizeof(PyCompactUnicodeObject));
	SAME(bytes_size, offsetof(PyVarObject, ob_size));
	SAME(bytes_data, offsetof(PyBytesObject, ob_sval));
	/* the state bit field follows the hash: interned:2 kind:3 compact:1 ascii:1 ready:1 */
	SAME(str_state, offsetof(PyASCIIObject, hash) + sizeof(Py_hash_t));
	CHECK(sizeof(_PyInterpreterFrame) <= PY_FRAME_READ + sizeof(PyObject *),
	      "the fields the walk reads lie in its first PY_FRAME_READ bytes");
	/* every entry's BPF offsets lie where the kernel reads them */
	all = python_offsets_all(&n);
	for (i = 0; i < n; i++) {
		const struct cfi_python_proc *b = &all[i].bpf;

		bool frame_object = b->flags & PY_FLAG_FRAME_OBJECT;

		/* a frame object's f_lasti is read apart (an int past them), its owner none */
		CHECK(b->frame_code <= PY_FRAME_READ - 8 &&
			  b->frame_previous <= PY_FRAME_READ - 8 &&
			  (frame_object || b->frame_instr <= PY_FRAME_READ - 8) &&
			  (b->frame_owner < PY_FRAME_READ || b->frame_owner == PY_OFF_NONE) &&
			  b->frame_globals <= PY_FRAME_READ - 8 && b->version == all[i].version,
		      "entry %s", all[i].name);
	}
	CHECK(!python_offsets_find(0x0307) && !python_offsets_find(0x0300) &&
		  !python_offsets_find(0x030e),
	      "3.7 and 3.14 are not supported");
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/*
 * For every code object of a few large standard modules, the interpreter
 * prints its first line, its location table and the line of each code unit
 * (co_positions): the decoder must agree at every unit.
 */
static const char oracle[] =
    "import asyncio.base_events, typing, argparse, inspect, json.decoder, email.message, "
    "collections, dataclasses, enum, types\n"
    "def walk(c):\n"
    "    yield c\n"
    "    for k in c.co_consts:\n"
    "        if isinstance(k, types.CodeType):\n"
    "            yield from walk(k)\n"
    "for m in (asyncio.base_events, typing, argparse, inspect, json.decoder, email.message, "
    "collections, dataclasses, enum):\n"
    "    src = open(m.__file__).read()\n"
    "    for c in walk(compile(src, m.__file__, 'exec')):\n"
    "        print('T', c.co_firstlineno, c.co_linetable.hex() or '-')\n"
    "        print('L', ' '.join(str(p[0] or 0) for p in c.co_positions()))\n";

static void test_linetable(void)
{
	char cmd[4096], *line = NULL, *tok, *save;
	size_t cap = 0, len = 0, i;
	uint8_t *tab = NULL;
	int first = 0, codes = 0, units = 0, bad = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s -c \"$PYORACLE\"", PYTHON);
	setenv("PYORACLE", oracle, 1);
	f = popen(cmd, "r");
	if (!f) {
		CHECK(0, "cannot run %s", PYTHON);
		return;
	}
	while (getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = 0;
		if (line[0] == 'T') {
			char *hex = strrchr(line, ' ') + 1;

			first = atoi(line + 2);
			free(tab);
			len = strcmp(hex, "-") ? strlen(hex) / 2 : 0;
			tab = malloc(len + 1);
			for (i = 0; tab && i < len; i++)
				tab[i] =
				    (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
			codes++;
			continue;
		}
		if (line[0] != 'L' || !tab)
			continue;
		i = 0;
		for (tok = strtok_r(line + 1, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			uint32_t want = (uint32_t)atoi(tok),
				 got = python_linetable_line(tab, len, first, (uint32_t)i);

			if (got != want && bad++ < 5)
				CHECK(0, "code %d (first line %d) unit %zu: line %u, decoded %u",
				      codes, first, i, want, got);
			i++;
			units++;
		}
	}
	free(line);
	free(tab);
	CHECK(pclose(f) == 0, "%s exited with an error", PYTHON);
	CHECK(codes > 1000 && units > 100000, "%d code objects, %d code units compared", codes,
	      units);
	CHECK(bad == 0, "%d units decoded wrongly", bad);
	printf("  %d code objects, %d code units: decoder == co_positions()\n", codes, units);
	/* garbage: a table that starts mid-entry, truncated varints, nothing at all */
	{
		static const uint8_t mid[] = {0x05, 0x80}, trunc[] = {0xf0 | 0x80, 0x41};

		CHECK(python_linetable_line(mid, sizeof(mid), 10, 0) == 0, "mid-entry table");
		CHECK(python_linetable_line(trunc, sizeof(trunc), 10, 0) == 0, "truncated varint");
		CHECK(python_linetable_line(NULL, 0, 10, 0) == 0, "empty table");
	}
}

/* Debian's python3.11: version from Py_Version, _PyRuntime where nm says. */
static void test_detect_binary(void)
{
	char out[128] = "";
	uint64_t runtime, want = 0;
	uint16_t version;
	FILE *f = popen("nm -D " PYTHON " | awk '$3 == \"_PyRuntime\" {print $1}'", "r");
	int fd;

	if (f) {
		if (fgets(out, sizeof(out), f))
			want = strtoull(out, NULL, 16);
		pclose(f);
	}
	fd = open(PYTHON, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && python_elf_info(fd, PYTHON, &version, &runtime) == 0, "reading %s",
	      PYTHON);
	CHECK(version == 0x030b, "version %#x", version);
	CHECK(want && runtime == want, "_PyRuntime at %#lx, nm says %#lx", (unsigned long)runtime,
	      (unsigned long)want);
	if (fd >= 0)
		close(fd);
	fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && python_elf_info(fd, "/bin/true", &version, &runtime) == 0 && !version &&
		  !runtime,
	      "/bin/true is no interpreter");
	if (fd >= 0)
		close(fd);
}

/* A compact ASCII str as 3.11 lays it out: header, then the characters. */
struct fake_str {
	uint8_t b[48 + 64];
};

static void fake_str(struct fake_str *s, const char *text)
{
	uint64_t n = strlen(text);

	memset(s, 0, sizeof(*s));
	memcpy(s->b + 16, &n, 8);
	s->b[32] = 1 << 2 | 1 << 5 | 1 << 6 | 1 << 7; /* kind 1, compact, ascii, ready */
	memcpy(s->b + 48, text, n);
}

/*
 * A code object laid out in this process's memory is named as the
 * interpreter would; garbage where one should be is refused and counted,
 * never a crash.  This process stands in for a python3.11 one.
 */
static void test_name_code_object(void)
{
	static struct fake_str qual, file;
	/* from line 39: +0 for unit 0 (no columns, 13), +2 for units 1-2 (one-line form, 12), +1
	 * (13) */
	static const uint8_t table[] = {0x80 | 13 << 3 | 0, 0x00, 0x80 | 12 << 3 | 1, 0, 0,
					0x80 | 13 << 3 | 3, 0x02};
	static uint8_t bytes[32 + sizeof(table)], code[256], junk[256];
	struct proc_mapping m;
	struct python_detect *pd = python_detect_new(-1);
	struct python_names *pn = python_names_new(python_detect_offsets, pd);
	struct code_names_stats st;
	struct interp_namer in;
	uint64_t rec_buf[32] = {0}, v;
	struct cfi_sample_record *r = (struct cfi_sample_record *)rec_buf;
	struct cfi_interp_frame *f = (struct cfi_interp_frame *)r->pcs;
	const char *name, *fname;
	uint32_t line, first = 39, i;
	int fd = open(PYTHON, O_RDONLY | O_CLOEXEC);

	fake_str(&qual, "Handler.parse");
	fake_str(&file, "/srv/app.py");
	v = sizeof(table);
	memcpy(bytes + 16, &v, 8);
	memcpy(bytes + 32, table, sizeof(table));
	v = (uint64_t)&qual;
	memcpy(code + 128, &v, 8);
	v = (uint64_t)&file;
	memcpy(code + 112, &v, 8);
	v = (uint64_t)bytes;
	memcpy(code + 136, &v, 8);
	memcpy(code + 72, &first, 4);
	v = 8; /* ob_size: 8 code units of bytecode */
	memcpy(code + 16, &v, 8);
	for (i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)(i * 37 + 11);
	/* this process runs "python3.11" */
	memset(&m, 0, sizeof(m));
	snprintf(m.key, sizeof(m.key), "test-key");
	python_detect_object(pd, m.key, PYTHON, fd);
	python_detect_proc(pd, (uint32_t)getpid(), &m, 1);
	CHECK(python_detect_lookup(pd, (uint32_t)getpid()) == python_offsets_find(0x030b),
	      "this process is seen running 3.11");
	r->type = RECORD_SAMPLE;
	r->pid = (uint32_t)getpid();
	r->nr_rt = 3;
	r->runtime = RT_PYTHON;
	/* unit 3: the third entry's line (39 + 0 + 2 + 1) */
	f[0] =
	    (struct cfi_interp_frame){.code = (uint64_t)code, .instr = 184 + 3 * 2, .is_entry = 1};
	f[1] = (struct cfi_interp_frame){.code = (uint64_t)junk, .instr = 200};
	f[2] = (struct cfi_interp_frame){.code = 8, .instr = 0}; /* unmapped */
	python_names_note(pn, r, sizeof(*r) + 3 * sizeof(*f));
	/* read by a reader thread: the consumer only queues */
	CHECK(python_names_wait(pn, 5.0), "the reads are done");
	CHECK(python_frame_name(pn, r->pid, 0, &f[0], &name, &fname, &line) &&
		  !strcmp(name, "Handler.parse") && !strcmp(fname, "/srv/app.py") && line == 42,
	      "named %s (%s:%u)", name, fname, line);
	f[0].instr = 184 + 1 * 2;
	python_frame_name(pn, r->pid, 0, &f[0], &name, &fname, &line);
	CHECK(line == 41, "unit 1: line %u", line);
	CHECK(python_frame_role(pn, r->pid, 0, &f[0]) == INTERP_FRAME_LAST,
	      "an entry frame ends its group");
	/* an instruction past its bytecode: the object was freed and its memory reused */
	f[0].instr = 184 + 8 * 2;
	CHECK(!python_frame_name(pn, r->pid, 0, &f[0], &name, &fname, &line),
	      "a frame outside its code object's bytecode is not named: %s", name);
	CHECK(!python_frame_name(pn, r->pid, 0, &f[1], &name, &fname, &line) &&
		  !strcmp(name, "[python]"),
	      "garbage is not named: %s", name);
	CHECK(!python_frame_name(pn, r->pid, 0, &f[2], &name, &fname, &line), "unmapped");
	python_names_stats(pn, &st);
	CHECK(st.read == 3 && st.unreadable == 2, "read %lu, unreadable %lu",
	      (unsigned long)st.read, (unsigned long)st.unreadable);
	/* a record whose size does not hold its frames is not read */
	r->nr_rt = 20;
	r->runtime = RT_PYTHON;
	python_names_note(pn, r, sizeof(*r) + 3 * sizeof(*f));
	python_names_wait(pn, 5.0);
	python_names_stats(pn, &st);
	CHECK(st.read == 3, "a short record read %lu", (unsigned long)st.read);
	python_names_namer(pn, &in);
	CHECK(interp_is_eval_frame(&in, "_PyEval_EvalFrameDefault") &&
		  interp_is_eval_frame(&in, "_PyEval_EvalFrameDefault.cold") &&
		  !interp_is_eval_frame(&in, "_PyEval_EvalFrameDefaultX") &&
		  !interp_is_eval_frame(&in, "PyEval_EvalCode"),
	      "the evaluation loop by name");
	python_names_free(pn);
	python_detect_free(pd);
	if (fd >= 0)
		close(fd);
}

/*
 * Processes of interpreters without a table entry are counted by version,
 * and the summary's text names it: a shared object with a _PyRuntime, named
 * python3.14 (no Py_Version: the version is its name's), stands in for one.
 * A program named python3.N without _PyRuntime (pyenv's, whose interpreter
 * is its libpython) is none: not counted, before its libpython is mapped
 * (it was: 3.12 named unsupported, then supported).
 */
static void test_unsupported_named(void)
{
	struct python_detect *pd = python_detect_new(-1);
	struct runtime_detect_stats st;
	struct proc_mapping m[2];
	char dir[] = "/tmp/cfiprof-pyver.XXXXXX", p314[64], p315[64], text[160];
	const char *names[2] = {p314, p315};
	int i, fd;

	CHECK(pd && mkdtemp(dir), "setup");
	snprintf(p314, sizeof(p314), "%s/python3.14", dir);
	snprintf(p315, sizeof(p315), "%s/libpython3.15.so.1.0", dir);
	memset(m, 0, sizeof(m));
	for (i = 0; i < 2; i++) {
		char cmd[256];

		/* an interpreter has its runtime: a python3.N without one is not one */
		snprintf(cmd, sizeof(cmd), "echo 'char _PyRuntime[64];' | cc -x c -shared -o %s -",
			 names[i]);
		CHECK(system(cmd) == 0, "%s", cmd);
		snprintf(m[i].key, sizeof(m[i].key), "key-%d", i);
		fd = open(names[i], O_RDONLY | O_CLOEXEC);
		python_detect_object(pd, m[i].key, names[i], fd);
		if (fd >= 0)
			close(fd);
	}
	/* pid 1001 runs 3.14; 1002 and 1003 3.15 */
	python_detect_proc(pd, 1001, &m[0], 1);
	python_detect_stats(pd, &st);
	python_detect_describe_unsupported(&st, text, sizeof(text));
	CHECK(!strcmp(text, "1 Python process of unsupported version 3.14"), "one: '%s'", text);
	python_detect_proc(pd, 1002, &m[1], 1);
	python_detect_proc(pd, 1003, &m[1], 1);
	python_detect_stats(pd, &st);
	python_detect_describe_unsupported(&st, text, sizeof(text));
	CHECK(st.procs == 0 && st.unsupported == 3 &&
		  !strcmp(text, "3 Python processes of unsupported versions 3.14 (1), 3.15 (2)"),
	      "three: %lu supported, %lu not: '%s'", (unsigned long)st.procs,
	      (unsigned long)st.unsupported, text);
	{
		char prog[80], cmd[128];
		struct proc_mapping pm = {.key = "key-prog"};

		snprintf(prog, sizeof(prog), "%s/python3.16", dir);
		snprintf(cmd, sizeof(cmd), "cp /bin/true %s", prog);
		CHECK(system(cmd) == 0, "%s", cmd);
		fd = open(prog, O_RDONLY | O_CLOEXEC);
		python_detect_object(pd, pm.key, prog, fd);
		if (fd >= 0)
			close(fd);
		python_detect_proc(pd, 1004, &pm, 1);
		python_detect_stats(pd, &st);
		CHECK(st.procs == 0 && st.unsupported == 3,
		      "a python3.16 without _PyRuntime: %lu supported, %lu not (want 0, 3)",
		      (unsigned long)st.procs, (unsigned long)st.unsupported);
	}
	st.unsupported = 0;
	python_detect_describe_unsupported(&st, text, sizeof(text));
	CHECK(!text[0], "none: '%s'", text);
	snprintf(text, sizeof(text), "rm -rf '%s'", dir);
	if (system(text))
		fprintf(stderr, "could not remove %s\n", dir);
	python_detect_free(pd);
}

/* A child whose page at *addr blocks every read (userfaultfd, never resolved); its pid or -1. */
static pid_t blocking_child(uint64_t *addr)
{
	int p[2];
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct uffdio_api api = {.api = UFFD_API};
		long uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
		char *m =
		    mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		struct uffdio_register reg = {.range = {(uint64_t)m, 4096},
					      .mode = UFFDIO_REGISTER_MODE_MISSING};
		uint64_t a = (uint64_t)m;

		if (uffd < 0 || ioctl((int)uffd, UFFDIO_API, &api) ||
		    ioctl((int)uffd, UFFDIO_REGISTER, &reg))
			a = 0;
		if (write(p[1], &a, sizeof(a)) != sizeof(a))
			_exit(1);
		pause();
		_exit(0);
	}
	close(p[1]);
	if (pid < 0 || read(p[0], addr, sizeof(*addr)) != sizeof(*addr) || !*addr) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		pid = -1;
	}
	close(p[0]);
	return pid;
}

struct call {
	struct python_names *pn;
	const struct cfi_sample_record *r;
	size_t size;
};

static void *note_call(void *arg)
{
	struct call *c = arg;

	python_names_note(c->pn, c->r, c->size);
	return NULL;
}

static void *free_call(void *arg)
{
	python_names_free(((struct call *)arg)->pn);
	return NULL;
}

/* fn(c) on a thread of its own: false if it has not returned after secs. */
static bool returns_within(void *(*fn)(void *), struct call *c, double secs)
{
	struct timespec until;
	pthread_t t;

	if (pthread_create(&t, NULL, fn, c))
		return false;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += (time_t)secs;
	if (pthread_timedjoin_np(t, NULL, &until)) {
		pthread_detach(t);
		return false;
	}
	return true;
}

/*
 * A code object in memory that blocks every read (a userfaultfd region its
 * process never resolves, as a FUSE file a user serves would block it):
 * python_names_note returns at once (the consumer calls it, its reads are
 * the reader threads'), another process's code object is still read, the
 * blocked process gets no more reads, and python_names_free returns.
 */
static void test_blocked_read(void)
{
	static uint8_t junk[256];
	uint64_t rec_buf[32] = {0}, addr = 0;
	struct cfi_sample_record *r = (struct cfi_sample_record *)rec_buf;
	struct cfi_interp_frame *f = (struct cfi_interp_frame *)r->pcs;
	struct python_detect *pd = python_detect_new(-1);
	struct python_names *pn = python_names_new(python_detect_offsets, pd);
	struct call c = {pn, r, sizeof(*r) + sizeof(*f)};
	struct code_names_stats st;
	struct proc_mapping m;
	pid_t child = blocking_child(&addr);
	int fd = open(PYTHON, O_RDONLY | O_CLOEXEC);
	bool ok;

	CHECK(child > 0, "a child with a userfaultfd region (needs CAP_SYS_PTRACE)");
	if (child <= 0)
		return;
	memset(&m, 0, sizeof(m));
	snprintf(m.key, sizeof(m.key), "test-key");
	python_detect_object(pd, m.key, PYTHON, fd);
	python_detect_proc(pd, (uint32_t)child, &m, 1);
	python_detect_proc(pd, (uint32_t)getpid(), &m, 1);
	r->type = RECORD_SAMPLE;
	r->pid = (uint32_t)child;
	r->nr_rt = 1;
	r->runtime = RT_PYTHON;
	f[0] = (struct cfi_interp_frame){.code = addr + 64, .instr = 200};
	/* a bound far above a queueing's microseconds, far below for ever */
	ok = returns_within(note_call, &c, 2.0);
	CHECK(ok, "python_names_note blocked over 2 s on the child's memory");
	if (!ok)
		goto out; /* the blocked thread holds pn: leave it to the child's death */
	/* the stalled read is not waited for: past PN_STALL_NS (200 ms) it is counted */
	CHECK(python_names_wait(pn, 2.0), "python_names_wait waits for a blocked read");
	python_names_stats(pn, &st);
	CHECK(st.stalled == 1 && st.read == 0, "stalled %lu, read %lu (want 1, 0)",
	      (unsigned long)st.stalled, (unsigned long)st.read);
	/* this process's code object: another reader reads it */
	r->pid = (uint32_t)getpid();
	f[0].code = (uint64_t)junk;
	CHECK(returns_within(note_call, &c, 2.0) && python_names_wait(pn, 2.0),
	      "another process's read waits for the blocked one");
	python_names_stats(pn, &st);
	CHECK(st.read == 1, "read %lu (want 1: this process's, beside the blocked one)",
	      (unsigned long)st.read);
	/* the blocked process's other code objects are not read: they would block too */
	r->pid = (uint32_t)child;
	f[0].code = addr + 128;
	CHECK(returns_within(note_call, &c, 2.0), "python_names_note blocked");
	python_names_stats(pn, &st);
	CHECK(st.refused == 1 && st.read == 1, "refused %lu, read %lu (want 1, 1)",
	      (unsigned long)st.refused, (unsigned long)st.read);
	CHECK(returns_within(free_call, &c, 2.0), "python_names_free waits for the blocked read");
out:
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	python_detect_free(pd);
	if (fd >= 0)
		close(fd);
}

/* The value of the field an entry's line of tests/progs/python/layout.c names; -1 if none. */
static long entry_field(const struct python_offsets *o, const char *name)
{
	const struct {
		const char *name;
		long value;
	} f[] = {
	    {"version", o->version},
	    {"bpf.runtime_interp_head", o->bpf.runtime_interp_head},
	    {"bpf.interp_next", o->bpf.interp_next},
	    {"bpf.interp_threads_head", o->bpf.interp_threads_head},
	    {"bpf.tstate_next", o->bpf.tstate_next},
	    {"bpf.tstate_native_tid", o->bpf.tstate_native_tid},
	    {"bpf.tstate_frame", o->bpf.tstate_frame},
	    {"bpf.cframe_current_frame", o->bpf.cframe_current_frame},
	    {"bpf.frame_code", o->bpf.frame_code},
	    {"bpf.frame_instr", o->bpf.frame_instr},
	    {"bpf.frame_is_entry", o->bpf.frame_is_entry},
	    {"bpf.frame_previous", o->bpf.frame_previous},
	    {"bpf.frame_owner", o->bpf.frame_owner},
	    {"bpf.frame_globals", o->bpf.frame_globals},
	    {"owner_generator", o->owner_generator},
	    {"owner_cstack", o->owner_cstack},
	    {"code_type", o->code_type},
	    {"code_bytecode", o->code_bytecode},
	    {"code_code", o->code_code},
	    {"code_firstlineno", o->code_firstlineno},
	    {"code_firsttraceable", o->code_firsttraceable},
	    {"code_filename", o->code_filename},
	    {"code_qualname", o->code_qualname},
	    {"code_linetable", o->code_linetable},
	    {"str_length", o->str_length},
	    {"str_state", o->str_state},
	    {"str_ascii_data", o->str_ascii_data},
	    {"str_compact_data", o->str_compact_data},
	    {"bytes_size", o->bytes_size},
	    {"bytes_data", o->bytes_data},
	    {"str_ready_bit", o->str_ready_bit},
	};

	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (!strcmp(f[i].name, name))
			return f[i].value;
	return -1;
}

/*
 * One interpreter's headers (include: the directory holding Python.h)
 * against its table entry, through tests/progs/python/layout.c built with
 * them.  The version the headers are; 0 when they could not be built.
 */
static unsigned int check_layout(const char *include, const char *dir)
{
	char cmd[2 * PATH_MAX + 256], line[256], name[128];
	const struct python_offsets *o = NULL;
	unsigned int version = 0, fields = 0;
	bool cframe = false, is_entry = false, frame_object = false;
	unsigned long v;
	FILE *f;

	snprintf(cmd, sizeof(cmd),
		 "cc -w -I'%s' tests/progs/python/layout.c -o '%s/layout' && '%s/layout'", include,
		 dir, dir);
	f = popen(cmd, "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %lu", name, &v) != 2)
			continue;
		if (!strcmp(name, "version")) {
			version = (unsigned int)v;
			o = python_offsets_find((uint16_t)v);
			if (!o)
				break;
		}
		if (!o)
			continue;
		fields++;
		cframe |= !strcmp(name, "bpf.cframe_current_frame");
		is_entry |= !strcmp(name, "bpf.frame_is_entry");
		frame_object |= !strcmp(name, "code_code");
		CHECK(entry_field(o, name) == (long)v,
		      "%s: %s is %lu in its headers, %ld in the table", o->name, name, v,
		      entry_field(o, name));
	}
	if (f && pclose(f) && o)
		CHECK(0, "building or running layout.c against %s failed", include);
	if (!o)
		return version;
	CHECK(fields >= 22, "%s: %u fields compared", o->name, fields);
	/* what the headers lack, the table must not use */
	CHECK(cframe == !!(o->bpf.flags & PY_FLAG_CFRAME) &&
		  (cframe || o->bpf.cframe_current_frame == PY_OFF_NONE),
	      "%s: _PyCFrame %s in the headers, the table's flag %d", o->name,
	      cframe ? "present" : "absent", o->bpf.flags & PY_FLAG_CFRAME);
	CHECK(is_entry ? o->entry == PY_ENTRY_IS_ENTRY
	      : frame_object
		  ? o->entry == PY_ENTRY_EVERY_FRAME && o->code_kind != PY_CODE_LOCATIONS &&
			(o->bpf.flags & PY_FLAG_FRAME_OBJECT) && (o->bpf.flags & PY_FLAG_PTHREAD_ID)
		  : o->entry == PY_ENTRY_SHIM_FRAME && o->bpf.frame_is_entry == PY_OFF_NONE,
	      "%s: is_entry %s, PyFrameObject %s in the headers; the table's entry kind %d",
	      o->name, is_entry ? "present" : "absent", frame_object ? "used" : "not used",
	      o->entry);
	/* 3.10's co_linetable, 3.8's and 3.9's co_lnotab: the formats their headers name */
	CHECK(!frame_object ||
		  o->code_kind == (version >= 0x030a ? PY_CODE_LINETABLE_310 : PY_CODE_LNOTAB),
	      "%s: line table kind %d", o->name, o->code_kind);
	return version;
}

/*
 * Every entry of the table against the headers of the interpreters here:
 * Debian's 3.11 always, and each pyenv build this machine kind carries
 * (/root/.pyenv/versions); a version without an entry is named unsupported.
 */
static void test_layouts(void)
{
	char dir[] = "/tmp/cfiprof-layout.XXXXXX", ran[1024] = "", none[512] = "", rm[64];
	const struct python_offsets *all;
	unsigned int n, seen = 0, version;
	glob_t g = {0};

	CHECK(mkdtemp(dir), "mkdtemp");
	version = check_layout("/usr/include/python3.11", dir);
	CHECK(version == 0x030b, "Debian's 3.11 headers: version %x", version);
	snprintf(ran, sizeof(ran), "3.11 (Debian)");
	seen |= 1u << 11;
	glob("/root/.pyenv/versions/3.*/include/python3.*", 0, NULL, &g);
	for (size_t i = 0; i < g.gl_pathc; i++) {
		char file[PATH_MAX + 16];

		/* 3.8 on have the internal headers layout.c reads */
		snprintf(file, sizeof(file), "%s/internal/pycore_pystate.h", g.gl_pathv[i]);
		if (access(file, R_OK)) {
			snprintf(none + strlen(none), sizeof(none) - strlen(none), " %s",
				 strrchr(g.gl_pathv[i], '/') + 7);
			continue;
		}
		version = check_layout(g.gl_pathv[i], dir);
		if (!python_offsets_find((uint16_t)version)) {
			snprintf(none + strlen(none), sizeof(none) - strlen(none), " 3.%u",
				 version & 0xff);
			continue;
		}
		seen |= 1u << (version & 31);
		snprintf(ran + strlen(ran), sizeof(ran) - strlen(ran), ", %s (%s)",
			 python_offsets_find((uint16_t)version)->name, g.gl_pathv[i]);
	}
	globfree(&g);
	printf("  layouts checked: %s; no entry:%s\n", ran, none[0] ? none : " none");
	all = python_offsets_all(&n);
	for (unsigned int k = 0; k < n; k++)
		if (!(seen & 1u << (all[k].version & 31)))
			printf("  no headers here for the %s entry\n", all[k].name);
	snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
	if (system(rm))
		fprintf(stderr, "could not remove %s\n", dir);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_offsets_table);
	RUN_TEST(test_layouts);
	RUN_TEST(test_linetable);
	RUN_TEST(test_detect_binary);
	RUN_TEST(test_name_code_object);
	RUN_TEST(test_unsupported_named);
	RUN_TEST(test_blocked_read);
	return HARNESS_DONE();
}
