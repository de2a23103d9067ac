// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Which processes run V8; see v8_detect.h. */
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "user/runtimes/v8/v8_detect.h"

/* distinct layouts a session keeps: one per V8 build on the host */
#define V8_LAYOUTS 32

static struct v8_offsets layouts[V8_LAYOUTS];
static uint16_t nr_layouts;
static pthread_mutex_t layouts_lock = PTHREAD_MUTEX_INITIALIZER;

/* o's index among the layouts kept (added when new); -1 when there is no room. */
static int layout_index(const struct v8_offsets *o)
{
	int i, found = -1;

	pthread_mutex_lock(&layouts_lock);
	for (i = 0; i < nr_layouts && found < 0; i++)
		if (!memcmp(&layouts[i], o, sizeof(*o)))
			found = i;
	if (found < 0 && nr_layouts < V8_LAYOUTS) {
		layouts[nr_layouts] = *o;
		found = nr_layouts++;
	}
	pthread_mutex_unlock(&layouts_lock);
	return found;
}

const struct v8_offsets *v8_layout(uint16_t index)
{
	const struct v8_offsets *o = NULL;

	pthread_mutex_lock(&layouts_lock);
	if (index < nr_layouts)
		o = &layouts[index];
	pthread_mutex_unlock(&layouts_lock);
	return o;
}

static bool may_be_v8(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "node", 4) || !strncmp(base, "libnode.so", 10);
}

/* v8_elf_offsets zeroes what it does not fill: layout_index compares whole structs */
static int object(int fd, const char *path, void *info)
{
	(void)path;
	return v8_elf_offsets(fd, info) < 0 ? -1 : 0;
}

static int entry(const void *info, uint64_t bias, uint32_t pid, uint64_t read_ns, void *data,
		 size_t *size, uint16_t *version)
{
	const struct v8_offsets *o = info;
	struct cfi_v8_proc *val = data;
	int index;

	(void)pid;
	/* a V8 whose layout v8_elf_offsets could not read has no function offset */
	if (!o->bpf.js_function_shared) {
		*version = o->version | DETECT_VERSION_VARIANT;
		return -1;
	}
	*version = o->version;
	index = layout_index(o);
	if (index < 0)
		return -1;
	*val = o->bpf;
	val->layout = (uint16_t)index;
	/* where the object is mapped: pc - bias is its ELF address */
	if (o->bpf.builtins_lo) {
		val->builtins_lo = o->bpf.builtins_lo + bias;
		val->builtins_hi = o->bpf.builtins_hi + bias;
	}
	val->maps_read_ns = read_ns;
	*size = sizeof(*val);
	return 0;
}

const struct detect_ops v8_detect_ops = {
    .runtime = RT_V8,
    .may_be = may_be_v8,
    .object = object,
    .entry = entry,
    .variant = "without a layout cfiprof reads (v8dbg_ symbols, 8-byte pointers)",
};
