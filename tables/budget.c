// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The build's budget (struct cfi_budget): the table compiler reads the files
 * of every process on the machine, so one object must never cost unbounded
 * time or memory.  Counts are checked where they grow (FDEs, raw rows); time
 * is checked every few thousand units of work.
 */
#include <inttypes.h>

#include "common/clock.h"
#include "tables/diag.h"
#include "tables/internal.h"

/* mono_ns() costs tens of ns: read it once per this many ticks. */
#define TICKS_PER_CLOCK_READ 4096

void budget_start(struct build_budget *b, const struct cfi_budget *want)
{
	uint64_t max_ns = want && want->max_ns ? want->max_ns : CFI_BUDGET_NS_DEFAULT;

	b->max_ns = max_ns;
	b->deadline_ns = mono_ns() + max_ns;
	if (b->deadline_ns < max_ns)
		b->deadline_ns = UINT64_MAX;
	b->max_fdes = want && want->max_fdes ? want->max_fdes : CFI_BUDGET_FDES_DEFAULT;
	b->max_raw_rows =
	    want && want->max_raw_rows ? want->max_raw_rows : CFI_BUDGET_RAW_ROWS_DEFAULT;
	b->max_section_bytes = want && want->max_section_bytes ? want->max_section_bytes
							       : CFI_BUDGET_BYTES_DEFAULT;
	b->max_bytes = want ? want->max_bytes : 0;
	b->cancel = want ? want->cancel : NULL;
	b->ticks = 0;
}

int budget_exceeded(struct diag_ctx *diag, const char *section, uint64_t offset, const char *what,
		    uint64_t limit)
{
	diag_add(diag, section, offset, "over the build budget: more than %" PRIu64 " %s", limit,
		 what);
	return CFI_ERR_BUDGET;
}

int budget_tick(struct build_budget *b, struct diag_ctx *diag)
{
	/*
	 * A stopping profiler must not wait out a big build.  The flag is read
	 * every tick: 4096 ticks of a big object are tens of ms, and under a
	 * sanitizer or on a loaded machine hundreds, for every build still to
	 * come (the first tick is the build's first check).
	 */
	if (b->cancel && __atomic_load_n(b->cancel, __ATOMIC_RELAXED)) {
		diag_add(diag, "ELF", 0, "over the build budget: cancelled (stopping)");
		return CFI_ERR_BUDGET;
	}
	if (++b->ticks % TICKS_PER_CLOCK_READ)
		return 0;
	if (mono_ns() <= b->deadline_ns)
		return 0;
	return budget_exceeded(diag, "ELF", 0, "ms of build time", b->max_ns / 1000000);
}
