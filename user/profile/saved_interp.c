// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Interpreter frames kept by a recording; see saved_interp.h. */
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"
#include "user/profile/saved_interp.h"

/* What identifies a frame: every field the kernel recorded, and whose process image. */
struct frame_key {
	uint32_t runtime, pid, gen;
	uint64_t code;
	uint32_t instr;
	uint8_t is_entry, owner;
	uint16_t scope;
};

struct frame_entry {
	struct frame_entry *next;
	struct frame_key key;
	struct interp_frame_shown how;
	/* its inline levels (struct interp_inlined), then name, file and the levels' strings */
	_Alignas(struct interp_inlined) char strings[];
};

struct saved_interp {
	struct frame_entry **buckets;
	size_t nr, nr_buckets;
};

struct saved_interp *saved_interp_new(void)
{
	return calloc(1, sizeof(struct saved_interp));
}

void saved_interp_free(struct saved_interp *sp)
{
	struct frame_entry *e, *n;
	size_t b;

	if (!sp)
		return;
	for (b = 0; b < sp->nr_buckets; b++)
		for (e = sp->buckets[b]; e; e = n) {
			n = e->next;
			free(e);
		}
	free(sp->buckets);
	free(sp);
}

static struct frame_key key_of(uint8_t rt, uint32_t pid, uint32_t gen,
			       const struct cfi_interp_frame *f)
{
	struct frame_key k;

	memset(&k, 0, sizeof(k));
	k.runtime = rt;
	k.pid = pid;
	k.gen = gen;
	k.code = f->code;
	k.instr = f->instr;
	k.is_entry = f->is_entry;
	k.owner = f->owner;
	k.scope = f->scope;
	return k;
}

static size_t bucket_of(const struct saved_interp *sp, const struct frame_key *k)
{
	return (size_t)(hash_bytes(HASH_FNV_OFFSET, k, sizeof(*k)) & (sp->nr_buckets - 1));
}

static struct frame_entry *find(const struct saved_interp *sp, const struct frame_key *k)
{
	struct frame_entry *e;

	if (!sp->nr_buckets)
		return NULL;
	for (e = sp->buckets[bucket_of(sp, k)]; e; e = e->next)
		if (!memcmp(&e->key, k, sizeof(*k)))
			return e;
	return NULL;
}

/* Twice the buckets once there are more entries than buckets: chains stay short. */
static int grow(struct saved_interp *sp)
{
	struct saved_interp n = {.nr = sp->nr,
				 .nr_buckets = sp->nr_buckets ? sp->nr_buckets * 2 : 256};
	struct frame_entry *e, *next;
	size_t b, nb;

	n.buckets = calloc(n.nr_buckets, sizeof(*n.buckets));
	if (!n.buckets)
		return -1;
	for (b = 0; b < sp->nr_buckets; b++)
		for (e = sp->buckets[b]; e; e = next) {
			next = e->next;
			nb = bucket_of(&n, &e->key);
			e->next = n.buckets[nb];
			n.buckets[nb] = e;
		}
	free(sp->buckets);
	*sp = n;
	return 0;
}

int saved_interp_add(struct saved_interp *sp, uint8_t rt, uint32_t pid, uint32_t gen,
		     const struct cfi_interp_frame *f, const struct interp_frame_shown *how)
{
	struct frame_key k = key_of(rt, pid, gen, f);
	size_t nl = strlen(how->name) + 1, fl = strlen(how->file) + 1, b;
	uint32_t nr = how->nr_inlined < SAVED_INLINED_MAX ? how->nr_inlined : SAVED_INLINED_MAX;
	size_t lv = nr * sizeof(struct interp_inlined), sb = nl + fl;
	struct interp_inlined *levels;
	struct frame_entry *e;
	char *str;

	if (find(sp, &k))
		return 0;
	for (uint32_t i = 0; i < nr; i++)
		sb += strlen(how->strs + how->inlined[i].name) + 1 +
		      strlen(how->strs + how->inlined[i].file) + 1;
	if (sp->nr >= sp->nr_buckets && grow(sp))
		return -1;
	e = malloc(sizeof(*e) + lv + sb);
	if (!e)
		return -1;
	e->key = k;
	e->how = *how;
	levels = (struct interp_inlined *)e->strings;
	str = e->strings + lv;
	memcpy(str, how->name, nl);
	memcpy(str + nl, how->file, fl);
	e->how.name = str;
	e->how.file = str + nl;
	/* each level's strings after the frame's, offsets from the frame's name */
	sb = nl + fl;
	for (uint32_t i = 0; i < nr; i++) {
		const char *n = how->strs + how->inlined[i].name,
			   *fi = how->strs + how->inlined[i].file;
		size_t a = strlen(n) + 1, c = strlen(fi) + 1;

		levels[i] = (struct interp_inlined){
		    .name = (uint32_t)sb, .file = (uint32_t)(sb + a), .line = how->inlined[i].line};
		memcpy(str + sb, n, a);
		memcpy(str + sb + a, fi, c);
		sb += a + c;
	}
	e->how.nr_inlined = nr;
	e->how.inlined = nr ? levels : NULL;
	e->how.strs = nr ? str : NULL;
	b = bucket_of(sp, &k);
	e->next = sp->buckets[b];
	sp->buckets[b] = e;
	sp->nr++;
	return 1;
}

const struct interp_frame_shown *saved_interp_find(const struct saved_interp *sp, uint8_t rt,
						   uint32_t pid, uint32_t gen,
						   const struct cfi_interp_frame *f)
{
	struct frame_key k = key_of(rt, pid, gen, f);
	const struct frame_entry *e = sp ? find(sp, &k) : NULL;

	return e ? &e->how : NULL;
}
