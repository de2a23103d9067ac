// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Every input a fuzz campaign ever crashed on (tests/fuzz/regressions/) is
 * replayed through the fuzz target itself; built with ASan + UBSan as well.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "fuzz/fuzz_tables.c"

static void replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;
	pid_t pid;
	int status;

	CHECK(f != NULL, "%s: cannot open", path);
	if (!f)
		return;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc(len > 0 ? (size_t)len : 1);
	CHECK(buf && fread(buf, 1, (size_t)len, f) == (size_t)len, "%s: cannot read", path);
	fclose(f);
	/* a child, so a crash is one failed check instead of the end of the test */
	pid = fork();
	if (pid == 0) {
		LLVMFuzzerTestOneInput(buf, (size_t)len);
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0,
	      "%s: the parser crashed (status 0x%x)", path, status);
	free(buf);
}

int main(void)
{
	const char *dir = "tests/fuzz/regressions";
	struct dirent *e;
	char path[512];
	int n = 0;
	DIR *d = opendir(dir);

	CHECK(d != NULL, "%s missing (run from the repository root)", dir);
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		replay(path);
		n++;
	}
	if (d)
		closedir(d);
	CHECK(n > 0, "no regression inputs found");
	printf("fuzz regressions: %d inputs replayed\n", n);
	return HARNESS_DONE();
}
