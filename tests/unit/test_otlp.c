// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * OTLP writer: profiles encoded by user/output/otlp.c, decoded by a decoder
 * that is not ours (`protoc --decode` with OpenTelemetry's own protos,
 * tests/proto, v1.11.0) and read by tests/lib/otlp_read.py, which also
 * checks what the proto asks beyond the wire format (zero entries, indices
 * inside their tables, unique attribute keys):
 *  - hand_built: stacks (inline lines, kernel, Python, unresolved and
 *    incomplete frames), identical samples merged, one resource per process
 *    with the semantic conventions' attributes (container.id and k8s.pod.uid
 *    from a kubelet cgroup), profile.frame.type per location, build ids on
 *    mappings, a name that is not UTF-8 written as U+FFFD;
 *  - events: one Profile per event, off-CPU time and a probe's hits with
 *    their periods;
 *  - omitted: with the pid left out (the agent's default) one resource per
 *    service, without process attributes;
 *  - fuzz: 300 random profiles (names of any bytes, dangling events, any
 *    labels) each decode, pass the checks and keep every sample's value;
 *  - read_back: otlp_read (report's reader) gives the hand-built profile's
 *    folded output back, and an events profile's values;
 *  - read_hostile: every truncation and thousands of byte flips of real
 *    messages are read without a fault (ASan in make test), and what is
 *    read encodes and decodes again.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/xorshift.h"
#include "user/output/format.h"
#include "user/output/otlp.h"
#include "user/output/otlp_read.h"
#include "user/profile/profile.h"
#include "user/symbolize/runtime_units.h"

#define PERIOD_NS 10000000ULL
#define HEX64	  "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID	  "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
#define UIDS	  "0f1e2d3c_4b5a_6978_8796_a5b4c3d2e1f0"
#define CGROUP                                                                                     \
	"/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UIDS                   \
	".slice/cri-containerd-" HEX64 ".scope"
#define BUILD_ID "5a3f0c1e9b7d2468ace013579bdf2468ace01357"

static char tmpdir[] = "/tmp/test_otlp.XXXXXX";
static char root[PATH_MAX];

/* p encoded (otlp_encode: otlp_write's encoder) into the file path; 0 or -1. */
static int write_otlp(const char *path, const struct profile *p)
{
	struct pbuf msg = {0};
	int err = otlp_encode(p, &msg);
	FILE *f = err ? NULL : fopen(path, "w");

	err = !f || (msg.len && fwrite(msg.data, 1, msg.len, f) != msg.len);
	if (f && fclose(f))
		err = 1;
	pb_free(&msg);
	return err ? -1 : 0;
}

/* p written as NAME.otlp.pb, decoded by protoc and read by otlp_read.py; its lines, or NULL. */
static char *decode(const char *name, const struct profile *p)
{
	char path[PATH_MAX], out[PATH_MAX + 8];
	int rc;

	snprintf(path, sizeof(path), "%s/%s.otlp.pb", tmpdir, name);
	CHECK(write_otlp(path, p) == 0, "%s: otlp_write failed", name);
	rc = sh_fmt(
	    "cd %s/tests/proto && protoc "
	    "--decode=opentelemetry.proto.profiles.v1development.ProfilesData "
	    "opentelemetry/proto/profiles/v1development/profiles.proto < %s > %s.txt 2> %s.err "
	    "&& python3 ../lib/otlp_read.py < %s.txt > %s.out 2>> %s.err",
	    root, path, path, path, path, path, path);
	snprintf(out, sizeof(out), "%s.err", path);
	if (rc) {
		char *err = slurp(out);

		CHECK(0, "%s: protoc or otlp_read.py failed (%d): %s", name, rc, err ? err : "");
		free(err);
		return NULL;
	}
	snprintf(out, sizeof(out), "%s.out", path);
	return slurp(out);
}

/* Whether text has line as one of its lines. */
static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, line, n) && (p[n] == '\n' || !p[n]))
			return true;
	return false;
}

static size_t count_prefix(const char *text, const char *prefix)
{
	size_t n = 0, len = strlen(prefix);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += !strncmp(p, prefix, len);
	return n;
}

#define EXPECT_LINE(text, line)                                                                    \
	CHECK(text &&has_line(text, line), "no line '%s' in:\n%s", line, text ? text : "")

/* ---- the hand-built profile ---- */

enum { L_LEAF, L_MAIN, L_PY, L_SYSCALL, L_UNRESOLVED, L_INCOMPLETE, L_BAD, NR_LOCS };

static struct prof_mapping maps[] = {
    {0x400000, 0x402000, 0, "/usr/bin/app", BUILD_ID, 100},
    {0x7f0000000000, 0x7f0000200000, 0x28000, "/usr/lib/libc.so.6", "", 200},
};

static struct prof_line leaf_lines[] = {
    {"inlined_helper", "_Z14inlined_helperv", "app.c", 12, 10},
    {"leaf", "leaf", "app.c", 30, 25},
};
static struct prof_line py_line[] = {{"work", "work", "w.py", 3, 1}};

static struct prof_location locs[NR_LOCS] = {
    [L_LEAF] = {0x401100, 0x1100, 1, PROF_LOC_USER, "leaf", 2, 0, leaf_lines},
    [L_MAIN] = {0x401400, 0x1400, 1, PROF_LOC_USER, "main"},
    [L_PY] = {0x7f00000011, 0, 0, PROF_LOC_INTERP + RT_PYTHON, "work (w.py:3)", 1, 0, py_line},
    [L_SYSCALL] = {0xffffffff81e00100, 0, 0, PROF_LOC_KERNEL, "do_syscall_64"},
    [L_UNRESOLVED] = {0x7f0000001234, 0x1234, 2, PROF_LOC_USER, "libc.so.6+0x1234"},
    [L_INCOMPLETE] = {0, 0, 0, PROF_LOC_SYNTHETIC, "[incomplete: no-rule]"},
    [L_BAD] = {0x401500, 0x1500, 1, PROF_LOC_USER, "bad\xff\xfename"},
};

static uint32_t s_leaf[] = {L_LEAF, L_MAIN};
static uint32_t s_kernel[] = {L_SYSCALL, L_LEAF, L_MAIN};
static uint32_t s_py[] = {L_PY, L_UNRESOLVED};
static uint32_t s_bad[] = {L_BAD, L_INCOMPLETE};

#define STACK(s) .nr_locs = (uint32_t)(sizeof(s) / sizeof(s[0])), .locs = s

static struct prof_sample samples[] = {
    {.count = 5,
     .pid = 100,
     .tid = 100,
     .comm = "app",
     .cgroup = CGROUP,
     .container = HEX64,
     .service = "shop",
     STACK(s_leaf)},
    {.count = 3,
     .pid = 100,
     .tid = 101,
     .comm = "app-worker",
     .cgroup = CGROUP,
     .container = HEX64,
     .service = "shop",
     STACK(s_kernel)},
    {.count = 4, .pid = 200, .tid = 200, .comm = "python3", STACK(s_py)},
    {.count = 2, .pid = 200, .tid = 201, .comm = "python3", .reason = STOP_NO_RULE, STACK(s_bad)},
    /* S0 again but for what the output does not carry: one Sample of 6 */
    {.count = 1,
     .pid = 100,
     .tid = 100,
     .comm = "app",
     .root = "other",
     .cgroup = CGROUP,
     .container = HEX64,
     .service = "shop",
     STACK(s_leaf)},
};

static const struct prof_label labels[] = {{"hostname", "h1"}, {"env", "prod"}};

static void fill_profile(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	p->samples = samples;
	p->nr_samples = sizeof(samples) / sizeof(samples[0]);
	p->locs = locs;
	p->nr_locs = NR_LOCS;
	p->maps = maps;
	p->nr_maps = sizeof(maps) / sizeof(maps[0]);
	p->period_ns = PERIOD_NS;
	p->start_unix_ns = 1700000000123456789ULL;
	p->duration_ns = 3000000000ULL;
	p->event = "cpu-clock";
	p->labels = labels;
	p->nr_labels = sizeof(labels) / sizeof(labels[0]);
}

static void test_hand_built(void)
{
	struct profile p;
	char *out;

	fill_profile(&p);
	out = decode("hand", &p);
	EXPECT_LINE(out, "R container.id=" HEX64 ",env=prod,host.name=h1,k8s.pod.uid=" UID
			 ",process.executable.name=app,process.pid=100,service.name=shop");
	EXPECT_LINE(out, "R env=prod,host.name=h1,process.executable.name=python3,"
			 "process.pid=200,service.name=unknown_service:python3");
	CHECK(out && count_prefix(out, "R ") == 2 && count_prefix(out, "P ") == 2,
	      "one resource and one profile per process:\n%s", out ? out : "");
	EXPECT_LINE(out, "P samples/count cpu/nanoseconds 10000000");
	EXPECT_LINE(out, "S samples/count main;leaf;inlined_helper 6");
	EXPECT_LINE(out, "S samples/count main;leaf;inlined_helper;do_syscall_64 3");
	EXPECT_LINE(out, "S samples/count libc.so.6+0x1234;work 4");
	EXPECT_LINE(out, "S samples/count [incomplete: no-rule];bad\xef\xbf\xbd\xef\xbf\xbdname 2");
	CHECK(out && count_prefix(out, "S ") == 4, "4 samples:\n%s", out ? out : "");
	EXPECT_LINE(out, "F inlined_helper native /usr/bin/app " BUILD_ID);
	EXPECT_LINE(out, "F leaf native /usr/bin/app " BUILD_ID);
	EXPECT_LINE(out, "F do_syscall_64 kernel [kernel.kallsyms] -");
	EXPECT_LINE(out, "F work cpython - -");
	EXPECT_LINE(out, "F libc.so.6+0x1234 native /usr/lib/libc.so.6 -");
	EXPECT_LINE(out, "F [incomplete: no-rule] - - -");
	free(out);
}

static void test_events(void)
{
	static struct prof_sample ev_samples[] = {
	    {.count = 1,
	     .value = 5000,
	     .event = 0,
	     .pid = 100,
	     .tid = 100,
	     .comm = "app",
	     STACK(s_leaf)},
	    {.count = 7,
	     .value = 7,
	     .event = 1,
	     .pid = 100,
	     .tid = 100,
	     .comm = "app",
	     STACK(s_kernel)},
	    {.count = 2,
	     .value = 2000,
	     .event = 0,
	     .pid = 100,
	     .tid = 100,
	     .comm = "app",
	     STACK(s_leaf)},
	};
	struct profile p;
	char *out;

	fill_profile(&p);
	p.samples = ev_samples;
	p.nr_samples = 3;
	p.unit = PROF_UNIT_NANOSECONDS;
	p.nr_events = 2;
	p.events[0] = (struct prof_event){"off-cpu", "off_cpu", "nanoseconds", false};
	p.events[1] = (struct prof_event){"uprobe:/bin/x:f", "uprobe:/bin/x:f", "count", false};
	out = decode("events", &p);
	EXPECT_LINE(out, "P off_cpu/nanoseconds / 0");
	EXPECT_LINE(out, "P uprobe:/bin/x:f/count uprobe:/bin/x:f/count 1");
	EXPECT_LINE(out, "S off_cpu/nanoseconds main;leaf;inlined_helper 7000");
	EXPECT_LINE(out, "S uprobe:/bin/x:f/count main;leaf;inlined_helper;do_syscall_64 7");
	free(out);
}

static void test_omitted(void)
{
	static struct prof_sample svc[sizeof(samples) / sizeof(samples[0])];
	struct profile p;
	char *out;

	fill_profile(&p);
	memcpy(svc, samples, sizeof(samples));
	for (size_t i = 0; i < sizeof(svc) / sizeof(svc[0]); i++)
		svc[i].service = "all";
	p.samples = svc;
	p.labels_omitted = PROF_LABELS_ALL & ~PROF_LABEL_COMM;
	out = decode("omitted", &p);
	EXPECT_LINE(out, "R env=prod,host.name=h1,service.name=all");
	CHECK(out && count_prefix(out, "R ") == 1, "one resource:\n%s", out ? out : "");
	free(out);
}

/* ---- random profiles ---- */

#define FUZZ_PROFILES 300

struct fuzz {
	struct profile p;
	struct prof_mapping maps[4];
	struct prof_location locs[24];
	struct prof_line lines[24][3];
	struct prof_sample samples[16];
	uint32_t stacks[16][12];
	struct prof_label labels[3];
	char strs[256][16];
	size_t nr_strs;
};

/* A name of 0 to 14 bytes, any but NUL: ASCII, UTF-8 and bytes no UTF-8 has. */
static const char *fuzz_str(struct fuzz *z)
{
	static const char *const pieces[] = {"a",
					     "_Z3foov",
					     "é",
					     "\xe2\x82\xac",
					     "\xff",
					     "\xc3",
					     "\xed\xa0\x80",
					     "\xf4\x90\x80\x80",
					     ";",
					     " ",
					     "\\\"",
					     "\x01",
					     "\xef\xbf\xbd"};
	char *s = z->strs[z->nr_strs++ % 256];
	size_t n = 0, want = rnd_below(6);

	for (size_t i = 0; i < want; i++) {
		const char *piece = pieces[rnd_below(sizeof(pieces) / sizeof(pieces[0]))];

		if (n + strlen(piece) >= 15)
			break;
		memcpy(s + n, piece, strlen(piece));
		n += strlen(piece);
	}
	s[n] = 0;
	return s;
}

static const char *fuzz_pick(const char *const *set, size_t n)
{
	return set[rnd_below(n)];
}

static void fuzz_profile(struct fuzz *z, uint64_t *total)
{
	static const char *const cgroups[] = {NULL, CGROUP, "/kubepods/burstable/pod" UID "/x",
					      "/system.slice/a.service", "/kubepods/pod"};
	static const char *const keys[] = {"hostname", "service.name", "env", "k8s.pod.uid", "x"};
	struct profile *p = &z->p;

	memset(z, 0, sizeof(*z));
	p->nr_maps = rnd_below(5);
	p->nr_locs = rnd_below(25);
	p->nr_samples = rnd_below(17);
	p->nr_events = rnd_below(4);
	for (size_t i = 0; i < p->nr_maps; i++)
		z->maps[i] = (struct prof_mapping){rnd(),
						   rnd(),
						   rnd(),
						   fuzz_str(z),
						   rnd_below(2) ? fuzz_str(z) : "",
						   (uint32_t)rnd_below(3)};
	for (size_t i = 0; i < p->nr_locs; i++) {
		struct prof_location *l = &z->locs[i];

		*l = (struct prof_location){.addr = rnd(),
					    .rel_addr = rnd(),
					    .mapping = (uint32_t)rnd_below(p->nr_maps + 3),
					    .kind = (uint32_t)rnd_below(4),
					    .function = fuzz_str(z)};
		l->nr_lines = (uint32_t)rnd_below(4);
		l->lines = z->lines[i];
		for (uint32_t j = 0; j < l->nr_lines; j++)
			z->lines[i][j] = (struct prof_line){
			    fuzz_str(z), rnd_below(2) ? fuzz_str(z) : NULL,
			    rnd_below(2) ? fuzz_str(z) : NULL, (uint32_t)rnd(), (uint32_t)rnd()};
	}
	for (size_t i = 0; i < p->nr_events; i++)
		p->events[i] =
		    (struct prof_event){fuzz_str(z), fuzz_str(z), fuzz_str(z), rnd_below(2)};
	*total = 0;
	for (size_t i = 0; i < p->nr_samples; i++) {
		struct prof_sample *s = &z->samples[i];

		s->count = rnd_below(1000);
		s->value = rnd() >> 8; /* 16 add up inside an int64 */
		s->event = (uint32_t)rnd_below(p->nr_events + 1);
		s->pid = (uint32_t)rnd_below(4);
		s->tid = (uint32_t)rnd_below(6);
		s->ns_pid = (uint32_t)rnd_below(4);
		s->comm = rnd_below(4) ? fuzz_str(z) : NULL;
		s->cgroup = fuzz_pick(cgroups, sizeof(cgroups) / sizeof(cgroups[0]));
		s->container = rnd_below(2) ? fuzz_str(z) : NULL;
		s->service = rnd_below(2) ? fuzz_str(z) : NULL;
		s->reason = (uint32_t)rnd_below(8);
		s->nr_locs = p->nr_locs ? (uint32_t)rnd_below(13) : 0;
		s->locs = z->stacks[i];
		for (uint32_t j = 0; j < s->nr_locs; j++)
			s->locs[j] = (uint32_t)rnd_below(p->nr_locs);
		/* a sample of an event the profile does not have is in no Profile */
		if (!p->nr_events || s->event < p->nr_events)
			*total += prof_value(p, s);
	}
	for (size_t i = 0; i < 3; i++)
		z->labels[i] = (struct prof_label){fuzz_pick(keys, 5), fuzz_str(z)};
	p->maps = z->maps;
	p->locs = z->locs;
	p->samples = z->samples;
	p->labels = z->labels;
	p->nr_labels = rnd_below(4);
	p->labels_omitted = (uint32_t)rnd_below(PROF_LABELS_ALL + 1);
	p->period_ns = rnd_below(2) ? rnd() : 0;
	p->start_unix_ns = rnd();
	p->duration_ns = rnd();
}

/* The sum of the S lines' values of each "= FILE" section of out, by file number. */
static void sum_values(const char *out, uint64_t *sums, size_t n)
{
	long cur = -1;

	for (const char *l = out; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *sp;

		if (!strncmp(l, "= ", 2)) {
			const char *base = l + strcspn(l, "\n");

			while (base > l && base[-1] != '/')
				base--;
			cur = strtol(base, NULL, 10);
		} else if (!strncmp(l, "S ", 2) && cur >= 0 && (size_t)cur < n) {
			const char *end = strchr(l, '\n');

			for (sp = end ? end : l + strlen(l); sp > l && sp[-1] != ' '; sp--)
				;
			sums[cur] += strtoull(sp, NULL, 10);
		}
	}
}

static void test_fuzz(void)
{
	static struct fuzz z;
	static uint64_t want[FUZZ_PROFILES], got[FUZZ_PROFILES];
	char path[PATH_MAX], *out;
	size_t bad = 0;
	int rc;

	sh_fmt("mkdir -p %s/fuzz", tmpdir);
	for (size_t i = 0; i < FUZZ_PROFILES; i++) {
		fuzz_profile(&z, &want[i]);
		snprintf(path, sizeof(path), "%s/fuzz/%zu.otlp.pb", tmpdir, i);
		bad += write_otlp(path, &z.p) != 0;
	}
	CHECK(bad == 0, "%zu random profiles could not be written", bad);
	/* protoc on each; the reader once over all */
	rc = sh_fmt("cd %s/tests/proto && for f in %s/fuzz/*.otlp.pb; do protoc "
		    "--decode=opentelemetry.proto.profiles.v1development.ProfilesData "
		    "opentelemetry/proto/profiles/v1development/profiles.proto < $f > $f.txt "
		    "2>> %s/fuzz/protoc.err || echo $f >> %s/fuzz/failed; done; "
		    "[ ! -s %s/fuzz/failed ] && python3 ../lib/otlp_read.py %s/fuzz/*.txt > "
		    "%s/fuzz/all.out 2> %s/fuzz/read.err",
		    root, tmpdir, tmpdir, tmpdir, tmpdir, tmpdir, tmpdir, tmpdir);
	snprintf(path, sizeof(path), "%s/fuzz/failed", tmpdir);
	out = slurp(path);
	CHECK(rc == 0, "random profiles protoc or otlp_read.py refused (exit %d): %.300s", rc,
	      out ? out : "see read.err");
	free(out);
	snprintf(path, sizeof(path), "%s/fuzz/all.out", tmpdir);
	out = slurp(path);
	sum_values(out, got, FUZZ_PROFILES);
	bad = 0;
	for (size_t i = 0; i < FUZZ_PROFILES; i++)
		if (got[i] != want[i] && bad++ < 3)
			printf("profile %zu: values add up to %" PRIu64 ", want %" PRIu64 "\n", i,
			       got[i], want[i]);
	CHECK(out && bad == 0, "%zu of %d random profiles lost or made up values", bad,
	      FUZZ_PROFILES);
	free(out);
}

/* p as folded text (the default view), malloc'd; NULL if it could not be written. */
static char *folded_of(struct profile *p)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int err = !f || output_write(f, p, OUT_FOLDED, "t", NULL);

	if (f)
		fclose(f);
	if (err) {
		free(text);
		return NULL;
	}
	return text;
}

/* p encoded and read back by otlp_read into *back; 0 or -1. */
static int round_trip(const struct profile *p, struct profile *back, char *err, size_t errlen)
{
	struct pbuf msg = {0};
	int ret = otlp_encode(p, &msg) ? -1 : otlp_read(msg.data, msg.len, back, err, errlen);

	pb_free(&msg);
	return ret;
}

static void test_read_back(void)
{
	static struct prof_sample ok[4];
	/* as folded writes the hand-built profile (inline levels as frames, kernel _[k]) */
	static const char want[] = "app;main;leaf;inlined_helper 6\n"
				   "python3;libc.so.6+0x1234;work (w.py:3) 4\n"
				   "app-worker;main;leaf;inlined_helper;do_syscall_64_[k] 3\n";
	struct profile p, back, ev;
	char err[256] = "", *got;

	/* the name that is not UTF-8 comes back as U+FFFD: all samples but its own */
	fill_profile(&p);
	memcpy(ok, samples, sizeof(ok[0]) * 3);
	ok[3] = samples[4];
	p.samples = ok;
	p.nr_samples = 4;
	CHECK(round_trip(&p, &back, err, sizeof(err)) == 0, "read back: %s", err);
	got = folded_of(&back);
	CHECK(got && !strcmp(want, got), "read back, folded:\n%s\nwant:\n%s", got ? got : "", want);
	CHECK(back.nr_events == 0 && back.period_ns == PERIOD_NS && back.total == 13,
	      "read back: %zu events, period %" PRIu64 ", total %" PRIu64, back.nr_events,
	      back.period_ns, back.total);
	free(got);
	profile_free(&back);

	/* events: each type an event again, values kept */
	fill_profile(&ev);
	ev.samples = ok;
	ev.nr_samples = 2;
	ev.nr_events = 2;
	ok[0].event = 0, ok[0].value = 5000;
	ok[1].event = 1, ok[1].value = 7;
	ev.events[0] = (struct prof_event){"off-cpu", "off_cpu", "nanoseconds", false};
	ev.events[1] = (struct prof_event){"page-faults", "page-faults", "count", false};
	CHECK(round_trip(&ev, &back, err, sizeof(err)) == 0, "events read back: %s", err);
	CHECK(back.nr_events == 2 && !strcmp(back.events[0].type, "off_cpu") &&
		  !strcmp(back.events[1].unit, "count") && back.nr_samples == 2 &&
		  back.samples[0].value + back.samples[1].value == 5007,
	      "events read back: %zu events, %zu samples", back.nr_events, back.nr_samples);
	profile_free(&back);
}

static void test_read_hostile(void)
{
	static struct fuzz z;
	struct pbuf msg = {0}, again = {0};
	struct profile back;
	size_t read = 0, refused = 0, bad_again = 0;
	char err[256];
	uint64_t total;

	for (int round = 0; round < 40; round++) {
		fuzz_profile(&z, &total);
		msg.len = 0;
		if (otlp_encode(&z.p, &msg))
			continue;
		for (size_t cut = 0; cut <= msg.len; cut += 1 + msg.len / 64) {
			for (int flip = 0; flip < 16; flip++) {
				uint8_t *copy = malloc(msg.len + 1);

				memcpy(copy, msg.data, msg.len);
				if (flip && cut)
					copy[rnd_below(cut)] ^= (uint8_t)(1u << rnd_below(8));
				if (otlp_read(copy, cut, &back, err, sizeof(err))) {
					refused++;
				} else {
					read++;
					again.len = 0;
					bad_again +=
					    profile_check(&back) || otlp_encode(&back, &again);
					profile_free(&back);
				}
				free(copy);
			}
		}
	}
	printf("hostile: %zu read, %zu refused\n", read, refused);
	CHECK(read && refused, "truncated and flipped messages: %zu read, %zu refused", read,
	      refused);
	CHECK(bad_again == 0, "%zu profiles read from damaged messages do not encode again",
	      bad_again);
	pb_free(&msg);
	pb_free(&again);
}

/*
 * The one list of frame types (with each runtime's from CFI_RUNTIMES):
 * every kind of code has one, no two the same,
 * read back as the kind it was written for; an unknown type is native code.
 */
static void test_frame_types(void)
{
	for (uint32_t k = 0; k < PROF_LOC_KINDS; k++) {
		const char *t = prof_loc_frame_type(k);

		/* [incomplete: ...], and a runtime's kind when its units are no frames (Go's
		 * labels) */
		if (k == PROF_LOC_SYNTHETIC ||
		    (k >= PROF_LOC_INTERP && !runtime_max_frames(k - PROF_LOC_INTERP))) {
			CHECK(!t, "kind %u is no code, typed %s", k, t);
			continue;
		}
		CHECK(t && prof_loc_kind_of(t) == k, "kind %u: type %s, read back as %u", k,
		      t ? t : "(none)", t ? prof_loc_kind_of(t) : 0);
	}
	CHECK(!strcmp(prof_loc_frame_type(PROF_LOC_GO), "go") &&
		  !strcmp(prof_loc_frame_type(PROF_LOC_INTERP + RT_PYTHON), "cpython"),
	      "the conventions' names: go %s, cpython %s", prof_loc_frame_type(PROF_LOC_GO),
	      prof_loc_frame_type(PROF_LOC_INTERP + RT_PYTHON));
	CHECK(prof_loc_kind_of("beam") == PROF_LOC_USER, "a type not listed is native code");
	CHECK(!prof_loc_frame_type(PROF_LOC_KINDS), "a kind past the list has no type");
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!getcwd(root, sizeof(root)) || !mkdtemp(tmpdir)) {
		perror("test_otlp");
		return 1;
	}
	CHECK(tool_exists("protoc") && tool_exists("python3"),
	      "protoc or python3 is missing (make test-deps)");
	RUN_TEST(test_hand_built);
	RUN_TEST(test_events);
	RUN_TEST(test_omitted);
	RUN_TEST(test_fuzz);
	RUN_TEST(test_read_back);
	RUN_TEST(test_read_hostile);
	RUN_TEST(test_frame_types);
	if (!harness_failed)
		sh_fmt("rm -rf %s", tmpdir);
	else
		printf("files kept in %s\n", tmpdir);
	return HARNESS_DONE();
}
