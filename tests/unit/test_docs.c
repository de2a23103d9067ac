// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The docs and the man pages cannot drift apart (no kernel needed):
 *  1. options: every option of `cfiprof COMMAND --help` is named in the pages of
 *     docs/ that contrib/man/pages makes that command's man page of (so the man
 *     page's prose, built from the same pages, documents it too);
 *  2. signals: every signal the agent sets a handler or a disposition for (a
 *     signal() or sigaction() call in its sources) is named in the man page
 *     `make man` builds from docs/agent.md, as man renders it;
 *  3. links: every relative link in README.md, docs/, tests/README.md and
 *     tests/bench/NOTES.md names a file that exists, and its #anchor one of that
 *     file's headings (GitHub's anchors).
 * Environment: CFIPROF (default build/cfiprof), OUT (default build).
 */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"

#define PATHBUF (PATH_MAX + 256)

static const char *bin, *out_dir;
static char dir[64];

static bool optchar(char c)
{
	return isalnum((unsigned char)c) || c == '-' || c == '_';
}

/* TEXT names OPT as a word of its own: "--debuginfod" is not "--debuginfod-timeout" */
static bool names(const char *text, const char *opt)
{
	size_t n = strlen(opt);

	for (const char *p = strstr(text, opt); p; p = strstr(p + 1, opt))
		if ((p == text || !optchar(p[-1])) && !optchar(p[n]))
			return true;
	return false;
}

/* "cfiprof-record docs/record.md ..." from contrib/man/pages: the pages' text */
static char *pages_text(char *line, char **page)
{
	char *save, *tok, *text = NULL, *s;
	size_t len = 0;

	*page = strtok_r(line, " \t", &save);
	while ((tok = strtok_r(NULL, " \t", &save))) {
		s = slurp(tok);
		CHECK(s != NULL, "contrib/man/pages names %s, which cannot be read", tok);
		if (!s)
			continue;
		text = realloc(text, len + strlen(s) + 2);
		strcpy(text + len, s);
		len += strlen(s);
		free(s);
	}
	return text;
}

/* "-p" or "--pid" of "  -p, --pid=PID  ...", "      --long", "  -v   ..." */
static void opt_name(const char *o, char *opt, size_t len)
{
	size_t k;

	for (k = 0; k < len - 1 && (o[k] == '-' || (k > 1 && optchar(o[k]))); k++)
		opt[k] = o[k];
	if (k == 1) /* a short option: its letter */
		opt[k] = o[k], k++;
	opt[k] = 0;
}

/* each option of COMMAND --help must be named in TEXT, by its long or its short
 * name; returns how many options --help listed */
static int check_options(const char *page, const char *text)
{
	char path[PATHBUF], opt[128], sopt[8], *help, *line, *save;
	char *argv[] = {(char *)bin, (char *)page + strlen("cfiprof-"), "--help", NULL};
	int n = 0;

	snprintf(path, sizeof(path), "%s/help.txt", dir);
	CHECK(run(argv, path, "-", 30) == 0, "%s --help failed", page);
	help = slurp(path);
	for (line = help ? strtok_r(help, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *o = NULL;

		sopt[0] = 0;
		if (!strncmp(line, "  -", 3) && line[3] && line[3] != '-') {
			opt_name(line + 2, sopt, sizeof(sopt));
			o = strncmp(line + 4, ", --", 4) ? line + 2 : line + 6;
		} else if (!strncmp(line, "      --", 8)) {
			o = line + 6;
		}
		if (!o)
			continue;
		opt_name(o, opt, sizeof(opt));
		if (!strcmp(opt, "--help") || !strcmp(opt, "--usage") ||
		    !strcmp(opt, "--version") || !strcmp(opt, "-?") || !strcmp(opt, "-V"))
			continue;
		n++;
		CHECK(names(text, opt) || (sopt[0] && names(text, sopt)),
		      "%s: %s (in --help) is in none of its docs pages", page, opt);
	}
	free(help);
	return n;
}

static void test_options(void)
{
	char *pages = slurp("contrib/man/pages"), *line, *save, *page, *text;
	int commands = 0, options = 0;

	CHECK(pages != NULL, "contrib/man/pages is missing");
	for (line = pages ? strtok_r(pages, "\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (line[0] == '#' || !line[0])
			continue;
		text = pages_text(line, &page);
		if (text && strncmp(page, "cfiprof-", 8) == 0) {
			commands++;
			options += check_options(page, text);
		}
		free(text);
	}
	/* record, report, top, tables, agent, list */
	CHECK(commands == 6, "contrib/man/pages has %d commands, not 6", commands);
	/* a parser that found no option would check nothing: agent alone has over 50 */
	CHECK(options > 100, "%d options in all the --help outputs", options);
	free(pages);
}

/* the signals user/cli/agent.c and the session it runs handle, against the man page */
static void test_agent_signals(void)
{
	static const char *const srcs[] = {"user/cli/agent.c", "user/session/session.c"};
	char script[4 * PATHBUF], path[PATHBUF], sig[32], *man, *src;
	char *argv[] = {"sh", "-c", script, NULL};
	int found = 0;

	snprintf(script, sizeof(script),
		 "make -s --no-print-directory OUT=%s man >/dev/null && MANWIDTH=80 man -l "
		 "%s/man/cfiprof-agent.1 2>/dev/null | col -b",
		 out_dir, out_dir);
	snprintf(path, sizeof(path), "%s/agent.man", dir);
	CHECK(run(argv, path, "-", 300) == 0, "make man, man -l cfiprof-agent.1 failed");
	man = slurp(path);
	CHECK(man && strstr(man, "\nSIGNALS\n"), "cfiprof-agent(1) has no SIGNALS section");
	for (size_t i = 0; i < sizeof(srcs) / sizeof(srcs[0]); i++) {
		src = slurp(srcs[i]);
		CHECK(src != NULL, "cannot read %s", srcs[i]);
		for (const char *p = src ? strstr(src, "(SIG") : NULL; p;
		     p = strstr(p + 1, "(SIG")) {
			size_t k = 0;

			if (!(p >= src + 6 && !strncmp(p - 6, "signal", 6)) &&
			    !(p >= src + 9 && !strncmp(p - 9, "sigaction", 9)))
				continue;
			for (p++; k < sizeof(sig) - 1 &&
				  (isupper((unsigned char)*p) || isdigit((unsigned char)*p));
			     p++)
				sig[k++] = *p;
			sig[k] = 0;
			found++;
			CHECK(man && names(man, sig),
			      "%s handles %s; cfiprof-agent(1) does not say", srcs[i], sig);
		}
		free(src);
	}
	/* SIGHUP, SIGPIPE in the agent, SIGINT and SIGTERM in the session */
	CHECK(found >= 4, "found %d signal() / sigaction() calls, not >= 4", found);
	free(man);
}

/* GitHub's anchor of a heading: lower case, spaces to '-', other punctuation dropped */
static void slug(const char *h, char *out, size_t len)
{
	size_t k = 0;

	for (; *h && *h != '\n' && k < len - 1; h++) {
		unsigned char c = (unsigned char)*h;

		if (c == ' ')
			out[k++] = '-';
		else if (isalnum(c) || c == '-' || c == '_')
			out[k++] = (char)tolower(c);
	}
	out[k] = 0;
}

static bool has_anchor(const char *text, const char *anchor)
{
	char s[512];
	bool fence = false;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, "```", 3))
			fence = !fence;
		if (fence || *l != '#')
			continue;
		while (*l == '#')
			l++;
		slug(l + 1, s, sizeof(s));
		if (!strcmp(s, anchor))
			return true;
	}
	return false;
}

/* FILE's relative links: [text](TARGET) and ![alt](TARGET) */
static int check_links(const char *file)
{
	char target[PATHBUF], path[2 * PATHBUF], *text = slurp(file), *hash, *t;
	const char *slash = strrchr(file, '/');
	int n = 0;
	struct stat st;

	CHECK(text != NULL, "cannot read %s", file);
	for (const char *p = text ? strstr(text, "](") : NULL; p; p = strstr(p + 1, "](")) {
		const char *end = strchr(p + 2, ')');
		size_t len = end ? (size_t)(end - p - 2) : 0;

		if (!end || len >= sizeof(target) || memchr(p + 2, '\n', len))
			continue;
		memcpy(target, p + 2, len);
		target[len] = 0;
		if (strstr(target, "://") || !strncmp(target, "mailto:", 7))
			continue;
		n++;
		hash = strchr(target, '#');
		if (hash)
			*hash++ = 0;
		if (!target[0])
			snprintf(path, sizeof(path), "%s", file);
		else
			snprintf(path, sizeof(path), "%.*s%s", slash ? (int)(slash - file + 1) : 0,
				 file, target);
		CHECK(stat(path, &st) == 0, "%s: link to %s: no such file", file, path);
		if (hash && stat(path, &st) == 0) {
			t = slurp(path);
			CHECK(t && has_anchor(t, hash), "%s: link to %s#%s: no such heading", file,
			      path, hash);
			free(t);
		}
	}
	free(text);
	return n;
}

static void test_links(void)
{
	static const char *const files[] = {"README.md", "tests/README.md", "tests/bench/NOTES.md",
					    "tests/bench/FIGURES.md"};
	char path[PATHBUF];
	int n = 0, pages = 0;
	DIR *d;
	struct dirent *e;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		n += check_links(files[i]);
	d = opendir("docs");
	CHECK(d != NULL, "no docs/");
	while (d && (e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < 4 || strcmp(e->d_name + len - 3, ".md"))
			continue;
		snprintf(path, sizeof(path), "docs/%s", e->d_name);
		n += check_links(path);
		pages++;
	}
	if (d)
		closedir(d);
	/* the README links every page; each page links another */
	CHECK(pages >= 11 && n > 2 * pages, "%d pages in docs/, %d links in all", pages, n);
}

/*
 * RESULTS.md is written whole by tests/bench/peers.py, its hand-written parts
 * copied in from files of their own: text edited in RESULTS.md alone is lost at
 * the next run, and a run that stopped early must not be committed without them.
 */
static void test_results_parts(void)
{
	static const char *const parts[] = {"tests/bench/NOTES.md", "tests/bench/FIGURES.md"};
	char *results = slurp("tests/bench/RESULTS.md"), *part;

	CHECK(results != NULL, "no tests/bench/RESULTS.md");
	for (size_t i = 0; results && i < sizeof(parts) / sizeof(parts[0]); i++) {
		part = slurp(parts[i]);
		CHECK(part != NULL, "no %s", parts[i]);
		if (!part)
			continue;
		/* peers.py strips the file's trailing newlines */
		while (*part && part[strlen(part) - 1] == '\n')
			part[strlen(part) - 1] = '\0';
		CHECK(strstr(results, part) != NULL,
		      "tests/bench/RESULTS.md does not hold %s as it is (edit that file, then run "
		      "tests/bench/peers.py --report)",
		      parts[i]);
		free(part);
	}
	free(results);
}

int main(int argc, char **argv)
{
	static const char *const tools[] = {"make", "help2man", "man", "col"};

	harness_init(argc, argv);
	bin = getenv("CFIPROF") ? getenv("CFIPROF") : "build/cfiprof";
	out_dir = getenv("OUT") ? getenv("OUT") : "build";
	snprintf(dir, sizeof(dir), "/tmp/cfiprof-docs.XXXXXX");
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	CHECK(access("contrib/man/pages", R_OK) == 0, "run from the source tree");
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++)
		CHECK(tool_exists(tools[i]), "%s is missing (make deps)", tools[i]);

	RUN_TEST(test_options);
	RUN_TEST(test_agent_signals);
	RUN_TEST(test_links);
	RUN_TEST(test_results_parts);

	tmpdir_done(dir, harness_failed);
	return HARNESS_DONE();
}
