// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* libruby's symbol table, for C methods' names; see ruby_symbols.h. */
#include <string.h>

#include "user/runtimes/ruby/ruby_symbols.h"
#include "user/runtimes/target_mem.h"

/* code bytes read: rb_id2str's body, and the head of the function it jumps to */
#define ID2STR_BYTES 32
#define LOOKUP_BYTES 128

/* Whether [vaddr, vaddr + 24) lies in a writable PT_LOAD of e: where a global is. */
static bool in_data(Elf *e, uint64_t vaddr)
{
	size_t nph, i;
	GElf_Phdr ph;

	for (i = 0; !elf_getphdrnum(e, &nph) && i < nph; i++)
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_W) &&
		    vaddr >= ph.p_vaddr && vaddr + 24 <= ph.p_vaddr + ph.p_memsz)
			return true;
	return false;
}

/*
 * x86-64: rb_id2str ends in a jmp (e9 rel32) to the lookup; the lookup's
 * first compare with a rip-relative u32 (39/3b, ModRM 00 reg 101, maybe a
 * REX before) is `serial > global_symbols.last_id`.
 */
static uint64_t find_x86(Elf *e, int fd, uint64_t id2str)
{
	uint8_t b[LOOKUP_BYTES];
	uint64_t target = 0;
	int32_t rel;

	if (elf_read_vaddr(e, fd, id2str, b, ID2STR_BYTES))
		return 0;
	for (size_t i = 0; i + 5 <= ID2STR_BYTES && !target; i++)
		if (b[i] == 0xe9) {
			memcpy(&rel, b + i + 1, sizeof(rel));
			target = id2str + i + 5 + (uint64_t)(int64_t)rel;
		}
	if (!target || elf_read_vaddr(e, fd, target, b, sizeof(b)))
		return 0;
	for (size_t i = 0; i + 7 <= sizeof(b); i++) {
		size_t rex = (b[i] & 0xf0) == 0x40;
		uint8_t op = b[i + rex], modrm = b[i + rex + 1];

		if ((op == 0x39 || op == 0x3b) && (modrm & 0xc7) == 0x05) {
			memcpy(&rel, b + i + rex + 2, sizeof(rel));
			return target + i + rex + 6 + (uint64_t)(int64_t)rel;
		}
	}
	return 0;
}

/*
 * arm64: rb_id2str ends in a b (imm26) to the lookup, which loads
 * global_symbols.last_id with an adrp of its page and an ldr w of its
 * offset from the same register.
 */
static uint64_t find_arm64(Elf *e, int fd, uint64_t id2str)
{
	uint32_t insn[LOOKUP_BYTES / 4];
	uint64_t target = 0;

	if (elf_read_vaddr(e, fd, id2str, insn, ID2STR_BYTES))
		return 0;
	for (size_t i = 0; i < ID2STR_BYTES / 4 && !target; i++)
		if ((insn[i] & 0xfc000000) == 0x14000000) {
			int64_t imm = (int64_t)((uint64_t)insn[i] << 38) >> 36;

			target = id2str + i * 4 + (uint64_t)imm;
		}
	if (!target || elf_read_vaddr(e, fd, target, insn, sizeof(insn)))
		return 0;
	for (size_t i = 0; i < sizeof(insn) / 4; i++) {
		uint32_t a = insn[i], rd = a & 31;
		uint64_t pc = target + i * 4, page;
		int64_t imm;

		if ((a & 0x9f000000) != 0x90000000)
			continue;
		imm = (int64_t)(((uint64_t)((a >> 5) & 0x7ffff) << 2 | ((a >> 29) & 3)) << 43) >> 31;
		page = (pc & ~0xfffull) + (uint64_t)imm;
		for (size_t k = i + 1; k < sizeof(insn) / 4 && k <= i + 8; k++)
			if ((insn[k] & 0xffc00000) == 0xb9400000 && ((insn[k] >> 5) & 31) == rd)
				return page + ((insn[k] >> 10) & 0xfff) * 4;
	}
	return 0;
}

uint64_t ruby_symbols_find(Elf *e, int fd, uint64_t id2str)
{
	GElf_Ehdr eh;
	uint64_t at = 0;

	if (!id2str || !gelf_getehdr(e, &eh))
		return 0;
	if (eh.e_machine == EM_X86_64)
		at = find_x86(e, fd, id2str);
	else if (eh.e_machine == EM_AARCH64)
		at = find_arm64(e, fd, id2str);
	return at && in_data(e, at) ? at : 0;
}

uint64_t ruby_array_at(uint32_t pid, const struct ruby_offsets *o, uint64_t v, uint64_t i)
{
	uint64_t flags = 0, ptr = 0, item = 0;

	if (!v || (v & 7) || target_read(pid, v, &flags, sizeof(flags)) ||
	    (flags & RUBY_T_MASK) != o->t_array)
		return 0;
	if (flags & o->rarray_embed_flag) {
		/* an embedded array holds a few items: its length is in its flags */
		if (i >= 3 || target_read(pid, v + o->rarray_embed + i * 8, &item, sizeof(item)))
			return 0;
	} else if (target_read(pid, v + o->rarray_heap_ptr, &ptr, sizeof(ptr)) || !ptr ||
		   target_read(pid, ptr + i * 8, &item, sizeof(item))) {
		return 0;
	}
	return item;
}

uint64_t ruby_id_string(uint32_t pid, const struct ruby_offsets *o, uint64_t symbols, uint64_t id)
{
	uint32_t last = 0;
	uint64_t serial, ids, unit;

	if (!o || !symbols || !id || !o->id_entry_unit || !o->id_entry_size)
		return 0;
	serial = id > o->last_op_id ? id >> o->id_scope_shift : id;
	if (target_read(pid, symbols + o->symbols_last_id, &last, sizeof(last)) || !serial ||
	    serial > last ||
	    target_read(pid, symbols + o->symbols_ids, &ids, sizeof(ids)))
		return 0;
	unit = ruby_array_at(pid, o, ids, serial / o->id_entry_unit);
	return ruby_array_at(pid, o, unit, (serial % o->id_entry_unit) * o->id_entry_size);
}
