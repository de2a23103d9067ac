// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Reader of saved recordings (the format: recording.h): one handler per line
 * kind, each parsing its line into the aggregator, the tracker's saved
 * mappings or the meta.  A malformed line is counted and skipped; only out of
 * memory ends the read.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "user/profile/recording.h"
#include "user/symbolize/kallsyms.h"
#include "user/symbolize/sym_cache.h"

/* What the line handlers read into, and where the first malformed line is told. */
struct reader {
	struct aggregator *a;
	struct proc_tracker *pt;
	struct recording_meta *meta;
	struct cgroup_names *cgroups;
	bool oom;
};

/* A line handler's result: NULL (taken), why it is malformed, or this (out of memory). */
static const char line_fatal[] = "out of memory";
#define LINE_OK	   NULL
#define LINE_FATAL line_fatal

/* Parses "-" or a comma-separated hex list into pcs; returns the count or -1. */
static int parse_pcs(const char *s, uint64_t *pcs, int max)
{
	int n = 0;
	char *end;

	if (!strcmp(s, "-"))
		return 0;
	for (;;) {
		if (n == max)
			return -1;
		errno = 0;
		pcs[n++] = strtoull(s, &end, 16);
		if (errno || end == s)
			return -1;
		if (*end == 0)
			return n;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
}

/* Parses a TAG list ("CODE:INSTR:ENTRY:OWNER:SCOPE,..", up to a blank); the count or -1. */
static int parse_interp_list(const char *s, struct cfi_interp_frame *py, int max)
{
	unsigned long long code;
	unsigned int instr, entry, owner, scope;
	int n = 0, at;

	for (;;) {
		at = 0;
		if (n == max ||
		    sscanf(s, "%llx:%x:%x:%x:%x%n", &code, &instr, &entry, &owner, &scope, &at) !=
			5 ||
		    !at || entry > 255 || owner > 255 || scope > 0xffff)
			return -1;
		py[n++] = (struct cfi_interp_frame){.code = code,
						    .instr = instr,
						    .is_entry = (__u8)entry,
						    .owner = (__u8)owner,
						    .scope = (__u16)scope};
		s += at;
		if (*s != ',')
			return *s == 0 || *s == ' ' || *s == '\n' ? n : -1;
		s++;
	}
}

/* "RUNTIME:STATUS:HEX", a runtime's units as bytes, into r and out: their number, or -1. */
static int parse_rt_units(const char *s, struct cfi_sample_record *r, uint8_t *out)
{
	unsigned int rt, status;
	size_t n = 0;
	int at = 0;

	if (sscanf(s, "%u:%u:%n", &rt, &status, &at) != 2 || !at || rt == RT_NONE || rt >= RT_MAX ||
	    status > UINT8_MAX)
		return -1;
	/* two hex digits a byte, nothing else (sscanf's %2x would skip blanks into the next field)
	 */
	for (s += at;
	     n < RT_RECORD_BYTES && isxdigit((unsigned char)s[0]) && isxdigit((unsigned char)s[1]);
	     s += 2) {
		char hex[3] = {s[0], s[1], 0};

		out[n++] = (uint8_t)strtoul(hex, NULL, 16);
	}
	if ((*s && *s != ' ' && *s != '\n') || !n || n % RT_UNIT_BYTES)
		return -1;
	r->runtime = (uint8_t)rt;
	r->rt_status = (uint8_t)status;
	return (int)(n / RT_UNIT_BYTES);
}

/* A TAGframe line of runtime rt (after "TAGframe "): 0, or -1 when malformed; oom in *oom. */
static int read_interp_frame(char *line, uint8_t rt, struct saved_interp *sp, bool *oom)
{
	struct interp_frame_shown how = {0};
	struct interp_inlined levels[SAVED_INLINED_MAX];
	struct cfi_interp_frame f = {0};
	unsigned int pid, gen, entry, owner, scope;
	unsigned long long code;
	char *fields[2], *t;
	int at = 0, nf;

	if (sscanf(line, "%u %u %llx %x %u %u %x %u %u%n", &pid, &gen, &code, &f.instr, &entry,
		   &owner, &scope, &how.role, &how.line, &at) != 9 ||
	    line[at] != '\t' || entry > 255 || owner > 255 || scope > 0xffff ||
	    how.role > (INTERP_FRAME_SKIP | INTERP_FRAME_LAST))
		return -1;
	line[strcspn(line, "\n")] = 0;
	t = line + at + 1;
	for (nf = 0; nf < 2 && t; nf++)
		fields[nf] = strsep(&t, "\t");
	if (nf != 2 || !fields[0][0])
		return -1;
	/* the inline levels: NAME FILE LINE each, their strings in line */
	while (t && how.nr_inlined < SAVED_INLINED_MAX) {
		char *n = strsep(&t, "\t"), *fi = t ? strsep(&t, "\t") : NULL;
		char *l = t ? strsep(&t, "\t") : NULL, *end = NULL;
		unsigned long v = l ? strtoul(l, &end, 10) : 0;

		if (!l || !*n || !*l || *end || v > UINT32_MAX)
			return -1;
		levels[how.nr_inlined++] = (struct interp_inlined){.name = (uint32_t)(n - line),
								   .file = (uint32_t)(fi - line),
								   .line = (uint32_t)v};
	}
	f.code = code;
	f.is_entry = (__u8)entry;
	f.owner = (__u8)owner;
	f.scope = (__u16)scope;
	how.name = fields[0];
	how.file = fields[1];
	how.inlined = how.nr_inlined ? levels : NULL;
	how.strs = line;
	if (sp && saved_interp_add(sp, rt, pid, gen, &f, &how) < 0)
		*oom = true;
	return 0;
}

static const char *read_meta(struct reader *rd, char *line)
{
	struct recording_meta *meta = rd->meta;

	if (sscanf(line, "meta %u %31s %" SCNu64 " %" SCNu64, &meta->freq, meta->event,
		   &meta->start_unix_ns, &meta->duration_ns) != 4)
		return "malformed meta line";
	return LINE_OK;
}

static const char *read_event(struct reader *rd, char *line)
{
	struct recording_meta *meta = rd->meta;

	line[strcspn(line, "\n")] = 0;
	if (meta->nr_events < RECORDING_MAX_EVENTS)
		snprintf(meta->event_names[meta->nr_events++], sizeof(meta->event_names[0]), "%s",
			 line + 6);
	return LINE_OK;
}

/* estimated MASK: the events whose weights estimate hits past --event-budget */
static const char *read_estimated(struct reader *rd, char *line)
{
	if (sscanf(line, "estimated %x", &rd->a->estimated_events) != 1)
		return "malformed estimated line";
	return LINE_OK;
}

static const char *read_map(struct reader *rd, char *line)
{
	char path[4096], bid[160];
	struct proc_mapping m;
	unsigned int pid;

	memset(&m, 0, sizeof(m));
	if (sscanf(line,
		   "map %u %" SCNx64 " %" SCNx64 " %" SCNx64 " %" SCNx64 " %u %159s %4095[^\n]",
		   &pid, &m.start, &m.end, &m.offset, &m.bias, &m.flags, bid, path) != 8 ||
	    m.end <= m.start)
		return "malformed map line";
	snprintf(m.path, sizeof(m.path), "%.255s", path);
	snprintf(m.key, sizeof(m.key), "%s", strcmp(bid, "-") ? bid : "");
	return proc_tracker_add_saved(rd->pt, pid, &m) ? LINE_FATAL : LINE_OK;
}

static const char *read_kname(struct reader *rd, char *line)
{
	uint64_t pc;
	int at = 0;

	if (sscanf(line, "kname %" SCNx64 " %n", &pc, &at) != 1 || !at || !line[at] ||
	    line[at] == '\n')
		return "malformed kname line";
	line[strcspn(line, "\n")] = 0;
	return kernel_names_add(&rd->meta->knames, pc, line + at) ? LINE_FATAL : LINE_OK;
}

static const char *read_uframe(struct reader *rd, char *line)
{
	struct saved_level lv = {0};
	unsigned int pid, level;
	uint64_t start, addr, file = 0;
	char *fields[3], *t, *end;
	int at = 0, nf;

	if (sscanf(line, "uframe %u %" SCNx64 " %" SCNx64 " %u %u %u%n", &pid, &start, &addr,
		   &level, &lv.line, &lv.start_line, &at) != 6 ||
	    line[at] != '\t')
		return "malformed uframe line";
	line[strcspn(line, "\n")] = 0;
	t = line + at + 1;
	for (nf = 0; nf < 3 && t; nf++)
		fields[nf] = strsep(&t, "\t");
	if (nf != 3 || !fields[0][0])
		return "malformed uframe line";
	lv.function = fields[0];
	lv.system_name = fields[1][0] ? fields[1] : fields[0];
	lv.file = fields[2];
	/* the mapped file's key after the fields (recordings since it was kept) */
	if (t) {
		file = strtoull(t, &end, 16);
		if (end == t || *end)
			return "malformed uframe line";
	}
	if (rd->meta->frames &&
	    saved_frames_add(rd->meta->frames, pid, start, file, addr, level, &lv))
		return errno == EINVAL ? "uframe level out of order" : LINE_FATAL;
	return LINE_OK;
}

/* The runtime whose TAGframe line (first word, into *skip with its blank) line is; RT_NONE: none.
 */
static uint8_t interp_line_runtime(const char *line, size_t *skip)
{
	size_t n = strcspn(line, " ");

	for (unsigned int rt = RT_NONE + 1; rt < RT_MAX; rt++) {
		const char *tag = runtime_tag(rt);
		size_t tl = tag ? strlen(tag) : 0;

		if (runtime_max_frames(rt) && tl && n == tl + 5 && !strncmp(line, tag, tl) &&
		    !strncmp(line + tl, "frame", 5)) {
			*skip = n + 1;
			return (uint8_t)rt;
		}
	}
	return RT_NONE;
}

static const char *read_interp_frame_line(struct reader *rd, char *line, uint8_t rt, size_t skip)
{
	if (read_interp_frame(line + skip, rt, rd->meta->interp_frames, &rd->oom))
		return rd->oom ? LINE_FATAL : "malformed interpreter frame line";
	return rd->oom ? LINE_FATAL : LINE_OK;
}

static const char *read_proc(struct reader *rd, char *line)
{
	unsigned int pid, ns_pid;

	if (sscanf(line, "proc %u %u", &pid, &ns_pid) != 2)
		return "malformed proc line";
	proc_tracker_saved_ns_pid(rd->pt, pid, ns_pid);
	return LINE_OK;
}

static const char *read_gen(struct reader *rd, char *line)
{
	unsigned int pid, gen, first = 0;
	int n = sscanf(line, "gen %u %u %u", &pid, &gen, &first);

	if (n < 2 || !gen || first > gen)
		return "malformed gen line";
	proc_tracker_saved_generation(rd->pt, pid, gen, first);
	return LINE_OK;
}

static const char *read_cgroup(struct reader *rd, char *line)
{
	unsigned long long id;
	char path[4096];

	if (sscanf(line, "cgroup %llx %4095[^\n]", &id, path) != 2)
		return "malformed cgroup line";
	if (rd->cgroups)
		cgroup_names_add(rd->cgroups, id, path);
	return LINE_OK;
}

/*
 * The optional fields after a stack's PC lists: c CGROUP, g GEN, w WEIGHT e
 * EVENT, TAG LIST (a runtime's interpreter frames) or rt RUNTIME:STATUS:HEX
 * (another runtime's units).  The number of runtime units, or -1 when malformed.
 */
static int read_stack_extras(const char *rest, struct cfi_sample_record *r, uint64_t count, int nk,
			     int nu)
{
	const char *c = strstr(rest, " c "), *g = strstr(rest, " g ");
	const char *w = strstr(rest, " w "), *rt = strstr(rest, " rt ");
	unsigned long long weight = 0, cgroup_id = 0;
	unsigned int gen = 0, event = 0;

	/* without events a stack weighs its count */
	if (!w || sscanf(w, " w %llu e %u", &weight, &event) != 2)
		weight = count, event = 0;
	r->weight = weight;
	r->event = event;
	if (c && sscanf(c, " c %llx", &cgroup_id) == 1)
		r->cgroup_id = cgroup_id;
	if (g && sscanf(g, " g %u", &gen) == 1)
		r->generation = gen;
	for (unsigned int id = RT_NONE + 1; id < RT_MAX; id++) {
		char key[16];
		const char *list;

		if (!runtime_max_frames(id) || !runtime_tag(id))
			continue;
		snprintf(key, sizeof(key), " %s ", runtime_tag(id));
		list = strstr(rest, key);
		if (list) {
			r->runtime = (uint8_t)id;
			return parse_interp_list(list + strlen(key),
						 (struct cfi_interp_frame *)(r->pcs + nk + nu),
						 (int)runtime_max_frames(id));
		}
	}
	return rt ? parse_rt_units(rt + 4, r, (uint8_t *)(r->pcs + nk + nu)) : 0;
}

static const char *read_stack(struct reader *rd, char *line)
{
	/* a record buffer big enough for any stack the walker can produce */
	static uint64_t rec_buf[(sizeof(struct cfi_sample_record) / 8) + MAX_KERNEL_FRAMES +
				MAX_USER_FRAMES_LIMIT + RT_RECORD_BYTES / 8 + 1];
	char kl[16384], ul[32768];
	struct cfi_sample_record *r = (struct cfi_sample_record *)rec_buf;
	unsigned int pid, tid, reason, flags;
	unsigned long long count;
	int nk, nu, np, used = 0;
	char comm[64];

	if (sscanf(line, "stack %llu %u %u %u %u %63s k %16383s u %32767s%n", &count, &pid, &tid,
		   &reason, &flags, comm, kl, ul, &used) != 8 ||
	    reason > UINT8_MAX || count == 0)
		return "malformed stack line";
	memset(r, 0, sizeof(*r));
	nk = parse_pcs(kl, (uint64_t *)r->pcs, MAX_KERNEL_FRAMES);
	nu = nk < 0 ? -1 : parse_pcs(ul, (uint64_t *)r->pcs + nk, MAX_USER_FRAMES_LIMIT);
	if (nk < 0 || nu < 0)
		return "malformed PC list";
	np = read_stack_extras(line + used, r, count, nk, nu);
	if (np < 0)
		return "malformed interpreter frame or runtime list";
	r->type = RECORD_SAMPLE;
	r->pid = pid;
	r->tid = tid;
	/* a reason this version does not list is kept: stop_reason_name says unknown(N) */
	r->reason = (uint8_t)reason;
	r->flags = (uint8_t)flags;
	r->nr_kernel = (uint16_t)nk;
	r->nr_user = (uint16_t)nu;
	r->nr_rt = (uint16_t)np;
	snprintf(r->comm, sizeof(r->comm), "%.15s", strcmp(comm, "-") ? comm : "");
	agg_add_n(rd->a, r,
		  sizeof(*r) + (size_t)(nk + nu) * sizeof(uint64_t) + (size_t)np * RT_UNIT_BYTES,
		  count);
	return LINE_OK;
}

static const char *read_overflow(struct reader *rd, char *line)
{
	unsigned long long n, w = 0;
	int got = sscanf(line, "overflow %llu %llu", &n, &w);

	if (got < 1)
		return "malformed overflow line";
	rd->a->overflow += n;
	rd->a->overflow_weight += got == 2 ? w : n;
	return LINE_OK;
}

static const struct {
	const char *prefix;
	const char *(*read)(struct reader *rd, char *line);
} line_kinds[] = {
    {"meta ", read_meta},	  {"estimated ", read_estimated},
    {"event ", read_event},	  {"map ", read_map},
    {"kname ", read_kname},	  {"uframe ", read_uframe},
    {"proc ", read_proc},	  {"gen ", read_gen},
    {"cgroup ", read_cgroup},	  {"stack ", read_stack},
    {"overflow ", read_overflow},
};

/* The line's handler; NULL for a comment, an empty line or a kind this version does not know. */
static const char *read_line(struct reader *rd, char *line)
{
	size_t i, skip = 0;
	uint8_t rt;

	for (i = 0; i < sizeof(line_kinds) / sizeof(line_kinds[0]); i++)
		if (!strncmp(line, line_kinds[i].prefix, strlen(line_kinds[i].prefix)))
			return line_kinds[i].read(rd, line);
	rt = interp_line_runtime(line, &skip);
	if (rt != RT_NONE)
		return read_interp_frame_line(rd, line, rt, skip);
	return line[0] != '#' && line[0] != '\n' ? "unknown line" : LINE_OK;
}

int recording_read(FILE *f, struct aggregator *a, struct proc_tracker *pt,
		   struct recording_meta *meta, struct cgroup_names *cgroups, uint64_t *bad,
		   char *err, size_t errlen)
{
	struct reader rd = {a, pt, meta, cgroups, false};
	struct saved_frames *frames = meta->frames;
	struct saved_interp *interp_frames = meta->interp_frames;
	unsigned long lineno = 1;
	const char *why;
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int ret = 0;

	memset(meta, 0, sizeof(*meta));
	meta->frames = frames;
	meta->interp_frames = interp_frames;
	*bad = 0;
	err[0] = 0;
	len = getline(&line, &cap, f);
	if (len <= 0 || strncmp(line, "# cfiprof recording v1", 22)) {
		snprintf(err, errlen,
			 "not a cfiprof recording (no '# cfiprof recording v1' header)");
		free(line);
		return -1;
	}
	while ((len = getline(&line, &cap, f)) > 0) {
		lineno++;
		/* the longest field a line holds: a stack's user PC list */
		why = (size_t)len >= 32768 ? "line too long" : read_line(&rd, line);
		if (why == LINE_FATAL) {
			ret = -1;
			break;
		}
		if (why && !(*bad)++)
			snprintf(err, errlen, "line %lu: %s", lineno, why);
	}
	free(line);
	proc_tracker_sort(pt);
	return ret;
}
