// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Entry points of the table compiler: open the ELF, parse its CFI sections
 * (tables/elf_input.c), compact them into a table and account for its size.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "elf/elf_read.h"
#include "elf/safe_open.h"
#include "tables/diag.h"
#include "tables/elf_input.h"

void table_take_rules(struct cfi_table *t, struct rule_dict *dict)
{
	t->rules = dict->rules;
	t->nr_rules = dict->nr;
	dict->rules = NULL;
	t->stats.bytes_rows = (uint64_t)t->nr_rows * sizeof(struct cfi_row);
	t->stats.bytes_index =
	    (uint64_t)t->nr_pages * (sizeof(struct cfi_page_key) + sizeof(struct cfi_page_val));
	t->stats.bytes_rules = (uint64_t)t->nr_rules * sizeof(struct cfi_rule);
	t->stats.bytes_total = t->stats.bytes_rows + t->stats.bytes_index + t->stats.bytes_rules;
}

static int build(struct elf_input *in, const char *path, const struct stat *self,
		 const struct cfi_build_opts *opts, struct cfi_table **out, struct diag_ctx *dc)
{
	struct cfi_parse p = {0};
	struct rule_dict dict;
	struct cfi_table *t;
	uint64_t start = mono_ns();
	int err;

	*out = NULL;
	t = calloc(1, sizeof(*t));
	if (!t || rule_dict_init(&dict)) {
		free(t);
		return CFI_ERR_NOMEM;
	}
	p.diag = dc;
	p.stats = &t->stats;
	budget_start(&p.budget, opts ? &opts->budget : NULL);
	if (opts && opts->native_only && in->obj.regs->arch != CFI_ARCH_NATIVE) {
		diag_add(dc, "ELF", 0, "an %s object: this cfiprof walks %s stacks",
			 cfi_arch_name(in->obj.regs->arch), cfi_arch_name(CFI_ARCH_NATIVE));
		err = CFI_ERR_ELF;
		goto out;
	}
	err = elf_input_parse(in, path, self, opts, &p, t);
	if (err)
		goto out;
	/* no problem of its CFI, which it has none of: the error says it (cfi_strerror) */
	if (!t->stats.sources) {
		err = CFI_ERR_NO_CFI;
		goto out;
	}
	err = build_compact(&p, &dict, t, dc);
	if (err)
		goto out;
	if (!t->nr_rows && t->stats.fdes_bad) {
		err = CFI_ERR_MALFORMED;
		goto out;
	}
	table_take_rules(t, &dict);
	t->stats.build_ns = mono_ns() - start;
	*out = t;
	t = NULL;
	err = 0;
out:
	cfi_parse_free(&p);
	rule_dict_free(&dict);
	cfi_table_free(t);
	return err;
}

int cfi_table_build_fd(int fd, const struct cfi_build_opts *opts, struct cfi_table **out,
		       struct cfi_diag *diag)
{
	const char *name = opts && opts->display_name ? opts->display_name : "<fd>";
	struct diag_ctx dc = {diag, name};
	struct elf_input in;
	struct stat st;
	int err;

	*out = NULL;
	if (fstat(fd, &st)) {
		diag_add(&dc, "ELF", 0, "fstat: %s", strerror(errno));
		return CFI_ERR_IO;
	}
	err = elf_input_open(&in, fd, NULL, 0, &dc);
	if (err)
		return err;
	err = build(&in, opts ? opts->display_name : NULL, &st, opts, out, &dc);
	/*
	 * Cut while read (counted, elf/elf_read.h): a short read failed the build,
	 * or the rows came from bytes the file no longer has.
	 */
	if (elf_read_truncated(fd, (uint64_t)st.st_size) ||
	    elf_read_truncated(in.dbg.fd, in.dbg.size)) {
		diag_add(&dc, "ELF", 0, "truncated while it was read");
		cfi_table_free(*out);
		*out = NULL;
		err = CFI_ERR_IO;
	}
	elf_input_close(&in);
	return err;
}

int cfi_table_build_file(const char *path, const struct cfi_build_opts *opts,
			 struct cfi_table **out, struct cfi_diag *diag)
{
	struct cfi_build_opts o = opts ? *opts : (struct cfi_build_opts){0};
	struct diag_ctx dc = {diag, path};
	int fd, err;

	*out = NULL;
	fd = open_regular(path);
	if (fd < 0) {
		diag_add(&dc, "ELF", 0, "open: %s",
			 fd == -EINVAL ? "not a regular file" : strerror(-fd));
		return CFI_ERR_IO;
	}
	if (!o.display_name)
		o.display_name = path;
	err = cfi_table_build_fd(fd, &o, out, diag);
	close(fd);
	return err;
}

int cfi_table_build_mem(const void *buf, size_t len, const struct cfi_build_opts *opts,
			struct cfi_table **out, struct cfi_diag *diag)
{
	struct cfi_build_opts o = opts ? *opts : (struct cfi_build_opts){0};
	struct diag_ctx dc = {diag, o.display_name ? o.display_name : "<memory>"};
	struct elf_input in;
	void *copy;
	int err;

	*out = NULL;
	/* libelf may write to the image (e.g. decompression bookkeeping): give it a copy */
	copy = malloc(len ? len : 1);
	if (!copy)
		return CFI_ERR_NOMEM;
	memcpy(copy, buf, len);
	err = elf_input_open(&in, -1, copy, len, &dc);
	if (!err) {
		o.no_separate_debug = 1;
		err = build(&in, NULL, NULL, &o, out, &dc);
		elf_input_close(&in);
	}
	free(copy);
	return err;
}

void cfi_table_free(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->rules);
	free(t->rows);
	free(t->pages);
	free(t);
}
