/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* An object's debug sections as lines and inline frames use them: their size, what libdw sees. */
#ifndef CFIPROF_SYMBOLIZE_SRC_LINES_SECTIONS_H
#define CFIPROF_SYMBOLIZE_SRC_LINES_SECTIONS_H

#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

/*
 * Inflated bytes of the debug sections lines read (what libdw will hold);
 * *has_info when .debug_info has contents.
 */
uint64_t src_lines_section_bytes(Elf *e, bool *has_info);

/*
 * The debug sections lines never read become SHT_NOBITS in e's headers, in
 * memory only: libdw then neither inflates nor keeps them.
 */
void src_lines_hide_unread(Elf *e);

/*
 * Whether a debug section lines read is compressed (SHF_COMPRESSED), and none
 * with GNU's older .zdebug_ names.
 */
bool src_lines_compressed(Elf *e);

#endif
