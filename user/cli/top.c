// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * cfiprof top: a live view of the hottest functions, like perf top.  Every
 * second the consumer's stack table is swapped for an empty one and the
 * interval is symbolized off the consumer's path; counts decay so the view
 * follows what the system does now.  'q' quits.
 */
#include <argp.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "user/track/cgroups.h"
#include "common/heap.h"
#include "common/parse.h"
#include "common/vec.h"
#include "user/cli/commands.h"
#include "user/cli/symbol_opts.h"
#include "user/cli/target_opts.h"
#include "user/output/utf8.h"
#include "user/profile/frame_names.h"
#include "user/symbolize/kallsyms.h"
#include "user/profile/profile.h"
#include "user/session/session.h"

#define DECAY 0.75

static struct top_args {
	struct session_opts so;
	struct target_opts target;
	struct symbol_opts sym;
	int rows;
} args = {
	.so = {.freq = 99, .max_frames = DEFAULT_USER_FRAMES, .kernel = true, .rows_max = 4u << 20,
	       .defer_stack = SESSION_DEFER_STACK,
	       .table_idle_ttl = SESSION_TABLE_IDLE_TTL,
	       .max_stacks = 1u << 18},
};

static const struct argp_option opts[] = {
	{"rows", 'n', "N", 0, "functions shown (default: fit the terminal, 20 otherwise)", 0},
	{},
};

static error_t parse_opt(int key, char *arg, struct argp_state *state)
{
	uint32_t v;

	switch (key) {
	case ARGP_KEY_INIT:
		args.target.so = &args.so;
		state->child_inputs[0] = &args.target;
		state->child_inputs[1] = &args.sym;
		break;
	case 'n':
		if (parse_u32(arg, 1, 10000, &v))
			argp_error(state, "invalid row count '%s'", arg);
		args.rows = (int)v;
		break;
	case ARGP_KEY_END:
		if (target_opts_count(&args.so) > 1)
			argp_error(state, "-p, -a and --cgroup/--container exclude each other");
		if (!args.so.nr_pids && !args.so.cgroup[0])
			args.so.all = true;
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

struct fn_stat {
	const char *name; /* owned */
	double self, total;
	bool seen; /* in this interval's sample, for counting total once */
};

struct top_state {
	struct fn_stat *v;
	uint64_t nr, cap;
	double samples; /* decayed, like the functions */
	uint64_t last_samples, last_complete;
	bool tty_out, tty_in;
	struct termios saved;
	struct ksyms *ks;
};

static struct fn_stat *stat_for(struct top_state *t, const char *name)
{
	size_t i;

	/* a few hundred hot functions: a linear scan costs less than the symbolization */
	for (i = 0; i < t->nr; i++) {
		if (!strcmp(t->v[i].name, name))
			return &t->v[i];
	}
	if (VEC_RESERVE(t->v, t->nr, t->cap, 256))
		return NULL;
	t->v[t->nr] = (struct fn_stat){.name = strdup(name)};
	if (!t->v[t->nr].name)
		return NULL;
	return &t->v[t->nr++];
}

static int by_self(const void *a, const void *b)
{
	const struct fn_stat *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return x->total > y->total ? -1 : x->total < y->total;
}

static void account(struct top_state *t, const struct profile *p)
{
	size_t i, k;

	for (i = 0; i < t->nr; i++) {
		t->v[i].self *= DECAY;
		t->v[i].total *= DECAY;
	}
	t->samples *= DECAY;
	for (i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *ps = &p->samples[i];
		struct fn_stat *st;

		t->samples += (double)prof_value(p, ps);
		for (k = 0; k < ps->nr_locs; k++) {
			const struct prof_location *l = &p->locs[ps->locs[k]];

			st = stat_for(t, l->function);
			if (!st)
				continue;
			if (k == 0)
				st->self += (double)prof_value(p, ps);
			/* recursion: a function counts once per sample in its total */
			if (!st->seen) {
				st->total += (double)prof_value(p, ps);
				st->seen = true;
			}
		}
		for (k = 0; k < ps->nr_locs; k++) {
			st = stat_for(t, p->locs[ps->locs[k]].function);
			if (st)
				st->seen = false;
		}
	}
}

static void render(struct session *s, struct top_state *t)
{
	uint64_t samples, complete, lost;
	struct winsize ws;
	int rows = args.rows ? args.rows : 20, i;

	if (!args.rows && t->tty_out && !ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) && ws.ws_row > 6)
		rows = ws.ws_row - 5;
	session_progress(s, &samples, &complete, &lost);
	qsort(t->v, t->nr, sizeof(*t->v), by_self);
	if (t->tty_out)
		printf("\033[H\033[2J");
	printf("cfiprof top: %.0f s, %" PRIu64 " samples/s, %.1f%% complete stacks, %" PRIu64
	       " lost%s\n",
	       mono_sec() - s->start, samples - t->last_samples,
	       samples > t->last_samples
		       ? 100.0 * (double)(complete - t->last_complete) /
				 (double)(samples - t->last_samples)
		       : 0.0,
	       lost, t->tty_in ? "   (q quits)" : "");
	printf("%7s %7s  %s\n", "Self%", "Total%", "Function");
	for (i = 0; i < rows && (size_t)i < t->nr && t->samples > 0; i++) {
		char name[512];

		utf8_printable(name, sizeof(name), t->v[i].name);
		printf("%6.2f%% %6.2f%%  %s\n", 100.0 * t->v[i].self / t->samples,
		       100.0 * t->v[i].total / t->samples, name);
	}
	if (!t->tty_out)
		printf("\n");
	fflush(stdout);
	t->last_samples = samples;
	t->last_complete = complete;
}

static void tick(struct session *s, void *ctx)
{
	struct top_state *t = ctx;
	struct aggregator fresh, interval;
	struct frame_namer fn;
	struct profile p;
	struct profile_info info = {0};
	struct prof_event events[PROF_MAX_EVENTS];
	char c;

	while (t->tty_in && poll(&(struct pollfd){.fd = STDIN_FILENO, .events = POLLIN}, 1, 0) > 0 &&
	       read(STDIN_FILENO, &c, 1) == 1) {
		if (c == 'q' || c == 'Q')
			session_stop_requested = 1;
	}
	if (agg_init(&fresh, args.so.max_stacks))
		return;
	/* swap, so the consumer never waits for symbolization */
	pthread_mutex_lock(&s->agg_lock);
	interval = s->agg;
	s->agg = fresh;
	pthread_mutex_unlock(&s->agg_lock);
	session_kernel_symbols_update(s, t->ks);
	frame_namer_init(&fn, s->pt, t->ks);
	session_runtimes_namers(&s->runtimes, &fn, NULL);
	info.nr_events = session_prof_events(s, events);
	info.events = events;
	if (!profile_build(&p, &interval, &fn, &info)) {
		account(t, &p);
		profile_free(&p);
	}
	frame_namer_free(&fn);
	agg_free(&interval);
	render(s, t);
}

int cmd_top(int argc, char **argv)
{
	static const struct argp_child children[] = {
		{&target_argp, 0, NULL, 0}, {&symbol_argp, 0, NULL, 0}, {0}};
	static const struct argp argp = {
		opts, parse_opt, NULL,
		"Live view of the hottest functions (self and total), with stacks unwound in the "
		"kernel from DWARF CFI. Without -p, --cgroup or --container: the whole system.",
		children, NULL, NULL};
	struct top_state t = {0};
	struct session s;
	char kerr[256];
	struct termios raw;
	size_t i;
	int err;

	heap_prefer_huge_pages(HEAP_RESERVE);
	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return 2;
	/* names of stripped objects appear in the view as their debug files arrive */
	args.so.debuginfod = args.sym.debuginfod;
	args.so.fetch = args.sym.fetch;
	t.tty_out = isatty(STDOUT_FILENO);
	t.tty_in = isatty(STDIN_FILENO) && !tcgetattr(STDIN_FILENO, &t.saved);
	err = session_start(&s, &args.so);
	if (!err && args.so.kernel) {
		t.ks = session_kernel_symbols(&s, kerr, sizeof(kerr));
		if (!t.ks)
			fprintf(stderr, "cfiprof: %s\n", kerr);
	}
	if (!err) {
		if (t.tty_in) {
			raw = t.saved;
			raw.c_lflag &= ~(unsigned)(ICANON | ECHO);
			tcsetattr(STDIN_FILENO, TCSANOW, &raw);
		}
		session_wait(&s, args.target.duration > 0 ? s.start + args.target.duration : 0, tick, &t);
		if (t.tty_in)
			tcsetattr(STDIN_FILENO, TCSANOW, &t.saved);
		session_stop(&s);
	}
	session_free(&s);
	ksyms_free(t.ks);
	for (i = 0; i < t.nr; i++)
		free((char *)t.v[i].name);
	free(t.v);
	return err ? 1 : 0;
}
