// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Which processes run HotSpot; see hotspot_detect.h. */
#include <string.h>

#include "user/runtimes/hotspot/hotspot_detect.h"
#include "user/runtimes/hotspot/hotspot_jit.h"
#include "user/runtimes/target_mem.h"

static bool may_be_jvm(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libjvm.so", 9);
}

/* the tables' symbols: a libjvm.so without gHotSpotVMStructs is no JVM we read */
static int object(int fd, const char *path, void *info)
{
	struct hotspot_symbols *s = info;

	(void)path;
	return hotspot_elf_symbols(fd, s) || !s->value[HS_STRUCTS] ? -1 : 0;
}

static int entry(const void *info, uint64_t bias, uint32_t pid, uint64_t read_ns, void *data,
		 size_t *size, uint16_t *version)
{
	struct cfi_hotspot_proc *val = data;
	struct hotspot_layout l;

	const struct hotspot_symbols *syms = info;
	uint64_t structs = 0, stride = 0;

	/* the version is not what is read: the layout is, by name */
	*version = 0;
	/*
	 * Mapped, not yet relocated (the launcher's dlopen of libjvm.so under
	 * way): the pointer still holds 0 or, with DT_RELR (Debian 12's
	 * libjvm), its link-time value, below where the object is loaded; or
	 * relocated, its constructors not yet run: the entries' stride (an
	 * offset_of HotSpot computes at run time) still 0.  No JVM to read yet,
	 * and none to count unsupported: an entry without a layout names
	 * nothing, and the load after the JVM starts reads it.
	 */
	if (target_read(pid, syms->value[HS_STRUCTS] + bias, &structs, sizeof(structs)) ||
	    structs < bias || !structs ||
	    target_read(pid, syms->value[HS_STRUCT_STRIDE] + bias, &stride, sizeof(stride)) ||
	    !stride) {
		memset(val, 0, sizeof(*val));
		val->layout = HOTSPOT_NO_LAYOUT;
		val->maps_read_ns = read_ns;
		*size = sizeof(*val);
		return 0;
	}
	if (hotspot_layout_read(pid, info, bias, &l)) {
		*version = l.vm_version | DETECT_VERSION_VARIANT;
		return -1;
	}
	if (hotspot_jvm_note(pid, &l, val))
		return -1;
	val->maps_read_ns = read_ns;
	*size = sizeof(*val);
	return 0;
}

const struct detect_ops hotspot_detect_ops = {
    .runtime = RT_HOTSPOT,
    .may_be = may_be_jvm,
    .object = object,
    .entry = entry,
    .variant = "whose VMStructs lack what cfiprof reads",
    /* interpreted frames: their Method* below their rbp */
    .keep_bp = true,
};
