// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The events this machine offers, matched against a pattern; see event_catalog.h. */
#include <bpf/btf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <sched.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "user/session/event_catalog.h"
#include "user/session/event_spec.h"

/* the tracefs event directories, where one is mounted */
static const char *const tracefs_events[] = {"/sys/kernel/tracing/events",
					     "/sys/kernel/debug/tracing/events"};

static bool matches(const char *pattern, const char *full)
{
	const char *last = strrchr(full, ':');

	if (!fnmatch(pattern, full, 0))
		return true;
	return !strchr(pattern, ':') && last && !fnmatch(pattern, last + 1, 0);
}

static long print_if(FILE *f, const char *pattern, const char *full)
{
	if (!matches(pattern, full))
		return 0;
	fprintf(f, "%s\n", full);
	return 1;
}

static long perf_events(FILE *f, const char *pattern)
{
	const char *name, *alias, *what;
	long n = 0;

	for (size_t i = 0; (name = event_perf_name(i, &alias, &what)); i++)
		n += print_if(f, pattern, name) || (alias && print_if(f, pattern, alias));
	return n;
}

/*
 * tracefs, which says each tracepoint's category, is not mounted at boot
 * everywhere: with the privilege to, this process mounts it in a mount
 * namespace of its own, which goes when it exits (nothing of the host changes).
 */
static DIR *open_tracefs_events(void)
{
	DIR *d = NULL;

	for (size_t i = 0; !d && i < sizeof(tracefs_events) / sizeof(tracefs_events[0]); i++)
		d = opendir(tracefs_events[i]);
	if (d || geteuid() != 0 || unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
		return d;
	return opendir(tracefs_events[0]);
}

/* tracefs's CATEGORY/NAME directories; -1 where there is no tracefs */
static long tracefs_tracepoints(FILE *f, const char *pattern)
{
	char full[2 * 256 + 16];
	struct dirent *c, *e;
	DIR *cats = open_tracefs_events(), *evs;
	long n = 0;

	if (!cats)
		return -1;
	while ((c = readdir(cats))) {
		if (c->d_type != DT_DIR || c->d_name[0] == '.')
			continue;
		evs = fdopendir(openat(dirfd(cats), c->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
		while (evs && (e = readdir(evs))) {
			if (e->d_type != DT_DIR || e->d_name[0] == '.')
				continue;
			snprintf(full, sizeof(full), "tracepoint:%.255s:%.255s", c->d_name, e->d_name);
			n += print_if(f, pattern, full);
		}
		if (evs)
			closedir(evs);
	}
	closedir(cats);
	return n;
}

/*
 * From the kernel's BTF: a raw tracepoint NAME has a btf_trace_NAME typedef
 * (its category is tracefs's to say; "*" here, which -e takes as any), a
 * kprobe (attached as fentry) needs the function in BTF.
 */
static long btf_events(FILE *f, const char *pattern, bool tracepoints, char *err, size_t errlen)
{
	struct btf *btf = btf__load_vmlinux_btf();
	char full[512];
	long n = 0;

	if (!btf) {
		snprintf(err, errlen, "cannot read the kernel's BTF: %s", strerror(errno));
		return -1;
	}
	for (unsigned int id = 1; id < btf__type_cnt(btf); id++) {
		const struct btf_type *t = btf__type_by_id(btf, id);
		const char *name = btf__name_by_offset(btf, t->name_off);

		if (!name || !*name)
			continue;
		if (btf_is_func(t)) {
			snprintf(full, sizeof(full), "kprobe:%.255s", name);
			n += print_if(f, pattern, full);
			snprintf(full, sizeof(full), "kretprobe:%.255s", name);
			n += print_if(f, pattern, full);
		} else if (tracepoints && btf_is_typedef(t) && !strncmp(name, "btf_trace_", 10)) {
			/* no category to match: the pattern's name part is matched alone */
			const char *last = strrchr(pattern, ':');

			snprintf(full, sizeof(full), "tracepoint:*:%.255s", name + 10);
			if (matches(pattern, full) ||
			    (!strncmp(pattern, "tracepoint:", 11) && last &&
			     !fnmatch(last + 1, name + 10, 0))) {
				fprintf(f, "%s\n", full);
				n++;
			}
		}
	}
	btf__free(btf);
	return n;
}

long event_catalog_print(FILE *f, const char *pattern, char *err, size_t errlen)
{
	long n = perf_events(f, pattern), tp, k;

	tp = tracefs_tracepoints(f, pattern);
	k = btf_events(f, pattern, tp < 0, err, errlen);
	if (k < 0)
		return -1;
	return n + (tp > 0 ? tp : 0) + k;
}
