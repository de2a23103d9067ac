/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A JavaScript function named from its SharedFunctionInfo in a live V8
 * process: the name V8's SharedFunctionInfo::Name() gives ("(anonymous)"
 * when empty), its script's name and the line its body starts on, read
 * with the layout the binary exports (v8_offsets.h) and, where that has
 * none, V8 11.3's (ScopeInfo's flags and variable part, DebugInfo.script).
 */
#ifndef CFIPROF_V8_SFI_H
#define CFIPROF_V8_SFI_H

#include <stdint.h>

#include "user/runtimes/code_names.h"
#include "user/runtimes/v8/v8_offsets.h"

/*
 * The SharedFunctionInfo at sfi (tagged) of process pid into out: ok with
 * its name, file ("" when unknown) and first_line (1-based, 0 when unknown:
 * the script's line ends not computed yet); not ok when sfi is no
 * SharedFunctionInfo or its name cannot be read (an external string's
 * characters are the embedder's: not read).  Names are UTF-8 of at most 255
 * bytes, files 1023, controls as '?'.  out->name: free.  The process may be
 * hostile: every read is bounded, every object's type checked.
 */
void v8_sfi_read(uint32_t pid, const struct v8_offsets *o, uint64_t sfi, struct code_name *out);

#endif
