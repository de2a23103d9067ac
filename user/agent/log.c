// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Structured logs of the agent (logfmt); see agent_log.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/escape.h"
#include "user/agent/log.h"

static const char *const level_names[] = {"debug", "info", "warn", "error"};
/* syslog priorities: debug 7, info 6, warning 4, err 3 */
static const int level_prio[] = {7, 6, 4, 3};

static int min_level = ALOG_INFO;
static int saved_stderr = -1;
static int journal = -1; /* unknown until the first line */

int alog_parse_level(const char *s)
{
	int i;

	for (i = 0; i < (int)(sizeof(level_names) / sizeof(level_names[0])); i++)
		if (!strcmp(s, level_names[i]))
			return i;
	if (!strcmp(s, "warning"))
		return ALOG_WARN;
	return -1;
}

void alog_set_level(enum alog_level l)
{
	min_level = l;
}

/* journald sets JOURNAL_STREAM to the device:inode of the stream it gave us as stderr. */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2 || fstat(STDERR_FILENO, &st))
		return false;
	return st.st_dev == dev && st.st_ino == ino;
}

int alog_open(const char *path)
{
	int fd;

	if (saved_stderr < 0)
		saved_stderr = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
	if (!path) {
		if (saved_stderr >= 0)
			dup2(saved_stderr, STDERR_FILENO);
	} else {
		fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
		if (fd < 0)
			return -errno;
		/* stderr itself moves, so libbpf's and libcurl's messages land there too */
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	journal = -1;
	return 0;
}

const char *alog_quote(const char *s, char *buf, unsigned long len)
{
	if (!s)
		s = "";
	if (*s && !strpbrk(s, " \"=\\") && !str_has_control(s))
		return s;
	if (len < 3)
		return "\"\"";
	buf[0] = '"';
	str_escape(buf + 1, len - 2, s, "\"\\");
	strcat(buf, "\"");
	return buf;
}

void alog(enum alog_level l, const char *msg, const char *kv, ...)
{
	char line[2048], pairs[2048], ts[40], q[512];
	struct timespec now;
	struct tm tm;
	va_list ap;
	int n = 0;

	if ((int)l < min_level)
		return;
	if (journal < 0)
		journal = stderr_is_journal();
	clock_gettime(CLOCK_REALTIME, &now);
	gmtime_r(&now.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	if (journal)
		n = snprintf(line, sizeof(line), "<%d>", level_prio[l]);
	n += snprintf(line + n, sizeof(line) - (size_t)n, "ts=%s.%03ldZ level=%s msg=%s", ts,
		      now.tv_nsec / 1000000, level_names[l], alog_quote(msg, q, sizeof(q)));
	if (kv && *kv && n < (int)sizeof(line) - 2) {
		line[n++] = ' ';
		va_start(ap, kv);
		vsnprintf(pairs, sizeof(pairs), kv, ap);
		va_end(ap);
		/* a value printed unquoted still cannot end the line or start another */
		str_escape(line + n, sizeof(line) - (size_t)n, pairs, NULL);
		n += (int)strlen(line + n);
	}
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	/* one write per line: threads never interleave inside a line */
	if (write(STDERR_FILENO, line, (size_t)n) < 0)
		return;
}
