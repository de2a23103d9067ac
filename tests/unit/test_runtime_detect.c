// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * user/runtimes/runtime_detect: a process's entry is read from its memory
 * (a JVM's layout: thousands of reads) without the lock every lookup takes,
 * so the consumer's lookups of other processes go on meanwhile; the entry
 * and the lookup's copy change together once it is read.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/lib/harness.h"
#include "user/runtimes/runtime_detect.h"
#include "user/track/proc_tracker.h"

#define SLOW_PID 200
#define FAST_PID 100
/* guards a hang only: a lookup that waits for another process's entry waits this long */
#define GUARD_S 30

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static bool slow_entered, slow_released, lookup_done;

static int object(int fd, const char *path, void *info)
{
	(void)fd;
	(void)path;
	memset(info, 0x5a, DETECT_INFO_BYTES);
	return 0;
}

/* pid's entry is its pid; SLOW_PID's waits until the test releases it */
static int entry(const void *info, uint64_t bias, uint32_t pid, uint64_t read_ns, void *data,
		 size_t *size, uint16_t *version)
{
	uint64_t v = pid;

	(void)bias;
	(void)read_ns;
	if (((const uint8_t *)info)[DETECT_INFO_BYTES - 1] != 0x5a)
		return -1;
	if (pid == SLOW_PID) {
		pthread_mutex_lock(&lock);
		slow_entered = true;
		pthread_cond_broadcast(&cond);
		while (!slow_released)
			pthread_cond_wait(&cond, &lock);
		pthread_mutex_unlock(&lock);
	}
	memcpy(data, &v, sizeof(v));
	*size = sizeof(v);
	*version = 0x030b;
	return 0;
}

static const struct detect_ops ops = {.runtime = RT_PYTHON, .object = object, .entry = entry};
static struct proc_mapping maps[1];

static void *slow_load(void *rd)
{
	runtime_detect_proc(rd, SLOW_PID, maps, 1, 1, false);
	return NULL;
}

static void *fast_lookup(void *rd)
{
	uint64_t v = 0;
	bool found = runtime_detect_lookup(rd, FAST_PID, &v, sizeof(v)) && v == FAST_PID;

	pthread_mutex_lock(&lock);
	lookup_done = found;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* waits (lock held) until *flag, GUARD_S at most: whether it came */
static bool wait_flag(const bool *flag)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += GUARD_S;
	while (!*flag)
		if (pthread_cond_timedwait(&cond, &lock, &until))
			break;
	return *flag;
}

static void test_lookup_during_entry(void)
{
	struct runtime_detect *rd = runtime_detect_new(&ops, -1);
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	pthread_t slow, fast;
	uint64_t v = 0;
	bool entered, looked_up, slow_found;

	CHECK(rd && fd >= 0, "setup");
	if (!rd || fd < 0)
		return;
	snprintf(maps[0].key, sizeof(maps[0].key), "runtime-object");
	runtime_detect_object(rd, maps[0].key, "/usr/lib/libruntime.so", fd);
	runtime_detect_proc(rd, FAST_PID, maps, 1, 1, false);
	CHECK(runtime_detect_lookup(rd, FAST_PID, &v, sizeof(v)) && v == FAST_PID,
	      "the fast process's entry: %llu", (unsigned long long)v);

	pthread_create(&slow, NULL, slow_load, rd);
	pthread_mutex_lock(&lock);
	entered = wait_flag(&slow_entered);
	pthread_mutex_unlock(&lock);
	CHECK(entered, "the slow process's entry never began");
	/* another process looked up while that entry is being read */
	pthread_create(&fast, NULL, fast_lookup, rd);
	pthread_mutex_lock(&lock);
	looked_up = wait_flag(&lookup_done);
	/* (with the lock held by the entry's reader, this lookup would wait for the release) */
	slow_found = looked_up && runtime_detect_lookup(rd, SLOW_PID, &v, sizeof(v));
	slow_released = true;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	CHECK(looked_up, "a lookup of another process waited for the slow process's entry (%d s)",
	      GUARD_S);
	CHECK(!slow_found, "the slow process found before its entry was read");
	pthread_join(fast, NULL);
	pthread_join(slow, NULL);
	v = 0;
	CHECK(runtime_detect_lookup(rd, SLOW_PID, &v, sizeof(v)) && v == SLOW_PID,
	      "the slow process's entry once read: %llu", (unsigned long long)v);
	close(fd);
	runtime_detect_free(rd);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_lookup_during_entry);
	return HARNESS_DONE();
}
