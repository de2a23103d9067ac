// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's own files are read as untrusted (issue 12, item 13):
 *  - spool_symlink: a symlink planted in the spool directory, at start or in
 *    place of a profile waiting to be sent, is never followed (the old pusher
 *    sent whatever it pointed to), and a FIFO put there does not block the
 *    pusher: the profile is dropped, counted, and the next one goes out;
 *  - spool_services: a profile spooled for one service is pushed under that
 *    service's name (name=SERVICE{...}), also when a previous run left it;
 *    spool names whose service is not [A-Za-z0-9._-] are ignored, and
 *    agent_push_enqueue refuses such a service;
 *  - spool_inflight: a profile spooled while another is being sent, and
 *    sorting before it (same interval, a service name earlier in order), is
 *    delivered, and the one in flight is removed once, not dropped (the old
 *    pusher removed the newcomer unsent and then failed to read the other);
 *  - token_fifo: a FIFO as --token-file or as the config file is refused at
 *    start with exit status 2 (the old agent blocked in open() for good).
 * A loopback receiver stands in for the backend.  Runs under ASan too.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "tests/lib/http_client.h"
#include "user/agent/config.h"
#include "user/agent/push.h"

static char tmp[] = "/tmp/cfiprof-spool.XXXXXX";

/* Every request body it got, concatenated; answers 200 to each. */
struct receiver {
	int fd, port, requests;
	volatile bool stop, hold; /* hold: read requests, answer none until cleared */
	pthread_mutex_t lock;
	char got[1 << 16];
	size_t len;
	pthread_t thread;
};

static void *receiver_main(void *arg)
{
	static const char ok[] = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
	struct receiver *rv = arg;

	while (!rv->stop) {
		char buf[8192];
		ssize_t n;
		int c;

		if (poll(&(struct pollfd){.fd = rv->fd, .events = POLLIN}, 1, 100) <= 0)
			continue;
		c = accept(rv->fd, NULL, NULL);
		if (c < 0)
			continue;
		/* the whole request: curl sends it at once and waits for the answer */
		while (poll(&(struct pollfd){.fd = c, .events = POLLIN}, 1, 300) > 0 &&
		       (n = read(c, buf, sizeof(buf))) > 0) {
			pthread_mutex_lock(&rv->lock);
			if (rv->len + (size_t)n < sizeof(rv->got)) {
				memcpy(rv->got + rv->len, buf, (size_t)n);
				rv->len += (size_t)n;
			}
			pthread_mutex_unlock(&rv->lock);
		}
		pthread_mutex_lock(&rv->lock);
		rv->requests++;
		pthread_mutex_unlock(&rv->lock);
		while (rv->hold && !rv->stop)
			usleep(10 * 1000);
		if (write(c, ok, sizeof(ok) - 1) < 0)
			perror("receiver");
		close(c);
	}
	return NULL;
}

static int receiver_start(struct receiver *rv)
{
	rv->fd = listen_loopback(&rv->port);
	if (rv->fd < 0)
		return -1;
	pthread_mutex_init(&rv->lock, NULL);
	return pthread_create(&rv->thread, NULL, receiver_main, rv);
}

static void receiver_stop(struct receiver *rv)
{
	rv->stop = true;
	pthread_join(rv->thread, NULL);
	close(rv->fd);
}

static bool received(struct receiver *rv, const char *needle)
{
	bool found;

	pthread_mutex_lock(&rv->lock);
	found = memmem(rv->got, rv->len, needle, strlen(needle)) != NULL;
	pthread_mutex_unlock(&rv->lock);
	return found;
}

/* The spool's name for the interval [from, until) seconds, as push.c names it. */
static void spool_path(char *buf, size_t len, const char *spool, uint64_t from, uint64_t until)
{
	snprintf(buf, len, "%s/%020" PRIu64 "-%020" PRIu64 ".pb.gz", spool, from * 1000000000u,
		 until * 1000000000u);
}

/* The pusher's settings of these tests: application "t", quick retries, a 1 MiB spool. */
static struct agent_push_config push_config(const char *spool)
{
	return (struct agent_push_config){.app_name = "t",
					  .spool_dir = spool,
					  .timeout = 2,
					  .backoff_max = 0.5,
					  .spool_max_bytes = 1 << 20};
}

/* A loopback receiver and a pusher sending to it (url: cfg's, len bytes); NULL if either failed. */
static struct agent_push *start_with_receiver(struct receiver *rv, struct agent_push_config *cfg,
					      char *url, size_t len)
{
	struct agent_push *ap;

	CHECK(receiver_start(rv) == 0, "receiver");
	snprintf(url, len, "http://127.0.0.1:%d", rv->port);
	cfg->url = url;
	ap = agent_push_start(cfg);
	CHECK(ap != NULL, "agent_push_start");
	if (!ap)
		receiver_stop(rv);
	return ap;
}

static void test_spool_symlink(void)
{
	char spool[PATH_MAX] = "", secret[PATH_MAX], path[PATH_MAX + 64], url[64];
	struct agent_push_config cfg = push_config(spool);
	struct receiver rv = {0};
	struct agent_push_stats st = {0};
	struct agent_push *ap;
	int dead;

	snprintf(spool, sizeof(spool), "%s/spool", tmp);
	snprintf(secret, sizeof(secret), "%s/secret", tmp);
	mkdir(spool, 0750);
	write_text(secret, "TOPSECRET outside the spool");
	/* planted before the start: looks like a profile a previous run left */
	spool_path(path, sizeof(path), spool, 1, 2);
	CHECK(!symlink(secret, path), "symlink %s", path);
	/* two real profiles, sent after it: both replaced below while the backend is down */
	spool_path(path, sizeof(path), spool, 3, 4);
	write_text(path, "PROFILE-3");
	spool_path(path, sizeof(path), spool, 5, 6);
	write_text(path, "PROFILE-5");
	spool_path(path, sizeof(path), spool, 7, 8);
	write_text(path, "PROFILE-7");
	/* a port nobody listens on: every push fails and waits, the spool stays */
	close(listen_loopback(&dead));
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", dead);
	cfg.url = url;
	ap = agent_push_start(&cfg);
	CHECK(ap != NULL, "agent_push_start");
	if (!ap)
		return;
	sleep_s(0.3);
	/* profile 3 becomes a symlink to the secret, profile 5 a FIFO */
	spool_path(path, sizeof(path), spool, 3, 4);
	unlink(path);
	CHECK(!symlink(secret, path), "symlink over %s", path);
	spool_path(path, sizeof(path), spool, 5, 6);
	unlink(path);
	CHECK(!mkfifo(path, 0600), "mkfifo %s", path);
	CHECK(receiver_start(&rv) == 0, "receiver");
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", rv.port);
	agent_push_configure(ap, &cfg);
	for (int i = 0; i < 100 && !received(&rv, "PROFILE-7"); i++)
		sleep_s(0.05);
	agent_push_stop(ap, 1.0, &st);
	receiver_stop(&rv);
	CHECK(received(&rv, "PROFILE-7"), "the regular profile after them is delivered (%d requests)",
	      rv.requests);
	CHECK(!received(&rv, "TOPSECRET"), "a symlink in the spool was followed and its target pushed");
	CHECK(st.dropped == 2, "the symlinked and the FIFO profile are dropped, counted: %" PRIu64,
	      st.dropped);
	CHECK(access(secret, F_OK) == 0, "the symlink's target is left alone");
}

static void test_spool_services(void)
{
	char spool[PATH_MAX] = "", path[PATH_MAX + 64], url[64];
	struct agent_push_config cfg = push_config(spool);
	struct receiver rv = {0};
	struct agent_push_stats st = {0};
	struct agent_push *ap;

	snprintf(spool, sizeof(spool), "%s/spool-services", tmp);
	mkdir(spool, 0750);
	/* left by a previous run: one service's profile, and a name no run writes */
	snprintf(path, sizeof(path), "%s/%020d-%020d@svc-a.pb.gz", spool, 1, 2);
	write_text(path, "PROFILE-A");
	snprintf(path, sizeof(path), "%s/%020d-%020d@bad{x}.pb.gz", spool, 1, 2);
	write_text(path, "PROFILE-BAD");
	ap = start_with_receiver(&rv, &cfg, url, sizeof(url));
	if (!ap)
		return;
	CHECK(agent_push_enqueue(ap, 3, 4, "svc-b.1_x", "PROFILE-B", 9) == 0, "enqueue svc-b");
	CHECK(agent_push_enqueue(ap, 3, 4, NULL, "PROFILE-T", 9) == 0, "enqueue, no service");
	CHECK(agent_push_enqueue(ap, 3, 4, "a/b", "PROFILE-S", 9) == -EINVAL,
	      "a service with '/' is refused");
	CHECK(agent_push_enqueue(ap, 3, 4, "", "PROFILE-E", 9) == -EINVAL,
	      "an empty service is refused");
	for (int i = 0; i < 100 && !received(&rv, "PROFILE-T"); i++)
		sleep_s(0.05);
	agent_push_stop(ap, 1.0, &st);
	receiver_stop(&rv);
	CHECK(received(&rv, "name=svc-a%7B") && received(&rv, "PROFILE-A"),
	      "the spooled svc-a profile is pushed as svc-a{...}");
	CHECK(received(&rv, "name=svc-b.1_x%7B") && received(&rv, "PROFILE-B"),
	      "the svc-b profile is pushed as svc-b.1_x{...}");
	CHECK(received(&rv, "name=t%7B") && received(&rv, "PROFILE-T"),
	      "a profile without a service is pushed under the configured name");
	CHECK(rv.requests == 3 && !received(&rv, "PROFILE-BAD") && !received(&rv, "PROFILE-S"),
	      "%d requests; only the three valid profiles go out", rv.requests);
	CHECK(agent_service_name_ok("a.b-c_9") && !agent_service_name_ok("a b") &&
		  !agent_service_name_ok("x{y}") && !agent_service_name_ok(""),
	      "agent_service_name_ok");
}

static int requests(struct receiver *rv)
{
	int n;

	pthread_mutex_lock(&rv->lock);
	n = rv->requests;
	pthread_mutex_unlock(&rv->lock);
	return n;
}

static void test_spool_inflight(void)
{
	char spool[PATH_MAX] = "", url[64];
	struct agent_push_config cfg = push_config(spool);
	struct receiver rv = {.hold = true};
	struct agent_push_stats st = {0};
	struct agent_push *ap;

	snprintf(spool, sizeof(spool), "%s/spool-inflight", tmp);
	mkdir(spool, 0750);
	ap = start_with_receiver(&rv, &cfg, url, sizeof(url));
	if (!ap)
		return;
	CHECK(agent_push_enqueue(ap, 3, 4, "svc-z", "PROFILE-Z", 9) == 0, "enqueue svc-z");
	/* held unanswered: svc-z stays in flight (a hang guard, not a speed bound) */
	for (int i = 0; i < 400 && requests(&rv) < 1; i++)
		sleep_s(0.05);
	CHECK(requests(&rv) == 1, "svc-z's request reached the receiver");
	CHECK(agent_push_enqueue(ap, 3, 4, "svc-a", "PROFILE-A", 9) == 0, "enqueue svc-a");
	rv.hold = false;
	for (int i = 0; i < 400 && !received(&rv, "PROFILE-A"); i++)
		sleep_s(0.05);
	agent_push_stop(ap, 1.0, &st);
	receiver_stop(&rv);
	CHECK(received(&rv, "PROFILE-Z") && received(&rv, "PROFILE-A"),
	      "both profiles delivered (svc-z %d, svc-a %d)", received(&rv, "PROFILE-Z"),
	      received(&rv, "PROFILE-A"));
	CHECK(rv.requests == 2 && st.successes == 2 && st.dropped == 0 && st.failures == 0,
	      "%d requests, %" PRIu64 " successes, %" PRIu64 " failures, %" PRIu64 " dropped",
	      rv.requests, st.successes, st.failures, st.dropped);
}

/* argv's exit status (the agent's), with its stderr in *msg; -1 if it hung for 10 s. */
static int run_agent(char **argv, char **msg)
{
	char errfile[PATH_MAX];
	bool timed_out;
	int rc;

	snprintf(errfile, sizeof(errfile), "%s/agent.err", tmp);
	rc = wait_timeout(spawn(argv, NULL, errfile), 10.0, &timed_out);
	*msg = slurp_len(errfile, NULL);
	return timed_out ? -1 : exit_code(rc, false);
}

static void test_token_fifo(void)
{
	const char *cfiprof = getenv("CFIPROF") ? getenv("CFIPROF") : "build/cfiprof";
	char fifo[PATH_MAX], out[PATH_MAX], err[512];
	char *agent[] = {(char *)cfiprof, "agent",     "--push", "http://127.0.0.1:1",
			 "--token-file",  fifo,	       "-o",	 out,
			 "-d",		  "1",	       "--metrics-addr", "off",
			 NULL};
	char *agent_conf[] = {(char *)cfiprof, "agent", "-c", fifo, "-o", out, "-d", "1",
			      "--metrics-addr", "off", NULL};
	struct agent_config c;
	char *msg;
	int rc;

	snprintf(fifo, sizeof(fifo), "%s/fifo", tmp);
	snprintf(out, sizeof(out), "%s/out", tmp);
	CHECK(!mkfifo(fifo, 0600), "mkfifo %s", fifo);
	agent_config_defaults(&c);
	agent_config_set(&c, agent_option_by_name("push"), "http://127.0.0.1:1", err, sizeof(err));
	agent_config_set(&c, agent_option_by_name("token-file"), fifo, err, sizeof(err));
	err[0] = 0;
	CHECK(agent_config_check(&c, err, sizeof(err)) == -1 && strstr(err, "token-file"),
	      "a FIFO token file fails the config check: '%s'", err);
	agent_config_free(&c);
	rc = run_agent(agent, &msg);
	CHECK(rc == 2 && strstr(msg, "token-file") && strstr(msg, "not a regular file"),
	      "agent --token-file FIFO exits %d (want 2; -1: hung): '%.300s'", rc, msg);
	free(msg);
	rc = run_agent(agent_conf, &msg);
	CHECK(rc == 2 && strstr(msg, "not a regular file"),
	      "agent -c FIFO exits %d (want 2; -1: hung): '%.300s'", rc, msg);
	free(msg);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	if (!mkdtemp(tmp)) {
		CHECK(0, "mkdtemp %s", tmp);
		return HARNESS_DONE();
	}
	RUN_TEST(test_spool_symlink);
	RUN_TEST(test_spool_services);
	RUN_TEST(test_spool_inflight);
	RUN_TEST(test_token_fifo);
	tmpdir_done(tmp, harness_failed);
	return HARNESS_DONE();
}
