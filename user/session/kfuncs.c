// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Made-up kfunc calls made real (kfuncs.h). */
#include "user/session/kfuncs.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/btf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cache_dir.h"
#include "common/hash.h"
#include "user/session/kernel_btf.h"

static struct kfunc_ids ids_read;
static pthread_once_t ids_once = PTHREAD_ONCE_INIT;

#define IDS_N	      (KFUNC_MAX + KTYPE_MAX)
#define IDS_MAGIC     0x31646966696b6663ull /* "cfkifid1" */
#define IDS_CACHE_FMT "kfunc-ids-%.64s"

/*
 * What one read of the kernel's BTF found, kept per kernel image in the cache
 * directory: the read walks some 60,000 of its types at every start.  The
 * names' hash: another build of cfiprof asking for other names reads anew.
 */
struct ids_file {
	uint64_t magic;
	uint64_t names_hash;
	int32_t ids[IDS_N];
};

/* without the struct's tail padding: the bytes the file holds */
#define IDS_FILE_BYTES (offsetof(struct ids_file, ids) + IDS_N * sizeof(int32_t))

static uint64_t names_hash(const char *const names[])
{
	uint64_t h = HASH_FNV_OFFSET;

	for (int i = 0; i < IDS_N; i++)
		h = hash_bytes(h, names[i], strlen(names[i]) + 1);
	return h;
}

static bool ids_from_cache(const char *name, uint64_t hash, int32_t ids[])
{
	struct ids_file f;
	int fd = cache_file_open(name, (off_t)IDS_FILE_BYTES);
	bool ok;

	if (fd < 0)
		return false;
	ok = pread(fd, &f, IDS_FILE_BYTES, 0) == (ssize_t)IDS_FILE_BYTES && f.magic == IDS_MAGIC &&
	     f.names_hash == hash;
	close(fd);
	/* ids the kernel could have: 0 (none) or a type's, never negative */
	for (int i = 0; ok && i < IDS_N; i++)
		ok = f.ids[i] >= 0;
	if (ok)
		memcpy(ids, f.ids, sizeof(f.ids));
	return ok;
}

static void ids_read_once(void)
{
	static const char *const names[IDS_N] = {
#define KFUNC_NAME(id, name) [KFUNC_##id] = #name,
	    KFUNCS(KFUNC_NAME)
#undef KFUNC_NAME
#define KTYPE_NAME(id, name) [KFUNC_MAX + KTYPE_##id] = #name,
		KTYPES(KTYPE_NAME)
#undef KTYPE_NAME
	};
	struct ids_file f = {.magic = IDS_MAGIC, .names_hash = names_hash(names)};
	uint8_t kinds[IDS_N];
	char build_id[128], name[96] = "";

	if (!kernel_build_id(build_id, sizeof(build_id)))
		snprintf(name, sizeof(name), IDS_CACHE_FMT, build_id);
	if (!name[0] || !ids_from_cache(name, f.names_hash, f.ids)) {
		for (int i = 0; i < IDS_N; i++)
			kinds[i] = i < KFUNC_MAX ? BTF_KIND_FUNC : BTF_KIND_STRUCT;
		if (kernel_btf_ids(names, kinds, f.ids, IDS_N) < 0)
			return; /* all 0: the iterator's users say so, the casts stay copies */
		/* not cached, the next start reads the BTF again */
		if (name[0])
			cache_file_write(name, &f, IDS_FILE_BYTES);
	}
	memcpy(ids_read.func, f.ids, sizeof(ids_read.func));
	memcpy(ids_read.type, f.ids + KFUNC_MAX, sizeof(ids_read.type));
	/* the cast's one use names task_struct: without its id, no cast */
	if (!ids_read.type[KTYPE_TASK_STRUCT])
		ids_read.func[KFUNC_RDONLY_CAST] = 0;
}

const struct kfunc_ids *kfunc_ids(void)
{
	pthread_once(&ids_once, ids_read_once);
	return &ids_read;
}

static bool is_made_up_call(const struct bpf_insn *in, uint32_t *k)
{
	*k = (uint32_t)in->imm - KFUNC_CALL_BASE;
	return in->code == (BPF_JMP | BPF_CALL) && !in->src_reg && *k < KFUNC_MAX;
}

static bool is_made_up_type(const struct bpf_insn *in, uint32_t *t)
{
	*t = (uint32_t)in->imm - KTYPE_ID_BASE;
	return (in->code == (BPF_ALU64 | BPF_MOV | BPF_K) ||
		in->code == (BPF_ALU | BPF_MOV | BPF_K)) &&
	       *t < KTYPE_MAX;
}

int kfuncs_patch(struct bpf_program *prog, const struct kfunc_ids *ids)
{
	size_t n = bpf_program__insn_cnt(prog);
	struct bpf_insn *insns = malloc(n * sizeof(*insns));
	int err = 0, patched = 0;
	uint32_t k;

	if (!insns)
		return -ENOMEM;
	memcpy(insns, bpf_program__insns(prog), n * sizeof(*insns));
	for (size_t i = 0; i < n && !err; i++) {
		struct bpf_insn *in = &insns[i];

		if (is_made_up_type(in, &k)) {
			in->imm = ids->type[k];
			patched++;
		} else if (!is_made_up_call(in, &k)) {
			continue;
		} else if (ids->func[k]) {
			in->src_reg = BPF_PSEUDO_KFUNC_CALL;
			in->off = 0; /* vmlinux's BTF, not a module's */
			in->imm = ids->func[k];
			patched++;
		} else if (k == KFUNC_RDONLY_CAST) {
			*in = (struct bpf_insn){.code = BPF_ALU64 | BPF_MOV | BPF_X,
						.dst_reg = BPF_REG_0,
						.src_reg = BPF_REG_1};
			patched++;
		} else {
			err = -ENOENT;
		}
	}
	if (!err && patched)
		err = bpf_program__set_insns(prog, insns, n);
	free(insns);
	return err;
}

int kfuncs_patch_object(struct bpf_object *obj)
{
	struct bpf_program *prog;
	int err = 0;

	bpf_object__for_each_program(prog, obj)
	{
		if (bpf_program__autoload(prog))
			err = kfuncs_patch(prog, kfunc_ids());
		if (err)
			break;
	}
	return err;
}
