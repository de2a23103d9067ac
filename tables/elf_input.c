// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Reading an object's CFI sections for the table compiler; see elf_input.h. */
#include "tables/elf_input.h"

#include <gelf.h>
#include <string.h>
#include <unistd.h>

#include "elf/build_id.h"
#include "elf/elf_read.h"
#include "elf/gopclntab.h"
#include "elf/sections.h"
#include "tables/diag.h"

/*
 * NULL when @e is an object the compiler reads, else why not; *@regs: its
 * machine's registers.  @want: the machine it must be (a debug file's is its
 * object's), or NULL.
 */
static const char *elf_unusable(Elf *e, size_t *shstrndx, const struct cfi_arch_regs *want,
				const struct cfi_arch_regs **regs)
{
	GElf_Ehdr eh;

	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh))
		return "not an ELF file";
	*regs = eh.e_ident[EI_CLASS] == ELFCLASS64 ? cfi_arch_regs_of_machine(eh.e_machine) : NULL;
	if (!*regs)
		return "not an x86-64 or arm64 ELF64 object";
	if (want && *regs != want)
		return "of another machine than its object";
	if (elf_getshdrstrndx(e, shstrndx))
		return "no section name table";
	return NULL;
}

int elf_input_open(struct elf_input *in, int fd, void *mem, size_t len, struct diag_ctx *dc)
{
	const char *why;

	memset(in, 0, sizeof(*in));
	in->dbg.fd = -1;
	in->dbg_obj.fd = -1;
	in->bytes_left = CFI_BUDGET_BYTES_DEFAULT;
	in->obj.bytes_left = in->dbg_obj.bytes_left = &in->bytes_left;
	in->obj.fd = mem ? -1 : fd;
	in->obj.image = mem;
	in->obj.image_len = len;
	elf_version(EV_CURRENT);
	/* never mapped: a file truncated under a mapping is SIGBUS (elf/elf_read.h) */
	in->obj.elf = mem ? elf_memory(mem, len) : elf_read_begin(fd);
	if (!in->obj.elf) {
		diag_add(dc, "ELF", 0, "%s", elf_errmsg(-1));
		return CFI_ERR_ELF;
	}
	why = elf_unusable(in->obj.elf, &in->obj.shstrndx, NULL, &in->obj.regs);
	if (why) {
		diag_add(dc, "ELF", 0, "%s", why);
		elf_end(in->obj.elf);
		in->obj.elf = NULL;
		return CFI_ERR_ELF;
	}
	return 0;
}

void elf_input_close(struct elf_input *in)
{
	gopclntab_free(in->go);
	in->go = NULL;
	debug_file_close(&in->dbg);
	if (in->obj.elf)
		elf_end(in->obj.elf);
	in->obj.elf = NULL;
}

/*
 * The bytes of @scn, inflated if compressed, charged to the build's byte
 * budget first: *@out NULL for SHT_NOBITS or unreadable; CFI_ERR_BUDGET past
 * the budget.
 */
static int section_data(struct elf_obj *o, Elf_Scn *scn, GElf_Shdr *sh, const char *name,
			struct diag_ctx *dc, Elf_Data **out)
{
	uint64_t before = *o->bytes_left;
	const char *why;
	Elf_Data *d;

	*out = NULL;
	if (sh->sh_type == SHT_NOBITS)
		return 0;
	d = elf_read_section(scn, o->bytes_left, &why);
	if (!d) {
		if (elf_read_why_budget(why))
			return budget_exceeded(dc, name, 0, "bytes of sections read or inflated",
					       before);
		diag_add(dc, name, 0, "unreadable section: %s", why ? why : elf_errmsg(-1));
		return 0;
	}
	if (!d->d_buf)
		return 0;
	gelf_getshdr(scn, sh);
	*out = d;
	return 0;
}

/* DW_EH_PE_indirect: 8 bytes at a virtual address of the object, read alone. */
static int read_vaddr(void *ctx, uint64_t vaddr, uint64_t *out)
{
	struct elf_obj *o = ctx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	uint64_t off;

	while ((scn = elf_nextscn(o->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & SHF_COMPRESSED))
			continue;
		/* subtract, never add: vaddr - sh_addr + 8 wraps for a vaddr just below 2^64 */
		if (vaddr < sh.sh_addr || sh.sh_size < 8 || vaddr - sh.sh_addr > sh.sh_size - 8)
			continue;
		off = sh.sh_offset + (vaddr - sh.sh_addr);
		if (off < sh.sh_offset)
			return -1;
		/* 8 bytes, not the section: a whole .data read for a pointer would be its size */
		if (o->fd >= 0)
			return pread(o->fd, out, 8, (off_t)off) == 8 ? 0 : -1;
		if (!o->image || off > o->image_len || o->image_len - off < 8)
			return -1;
		memcpy(out, o->image + off, 8);
		return 0;
	}
	return -1;
}

static void fill_section(struct cfi_section *cs, struct elf_obj *o, Elf_Data *d,
			 const GElf_Shdr *sh, const char *name, enum cfi_source src)
{
	GElf_Shdr other;

	memset(cs, 0, sizeof(*cs));
	cs->data = d->d_buf;
	cs->size = d->d_size;
	cs->vaddr = sh->sh_addr;
	cs->is_eh = src == CFI_SRC_EH_FRAME;
	cs->regs = o->regs;
	cs->source = src;
	cs->name = name;
	cs->read_addr = read_vaddr;
	cs->read_ctx = o;
	if (elf_section_by_name(o->elf, ".got", &other))
		cs->datarel = other.sh_addr;
	if (elf_section_by_name(o->elf, ".text", &other))
		cs->textrel = other.sh_addr;
}

static int add_eh_frame(struct cfi_parse *p, struct elf_input *in, struct cfi_table *t)
{
	GElf_Shdr sh, hsh;
	Elf_Scn *scn, *hscn;
	Elf_Data *d, *hd;
	int err;

	scn = elf_section_by_name(in->obj.elf, ".eh_frame", &sh);
	if (!scn)
		return 0;
	err = section_data(&in->obj, scn, &sh, ".eh_frame", p->diag, &d);
	if (err || !d)
		return err;
	fill_section(&in->eh, &in->obj, d, &sh, ".eh_frame", CFI_SRC_EH_FRAME);
	t->stats.sources |= 1 << CFI_SRC_EH_FRAME;
	hscn = elf_section_by_name(in->obj.elf, ".eh_frame_hdr", &hsh);
	hd = NULL;
	if (hscn) {
		err = section_data(&in->obj, hscn, &hsh, ".eh_frame_hdr", p->diag, &hd);
		if (err)
			return err;
	}
	if (hd)
		return cfi_parse_eh_frame_hdr(p, &in->eh, hd->d_buf, hd->d_size, hsh.sh_addr);
	return cfi_parse_section(p, &in->eh);
}

/*
 * Returns 1 when @o has no usable .debug_frame, else what the parser returns
 * (CFI_ERR_BUDGET when the section is past the byte budget).
 */
static int add_debug_frame(struct cfi_parse *p, struct elf_obj *o, enum cfi_source src,
			   struct cfi_section *cs, struct cfi_table *t)
{
	GElf_Shdr sh;
	Elf_Scn *scn = elf_section_by_name(o->elf, ".debug_frame", &sh);
	Elf_Data *d;
	int err;

	if (!scn)
		return 1;
	err = section_data(o, scn, &sh, ".debug_frame", p->diag, &d);
	if (err)
		return err;
	if (!d)
		return 1;
	fill_section(cs, o, d, &sh, ".debug_frame", src);
	t->stats.sources |= 1 << src;
	return cfi_parse_section(p, cs);
}

/* What the debug file search's callbacks need: the object's machine, where to say why. */
struct debug_search_ctx {
	const struct cfi_arch_regs *regs;
	struct diag_ctx *dc;
};

static const char *debug_file_unusable(Elf *e, void *ctx)
{
	const struct debug_search_ctx *sc = ctx;
	const struct cfi_arch_regs *regs;
	size_t shstrndx;

	return elf_unusable(e, &shstrndx, sc->regs, &regs);
}

static void debug_file_refused(void *ctx, const char *via, const char *path, const char *why)
{
	const struct debug_search_ctx *sc = ctx;

	diag_add(sc->dc, via, 0, "%s %s: ignored", path, why);
}

static bool find_debug_file(struct elf_input *in, const char *path, const struct stat *self,
			    const struct cfi_build_opts *opts, struct cfi_parse *p)
{
	struct debug_search_ctx sc = {.regs = in->obj.regs, .dc = p->diag};
	struct debug_file_search s = {
	    .root = opts && opts->debug_root ? opts->debug_root : DEBUG_ROOT_DEFAULT,
	    .obj_path = path,
	    .pid = opts ? opts->root_pid : 0,
	    .self = self,
	    .unusable = debug_file_unusable,
	    .refused = debug_file_refused,
	    .ctx = &sc,
	    /* a debuglink CRC reads the whole candidate: within the build's time */
	    .deadline_ns = p->budget.deadline_ns,
	    .cancel = p->budget.cancel,
	};

	if (debug_file_find(in->obj.elf, &s, &in->dbg))
		return false;
	in->dbg_obj.elf = in->dbg.elf;
	in->dbg_obj.fd = in->dbg.fd;
	in->dbg_obj.regs = in->obj.regs;
	elf_getshdrstrndx(in->dbg.elf, &in->dbg_obj.shstrndx);
	return true;
}

int elf_input_parse(struct elf_input *in, const char *path, const struct stat *self,
		    const struct cfi_build_opts *opts, struct cfi_parse *p, struct cfi_table *t)
{
	bool debug_frame = !opts || !opts->no_debug_frame;
	bool separate = debug_frame && (!opts || !opts->no_separate_debug);
	GElf_Ehdr eh;
	int err, missing = 1;

	in->bytes_left = p->budget.max_section_bytes;
	if (gelf_getehdr(in->obj.elf, &eh) && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) &&
	    eh.e_entry < CFI_MAX_ADDR)
		p->entry = eh.e_entry;
	if (elf_build_id_hex(in->obj.elf, t->build_id, sizeof(t->build_id)) < 0)
		t->build_id[0] = '\0';
	t->arch = in->obj.regs->arch;
	err = add_eh_frame(p, in, t);
	if (err)
		return err;
	if (debug_frame) {
		missing = add_debug_frame(p, &in->obj, CFI_SRC_DEBUG_FRAME, &in->dbg_own, t);
		if (missing < 0)
			return missing;
	}
	if (missing && separate && find_debug_file(in, path, self, opts, p)) {
		err = add_debug_frame(p, &in->dbg_obj, CFI_SRC_DEBUG_FRAME_SEP, &in->dbg_sep, t);
		if (err < 0)
			return err;
	}
	err = opts && opts->no_gopclntab ? 0 : go_input_add(in, p, t);
	return err ? err : linker_stubs_add(in, p, t);
}
