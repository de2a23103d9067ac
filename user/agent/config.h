/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The agent's settings.  One table (agent_options) names every setting once:
 * cmd_agent builds its argp options from it and the config file uses the same
 * long names (`interval = 60`), so a key in the file always means exactly
 * what the flag means.  Flags override the file; SIGHUP re-reads the file.
 */
#ifndef CFIPROF_AGENT_CONFIG_H
#define CFIPROF_AGENT_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Bounds agent_config_check enforces, so nothing downstream truncates. */
/* bounded per host: a program name, not a pid (see --sample-labels) */
#define AGENT_SAMPLE_LABELS_DEFAULT "comm"
#define AGENT_MAX_LABELS 16  /* hostname + --labels pairs on every sample */
#define AGENT_LABEL_MAX	 255 /* a label name or value, the app name, the hostname, the tenant */
#define AGENT_URL_MAX	 2048
#define AGENT_TABLE_CACHE_DEFAULT "/var/lib/cfiprof-agent/tables"
#define AGENT_DEBUGINFOD_CACHE_DEFAULT "/var/lib/cfiprof-agent/debuginfod"
#define AGENT_MAX_SERVICES_DEFAULT     32
#define AGENT_OTHER_SERVICE	       "other" /* where services past --max-services go */

struct agent_config {
	/* sampling: fixed once the BPF side is loaded (a change needs a restart) */
	uint32_t freq;
	bool user_only;
	bool off_cpu;	  /* off-CPU time beside CPU time */
	double min_block; /* off-CPU: shorter blocks are counted, not sampled */
	bool bpf_stats; /* BPF_ENABLE_STATS while the agent runs: BPF run time in the metrics */
	uint32_t max_frames;
	uint64_t max_stacks; /* distinct stacks per interval */
	uint32_t table_rows; /* capacity of the rows map: bounds table bytes */
	uint64_t max_table_bytes; /* tables in the maps; least recently sampled go first */
	uint32_t max_processes;	  /* live processes with tables loaded; same order */
	double table_idle_ttl;	  /* unused objects' tables stay this long */
	uint64_t defer_stack;	  /* stack bytes a tables-pending sample carries (0: off) */
	uint64_t defer_budget;	  /* of those per second (0: from the rate) */
	char *table_cache;	  /* compiled tables kept here; "off": none */
	char *runtimes;		  /* --runtimes's list (NULL: all) */
	uint64_t table_cache_size;
	uint32_t build_workers; /* tables one load builds at once (0: CPUs, at most 4) */
	char *debuginfod;	/* servers for stripped objects' debug files; NULL / "off": none */
	char *debuginfod_cache; /* libdebuginfod's cache (DEBUGINFOD_CACHE_PATH) */
	double debuginfod_timeout;
	uint64_t debuginfod_max_size;
	bool no_source_lines;	/* names only: no DWARF lines and inline frames */
	double source_lines_time; /* seconds of line lookups per interval, at most */
	char *metrics_addr;  /* host:port, "off" to disable */
	char *log_file;	     /* NULL: stderr */
	/* changeable by SIGHUP */
	double interval, duration;
	double interval_wait; /* an interval's end waits this for its samples; 0: a tenth */
	char *output_dir;
	double retain_age;
	uint64_t retain_bytes;
	char *otlp_url; /* --otlp: OTLP/HTTP receiver */
	char *push_url, *app_name, *labels, *tenant, *token_file, *spool_dir;
	char *sample_labels; /* --sample-labels; NULL: AGENT_SAMPLE_LABELS_DEFAULT */
	uint32_t max_services; /* distinct services an interval pushes; the rest are "other" */
	double push_timeout, backoff_max;
	uint64_t spool_max_bytes;
	char *hostname;
	char *cgroup, *container; /* profile one cgroup / container instead of the host */
	char *log_level;
};

enum agent_opt_kind { OPT_U32, OPT_U64, OPT_SIZE, OPT_SECONDS, OPT_STR, OPT_FLAG };

struct agent_option {
	const char *name; /* long flag and config key */
	int key;	  /* argp key: a letter, or > 255 for long-only options */
	const char *arg;
	const char *doc;
	enum agent_opt_kind kind;
	size_t off;
	bool restart;	 /* SIGHUP cannot change it */
	double min, max; /* numeric range */
};

#define AGENT_OPT_CONFIG 1000 /* --config: not a setting itself */

extern const struct agent_option agent_options[];
extern const size_t agent_nr_options;

void agent_config_defaults(struct agent_config *c);
/* --sample-labels LIST -> the enum prof_label_bit set writers leave out; -1 if invalid. */
int agent_labels_omitted(const char *list, uint32_t *omitted);
void agent_config_free(struct agent_config *c);
const struct agent_option *agent_option_by_name(const char *name);
const struct agent_option *agent_option_by_key(int key);
/* Parses value for o into c; on error returns -1 with err set. */
int agent_config_set(struct agent_config *c, const struct agent_option *o, const char *value,
		     char *err, size_t errlen);
/* Applies `key = value` lines of path, skipping keys in skip (flags given); err names the line. */
int agent_config_read_file(struct agent_config *c, const char *path,
			   bool (*skip)(const char *name, void *ctx), void *ctx, char *err,
			   size_t errlen);
/* Cross-field checks: something to do, intervals sane. */
int agent_config_check(const struct agent_config *c, char *err, size_t errlen);
/* Names of restart-only settings that differ between a and b, comma-separated ("" if none). */
void agent_config_restart_diff(const struct agent_config *a, const struct agent_config *b,
			       char *out, size_t len);

#endif
