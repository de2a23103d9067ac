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

/* the start of an argv */
#define JAVAC_ARGV "javac", "-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC"
/* the same, in a shell command line (its javac a path or not) */
#define JAVAC_FLAGS "-J-XX:TieredStopAtLevel=1 -J-XX:+UseSerialGC"

#endif
