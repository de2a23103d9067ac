// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The end of an agent interval: the samples taken before it (ring-buffer
 * backlog, deferred samples) waited for a bounded time, the interval
 * symbolized into a pprof labelled with the host, written to --output-dir
 * and handed to the pusher, its cost logged.
 */
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "user/agent/agent.h"
#include "user/agent/interval_files.h"
#include "user/agent/log.h"
#include "user/output/otlp.h"
#include "user/output/pprof.h"
#include "user/profile/profile.h"
#include "user/profile/frame_names.h"
#include "user/track/cgroups.h"

/*
 * hostname plus --labels k=v,k=v: labels on every sample, so a fleet store
 * still knows the host once profiles are merged, and the same as "k=v"
 * profile comments.  Strings point into l.
 */
struct host_labels {
	struct prof_label labels[AGENT_MAX_LABELS];
	const char *comments[AGENT_MAX_LABELS];
	char buf[AGENT_MAX_LABELS * (2 * AGENT_LABEL_MAX + 2)];
	char cbuf[AGENT_MAX_LABELS][2 * AGENT_LABEL_MAX + 2];
	size_t n;
};

static void host_labels(const struct agent *a, struct host_labels *l)
{
	char *tok, *save = NULL, *eq;

	l->n = 0;
	l->labels[l->n++] = (struct prof_label){"hostname", a->hostname};
	snprintf(l->buf, sizeof(l->buf), "%s", a->cfg.labels ? a->cfg.labels : "");
	for (tok = strtok_r(l->buf, ",", &save); tok && l->n < AGENT_MAX_LABELS;
	     tok = strtok_r(NULL, ",", &save)) {
		eq = strchr(tok, '=');
		if (!eq)
			continue;
		*eq = 0;
		l->labels[l->n++] = (struct prof_label){tok, eq + 1};
	}
	for (size_t i = 0; i < l->n; i++) {
		snprintf(l->cbuf[i], sizeof(l->cbuf[i]), "%s=%s", l->labels[i].key,
			 l->labels[i].value);
		l->comments[i] = l->cbuf[i];
	}
}

static void add(uint64_t *p, uint64_t v)
{
	__atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

/* The first refusal of each cause by the symbol sources of stripped objects, logged once. */
static void log_symbol_refusals(struct agent *a)
{
	struct sym_refusal r[SYM_REFUSAL_CAUSES];
	int i;

	sym_refusals(a->s.syms, a->s.fetch, r);
	for (i = 0; i < SYM_REFUSAL_CAUSES; i++) {
		if (!r[i].n || a->sym_refusal_logged[i])
			continue;
		a->sym_refusal_logged[i] = true;
		alog(ALOG_WARN,
		     "symbols refused (logged once; cfiprof_symbols_refused_total counts)",
		     "cause=%s why=\"%s\" count=%" PRIu64, r[i].cause, r[i].what, r[i].n);
	}
}

/* A cgroup walk cut at its bound: logged the first time, counted always. */
static void log_cgroup_walk_cut(struct agent *a)
{
	uint64_t n = cgroup_names_cut_total();

	if (!n || a->cgroup_cut_logged)
		return;
	a->cgroup_cut_logged = true;
	alog(ALOG_WARN,
	     "cgroup names walk cut short (logged once; cfiprof_cgroup_walks_cut_total counts): "
	     "samples of cgroups past it have no cgroup label",
	     "max_entries=%d count=%" PRIu64, CGROUP_NAMES_MAX_ENTRIES, n);
}

/*
 * This interval's allowance for source lines; returns the counters before it,
 * for lines_interval_done.
 */
static struct src_lines_stats lines_interval_start(struct agent *a)
{
	struct src_lines_ctx *ctx = sym_cache_lines_ctx(a->s.syms);

	ctx->ns_left = (uint64_t)(a->cfg.source_lines_time * 1e9);
	return ctx->st;
}

/* The interval's cost in its log line; a kind of refusal logged the first time it happens. */
static void lines_interval_done(struct agent *a, const struct src_lines_stats *before, char *buf,
				size_t len)
{
	static const char *const cause[SRC_REFUSED_MAX] = {[SRC_REFUSED_TIME] = "time",
							   [SRC_REFUSED_OBJECT] = "object_size",
							   [SRC_REFUSED_CU] = "unit_size",
							   [SRC_REFUSED_FILES] = "files",
							   [SRC_REFUSED_OPENING] = "opening"};
	static const char *const why[SRC_REFUSED_MAX] = {
	    [SRC_REFUSED_TIME] = "the interval's --source-lines-time was spent: the other frames "
				 "keep their names and are looked up in the next interval",
	    [SRC_REFUSED_OBJECT] = "an object's debug sections are over 128 MiB, or it has more "
				   "than 1M compile units",
	    [SRC_REFUSED_CU] = "a compile unit is over 16 MiB",
	    [SRC_REFUSED_FILES] = "objects holding their DWARF file open are at their bound (256, "
				  "at most an eighth of the fd limit): others are named without "
				  "lines until some go",
	    [SRC_REFUSED_OPENING] =
		"an object's DWARF is opened apart, not on the interval's time: "
		"its frames are named without lines until it is open"};
	static bool logged[SRC_REFUSED_MAX];
	const struct src_lines_stats *st = &sym_cache_lines_ctx(a->s.syms)->st;
	uint64_t lookups = st->lookups - before->lookups, refused = 0;
	int i;

	for (i = 0; i < SRC_REFUSED_MAX; i++) {
		refused += st->refused[i] - before->refused[i];
		if (st->refused[i] && !logged[i]) {
			logged[i] = true;
			alog(ALOG_WARN, "source lines refused (logged once)",
			     "cause=%s refused=%" PRIu64 " why=%s", cause[i], st->refused[i],
			     alog_quote(why[i], (char[256]){0}, 256));
		}
	}
	snprintf(buf, len,
		 " lines_ms=%.1f lines_lookups=%" PRIu64 " lines_hits=%" PRIu64
		 " lines_refused=%" PRIu64 " lines_opens=%" PRIu64 " lines_open_bytes=%" PRIu64
		 " lines_cached=%" PRIu64,
		 (double)(st->ns - before->ns) / 1e6, lookups, st->hits - before->hits, refused,
		 st->opens - before->opens, st->open_bytes, st->cache_entries);
}

/*
 * At most --max-services an interval: services named by a process's comm
 * (any thread renames itself at will) or by cgroups a user creates would
 * otherwise each cost a pprof, a spool file and a push, and the spool's
 * bound would then drop other services' profiles.  The busiest keep their
 * names.  Counted, the first fold logged; the interval line says how many.
 */
static void fold_services(struct agent *a, struct profile *p, char *note, size_t len)
{
	static bool logged;
	struct prof_fold f;

	if (profile_fold_services(p, a->cfg.max_services, AGENT_OTHER_SERVICE, &f)) {
		alog(ALOG_ERROR, "out of memory while counting services: none folded", NULL);
		return;
	}
	snprintf(note, len, " services=%" PRIu64 " services_folded=%" PRIu64, f.services, f.folded);
	if (!f.folded)
		return;
	add(&a->ctr.services_folded, f.folded);
	add(&a->ctr.services_folded_samples, f.samples);
	if (!logged) {
		logged = true;
		alog(ALOG_WARN,
		     "more services than --max-services: the ones with the fewest samples are "
		     "pushed as one (logged once; cfiprof_services_folded_total counts)",
		     "services=%" PRIu64 " max_services=%u folded=%" PRIu64
		     " folded_samples=%" PRIu64 " as=" AGENT_OTHER_SERVICE,
		     f.services, a->cfg.max_services, f.folded, f.samples);
	}
}

/* data gzipped into *out (malloc'd); 0 or -1. */
static int gzip_buffer(const uint8_t *data, size_t len, uint8_t **out, size_t *out_len)
{
	z_stream zs = {0};
	size_t cap;
	int ret;

	/* windowBits 15 + 16: a gzip header and trailer, what Content-Encoding: gzip means */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK)
		return -1;
	/* deflateBound leaves out the gzip header and trailer: 18 bytes */
	cap = deflateBound(&zs, len) + 18;
	*out = malloc(cap);
	if (!*out) {
		deflateEnd(&zs);
		return -1;
	}
	zs.next_in = (uint8_t *)data;
	zs.avail_in = (uInt)len;
	zs.next_out = *out;
	zs.avail_out = (uInt)cap;
	ret = deflate(&zs, Z_FINISH);
	*out_len = cap - zs.avail_out;
	deflateEnd(&zs);
	if (ret != Z_STREAM_END) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

/*
 * The interval as one OTLP message (every service a resource of its own,
 * so no split by service), gzipped and spooled for --otlp; 1 when it cannot
 * be encoded (logged), else 0.
 */
static int otlp_enqueue(struct agent *a, const struct profile *p, uint64_t until_ns)
{
	struct pbuf msg = {0};
	uint8_t *gz = NULL;
	size_t gz_len = 0;
	int err;

	err = otlp_encode(p, &msg) || gzip_buffer(msg.data, msg.len, &gz, &gz_len);
	pb_free(&msg);
	if (err) {
		alog(ALOG_ERROR, "cannot encode the interval as OTLP", NULL);
		return 1;
	}
	agent_push_enqueue(a->otlp, a->from_ns, until_ns, NULL, gz, gz_len);
	free(gz);
	return 0;
}

/* Symbolizes one interval and writes / spools it.  iv is the interval's aggregator. */
void agent_flush_interval(struct agent *a, struct aggregator *iv, uint64_t until_ns)
{
	struct profile_info info = {0};
	struct prof_event pevents[PROF_MAX_EVENTS];
	struct host_labels hl;
	struct agent_retention ret;
	struct frame_namer fn;
	struct profile p;
	char name[128], q[256], lines_cost[256] = "", services[96] = "";
	struct src_lines_stats lines_before;
	uint64_t closes;
	char *gz = NULL;
	size_t gz_len = 0;
	double t0 = mono_sec(), symbolize_ms;
	int err;
	FILE *f;

	add(&a->ctr.profile_samples, iv->samples);
	add(&a->ctr.profile_late, iv->late);
	add(&a->ctr.profile_overflow, iv->overflow);
	add(&a->ctr.profile_malformed, iv->malformed);
	session_kernel_symbols_update(&a->s, a->ks);
	frame_namer_init(&fn, a->s.pt, a->ks);
	session_runtimes_namers(&a->s.runtimes, &fn, NULL);
	info.period_ns = 1000000000ull / a->cfg.freq;
	info.start_unix_ns = a->from_ns;
	info.duration_ns = until_ns > a->from_ns ? until_ns - a->from_ns : 0;
	info.event = "cpu-clock";
	info.nr_events = session_prof_events(&a->s, pevents);
	info.events = pevents;
	host_labels(a, &hl);
	info.labels = hl.labels;
	info.nr_labels = hl.n;
	info.comments = hl.comments;
	info.nr_comments = hl.n;
	/* checked when the config was read */
	agent_labels_omitted(a->cfg.sample_labels, &info.labels_omitted);
	info.service_name = a->cfg.app_name && *a->cfg.app_name ? a->cfg.app_name : NULL;
	info.service_by_process = !info.service_name;
	/*
	 * cgroup and container labels; a fresh id -> path table per interval,
	 * so cgroups that came and went do not accumulate in a long-lived agent
	 */
	info.cgroups = cgroup_names_new();
	lines_before = lines_interval_start(a);
	err = profile_build(&p, iv, &fn, &info);
	if (!err && info.service_by_process)
		fold_services(a, &p, services, sizeof(services));
	symbolize_ms = (mono_sec() - t0) * 1e3;
	/* before the counters: a handle this interval did not use gives its memory back */
	closes = sym_cache_lines_ctx(a->s.syms)->st.closes;
	src_lines_close_idle(sym_cache_lines_ctx(a->s.syms));
	/* to the system: its buffers were megabytes, which malloc keeps in its heap otherwise */
	if (sym_cache_lines_ctx(a->s.syms)->st.closes != closes)
		malloc_trim(0);
	lines_interval_done(a, &lines_before, lines_cost, sizeof(lines_cost));
	cgroup_names_free(info.cgroups);
	log_cgroup_walk_cut(a);
	log_symbol_refusals(a);
	if (err) {
		frame_namer_free(&fn);
		alog(ALOG_ERROR, "out of memory while symbolizing the interval", "samples=%" PRIu64,
		     iv->samples);
		add(&a->ctr.write_errors, 1);
		return;
	}
	f = open_memstream(&gz, &gz_len);
	err = !f || pprof_write(f, &p);
	if (f)
		fclose(f);
	if (!err && a->push)
		add(&a->ctr.write_errors, agent_push_profile(a->push, &p, info.service_by_process,
							     a->from_ns, until_ns, gz, gz_len));
	if (!err && a->otlp)
		add(&a->ctr.write_errors, (uint64_t)otlp_enqueue(a, &p, until_ns));
	profile_free(&p);
	/*
	 * symbolized: processes that exited can go, so churn does not grow
	 * memory; what their loads and names took goes back to the system,
	 * else malloc keeps the high-water mark of a burst of loads for good
	 */
	if (proc_tracker_forget_exited(a->s.pt))
		malloc_trim(0);
	session_runtimes_sweep(&a->s.runtimes);
	frame_namer_free(&fn);
	if (err) {
		alog(ALOG_ERROR, "cannot encode the interval profile", "samples=%" PRIu64,
		     iv->samples);
		add(&a->ctr.write_errors, 1);
		goto out;
	}
	name[0] = 0;
	if (a->cfg.output_dir && *a->cfg.output_dir) {
		agent_profile_name(a->from_ns, name, sizeof(name));
		err = agent_write_atomic(a->cfg.output_dir, name, gz, gz_len);
		if (err) {
			alog(ALOG_ERROR, "cannot write the interval profile",
			     "dir=%s file=%s error=%s", alog_quote(a->cfg.output_dir, q, sizeof(q)),
			     name, alog_quote(strerror(-err), (char[128]){0}, 128));
			add(&a->ctr.write_errors, 1);
			name[0] = 0;
		}
		if (!agent_retain(a->cfg.output_dir, a->cfg.retain_age, a->cfg.retain_bytes,
				  &ret) &&
		    ret.removed) {
			add(&a->ctr.files_removed, ret.removed);
			alog(ALOG_INFO, "retention removed old profiles",
			     "removed=%" PRIu64 " removed_bytes=%" PRIu64 " kept=%" PRIu64
			     " kept_bytes=%" PRIu64,
			     ret.removed, ret.removed_bytes, ret.files, ret.bytes);
		}
	}
	add(&a->ctr.intervals, 1);
	__atomic_store_n(&a->ctr.last_interval_unix, until_ns / 1000000000ull, __ATOMIC_RELAXED);
	alog(ALOG_INFO, "interval",
	     "file=%s samples=%" PRIu64 " late=%" PRIu64 " waited=%" PRIu64 " stacks=%" PRIu64
	     " overflow=%" PRIu64 " bytes=%zu duration=%.3fs build_ms=%.1f symbolize_ms=%.1f%s%s",
	     name[0] ? name : "-", iv->samples, iv->late, iv->waited, iv->nr_stacks, iv->overflow,
	     gz_len, (double)info.duration_ns / 1e9, (mono_sec() - t0) * 1e3, symbolize_ms,
	     services, lines_cost);
out:
	free(gz);
	a->from_ns = until_ns;
}

/*
 * How long an interval's end waits for its late samples: a cold libLLVM's
 * tables take ~120 ms idle, seconds on a loaded host; at most a tenth of the
 * interval (1 s at most): symbolizing the interval follows the wait, and on a
 * host under load both together must stay within the interval, or the agent
 * falls behind its schedule (test_hostile_suite: 10 files in 12 s at 1 s with
 * a fifth).
 */
static double interval_close_wait(const struct agent_config *c)
{
	if (c->interval_wait > 0)
		return c->interval_wait;
	return c->interval / 10 < 1.0 ? c->interval / 10 : 1.0;
}

/* Swaps the consumer's aggregator for an empty one, then flushes the full one. */
void agent_end_interval(struct agent *a)
{
	struct aggregator fresh, iv;
	uint64_t until_ns;

	if (agg_init(&fresh, a->cfg.max_stacks)) {
		alog(ALOG_ERROR, "out of memory for the next interval: this one goes on", NULL);
		return;
	}
	/*
	 * What was sampled before the end still arrives: the ring buffer's
	 * backlog, and samples taken before their tables were in, finished by
	 * the deferred queue.  They belong to this interval: it waits for them,
	 * a bounded time.
	 */
	until_ns = session_interval_swap(&a->s, &fresh, &iv);
	session_interval_close(&a->s, interval_close_wait(&a->cfg));
	agent_flush_interval(a, &iv, until_ns);
	agg_free(&iv);
}
