/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Source lines and inline frames of an object, from its DWARF (libdw): the
 * object's own .debug_info, else that of its separate debug file, found by
 * the one search (elf/debug_file.h).  Private to the symbolizer (sym_cache.c).
 *
 * Attaching keeps the DWARF file mmap'd (no fd held) and reads nothing; the
 * first lookup opens it with libdw and lists its compile units, once.  A
 * lookup answers the chain of frames at an address, innermost first: the
 * inlined functions, then the function they were inlined into; each with its
 * source file, line, and the line its function starts at.  Answers are
 * cached per object (copies: libdw's own memory may be dropped meanwhile).
 *
 * Every object may be hostile, and the agent symbolizes every interval, so
 * the work is bounded (struct src_lines_ctx): an object whose debug sections
 * would inflate past max_object_bytes, or with more than SRC_MAX_CUS units or
 * ranges, is refused; a compile unit over max_cu_bytes is refused (libdw
 * would walk all of it); open libdw handles hold at most max_open_bytes
 * together (least recently used closed first); lookups not answered from the
 * cache stop for the interval when its time allowance is spent.  Each
 * refusal is counted by cause; the caller logs.
 */
#ifndef CFIPROF_SRC_LINES_H
#define CFIPROF_SRC_LINES_H

#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "elf/debug_file.h"

/* Inline levels kept per address: deeper chains keep their innermost ones. */
#define SRC_FRAMES_MAX 32
#define SRC_MAX_CUS    (1u << 20)

/* One level of the chain at an address. */
struct src_frame {
	const char *system_name; /* linkage name (mangled), else the DWARF name */
	const char *file;	 /* source file path; NULL when unknown */
	uint32_t line;		 /* line at this level; 0 when unknown */
	uint32_t start_line;	 /* where the function's declaration starts; 0 unknown */
};

enum src_refusal {
	SRC_REFUSED_TIME,    /* the interval's time allowance was spent */
	SRC_REFUSED_OBJECT,  /* debug sections too big, too many units or ranges */
	SRC_REFUSED_CU,	     /* one compile unit too big */
	SRC_REFUSED_FILES,   /* max_attached objects hold their DWARF file already */
	SRC_REFUSED_OPENING, /* its DWARF is being opened apart (src_lines_opener_start) */
	SRC_REFUSED_MAX,
};

struct src_lines_stats {
	uint64_t lookups;  /* addresses asked about */
	uint64_t hits;	   /* answered from the per-object cache */
	uint64_t resolved; /* answered from DWARF (a chain of at least one frame) */
	uint64_t refused[SRC_REFUSED_MAX];
	uint64_t ns;	 /* time spent opening DWARF and looking up */
	uint64_t opens;	 /* libdw handles opened (again, after being closed) */
	uint64_t closes; /* ... closed: idle, over max_open_bytes, or read ahead and not taken */
	uint64_t open_bytes;	/* now: estimated bytes behind open handles */
	uint64_t cache_entries; /* now: answers cached, all objects */
	/* compressed debug files found inflated in the cache directory, and written there */
	uint64_t inflated_found, inflated_written;
	/* units opened whose ranges .debug_aranges gave, and those read from the unit's DIE */
	uint64_t units_aranges, units_die;
};

struct src_lines;

/* Limits and accounting shared by every object of one symbolizer. */
struct src_lines_ctx {
	uint64_t max_object_bytes; /* debug sections, inflated (compressed ones go to the heap) */
	uint64_t max_cu_bytes;	   /* one compile unit's .debug_info */
	uint64_t max_open_bytes;   /* all open handles: inflated sections + units walked */
	uint64_t max_cache_entries;
	/*
	 * Objects holding their DWARF file open (an fd each) at most: a process
	 * mapping thousands of files with DWARF must not take the fds the rest
	 * needs.  nr_attached and refused[SRC_REFUSED_FILES] change on the
	 * loading thread, atomically.
	 */
	uint64_t max_attached, nr_attached;
	uint64_t epoch;	  /* src_lines_close_idle calls so far */
	uint64_t ns_left; /* this interval's allowance; UINT64_MAX: none */
	struct src_lines_stats st;
	struct src_lines *lru;	   /* open handles, most recently used first */
	struct src_opener *opener; /* NULL: a lookup opens its object's DWARF itself */
};

/*
 * Defaults for @ctx: 256 MiB per object, 16 MiB per unit, 512 MiB open, 1M
 * answers, no time limit, 256 files open (at most an eighth of RLIMIT_NOFILE).
 */
void src_lines_ctx_init(struct src_lines_ctx *ctx);

/*
 * The DWARF of @e (open on @fd, which stays the caller's): @e itself when it
 * has .debug_info, else its separate debug file as @s finds it. NULL when
 * neither has any, on error, or when @ctx's max_attached objects hold theirs
 * (counted in refused[SRC_REFUSED_FILES]).
 */
struct src_lines *src_lines_attach(struct src_lines_ctx *ctx, Elf *e, int fd,
				   const struct debug_file_search *s);

/*
 * The chain at @vaddr (the object's ELF address), innermost first, in
 * *@frames (valid until @sl is freed). Returns the number of levels, 0 when
 * DWARF does not cover @vaddr, or -1 when refused (counted in @ctx).
 */
int src_lines_lookup(struct src_lines_ctx *ctx, struct src_lines *sl, uint64_t vaddr,
		     const struct src_frame **frames);

/*
 * Opens @sl's DWARF and lists its units now, as its first lookup would
 * (src_lines_warm.h does it ahead of the lookups). 0 when open.
 */
int src_lines_prepare(struct src_lines_ctx *ctx, struct src_lines *sl);

/*
 * From now on a lookup never opens DWARF itself: an object's DWARF (its
 * sections read and inflated, its units listed: seconds for a big one on a
 * loaded host, and not interruptible) is opened on a thread of its own, and
 * until then its lookups are refused (SRC_REFUSED_OPENING), its frames named
 * without lines; the lookups after it are done take the handle.  The agent's
 * interval then never waits for an open.  0, or -1 (lookups open as before).
 */
int src_lines_opener_start(struct src_lines_ctx *ctx);
/* Ends the thread after the open under way; idempotent.  Before the objects are freed. */
void src_lines_opener_stop(struct src_lines_ctx *ctx);

/* Path of the file the DWARF is read from. */
const char *src_lines_path(const struct src_lines *sl);

/*
 * Closes every handle not looked up in for its idle limit of periods (their
 * memory goes back; their answers stay), then starts a new period: the agent
 * calls it at the end of each interval, so memory follows what runs now.  The
 * limit is one period, doubled (up to SRC_IDLE_MAX) each time a handle is
 * opened again within its limit of periods after such a close.
 */
#define SRC_IDLE_MAX 8
void src_lines_close_idle(struct src_lines_ctx *ctx);

void src_lines_free(struct src_lines_ctx *ctx, struct src_lines *sl);

#endif
