/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * javac as the tests run it: its own JVM with C1 alone and the serial
 * collector, half the CPU of a default javac of a test's class (0.85 against
 * 1.55 CPU-s here, most of it javac's JVM compiling javac), the same class
 * files.  Not for the JVMs under test, which run as their tests say.
 * tests/progs/progs.mk passes the same flags (JAVAC there).
 */
#ifndef CFIPROF_TESTS_JAVAC_H
#define CFIPROF_TESTS_JAVAC_H

#include "tests/lib/cli_util.h"

/* the start of an argv */
#define JAVAC_ARGV "javac", "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"
/* the same, in a shell command line (its javac a path or not) */
#define JAVAC_FLAGS "-J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC"

/* A test's Java source text, written to src and compiled into classes (made): 0, or -1. */
static inline int javac_text(const char *src, const char *text, const char *classes)
{
	char *argv[] = {JAVAC_ARGV, "-d", (char *)classes, (char *)src, NULL};

	if (!write_text(src, text) || sh_fmt("mkdir -p %s", classes))
		return -1;
	return run(argv, NULL, "-", 120) ? -1 : 0;
}

#endif
