// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A load's time budget, less the time its thread waited for a CPU; see load_clock.h. */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "common/clock.h"
#include "user/track/load_clock.h"

bool thread_cpu_wait(uint64_t *ns)
{
	/* "on-CPU ns, run-queue wait ns, timeslices" */
	char buf[96];
	unsigned long long run, wait;
	ssize_t n;
	int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
		return false;
	*ns = wait;
	return true;
}

void load_clock_start(struct load_clock *c, uint64_t budget_ns)
{
	uint64_t now = mono_ns();

	c->deadline = now + budget_ns;
	c->latest = now + budget_ns * LOAD_CLOCK_STRETCH_MAX;
	c->waited = 0;
	c->wait_known = false;
}

void load_clock_rebase(struct load_clock *c)
{
	c->wait_known = thread_cpu_wait(&c->waited);
}

void load_clock_adopt(struct load_clock *c, const struct load_clock *from)
{
	c->deadline = from->deadline;
	c->latest = from->latest;
	c->waited = 0;
	c->wait_known = true;
}

bool load_clock_past(struct load_clock *c)
{
	uint64_t now = mono_ns(), waited;

	if (now <= c->deadline)
		return false;
	if (c->deadline >= c->latest || !thread_cpu_wait(&waited))
		return true;
	/* a count read only now moves nothing: what it holds may predate the load */
	if (c->wait_known && waited > c->waited) {
		c->deadline += waited - c->waited;
		if (c->deadline > c->latest)
			c->deadline = c->latest;
	}
	c->waited = waited;
	c->wait_known = true;
	return now > c->deadline;
}
