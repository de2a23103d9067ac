// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * PHP frames without a kernel: the offsets table against PHP's own headers
 * (offsetof over the installed php8.2-dev headers), the Zend API numbers
 * against the headers' ZEND_MODULE_API_NO, detection on Debian's php8.2
 * (executor_globals as readelf sees it), and naming a zend_function laid
 * out in this process's memory (and refusing garbage where one should be).
 */
#include "php.h"
#include "zend_compile.h"
#include "zend_globals.h"
#include "zend_modules.h"
/* PHP's headers route these to its own implementations, which this test does not link */
#undef snprintf
#undef vsnprintf
#undef sprintf
#undef vsprintf
#undef asprintf
#undef vasprintf
#undef strtod

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/lib/cli_util.h"
#include "tests/lib/harness.h"
#include "user/runtimes/php/php_detect.h"
#include "user/runtimes/php/php_names.h"
#include "user/runtimes/php/php_offsets.h"

#define PHP_BIN "/usr/bin/php8.2"

#define SAME(field, expr)                                                                          \
	CHECK(o->field == (expr), #field ": table %u, headers %zu", (unsigned int)o->field,        \
	      (size_t)(expr))

/* The 8.2 entry is PHP 8.2's layout, field by field (headers of the installed 8.2). */
static void test_offsets_table(void)
{
	const struct php_offsets *o = php_offsets_find(0x0802);

	CHECK(PHP_MAJOR_VERSION == 8 && PHP_MINOR_VERSION == 2, "the headers are 8.2's: %s",
	      PHP_VERSION);
	if (!o) {
		CHECK(0, "no 8.2 entry");
		return;
	}
	SAME(api, ZEND_MODULE_API_NO);
	SAME(bpf.eg_current_execute_data, offsetof(zend_executor_globals, current_execute_data));
	SAME(bpf.ed_opline, offsetof(zend_execute_data, opline));
	SAME(bpf.ed_func, offsetof(zend_execute_data, func));
	SAME(bpf.ed_call_info, offsetof(zend_execute_data, This.u1.type_info));
	SAME(bpf.ed_prev, offsetof(zend_execute_data, prev_execute_data));
	SAME(bpf.op_lineno, offsetof(zend_op, lineno));
	SAME(bpf.func_opcodes, offsetof(zend_function, op_array.opcodes));
	SAME(bpf.call_top, ZEND_CALL_TOP);
	SAME(func_name, offsetof(zend_function, common.function_name));
	SAME(func_scope, offsetof(zend_function, common.scope));
	SAME(func_filename, offsetof(zend_function, op_array.filename));
	SAME(func_line_start, offsetof(zend_function, op_array.line_start));
	SAME(ce_name, offsetof(zend_class_entry, name));
	SAME(str_len, offsetof(zend_string, len));
	SAME(str_val, offsetof(zend_string, val));
	CHECK(offsetof(zend_function, type) == 0 && ZEND_USER_FUNCTION == 2 &&
		  ZEND_INTERNAL_FUNCTION == 1 && ZEND_EVAL_CODE == 4,
	      "zend_function.type first, its values as bpf/php.bpf.h has them");
	/* every field BPF reads lies in the bytes it reads at once */
	CHECK(o->bpf.ed_prev + 8 <= PHP_FRAME_READ && o->bpf.ed_call_info + 4 <= PHP_FRAME_READ &&
		  o->bpf.func_opcodes + 8 <= PHP_FUNC_READ,
	      "a field past PHP_FRAME_READ or PHP_FUNC_READ");
	CHECK(o->func_read >= o->func_line_start + 4 && o->func_read >= o->func_filename + 8,
	      "func_read %u short of the fields", o->func_read);
	CHECK(php_version_of_api(ZEND_MODULE_API_NO) == 0x0802 && !php_version_of_api(20220828),
	      "the API numbers");
}

/* executor_globals in Debian's php8.2, as readelf's .dynsym has it; an NTS 8.2 build id. */
static void test_detect(void)
{
	unsigned long long want = 0;
	struct php_object o;
	const char *p;
	FILE *rd;
	int fd = open(PHP_BIN, O_RDONLY | O_CLOEXEC), rc;

	CHECK(fd >= 0, "%s (php8.2-cli) missing", PHP_BIN);
	if (fd < 0)
		return;
	rc = php_elf_info(fd, &o);
	close(fd);
	rd = popen(
	    "readelf -W --dyn-syms " PHP_BIN " | awk '$8 == \"executor_globals\" {print $2}'", "r");
	CHECK(rd && fscanf(rd, "%llx", &want) == 1, "readelf found no executor_globals");
	if (rd)
		pclose(rd);
	CHECK(rc == 0 && o.executor_globals == want && o.api == 20220829 && !o.thread_safe,
	      "php8.2: rc %d, executor_globals %#llx (readelf %#llx), api %u, ts %d", rc,
	      (unsigned long long)o.executor_globals, want, o.api, o.thread_safe);
	fd = open("/bin/sh", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && php_elf_info(fd, &o) < 0, "/bin/sh taken for PHP");
	if (fd >= 0)
		close(fd);
	p = "/usr/bin/php8.2";
	CHECK(php_detect_ops.may_be && php_detect_ops.may_be(p) &&
		  !php_detect_ops.may_be("/usr/bin/python3.11"),
	      "the name filter");
}

/* A zend_string in buf: "len" at str_len, the bytes at str_val. */
static zend_string *fake_str(const char *s)
{
	zend_string *z = calloc(1, sizeof(zend_string) + strlen(s) + 1);

	z->len = strlen(s);
	memcpy(z->val, s, strlen(s) + 1);
	return z;
}

/* A zend_function laid out in this process, named as a frame of it would be. */
static void test_function_read(void)
{
	const struct php_offsets *o = php_offsets_find(0x0802);
	zend_class_entry *ce = calloc(1, sizeof(*ce));
	zend_function *fn = calloc(1, sizeof(*fn));
	zend_string *name = fake_str("meth"), *cls = fake_str("Cls"),
		    *file = fake_str("/srv/a.php");
	struct code_name f;
	void *hole;

	ce->name = cls;
	fn->type = ZEND_USER_FUNCTION;
	fn->common.function_name = name;
	fn->common.scope = ce;
	fn->op_array.filename = file;
	fn->op_array.line_start = 42;
	php_function_read((uint32_t)getpid(), o, (uint64_t)(uintptr_t)fn, &f);
	CHECK(f.ok && f.kind == ZEND_USER_FUNCTION && !strcmp(f.name, "Cls::meth") &&
		  !strcmp(f.file, "/srv/a.php") && f.first_line == 42,
	      "method: ok %d %s %s:%u", f.ok, f.name ? f.name : "-", f.file ? f.file : "-",
	      f.first_line);
	free(f.name);
	/* a file's code: no name; a function of C: no file */
	fn->common.function_name = NULL;
	fn->common.scope = NULL;
	php_function_read((uint32_t)getpid(), o, (uint64_t)(uintptr_t)fn, &f);
	CHECK(f.ok && !f.name[0] && !strcmp(f.file, "/srv/a.php"), "code: %s", f.name);
	free(f.name);
	fn->type = ZEND_INTERNAL_FUNCTION;
	fn->common.function_name = name;
	php_function_read((uint32_t)getpid(), o, (uint64_t)(uintptr_t)fn, &f);
	CHECK(f.ok && !strcmp(f.name, "meth") && !f.file[0], "C function: %s", f.name);
	free(f.name);
	/* garbage: a type PHP has none of, a name in unmapped memory, an unmapped function */
	fn->type = 9;
	php_function_read((uint32_t)getpid(), o, (uint64_t)(uintptr_t)fn, &f);
	CHECK(!f.ok && !f.name, "type 9 read as a function");
	hole = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fn->type = ZEND_USER_FUNCTION;
	fn->common.function_name = hole;
	php_function_read((uint32_t)getpid(), o, (uint64_t)(uintptr_t)fn, &f);
	CHECK(!f.ok && !f.name, "a name in unmapped memory read");
	php_function_read((uint32_t)getpid(), o, (uint64_t)(uintptr_t)hole, &f);
	CHECK(!f.ok && !f.name, "an unmapped function read");
	munmap(hole, 4096);
	free(name);
	free(cls);
	free(file);
	free(ce);
	free(fn);
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_offsets_table);
	RUN_TEST(test_detect);
	RUN_TEST(test_function_read);
	return HARNESS_DONE();
}
