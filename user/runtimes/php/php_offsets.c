// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Field offsets of the supported PHP versions; see php_offsets.h. */
#include <stddef.h>

#include "user/runtimes/php/php_offsets.h"
#include "user/runtimes/runtime_versions.h"

static const struct php_offsets versions[] = {
    {
	.version = 0x0802,
	.name = "8.2",
	.api = 20220829,
	.bpf =
	    {
		.version = 0x0802,
		.eg_current_execute_data = 488, /* zend_executor_globals.current_execute_data */
		.ed_opline = 0,			/* zend_execute_data.opline */
		.ed_func = 24,			/* .func */
		.ed_call_info = 40,		/* .This.u1.type_info */
		.ed_prev = 48,			/* .prev_execute_data */
		.op_lineno = 24,		/* zend_op.lineno */
		.func_opcodes = 88,		/* zend_op_array.opcodes */
		.call_top = 1u << 17,		/* ZEND_CALL_TOP */
	    },
	.func_name = 8,
	.func_scope = 16,
	.func_filename = 152,
	.func_line_start = 160,
	.func_read = 168,
	.ce_name = 8,
	.str_len = 16,
	.str_val = 24,
    },
};

/* ZEND_MODULE_API_NO of each release (Zend/zend_modules.h) */
static const struct {
	uint32_t api;
	uint16_t version;
} apis[] = {
    {20180731, 0x0703}, {20190902, 0x0704}, {20200930, 0x0800}, {20210902, 0x0801},
    {20220829, 0x0802}, {20230831, 0x0803}, {20240924, 0x0804},
};

const struct php_offsets *php_offsets_find(uint16_t version)
{
	return RUNTIME_VERSION_FIND(versions, version);
}

uint16_t php_version_of_api(uint32_t api)
{
	for (size_t i = 0; i < sizeof(apis) / sizeof(apis[0]); i++)
		if (apis[i].api == api)
			return apis[i].version;
	return 0;
}
