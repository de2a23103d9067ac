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
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    {"user/runtimes/python", 8},
    {"user/runtimes/go", 8},
    {"user/runtimes/php", 8},
    {"user/runtimes/perl", 8},
    {"user/runtimes/ruby", 8},
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

static void test_order(void)
{
	int files = 0, bad = 0;

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
			bad += check_file(path, (int)i);
			files++;
		}
		if (d)
			closedir(d);
	}
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

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_order);
	RUN_TEST(test_all_listed);
	return HARNESS_DONE();
}
