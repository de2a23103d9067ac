/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * libFuzzer target for what the agent's push path does with a server's
 * response and with the token file.  libcurl parses the HTTP itself; the
 * agent's own code sees the body through its write callback (on_body, which
 * keeps the first bytes for the log) and reads the bearer token from a file
 * at every push (agent_push_read_token).  on_body is static in ingest.c, so the file
 * is included here.  Input: byte 0 picks the token buffer size, the rest is
 * the response body delivered in chunks whose sizes come from the body.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "user/agent/ingest.c"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct response resp = {0};
	size_t off = 1, chunk, nmemb, took;
	char path[64], *token, *copy;
	size_t tlen = size ? 1 + (size_t)data[0] * 17 : 1;
	int fd;

	/* the body, in callback-sized pieces, as libcurl hands it over */
	while (off < size) {
		chunk = 1 + data[off] % 97;
		if (chunk > size - off)
			chunk = size - off;
		nmemb = (data[off] & 1) && chunk % 2 == 0 ? 2 : 1;
		copy = fuzz_strndup(data + off, chunk); /* exact allocation */
		took = on_body(copy, chunk / nmemb, nmemb, &resp);
		free(copy);
		if (took != chunk / nmemb * nmemb || resp.len >= sizeof(resp.text) ||
		    resp.text[resp.len] != '\0')
			abort();
		off += chunk;
	}
	/* the same bytes as the token file */
	fd = fuzz_memfd("token", data, size, path, sizeof(path));
	token = malloc(tlen);
	if (!token)
		abort();
	if (agent_push_read_token(path, token, tlen) == 0 && strnlen(token, tlen) == tlen)
		abort();
	free(token);
	close(fd);
	return 0;
}
