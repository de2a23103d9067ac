// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Every input a fuzz campaign ever crashed on is replayed through the fuzz
 * target that found it: tests/fuzz/regressions/TARGET/NAME goes through
 * tests/fuzz/TARGET.c (files directly in tests/fuzz/regressions/ predate the
 * per-target directories and belong to fuzz_tables).  Every target is
 * included here with its entry point renamed; built with ASan + UBSan too.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/harness.h"

#define LLVMFuzzerTestOneInput fuzz_tables_one
#include "tests/fuzz/fuzz_tables.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_proc_maps_one
#include "tests/fuzz/fuzz_proc_maps.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_perfmap_one
#include "tests/fuzz/fuzz_perfmap.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_kallsyms_one
#include "tests/fuzz/fuzz_kallsyms.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_elf_symbols_one
#include "tests/fuzz/fuzz_elf_symbols.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_recording_one
#include "tests/fuzz/fuzz_recording.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_agent_config_one
#include "tests/fuzz/fuzz_agent_config.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_http_one
#include "tests/fuzz/fuzz_http.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_gopclntab_one
#include "tests/fuzz/fuzz_gopclntab.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_otlp_read_one
#include "tests/fuzz/fuzz_otlp_read.c"
#undef LLVMFuzzerTestOneInput

#define REGRESSIONS    "tests/fuzz/regressions"
#define REPLAY_TIMEOUT 30 /* seconds per input, as libFuzzer's -timeout=25 */

typedef int (*fuzz_fn)(const uint8_t *data, size_t size);

static const struct {
	const char *name;
	fuzz_fn fn;
} targets[] = {
    {"fuzz_tables", fuzz_tables_one},
    {"fuzz_proc_maps", fuzz_proc_maps_one},
    {"fuzz_perfmap", fuzz_perfmap_one},
    {"fuzz_kallsyms", fuzz_kallsyms_one},
    {"fuzz_elf_symbols", fuzz_elf_symbols_one},
    {"fuzz_recording", fuzz_recording_one},
    {"fuzz_agent_config", fuzz_agent_config_one},
    {"fuzz_http", fuzz_http_one},
    {"fuzz_gopclntab", fuzz_gopclntab_one},
    {"fuzz_otlp_read", fuzz_otlp_read_one},
};
#define NR_TARGETS (sizeof(targets) / sizeof(targets[0]))

static fuzz_fn target_fn(const char *name)
{
	size_t i;

	for (i = 0; i < NR_TARGETS; i++)
		if (!strcmp(targets[i].name, name))
			return targets[i].fn;
	return NULL;
}

static void replay(fuzz_fn fn, const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;
	pid_t pid;
	int status = 0;

	if (!f) {
		CHECK(0, "%s: cannot open", path);
		return;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc(len > 0 ? (size_t)len : 1);
	CHECK(buf && fread(buf, 1, (size_t)len, f) == (size_t)len, "%s: cannot read", path);
	fclose(f);
	/* a child, so a crash is one failed check instead of the end of the test */
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		alarm(REPLAY_TIMEOUT); /* a hang is a failure too */
		fn(buf, (size_t)len);
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		  WEXITSTATUS(status) == 0,
	      "%s: the parser crashed or hung (status 0x%x)", path, status);
	free(buf);
}

/* Replays the regular files of dir through fn; returns how many. */
static int replay_dir(fuzz_fn fn, const char *dir)
{
	char path[512];
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] == '.' || stat(path, &st) || !S_ISREG(st.st_mode))
			continue;
		replay(fn, path);
		n++;
	}
	closedir(d);
	return n;
}

/* Every target in tests/fuzz/ must be compiled in here. */
static void test_targets_included(void)
{
	char name[256];
	struct dirent *e;
	size_t len;
	DIR *d;

	d = opendir("tests/fuzz");
	CHECK(d != NULL, "tests/fuzz missing (run from the repository root)");
	while (d && (e = readdir(d))) {
		len = strlen(e->d_name);
		if (strncmp(e->d_name, "fuzz_", 5) || len < 3 || strcmp(e->d_name + len - 2, ".c"))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)(len - 2), e->d_name);
		CHECK(target_fn(name) != NULL, "tests/fuzz/%s is not included in %s", e->d_name,
		      __FILE__);
	}
	if (d)
		closedir(d);
}

/* Every regression directory must name a target. */
static void test_dirs_named(void)
{
	char path[512];
	struct dirent *e;
	struct stat st;
	DIR *d;

	d = opendir(REGRESSIONS);
	CHECK(d != NULL, "%s missing (run from the repository root)", REGRESSIONS);
	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", REGRESSIONS, e->d_name);
		if (e->d_name[0] == '.' || stat(path, &st) || !S_ISDIR(st.st_mode))
			continue;
		CHECK(target_fn(e->d_name) != NULL, "%s: no fuzz target %s", path, e->d_name);
	}
	if (d)
		closedir(d);
}

/* Regular files in dir. */
static int files_in(const char *dir)
{
	char path[512];
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(dir);
	int n = 0;

	while (d && (e = readdir(d))) {
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		n += e->d_name[0] != '.' && !stat(path, &st) && S_ISREG(st.st_mode);
	}
	if (d)
		closedir(d);
	return n;
}

/* How many inputs target i has (fuzz_tables': also the files directly in regressions/). */
static int inputs_of(size_t i)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", REGRESSIONS, targets[i].name);
	return files_in(path) + (targets[i].fn == fuzz_tables_one ? files_in(REGRESSIONS) : 0);
}

/* The inputs of target i; *replayed (shared with main) gets how many. */
static void test_target(size_t i, int *replayed)
{
	char path[512];
	int k = 0;

	/* the files directly in regressions/ are fuzz_tables' */
	if (targets[i].fn == fuzz_tables_one)
		k += replay_dir(fuzz_tables_one, REGRESSIONS);
	snprintf(path, sizeof(path), "%s/%s", REGRESSIONS, targets[i].name);
	k += replay_dir(targets[i].fn, path);
	if (k)
		printf("fuzz regressions: %s: %d inputs\n", targets[i].name, k);
	*replayed = k;
}

int main(int argc, char **argv)
{
	int *replayed, n = 0;

	harness_init(argc, argv);
	replayed = harness_shared(NR_TARGETS * sizeof(*replayed));
	RUN_TEST(test_targets_included);
	RUN_TEST(test_dirs_named);
	/* a target no campaign found a crash of has no test: nothing to replay */
	for (size_t i = 0; i < NR_TARGETS; i++) {
		if (!inputs_of(i))
			continue;
		RUN_TEST_AS(targets[i].name, test_target(i, &replayed[i]));
		n += replayed[i];
	}
	CHECK(n > 0 || !harness_running_all(), "no regression inputs found");
	printf("fuzz regressions: %d inputs replayed\n", n);
	return HARNESS_DONE();
}
