/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The one version string: set by the Makefile from `git describe` (a
 * release tag vMAJOR.MINOR..., else the base version and the commit), so
 * `cfiprof --version`, every subcommand's --version and the agent's
 * cfiprof_build_info metric say the same thing.
 */
#ifndef CFIPROF_VERSION_H
#define CFIPROF_VERSION_H

/* "0.1+g979762d" */
extern const char cfiprof_version[];
/* "cfiprof 0.1+g979762d": what --version prints */
extern const char cfiprof_version_line[];

#endif
