/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libFuzzer target for the agent's config file (agent_config_read_file), then
 * the checks the agent runs on what it read: agent_config_check and the
 * SIGHUP restart diff against the defaults.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/agent/config.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* flags given on the command line win over the file: skip a few keys */
static bool cfg_skip(const char *name, void *ctx)
{
	const uint8_t *mask = ctx;

	return name[0] && (*mask >> (name[0] & 7)) & 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct agent_config c, d;
	uint8_t mask = size ? data[0] : 0;
	char path[64], err[512], diff[512];
	int fd, rc;

	fd = fuzz_memfd("agent.conf", data, size, path, sizeof(path));
	agent_config_defaults(&c);
	agent_config_defaults(&d);
	err[0] = '\0';
	rc =
	    agent_config_read_file(&c, path, (mask & 1) ? cfg_skip : NULL, &mask, err, sizeof(err));
	if (rc && !err[0])
		abort();
	if (strnlen(err, sizeof(err)) == sizeof(err))
		abort();
	err[0] = '\0';
	if (agent_config_check(&c, err, sizeof(err)) && !err[0])
		abort();
	agent_config_restart_diff(&d, &c, diff, sizeof(diff));
	if (strnlen(diff, sizeof(diff)) == sizeof(diff))
		abort();
	agent_config_free(&c);
	agent_config_free(&d);
	close(fd);
	return 0;
}
