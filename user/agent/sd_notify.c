// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* systemd readiness notifications; see sd_notify.h. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "user/agent/sd_notify.h"

int agent_sd_notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	size_t n = path ? strlen(path) : 0;
	socklen_t len;
	ssize_t sent;
	int fd, err;

	if (!n)
		return 0;
	/* a path, or "@name" for the abstract namespace */
	if ((path[0] != '/' && path[0] != '@') || n >= sizeof(sa.sun_path))
		return -EINVAL;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = 0;
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	sent = sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len);
	err = sent < 0 ? -errno : 1;
	close(fd);
	return err;
}
