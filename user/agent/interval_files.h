/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Files the agent leaves on disk (interval profiles, the push spool): written
 * atomically, so a reader or a crash never sees half a profile, and bounded
 * by age and total size.
 */
#ifndef CFIPROF_AGENT_INTERVAL_FILES_H
#define CFIPROF_AGENT_INTERVAL_FILES_H

#include <stddef.h>
#include <stdint.h>

#define AGENT_PROFILE_PREFIX "cfiprof-"
#define AGENT_PROFILE_SUFFIX ".pb.gz"

/* mkdir -p, mode 0750 for new directories. */
int agent_mkdirs(const char *dir);
/*
 * Writes data to dir/name: a temporary name in dir, fsync, rename, fsync of
 * the directory, so after a crash the file is either complete or absent.
 * Returns 0 or -errno.
 */
int agent_write_atomic(const char *dir, const char *name, const void *data, size_t len);
/* Removes temporaries a crash left in dir. */
void agent_remove_temporaries(const char *dir);
/* "cfiprof-20250102T030405.678Z.pb.gz" for a unix time in ns. */
void agent_profile_name(uint64_t unix_ns, char *buf, size_t len);

struct agent_retention {
	uint64_t files, bytes;		 /* kept */
	uint64_t removed, removed_bytes; /* this call */
};

/*
 * Deletes interval profiles (cfiprof-*.pb.gz) in dir older than max_age
 * seconds (0: any age) or, oldest first, beyond max_bytes in total (0: no bound).
 */
int agent_retain(const char *dir, double max_age, uint64_t max_bytes, struct agent_retention *r);

#endif
