/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What an interpreter's frames name, read from their process: each code
 * object a sample's frames (struct cfi_interp_frame) point at, read once
 * per (pid, mapping generation, address, scope) by reader threads, bounded
 * in reads per second, entries and bytes, and kept until the process is
 * gone and its profile written, so the names outlive the process.  The
 * runtime says what to read (struct code_names_ops); this file when and how.
 */
#ifndef CFIPROF_CODE_NAMES_H
#define CFIPROF_CODE_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/cfiprof_abi.h"
#include "user/symbolize/runtime_units.h"

struct code_names;

/*
 * What most runtimes read of a code object: its name and file (one
 * allocation, name first), its first line and a kind of the runtime's.
 */
struct code_name {
	bool ok;	     /* it was a code object whose name could be read */
	uint8_t kind;	     /* the runtime's (PHP: the function's type) */
	uint32_t first_line; /* 0 when unknown */
	char *name;	     /* NULL unless ok */
	char *file;	     /* "" when unknown */
	size_t bytes;	     /* of the allocation */
};

/* name and file into n (ok set): 0, or -1 out of memory. */
int code_name_set(struct code_name *n, const char *name, const char *file);

/*
 * What a runtime knew of a process when one of its code objects was
 * queued: kept with the entry, so a reader thread has it whenever it reads.
 */
struct code_proc {
	const void *offsets; /* its version's layout (static), NULL when unknown */
	uint64_t addr;	     /* an address in the process the runtime reads from (its own) */
};

struct code_names_ops {
	uint8_t runtime; /* enum cfi_runtime: whose samples' frames are read */
	/*
	 * What the runtime knows of pid for reading its code objects (its
	 * version's offsets...) into *out, zeroed; called by the consumer,
	 * never blocks.
	 */
	void (*proc_of)(void *ctx, uint32_t pid, struct code_proc *out);
	/*
	 * Reads the code object at code of process pid (owner, scope: its
	 * frame's, what kind of object it is where the runtime says) into a new *obj
	 * (*bytes: what it holds): true when it was one.  *obj NULL: out of
	 * memory.  May block as long as the process's memory does: only reader
	 * threads call it.
	 */
	bool (*read)(const struct code_proc *proc, uint32_t pid, uint64_t code, uint8_t owner,
		     uint16_t scope, void **obj, size_t *bytes);
	void *(*copy)(const void *obj); /* NULL when out of memory */
	void (*free)(void *obj);
	/*
	 * Instead of read, copy and free: reads the code object into a struct
	 * code_name, which the reader keeps (out->ok: it was one).
	 */
	void (*read_name)(const struct code_proc *proc, uint32_t pid, uint64_t code, uint8_t owner,
			  struct code_name *out);
};

struct code_names_stats {
	uint64_t read;	     /* code objects read */
	uint64_t unreadable; /* ... whose memory or fields were not what a code object holds */
	uint64_t refused;    /* not read: over the reads per second or the cache's bounds, or
				their process's memory blocked a read */
	uint64_t stalled;    /* reads blocked over 200 ms (a FUSE file, a userfaultfd region) */
};

struct code_names *code_names_new(const struct code_names_ops *ops, void *ctx);
void code_names_free(struct code_names *cn);

/*
 * The consumer saw sample r (its size bytes are checked): the code objects
 * of its frames not read yet are queued for the reader threads, read at
 * once, while the process lives.  Never reads target memory itself.
 */
void code_names_note(struct code_names *cn, const struct cfi_sample_record *r, size_t size);
/*
 * The same for a deferred sample finished in user space (r), whose code
 * objects were read when it arrived, under the generation the kernel saw
 * (taken_gen): those are carried over to r's generation, not read again
 * (one freed meanwhile, a module's body, would read as another or none).
 */
void code_names_carry(struct code_names *cn, const struct cfi_sample_record *r, size_t size,
		      uint32_t taken_gen);
/*
 * Waits (timeout seconds at most) for the code objects queued so far to be
 * read, before a profile names them; a stalled read is not waited for.
 * true if none is left.
 */
bool code_names_wait(struct code_names *cn, double timeout);
/* Forgets the code objects of processes that no longer exist (after a profile is written). */
void code_names_sweep(struct code_names *cn);
void code_names_stats(struct code_names *cn, struct code_names_stats *out);
/*
 * Frame f's code object in (pid, gen) as read (the runtime's obj, *ok:
 * whether it was a code object; *proc: proc_of's answer then), or NULL
 * when not read (yet).  Lives until code_names_sweep.
 */
const void *code_names_find(struct code_names *cn, uint32_t pid, uint32_t gen,
			    const struct cfi_interp_frame *f, const struct code_proc **proc,
			    bool *ok);
/*
 * Frame f shown as before its code is named (out: placed by its entry mark,
 * named unnamed, "[ruby]", in no file at no line), and its code object as
 * code_names_find has it (NULL also when names is NULL or f runs no code).
 */
const void *code_names_show_begin(struct code_names *names, uint32_t pid, uint32_t gen,
				  const struct cfi_interp_frame *f, const char *unnamed,
				  struct interp_frame_shown *out, bool *ok);

#endif
