// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Settings that would overflow a buffer downstream are refused at start
 * (exit status 2, a message naming the setting), and the push name builder
 * never writes past its buffer, whatever it is given (issue 12, item 3).
 * Runs under ASan too: a write past the buffer fails there even when the
 * result looks right.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "user/agent/config.h"
#include "user/agent/push.h"

static char *repeat(char c, size_t n)
{
	char *s = malloc(n + 1);

	memset(s, c, n);
	s[n] = 0;
	return s;
}

static void test_push_name(void)
{
	char small[16], buf[AGENT_PUSH_NAME_MAX];
	char *app = repeat('a', 2000), *labels = repeat('b', 3000);

	CHECK(agent_push_name("cfiprof", "host", "env=prod", buf, sizeof(buf)) == 0 &&
		  !strcmp(buf, "cfiprof{hostname=host,env=prod}"),
	      "name '%s'", buf);
	CHECK(agent_push_name("app", NULL, NULL, buf, sizeof(buf)) == 0 && !strcmp(buf, "app{}"),
	      "name without host or labels '%s'", buf);
	/* the old builder kept appending after a truncation and ran past the buffer */
	CHECK(agent_push_name(app, "host", labels, buf, sizeof(buf)) == -ENAMETOOLONG &&
		  strlen(buf) == sizeof(buf) - 1,
	      "a name over the buffer is refused and the buffer stays terminated");
	CHECK(agent_push_name("cfiprof", app, labels, small, sizeof(small)) == -ENAMETOOLONG &&
		  strlen(small) == sizeof(small) - 1,
	      "a long hostname into a 16-byte buffer");
	free(app);
	free(labels);
}

/* Applies key=value settings to a default config and returns agent_config_check's verdict. */
static int check_with(const char *const *kv, char *err, size_t errlen)
{
	struct agent_config c;
	int rc = 0;

	agent_config_defaults(&c);
	for (; kv[0] && !rc; kv += 2) {
		const struct agent_option *o = NULL;

		for (size_t i = 0; i < agent_nr_options; i++)
			if (!strcmp(agent_options[i].name, kv[0]))
				o = &agent_options[i];
		if (!o) {
			snprintf(err, errlen, "no option %s", kv[0]);
			rc = -2;
			break;
		}
		rc = agent_config_set(&c, o, kv[1], err, errlen);
	}
	if (!rc)
		rc = agent_config_check(&c, err, errlen);
	agent_config_free(&c);
	return rc;
}

static void test_config_bounds(void)
{
	char err[512], labels[4096];
	char *long_app = repeat('a', 1100), *long_value = repeat('v', 300),
	     *long_url = repeat('u', 3000);
	char long_label[400], url[3100];
	size_t n = 0;

	snprintf(long_label, sizeof(long_label), "k=%s", long_value);
	snprintf(url, sizeof(url), "http://%s", long_url);
	for (int i = 0; i < 40; i++)
		n += (size_t)snprintf(labels + n, sizeof(labels) - n, "%sk%d=v", i ? "," : "", i);

	CHECK(check_with((const char *[]){"output-dir", "/tmp/x", "push", "http://127.0.0.1:1",
					  "labels", "env=prod,team=a", NULL},
			 err, sizeof(err)) == 0,
	      "an ordinary config is accepted: %s", err);
	CHECK(check_with((const char *[]){"push", "http://127.0.0.1:1", "app-name", long_app, NULL},
			 err, sizeof(err)) == -1 &&
		  strstr(err, "service-name"),
	      "a 1100-byte app name is refused: '%s'", err);
	CHECK(check_with((const char *[]){"output-dir", "/tmp/x", "labels", labels, NULL}, err,
			 sizeof(err)) == -1 &&
		  strstr(err, "too many labels"),
	      "40 labels are refused: '%s'", err);
	CHECK(check_with((const char *[]){"output-dir", "/tmp/x", "labels", long_label, NULL}, err,
			 sizeof(err)) == -1 &&
		  strstr(err, "labels"),
	      "a 300-byte label value is refused: '%s'", err);
	CHECK(check_with((const char *[]){"output-dir", "/tmp/x", "runtimes", "python,jvm", NULL},
			 err, sizeof(err)) == -1 &&
		  strstr(err, "unknown runtime 'jvm'"),
	      "runtimes = python,jvm is refused: '%s'", err);
	CHECK(
	    check_with((const char *[]){"output-dir", "/tmp/x", "runtimes", "python,hotspot", NULL},
		       err, sizeof(err)) == 0,
	    "runtimes = python,hotspot is accepted: '%s'", err);
	CHECK(check_with((const char *[]){"output-dir", "/tmp/x", "hostname", "a{b}", NULL}, err,
			 sizeof(err)) == -1 &&
		  strstr(err, "hostname"),
	      "a host name with braces is refused: '%s'", err);
	/* the walker takes at most MAX_USER_FRAMES_LIMIT: more was accepted, then capped silently */
	CHECK(check_with((const char *[]){"output-dir", "/tmp/x", "max-frames", "2000", NULL}, err,
			 sizeof(err)) != 0 &&
		  strstr(err, "max-frames"),
	      "--max-frames 2000 is refused: '%s'", err);
	CHECK(check_with((const char *[]){"output-dir", "/tmp/x", "max-frames", "1024", NULL}, err,
			 sizeof(err)) == 0,
	      "--max-frames 1024 is accepted: '%s'", err);
	CHECK(check_with((const char *[]){"push", url, NULL}, err, sizeof(err)) == -1 &&
		  strstr(err, "URL"),
	      "a 3000-byte push URL is refused: '%s'", err);
	/* --otlp: the same bounds as --push, and enough alone */
	CHECK(check_with((const char *[]){"otlp", url, NULL}, err, sizeof(err)) == -1 &&
		  strstr(err, "otlp URL"),
	      "a 3000-byte otlp URL is refused: '%s'", err);
	CHECK(check_with((const char *[]){"otlp", "grpc://127.0.0.1:4317", NULL}, err,
			 sizeof(err)) == -1 &&
		  strstr(err, "otlp URL"),
	      "an otlp URL that is not http(s) is refused: '%s'", err);
	CHECK(check_with((const char *[]){"otlp", "http://127.0.0.1:4318", "tenant", "a\r\nX: y",
					  NULL},
			 err, sizeof(err)) == -1 &&
		  strstr(err, "tenant"),
	      "a tenant that would add a header to the OTLP request is refused: '%s'", err);
	CHECK(check_with((const char *[]){"otlp", "http://127.0.0.1:4318", NULL}, err,
			 sizeof(err)) == 0,
	      "--otlp alone is something to do: '%s'", err);
	/* each part fits alone, together they pass the push name's buffer */
	n = 0;
	for (int i = 0; i < 6; i++)
		n += (size_t)snprintf(labels + n, sizeof(labels) - n, "%sk%d=%.200s", i ? "," : "",
				      i, long_value);
	CHECK(check_with((const char *[]){"push", "http://127.0.0.1:1", "labels", labels, NULL},
			 err, sizeof(err)) == -1 &&
		  strstr(err, "push name"),
	      "labels that make the push name too long are refused: '%s'", err);
	/* a mistake, refused at start; a port another process holds is retried instead */
	CHECK(check_with(
		  (const char *[]){"output-dir", "/tmp/x", "metrics-addr", "localhost9491", NULL},
		  err, sizeof(err)) == -1 &&
		  strstr(err, "address"),
	      "a metrics address without a port is refused: '%s'", err);
	CHECK(check_with(
		  (const char *[]){"output-dir", "/tmp/x", "metrics-addr", "127.0.0.1:9491", NULL},
		  err, sizeof(err)) == 0,
	      "a metrics address is accepted: '%s'", err);
	CHECK(check_with((const char *[]){"output-dir", "/tmp/x", "max-services", "1", NULL}, err,
			 sizeof(err)) != 0 &&
		  strstr(err, "max-services"),
	      "--max-services 1 is refused (the busiest and other at least): '%s'", err);
	/* an interval's end cannot wait past the next one */
	CHECK(check_with((const char *[]){"output-dir", "/tmp/x", "interval", "3s", "interval-wait",
					  "3s", NULL},
			 err, sizeof(err)) == -1 &&
		  strstr(err, "interval-wait"),
	      "--interval-wait as long as the interval is refused: '%s'", err);
	CHECK(check_with((const char *[]){"output-dir", "/tmp/x", "interval", "3s", "interval-wait",
					  "2s", NULL},
			 err, sizeof(err)) == 0,
	      "--interval-wait 2s with --interval 3s is accepted: '%s'", err);
	free(long_app);
	free(long_value);
	free(long_url);
}

/* The command itself: refused at start with status 2, before any BPF work. */
static void test_agent_refuses(void)
{
	const char *cfiprof = getenv("CFIPROF") ? getenv("CFIPROF") : "build/cfiprof";
	char *app = repeat('a', 1100), errfile[] = "/tmp/cfiprof-limits.XXXXXX";
	char *argv[] = {(char *)cfiprof, "agent", "--push", "http://127.0.0.1:1", "-o",
			"/tmp/cfiprof-limits-out", "--app-name", app, NULL};
	int fd = mkstemp(errfile), rc;
	bool timed_out;
	char *msg;
	pid_t pid;

	close(fd);
	pid = spawn(argv, NULL, errfile);
	rc = wait_timeout(pid, 10.0, &timed_out);
	rc = exit_code(rc, timed_out);
	msg = slurp_len(errfile, NULL);
	CHECK(rc == 2, "agent with a 1100-byte --app-name exits %d, want 2", rc);
	/* --app-name is the former name of --service-name */
	CHECK(strstr(msg, "service-name"), "its message names the setting: '%.200s'", msg);
	free(msg);
	free(app);
	unlink(errfile);
}

int main(void)
{
	test_push_name();
	test_config_bounds();
	test_agent_refuses();
	return HARNESS_DONE();
}
