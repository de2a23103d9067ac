// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Flame graph SVG, rendered here so a profile needs nothing but a browser.
 *
 * The merged call tree is never materialized: sorting the samples by their
 * root-first name paths makes every tree node a run of consecutive samples,
 * so one pass that tracks where each open frame started emits every node
 * with its x offset and width (flamegraph.pl's flow()).  Sorting by name also
 * gives the usual alphabetical order of siblings.
 *
 * Each frame is a <g> carrying its position in samples (data-x, data-w) and
 * depth (data-d): the script re-lays out a zoomed subtree from those exact
 * integers instead of from rounded pixel positions.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "user/output/flamegraph_svg.h"
#include "user/output/utf8.h"

#define IMG_WIDTH  1200
#define XPAD	   10
#define ROW	   16
#define FRAME_H	   15
#define TOP_PAD	   56 /* title, subtitle and the controls */
#define BOTTOM_PAD 30 /* the details line */
#define FONT_SIZE  12
#define CHAR_W	   (FONT_SIZE * 0.59) /* average Verdana advance; the script uses the same */
#define MIN_WIDTH  0.1

struct svg {
	FILE *f;
	const struct profile *p;
	char **names; /* per location, kernel ones suffixed _[k] */
	uint64_t total;
	unsigned int height;
	uint64_t omitted;
};

static size_t utf8_chars(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = 0;
	uint32_t cp;

	while (*u) {
		u += utf8_next(u, &cp);
		n++;
	}
	return n;
}

/* At most max characters of s as XML character data; characters XML 1.0 forbids become U+FFFD. */
static void put_xml(FILE *f, const char *s, size_t max)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp;
	size_t n;

	for (; *u && max; u += n, max--) {
		n = utf8_next(u, &cp);
		if ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') || cp == 0xfffe ||
		    cp == 0xffff)
			cp = 0xfffd;
		switch (cp) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&apos;", f);
			break;
		case 0xfffd:
			fputs("\xef\xbf\xbd", f);
			break;
		default:
			fwrite(u, 1, n, f);
		}
	}
}

/* Colors hash the name: a function keeps its color in every graph, so graphs compare at sight. */
static void frame_color(FILE *f, const char *name, uint32_t kind)
{
	uint32_t h = (uint32_t)hash_str(name);
	double v1 = (h & 0xff) / 255.0, v2 = (h >> 8 & 0xff) / 255.0, v3 = (h >> 16 & 0xff) / 255.0;
	int r, g, b;

	switch (kind) {
	case PROF_LOC_KERNEL:
		r = 50 + 60 * v1, g = 165 + 55 * v2, b = 165 + 55 * v2;
		break;
	case PROF_LOC_SYNTHETIC:
		r = g = b = 165 + 30 * v1;
		break;
	default:
		r = 205 + 50 * v3, g = 230 * v1, b = 55 * v2;
	}
	fprintf(f, "rgb(%d,%d,%d)", r, g, b);
}

static const char *comm_name(const struct prof_sample *s)
{
	/* root: the comm, or "GROUP: comm" with --group-by container */
	const char *c = s->root ? s->root : s->comm;

	return c && c[0] ? c : "[unknown]";
}

/* Element j of a sample's root-first path: its comm, then its frames. */
static const char *path_name(const struct svg *g, const struct prof_sample *s, uint32_t j,
			     uint32_t *kind)
{
	uint32_t loc;

	if (!j) {
		*kind = PROF_LOC_USER;
		return comm_name(s);
	}
	loc = s->locs[s->nr_locs - j];
	*kind = g->p->locs[loc].kind;
	return g->names[loc];
}

static size_t common_prefix(const struct svg *g, const struct prof_sample *a,
			    const struct prof_sample *b)
{
	uint32_t len = a->nr_locs < b->nr_locs ? a->nr_locs + 1 : b->nr_locs + 1, j, k;

	for (j = 0; j < len; j++)
		if (strcmp(path_name(g, a, j, &k), path_name(g, b, j, &k)))
			break;
	return j;
}

static int by_path(const void *x, const void *y, void *arg)
{
	const struct svg *g = arg;
	const struct prof_sample *a = &g->p->samples[*(const size_t *)x];
	const struct prof_sample *b = &g->p->samples[*(const size_t *)y];
	size_t j = common_prefix(g, a, b);
	uint32_t k;

	if (j <= a->nr_locs && j <= b->nr_locs)
		return strcmp(path_name(g, a, j, &k), path_name(g, b, j, &k));
	return a->nr_locs < b->nr_locs ? -1 : a->nr_locs > b->nr_locs;
}

static void put_label(FILE *f, const char *name, double width)
{
	double room = (width - 6) / CHAR_W;
	long fit;
	size_t len;

	/* absurd counts (a hand-made recording) can make a frame wider than any label */
	if (!(room >= 3))
		return;
	fit = room > 1e6 ? 1000000 : (long)room;
	len = utf8_chars(name);
	if (len <= (size_t)fit) {
		put_xml(f, name, len);
		return;
	}
	put_xml(f, name, fit - 2);
	fputs("..", f);
}

static void put_frame(struct svg *g, const char *name, uint32_t kind, uint32_t depth,
		      uint64_t start, uint64_t count)
{
	double scale = (IMG_WIDTH - 2 * XPAD) / (double)g->total;
	double x = XPAD + start * scale, w = count * scale;
	double y = g->height - BOTTOM_PAD - (depth + 1.0) * ROW;
	FILE *f = g->f;
	char value[64];

	/* a child is never wider than its parent, so skipping one drops its whole subtree */
	if (w < MIN_WIDTH) {
		g->omitted++;
		return;
	}
	fprintf(f, "<g class=\"f\" data-x=\"%" PRIu64 "\" data-w=\"%" PRIu64 "\" data-d=\"%u\">",
		start, count, depth);
	fputs("<title>", f);
	put_xml(f, name, SIZE_MAX);
	prof_format_value(g->p, count, value, sizeof(value));
	fprintf(f, " (%s, %.2f%%)</title>", value, 100.0 * count / g->total);
	fprintf(f, "<rect x=\"%.3f\" y=\"%.1f\" width=\"%.3f\" height=\"%d\"", x, y, w, FRAME_H);
	fputs(" rx=\"2\" ry=\"2\" fill=\"", f);
	frame_color(f, name, kind);
	fprintf(f, "\"/><text x=\"%.2f\" y=\"%.1f\">", x + 3, y + 10.5);
	put_label(f, name, w);
	fputs("</text></g>\n", f);
}

/* Closes the frames of sample s deeper than its first keep path elements: they end at x. */
static void close_frames(struct svg *g, const struct prof_sample *s, size_t keep,
			 const uint64_t *start, uint64_t x)
{
	const char *name;
	uint32_t kind;
	size_t j;

	for (j = s->nr_locs + 1; j-- > keep;) {
		name = path_name(g, s, j, &kind);
		put_frame(g, name, kind, j + 1, start[j + 1], x - start[j + 1]);
	}
}

static void put_frames(struct svg *g, const size_t *order, size_t n, uint64_t *start)
{
	const struct prof_sample *s, *prev = NULL;
	uint64_t x = 0;
	size_t i, j, keep;

	for (i = 0; i < n; i++) {
		s = &g->p->samples[order[i]];
		keep = 0;
		if (prev) {
			keep = common_prefix(g, prev, s);
			close_frames(g, prev, keep, start, x);
		}
		for (j = keep; j <= s->nr_locs; j++)
			start[j + 1] = x;
		x += prof_value(g->p, s);
		prev = s;
	}
	if (prev) {
		close_frames(g, prev, 0, start, x);
		put_frame(g, "all", PROF_LOC_USER, 0, 0, x);
	}
}

/* The script: hover details, zoom, search.  It only reads the data-* attributes and <title>s. */
static const char script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "\"use strict\";\n"
    "var WIDTH = 1200, XPAD = 10, CHAR_W = 12 * 0.59, SEARCH_COLOR = \"rgb(230,0,230)\";\n"
    "var frames = document.getElementById(\"frames\");\n"
    "var gs = frames.getElementsByTagName(\"g\");\n"
    "var details = document.getElementById(\"details\");\n"
    "var unzoombtn = document.getElementById(\"unzoom\");\n"
    "var searchbtn = document.getElementById(\"search\");\n"
    "var matched = document.getElementById(\"matched\");\n"
    "var total = 0, searching = false;\n"
    "function num(g, a) { return +g.getAttribute(\"data-\" + a); }\n"
    "function rect(g) { return g.getElementsByTagName(\"rect\")[0]; }\n"
    "function title(g) { return g.getElementsByTagName(\"title\")[0].textContent; }\n"
    "function fname(g) { return title(g).replace(/ \\([^()]*, [0-9.]+%\\)$/, \"\"); }\n"
    "function frame_of(e) {\n"
    "\tfor (; e && e !== frames; e = e.parentNode)\n"
    "\t\tif (e.nodeName === \"g\" && e.getAttribute(\"class\") !== null)\n"
    "\t\t\treturn e;\n"
    "\treturn null;\n"
    "}\n"
    "function label(g, x, w) {\n"
    "\tvar t = g.getElementsByTagName(\"text\")[0], name = Array.from(fname(g));\n"
    "\tvar fit = Math.floor((w - 6) / CHAR_W);\n"
    "\tt.setAttribute(\"x\", (x + 3).toFixed(2));\n"
    "\tif (fit < 3)\n"
    "\t\tt.textContent = \"\";\n"
    "\telse if (name.length <= fit)\n"
    "\t\tt.textContent = name.join(\"\");\n"
    "\telse\n"
    "\t\tt.textContent = name.slice(0, fit - 2).join(\"\") + \"..\";\n"
    "}\n"
    "// Shows the subtree of the frame at [zx, zx + zw) samples and depth zd at full width,\n"
    "// its ancestors faded at full width, and hides everything else.\n"
    "function layout(zx, zw, zd) {\n"
    "\tvar scale = (WIDTH - 2 * XPAD) / zw;\n"
    "\tfor (var i = 0; i < gs.length; i++) {\n"
    "\t\tvar g = gs[i], x = num(g, \"x\"), w = num(g, \"w\"), d = num(g, \"d\"), rx, rw;\n"
    "\t\tif (d >= zd && x >= zx && x + w <= zx + zw) {\n"
    "\t\t\trx = XPAD + (x - zx) * scale;\n"
    "\t\t\trw = w * scale;\n"
    "\t\t\tg.classList.remove(\"parent\");\n"
    "\t\t} else if (d < zd && x <= zx && x + w >= zx + zw) {\n"
    "\t\t\trx = XPAD;\n"
    "\t\t\trw = WIDTH - 2 * XPAD;\n"
    "\t\t\tg.classList.add(\"parent\");\n"
    "\t\t} else {\n"
    "\t\t\tg.classList.add(\"hide\");\n"
    "\t\t\tcontinue;\n"
    "\t\t}\n"
    "\t\tg.classList.remove(\"hide\");\n"
    "\t\trect(g).setAttribute(\"x\", rx.toFixed(3));\n"
    "\t\trect(g).setAttribute(\"width\", rw.toFixed(3));\n"
    "\t\tlabel(g, rx, rw);\n"
    "\t}\n"
    "}\n"
    "function zoom(g) {\n"
    "\tif (num(g, \"d\") === 0)\n"
    "\t\treturn unzoom();\n"
    "\tlayout(num(g, \"x\"), num(g, \"w\"), num(g, \"d\"));\n"
    "\tunzoombtn.classList.remove(\"hide\");\n"
    "}\n"
    "function unzoom() {\n"
    "\tif (total)\n"
    "\t\tlayout(0, total, 0);\n"
    "\tunzoombtn.classList.add(\"hide\");\n"
    "}\n"
    "function reset_search() {\n"
    "\tfor (var i = 0; i < gs.length; i++)\n"
    "\t\trect(gs[i]).setAttribute(\"fill\", rect(gs[i]).getAttribute(\"data-fill\"));\n"
    "\tsearching = false;\n"
    "\tsearchbtn.textContent = \"Search\";\n"
    "\tmatched.textContent = \"\";\n"
    "}\n"
    "// Matched % counts each sample once: nested matches (recursion) cover the same samples.\n"
    "function search(term) {\n"
    "\tvar re, hits = [], covered = 0, end = 0;\n"
    "\ttry {\n"
    "\t\tre = new RegExp(term);\n"
    "\t} catch (err) {\n"
    "\t\talert(\"Invalid regular expression: \" + term);\n"
    "\t\treturn;\n"
    "\t}\n"
    "\treset_search();\n"
    "\tfor (var i = 0; i < gs.length; i++) {\n"
    "\t\tif (!re.test(fname(gs[i])))\n"
    "\t\t\tcontinue;\n"
    "\t\trect(gs[i]).setAttribute(\"fill\", SEARCH_COLOR);\n"
    "\t\thits.push([num(gs[i], \"x\"), num(gs[i], \"x\") + num(gs[i], \"w\")]);\n"
    "\t}\n"
    "\thits.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n"
    "\thits.forEach(function (h) {\n"
    "\t\tif (h[1] > end) {\n"
    "\t\t\tcovered += h[1] - Math.max(h[0], end);\n"
    "\t\t\tend = h[1];\n"
    "\t\t}\n"
    "\t});\n"
    "\tsearching = true;\n"
    "\tsearchbtn.textContent = \"Reset Search\";\n"
    "\tmatched.textContent = \"Matched: \" + (total ? 100 * covered / total : 0).toFixed(2) +\n"
    "\t\t\"% (\" + hits.length + \" frames)\";\n"
    "}\n"
    "function search_prompt() {\n"
    "\tvar term = prompt(\"Search for (regular expression):\", \"\");\n"
    "\tif (term)\n"
    "\t\tsearch(term);\n"
    "}\n"
    "for (var i = 0; i < gs.length; i++) {\n"
    "\trect(gs[i]).setAttribute(\"data-fill\", rect(gs[i]).getAttribute(\"fill\"));\n"
    "\tif (num(gs[i], \"d\") === 0)\n"
    "\t\ttotal = num(gs[i], \"w\");\n"
    "}\n"
    "frames.addEventListener(\"click\", function (e) {\n"
    "\tvar g = frame_of(e.target);\n"
    "\tif (g)\n"
    "\t\tzoom(g);\n"
    "});\n"
    "frames.addEventListener(\"mouseover\", function (e) {\n"
    "\tvar g = frame_of(e.target);\n"
    "\tif (g)\n"
    "\t\tdetails.textContent = \"Function: \" + title(g);\n"
    "});\n"
    "frames.addEventListener(\"mouseout\", function () { details.textContent = \" \"; });\n"
    "unzoombtn.addEventListener(\"click\", unzoom);\n"
    "searchbtn.addEventListener(\"click\", function () {\n"
    "\tif (searching)\n"
    "\t\treset_search();\n"
    "\telse\n"
    "\t\tsearch_prompt();\n"
    "});\n"
    "window.addEventListener(\"keydown\", function (e) {\n"
    "\tif ((e.ctrlKey || e.metaKey) && (e.key === \"f\" || e.key === \"F\")) {\n"
    "\t\te.preventDefault();\n"
    "\t\tsearch_prompt();\n"
    "\t} else if (e.key === \"Escape\") {\n"
    "\t\treset_search();\n"
    "\t\tunzoom();\n"
    "\t}\n"
    "});\n"
    "]]></script>\n";

static void put_header(struct svg *g, const char *title)
{
	FILE *f = g->f;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", f);
	fprintf(f,
		"<svg version=\"1.1\" width=\"%d\" height=\"%u\" viewBox=\"0 0 %d %u\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n",
		IMG_WIDTH, g->height, IMG_WIDTH, g->height);
	fputs("<style type=\"text/css\">\n"
	      "text { font-family: Verdana, sans-serif; font-size: 12px; fill: rgb(0,0,0); }\n"
	      "#title { text-anchor: middle; font-size: 17px; }\n"
	      "#subtitle { text-anchor: middle; fill: rgb(100,100,100); }\n"
	      "#search, #matched { text-anchor: end; }\n"
	      "#search, #unzoom { cursor: pointer; }\n"
	      ".f text { pointer-events: none; }\n"
	      ".f:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; cursor: pointer; }\n"
	      ".hide { display: none; }\n"
	      ".parent { opacity: 0.5; }\n"
	      "</style>\n",
	      f);
	fputs("<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
	      "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" "
	      "offset=\"95%\"/>"
	      "</linearGradient></defs>\n",
	      f);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%u\" fill=\"url(#background)\"/>\n",
		IMG_WIDTH, g->height);
	fprintf(f, "<text id=\"title\" x=\"%d\" y=\"24\">", IMG_WIDTH / 2);
	put_xml(f, title ? title : "Flame Graph", SIZE_MAX);
	fputs("</text>\n", f);
	fprintf(f, "<text id=\"unzoom\" class=\"hide\" x=\"%d\" y=\"24\">Reset Zoom</text>\n",
		XPAD);
	fprintf(f, "<text id=\"search\" x=\"%d\" y=\"24\">Search</text>\n", IMG_WIDTH - XPAD);
	fprintf(f, "<text id=\"details\" x=\"%d\" y=\"%u\"> </text>\n", XPAD, g->height - 10);
	fprintf(f, "<text id=\"matched\" x=\"%d\" y=\"%u\"></text>\n", IMG_WIDTH - XPAD,
		g->height - 10);
}

static void put_subtitle(struct svg *g)
{
	const struct profile *p = g->p;
	FILE *f = g->f;

	fprintf(f, "<text id=\"subtitle\" x=\"%d\" y=\"42\">", IMG_WIDTH / 2);
	if (!g->total)
		fputs("No samples", f);
	else {
		char value[64];

		prof_format_value(p, g->total, value, sizeof(value));
		fputs(value, f);
	}
	if (p->event) {
		fputs(" of ", f);
		put_xml(f, p->event, SIZE_MAX);
	}
	if (p->duration_ns)
		fprintf(f, " in %.2f s", p->duration_ns / 1e9);
	if (g->omitted)
		fprintf(f, "; %" PRIu64 " frames narrower than %.1f px omitted", g->omitted,
			MIN_WIDTH);
	fputs("</text>\n", f);
}

int svg_write(FILE *f, const struct profile *p, const char *title)
{
	struct svg g = {.f = f, .p = p};
	size_t *order = NULL, n = 0, i;
	uint64_t *start = NULL;
	uint32_t max_locs = 0;
	int err = -1;

	if (profile_check(p))
		return -1;
	g.names = calloc(p->nr_locs ? p->nr_locs : 1, sizeof(*g.names));
	order = calloc(p->nr_samples ? p->nr_samples : 1, sizeof(*order));
	if (!g.names || !order)
		goto out;
	for (i = 0; i < p->nr_locs; i++)
		if (!(g.names[i] = prof_loc_label(&p->locs[i])))
			goto out;
	for (i = 0; i < p->nr_samples; i++) {
		const struct prof_sample *s = &p->samples[i];

		if (!prof_value(p, s))
			continue;
		order[n++] = i;
		g.total += prof_value(p, s);
		if (s->nr_locs > max_locs)
			max_locs = s->nr_locs;
	}
	/* depth 0 is "all", 1 the comm, 2.. the frames */
	start = calloc(max_locs + 2, sizeof(*start));
	if (!start)
		goto out;
	qsort_r(order, n, sizeof(*order), by_path, &g);
	g.height = TOP_PAD + (n ? max_locs + 2 : 1) * ROW + BOTTOM_PAD;

	put_header(&g, title);
	fputs("<g id=\"frames\">\n", f);
	put_frames(&g, order, n, start);
	fputs("</g>\n", f);
	put_subtitle(&g);
	fputs(script, f);
	fputs("</svg>\n", f);
	err = ferror(f) ? -1 : 0;
out:
	for (i = 0; g.names && i < p->nr_locs; i++)
		free(g.names[i]);
	free(g.names);
	free(order);
	free(start);
	return err;
}
