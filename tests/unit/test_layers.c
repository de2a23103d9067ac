// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The layer order (docs/design.md, "Source layout"): a folder includes only
 * folders below it, never one beside or above, so no two folders include
 * each other.  From the bottom: bpf/ (the one boundary header and the walker)
 * and common/, elf/, tables/, then user/'s pipeline: unwind/ and symbolize/,
 * track/, profile/, output/, runtimes/ (the runtimes' interface and shared
 * parts), each runtime's folder runtimes/NAME/ (none includes another's),
 * session/, agent/, cli/ (and user/main.c).
 * Every #include "DIR/FILE" of every .c and .h in those folders is checked.
 * Run from the source tree.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdint.h>
#include <unistd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/cfiprof_abi.h"
#include "tests/lib/harness.h"

static const struct {
	const char *dir;
	int rank;
} layers[] = {
    {"bpf", 0},
    {"common", 0},
    {"elf", 1},
    {"tables", 2},
    {"user/unwind", 3},
    {"user/symbolize", 3},
    {"user/track", 4},
    {"user/profile", 5},
    {"user/output", 6},
    {"user/runtimes", 7},
/* each runtime's folder, from the registration table */
#define RUNTIME_LAYER(id, value, name, tag, frames, type) {"user/runtimes/" #name, 8},
    CFI_RUNTIMES(RUNTIME_LAYER)
#undef RUNTIME_LAYER
	{"user/session", 9},
    {"user/agent", 10},
    {"user/cli", 11},
    {"user", 12}, /* user/main.c */
};
#define NR_LAYERS (sizeof(layers) / sizeof(layers[0]))

/* The layer of a path's folder ("user/track/x.h" -> user/track); -1 if none. */
static int layer_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;

	for (size_t i = 0; i < NR_LAYERS; i++)
		if (strlen(layers[i].dir) == len && !strncmp(path, layers[i].dir, len))
			return (int)i;
	return -1;
}

/* Checks every include of file (in layer l); how many it has that break the order. */
static int check_file(const char *file, int l)
{
	char line[1024], inc[512];
	FILE *f = fopen(file, "r");
	int bad = 0;

	CHECK(f != NULL, "cannot read %s", file);
	while (f && fgets(line, sizeof(line), f)) {
		int to;

		if (sscanf(line, " #include \"%511[^\"]\"", inc) != 1 || !strchr(inc, '/'))
			continue;
		to = layer_of(inc);
		if (to < 0 || to == l)
			continue;
		if (layers[to].rank >= layers[l].rank) {
			bad++;
			CHECK(0, "%s includes %s: %s is not below %s", file, inc, layers[to].dir,
			      layers[l].dir);
		}
	}
	if (f)
		fclose(f);
	return bad;
}

/* fn(path, layer, ctx) for each .c and .h of each layer's folder; returns how many */
static int for_each_source(void (*fn)(const char *path, int layer, void *ctx), void *ctx)
{
	int files = 0;

	for (size_t i = 0; i < NR_LAYERS; i++) {
		DIR *d = opendir(layers[i].dir);
		struct dirent *e;

		CHECK(d != NULL, "no folder %s (run from the source tree)", layers[i].dir);
		while (d && (e = readdir(d))) {
			size_t n = strlen(e->d_name);
			char path[1024];

			if (n < 3 ||
			    (strcmp(e->d_name + n - 2, ".c") && strcmp(e->d_name + n - 2, ".h")))
				continue;
			snprintf(path, sizeof(path), "%s/%s", layers[i].dir, e->d_name);
			fn(path, (int)i, ctx);
			files++;
		}
		if (d)
			closedir(d);
	}
	return files;
}

static void order_one(const char *path, int layer, void *ctx)
{
	*(int *)ctx += check_file(path, layer);
}

static void test_order(void)
{
	int bad = 0, files = for_each_source(order_one, &bad);

	printf("layers: %d files, %d includes against the order\n", files, bad);
	CHECK(files > 100 && bad == 0, "%d files, %d includes against the order", files, bad);
}

/* Every folder of user/ and user/runtimes/ has its place in the order: none goes unchecked. */
static void test_all_listed(void)
{
	static const char *const parents[] = {"user", "user/runtimes"};
	int seen = 0;

	for (size_t p = 0; p < sizeof(parents) / sizeof(parents[0]); p++) {
		DIR *d = opendir(parents[p]);
		struct dirent *e;

		CHECK(d != NULL, "no folder %s (run from the source tree)", parents[p]);
		while (d && (e = readdir(d))) {
			char path[1024];

			if (e->d_type != DT_DIR || e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s/x.h", parents[p], e->d_name);
			CHECK(layer_of(path) >= 0, "%s/%s has no place in the layer order",
			      parents[p], e->d_name);
			seen++;
		}
		if (d)
			closedir(d);
	}
	CHECK(seen >= 10, "%d folders under user/", seen);
}

/*
 * Whether file (one of the tree's) belongs to runtime name: its folder, its
 * BPF file, its ABI header, or the registration table that lists them all.
 */
static bool runtime_owns(const char *file, const char *name)
{
	char own[256];

	if (!strcmp(file, "bpf/runtime_table.h"))
		return true;
	snprintf(own, sizeof(own), "user/runtimes/%s/", name);
	if (!strncmp(file, own, strlen(own)))
		return true;
	snprintf(own, sizeof(own), "bpf/%s.bpf.h", name);
	if (!strcmp(file, own))
		return true;
	snprintf(own, sizeof(own), "bpf/%s_abi.h", name);
	return !strcmp(file, own);
}

/*
 * What names one runtime's own part in code: its ABI header and BPF file
 * included, its per-process struct (cfi_NAME_...), the functions the
 * registration table takes from it.  Counts the hits in file outside it.
 */
static int runtime_mentions(const char *file, const char *name)
{
	char line[1024], pat[5][64];
	FILE *f = fopen(file, "r");
	int hits = 0, nr = 0;

	snprintf(pat[0], sizeof(pat[0]), "\"%s_abi.h\"", name);
	snprintf(pat[1], sizeof(pat[1]), "\"%s.bpf.h\"", name);
	snprintf(pat[2], sizeof(pat[2]), "user/runtimes/%s/", name);
	snprintf(pat[3], sizeof(pat[3]), "cfi_%s_", name);
	snprintf(pat[4], sizeof(pat[4]), "%s_thread_exit(", name);
	CHECK(f != NULL, "cannot read %s", file);
	while (f && fgets(line, sizeof(line), f)) {
		nr++;
		for (int i = 0; i < 5; i++) {
			/* a folder named in prose is a pointer for the reader, not code */
			if (i == 2 && !strstr(line, "#include"))
				continue;
			if (strstr(line, pat[i])) {
				hits++;
				CHECK(0,
				      "%s:%d names runtime %s's own part (%s): only its files and "
				      "bpf/runtime_table.h may",
				      file, nr, name, pat[i]);
			}
		}
	}
	if (f)
		fclose(f);
	return hits;
}

/* Each .c and .h under dir (recursively) through runtime_mentions; files seen into *files. */
static int scan_runtime(const char *dir, const char *name, int *files)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int hits = 0;

	CHECK(d != NULL, "no folder %s (run from the source tree)", dir);
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char path[1024];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_type == DT_DIR) {
			hits += scan_runtime(path, name, files);
			continue;
		}
		if (n < 3 || (strcmp(e->d_name + n - 2, ".c") && strcmp(e->d_name + n - 2, ".h")))
			continue;
		if (runtime_owns(path, name))
			continue;
		(*files)++;
		hits += runtime_mentions(path, name);
	}
	if (d)
		closedir(d);
	return hits;
}

/*
 * Adding a runtime touches no shared file beyond the registration table
 * (docs/runtimes.md, "Adding a runtime"): no file of bpf/, common/, elf/,
 * tables/ or user/ but the runtime's own names its own part.
 */
static void test_runtime_registration(void)
{
	static const char *const names[] = {
#define RUNTIME_NAME(id, value, name, tag, frames, type) #name,
	    CFI_RUNTIMES(RUNTIME_NAME)
#undef RUNTIME_NAME
	};
	static const char *const roots[] = {"bpf", "common", "elf", "tables", "user"};
	int hits = 0, files = 0;

	for (size_t r = 0; r < sizeof(names) / sizeof(names[0]); r++)
		for (size_t i = 0; i < sizeof(roots) / sizeof(roots[0]); i++)
			hits += scan_runtime(roots[i], names[r], &files);
	printf("runtime_registration: %zu runtimes, %d files of others read, %d mentions\n",
	       sizeof(names) / sizeof(names[0]), files, hits);
	CHECK(sizeof(names) / sizeof(names[0]) >= 5 && files > 500 && hits == 0,
	      "%d files read, %d mentions", files, hits);
}

/*
 * Sizes (docs/design.md, "Source layout"): no source file over FILE_LINES_MAX
 * lines; a function over FUNC_LINES_MAX lines has its reason in the comment
 * right above it.  A function is a body opened by "{" in column 0 within three
 * lines of a line that starts with a name and holds "(", closed by "}" in
 * column 0, as the tree's one clang-format writes them.
 */
#define FILE_LINES_MAX 700
#define FUNC_LINES_MAX 150

/* file's lines over the bounds: returns how many breaches, the longest function in *longest */
static int size_breaches(const char *file, int *longest, bool quiet)
{
	char line[4096];
	int nr = 0, bad = 0, sig = 0, open_at = 0;
	bool commented = false, sig_commented = false;
	FILE *f = fopen(file, "r");

	*longest = 0;
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		nr++;
		bool starts_name = (line[0] == '_' || isalpha((unsigned char)line[0])) &&
				   strchr(line, '(') && !strchr(line, ';');

		if (starts_name && !open_at) {
			/*
			 * the line above the signature ends a comment: the function's
			 * reason (above SEC("...") for a BPF program)
			 */
			sig_commented = commented || (sig && sig == nr - 1 && sig_commented);
			sig = nr;
		}
		if (line[0] == '{' && !open_at && sig && nr - sig <= 3)
			open_at = nr;
		if (line[0] == '}' && open_at) {
			int len = nr - open_at - 1;

			if (len > *longest)
				*longest = len;
			if (len > FUNC_LINES_MAX && !sig_commented) {
				bad++;
				if (!quiet)
					CHECK(0, "%s:%d: a %d-line function, no reason above it",
					      file, sig, len);
			}
			open_at = 0;
			sig = 0;
		}
		/* what the next line sees above it */
		commented = strstr(line, "*/") && !strchr(line, ';');
	}
	fclose(f);
	if (nr > FILE_LINES_MAX) {
		bad++;
		if (!quiet)
			CHECK(0, "%s: %d lines (over %d): split it by job", file, nr,
			      FILE_LINES_MAX);
	}
	return bad;
}

/* The checker catches what it is for: a long file, a long function without its reason. */
static void check_size_checker(void)
{
	char path[] = "/tmp/cfiprof-layers-XXXXXX";
	int fd = mkstemp(path), longest = 0, bad[3] = {-1, -1, -1};
	FILE *f;

	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return;
	close(fd);
	for (int round = 0; round < 3; round++) {
		f = fopen(path, "w");
		if (!f)
			break;
		/* 0: a 160-line function, no comment; 1: the same with its reason; 2: 710 lines */
		if (round == 1)
			fprintf(f, "/*\n * One switch, as the standard orders it.\n */\n");
		fprintf(f, "static int run(int x)\n{\n");
		for (int i = 0; i < (round == 2 ? 700 : 160); i++)
			fprintf(f, "\tx += %d;\n", i);
		fprintf(f, "\treturn x;\n}\n");
		fclose(f);
		bad[round] = size_breaches(path, &longest, true);
	}
	unlink(path);
	CHECK(bad[0] == 1 && bad[1] == 0 && bad[2] == 2,
	      "the size check found %d, %d, %d breaches (want 1, 0, 2)", bad[0], bad[1], bad[2]);
}

struct sizes {
	int bad, most;
	char most_file[1024];
};

static void sizes_one(const char *path, int layer, void *ctx)
{
	struct sizes *z = ctx;
	int longest = 0;

	(void)layer;
	z->bad += size_breaches(path, &longest, false);
	if (longest > z->most) {
		z->most = longest;
		snprintf(z->most_file, sizeof(z->most_file), "%s", path);
	}
}

static void test_sizes(void)
{
	struct sizes z = {0};
	int files;

	check_size_checker();
	files = for_each_source(sizes_one, &z);
	printf("sizes: %d files, %d over the bounds; the longest function %d lines (%s)\n", files,
	       z.bad, z.most, z.most_file);
	CHECK(files > 100 && z.most > 50 && z.bad == 0, "%d files, %d over the bounds", files,
	      z.bad);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_order);
	RUN_TEST(test_all_listed);
	RUN_TEST(test_runtime_registration);
	RUN_TEST(test_sizes);
	return HARNESS_DONE();
}
