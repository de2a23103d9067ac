// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * CPython interpreters in the processes a load reads.  Debian's python3.11
 * has no debug information but exports _PyRuntime (the runtime state, root
 * of the interpreters and their threads) and Py_Version (PY_VERSION_HEX,
 * 3.11 on) in .dynsym; both are read from the mapped file itself, never from
 * the process.  runtime_detect.c keeps the objects' answers and the
 * processes'; the kernel learns (runtime address, the version's offsets)
 * through the process's runtime_procs entry.
 */
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "elf/elf_read.h"
#include "elf/symbol_find.h"
#include "user/runtimes/python/python_detect.h"

struct python_detect {
	struct runtime_detect *rd;
};

/* "python3.11", "libpython3.11.so.1.0", "python3.11d": 0x030b; 0 when the name is none of them. */
static uint16_t version_from_name(const char *path)
{
	const char *base = strrchr(path, '/');
	unsigned int minor;

	base = base ? base + 1 : path;
	if (!strncmp(base, "lib", 3))
		base += 3;
	if (sscanf(base, "python3.%u", &minor) == 1 && minor < 256)
		return (uint16_t)(0x0300 | minor);
	return 0;
}

static bool may_be_python(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "python", 6) || !strncmp(base, "libpython", 9);
}

/*
 * Symbol bytes read from one object (tables and their strings): python3.11's
 * .dynsym and .dynstr are 0.3 MiB, a debug build's .symtab a few MiB.
 */
#define PY_READ_MAX (64ull << 20)

int python_elf_info(int fd, const char *path, uint16_t *version, uint64_t *runtime_vaddr)
{
	uint64_t left = PY_READ_MAX;
	uint64_t size;
	Elf *e;
	static const char *const names[] = {"_PyRuntime", "Py_Version"};
	uint64_t values[2], py_version;
	uint32_t hex;

	*version = 0;
	*runtime_vaddr = 0;
	e = elf_read_open(fd, &size);
	if (!e)
		return -1;
	elf_find_symbols(e, names, values, 2, &left, NULL);
	*runtime_vaddr = values[0];
	py_version = values[1];
	/* PY_VERSION_HEX: 0x030b02f0 is 3.11.2 final */
	if (py_version && !elf_read_vaddr(e, fd, py_version, &hex, sizeof(hex)) && hex >> 24 == 3)
		*version = (uint16_t)(hex >> 16);
	else
		*version = version_from_name(path);
	/* cut while read: the symbols found may be anything's */
	if (!elf_read_close(e, fd, size)) {
		*runtime_vaddr = 0;
		return -1;
	}
	return 0;
}

/* Its PID namespace, for its threads' ids as it sees them; left 0 if unreadable. */
static void pidns_of(uint32_t pid, struct cfi_python_proc *val)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%u/ns/pid", pid);
	if (stat(path, &st))
		return;
	val->pidns_dev = (uint64_t)major(st.st_dev) << 20 | minor(st.st_dev);
	val->pidns_ino = st.st_ino;
}

/* what an object says of CPython: an interpreter's _PyRuntime and version */
struct py_object {
	uint64_t runtime_vaddr;
	uint16_t version;
};

_Static_assert(sizeof(struct py_object) <= DETECT_INFO_BYTES, "detect info too small");

/*
 * An interpreter: _PyRuntime and a version.  A program named python3.N
 * without _PyRuntime runs an interpreter of a libpython (pyenv's,
 * --enable-shared): that one, once mapped, is the interpreter; the program
 * alone is none, supported or not.
 */
static int object(int fd, const char *path, void *info)
{
	struct py_object *o = info;

	if (python_elf_info(fd, path, &o->version, &o->runtime_vaddr) || !o->version ||
	    !o->runtime_vaddr)
		return -1;
	return 0;
}

static int entry(const void *info, uint64_t bias, uint32_t pid, uint64_t read_ns, void *data,
		 size_t *size, uint16_t *version)
{
	const struct py_object *o = info;
	const struct python_offsets *off = python_offsets_find(o->version);
	struct cfi_python_proc *val = data;

	*version = o->version;
	if (!off)
		return -1;
	*val = off->bpf;
	val->runtime = bias + o->runtime_vaddr;
	val->maps_read_ns = read_ns;
	pidns_of(pid, val);
	*size = sizeof(*val);
	return 0;
}

static const struct detect_ops python_detect_ops = {
    .runtime = RT_PYTHON,
    .may_be = may_be_python,
    .object = object,
    .entry = entry,
};

struct python_detect *python_detect_new(int python_procs_fd)
{
	struct python_detect *pd = calloc(1, sizeof(*pd));

	if (!pd)
		return NULL;
	pd->rd = runtime_detect_new(&python_detect_ops, python_procs_fd);
	if (!pd->rd) {
		free(pd);
		return NULL;
	}
	return pd;
}

void python_detect_free(struct python_detect *pd)
{
	if (!pd)
		return;
	runtime_detect_free(pd->rd);
	free(pd);
}

void python_detect_object(struct python_detect *pd, const char *key, const char *path, int fd)
{
	if (pd)
		runtime_detect_object(pd->rd, key, path, fd);
}

void python_detect_proc(struct python_detect *pd, uint32_t pid, const struct proc_mapping *maps,
			uint32_t nr)
{
	if (pd)
		runtime_detect_proc(pd->rd, pid, maps, nr, UINT64_MAX, false);
}

const struct python_offsets *python_detect_offsets(void *pd, uint32_t pid)
{
	return python_detect_lookup(pd, pid);
}

const struct python_offsets *python_detect_lookup(struct python_detect *pd, uint32_t pid)
{
	struct cfi_python_proc val;

	return pd && runtime_detect_lookup(pd->rd, pid, &val, sizeof(val))
		   ? python_offsets_find(val.version)
		   : NULL;
}

void python_detect_stats(struct python_detect *pd, struct runtime_detect_stats *out)
{
	runtime_detect_stats(pd ? pd->rd : NULL, out);
}

void python_detect_describe_unsupported(const struct runtime_detect_stats *st, char *buf,
					size_t len)
{
	runtime_detect_describe_unsupported(st, "Python", buf, len);
}

struct runtime_detect *python_detect_engine(struct python_detect *pd)
{
	return pd ? pd->rd : NULL;
}
