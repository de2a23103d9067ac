// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The interpreted Java frames of a deferred sample's frames the kernel did
 * not walk; see hotspot_deferred.h.
 */
#include <string.h>

#include "user/runtimes/hotspot/hotspot_deferred.h"
#include "user/runtimes/hotspot/hotspot_jit.h"
#include "user/runtimes/hotspot/hotspot_names.h"
#include "user/runtimes/target_mem.h"
#include "user/symbolize/runtime_units.h"

/* The sample's bcp register when the deferral was at the leaf, as the kernel's ARCH_INTERP_BCP. */
#ifdef __x86_64__
#define DEFERRED_LEAF_BCP(d) ((d)->at_leaf ? (d)->leaf[13] : 0)
#else
#define DEFERRED_LEAF_BCP(d) 0
#endif

/* The bci + 1 of bcp in the method whose ConstMethod is at cm (0: none), as the kernel's. */
static uint16_t bci1(const struct hotspot_layout *l, uint64_t cm, uint64_t bcp)
{
	uint64_t code = cm + l->const_method_size;

	if (!l->lines || !cm || bcp < code || bcp - code >= 0xffff)
		return 0;
	return (uint16_t)(bcp - code + 1);
}

/*
 * Whether bcp, the frame's at the sample, lies in the bytecodes of the
 * ConstMethod at cm as it is now (a native method has none: bcp 0).  The
 * Method* is the sample's, but by now its memory may be another method's
 * (its class unloaded, another class made there), and the digest is read
 * now: this is what tells them apart.  A layout without the code size
 * cannot tell: true.
 */
static bool bcp_in_method(uint32_t pid, const struct hotspot_layout *l, uint64_t cm, uint64_t bcp)
{
	uint64_t code = cm + l->const_method_size;
	int64_t size = 0;

	if (!l->lines)
		return true;
	if (!cm || hotspot_int_read(pid, cm, l->const_code_size, &size) || size < 0)
		return false;
	return size ? bcp >= code && bcp < code + (uint64_t)size : bcp == 0;
}

/*
 * Whether mirror, the frame's class mirror at the sample, is the mirror of
 * the class holding the ConstMethod at cm now: a class unloaded and another
 * made in its memory (metaspace gives a new class loader the chunks of the
 * one gone, at the same places for a class of the same shape) has another
 * java.lang.Class.  A layout without Klass::_java_mirror cannot tell: true.
 * The garbage collector may have moved the mirror since: then false, and
 * the frame goes unnamed rather than misnamed.
 */
static bool mirror_of_method(uint32_t pid, const struct hotspot_layout *l, uint64_t cm,
			     uint64_t mirror)
{
	uint64_t holder, handle, now = 0;

	if (!HOTSPOT_HAS(l->klass_mirror))
		return true;
	holder = hotspot_const_method_holder(pid, l, cm);
	handle = holder ? hotspot_ptr_read(pid, holder, l->klass_mirror) : 0;
	return handle && !target_read(pid, handle, &now, sizeof(now)) && now && now == mirror;
}

/*
 * The unit of a user frame running in the interpreter's blob (pc, its rbp
 * bp): true with *f.  Its Method* and bcp are the slots the interpreter
 * keeps in its frame, read from the stack copy (the values at the sample),
 * but a leaf's bcp, leaf_bcp when not 0 (its register's); the Method's
 * digest is read now.
 */
static bool interpreted_unit(uint32_t pid, const struct hotspot_layout *l,
			     const struct deferred_view *v, uint64_t pc, uint64_t bp,
			     uint64_t leaf_bcp, struct cfi_interp_frame *f)
{
	uint64_t method = 0, bcp = 0, mirror = 0, cm;
	uint16_t digest;

	if (!bp ||
	    !deferred_copy_read(v, bp + HOTSPOT_INTERP_METHOD_OFF, &method, sizeof(method)) ||
	    !method || method >> HOTSPOT_CODE_ID_SHIFT)
		return false;
	digest = hotspot_method_digest_now(pid, l, method);
	if (!digest)
		return false;
	cm = hotspot_ptr_read(pid, method, l->method_const);
	if (!deferred_copy_read(v, bp + HOTSPOT_INTERP_BCP_OFF, &bcp, sizeof(bcp)) ||
	    !deferred_copy_read(v, bp + HOTSPOT_INTERP_MIRROR_OFF, &mirror, sizeof(mirror)))
		return false;
	/* a leaf's in its register, but in code where that is not yet the bcp (an entry) */
	if (leaf_bcp && bcp_in_method(pid, l, cm, leaf_bcp)) {
		bcp = leaf_bcp;
	} else if (!bcp_in_method(pid, l, cm, bcp)) {
		hotspot_names_count_stale();
		return false;
	}
	if (!mirror_of_method(pid, l, cm, mirror)) {
		hotspot_names_count_stale();
		return false;
	}
	*f = (struct cfi_interp_frame){.code = method | (uint64_t)digest << HOTSPOT_CODE_ID_SHIFT,
				       .instr = (uint32_t)pc,
				       .owner = HOTSPOT_FRAME_INTERPRETED,
				       .scope = bci1(l, cm, bcp)};
	return true;
}

/*
 * The unit of a user frame (pc, its rbp bp; is_ra: pc is a return address)
 * when it runs Java code: true with *f.  An nmethod's frame (compiled code,
 * a native wrapper) gets the kernel's unit when the code there now was
 * there at the sample, t_ns (hotspot_jit_seen_before); else it is counted
 * stale: the code may have been freed and another compiled there since.
 */
static bool java_unit(uint32_t pid, const struct hotspot_layout *l,
		      const struct hotspot_heaps *heaps, const struct deferred_view *v, uint64_t pc,
		      bool is_ra, uint64_t bp, uint64_t leaf_bcp, struct cfi_interp_frame *f)
{
	struct hotspot_blob blob;

	/* a caller's pc is a return address: its call is the byte before */
	if (hotspot_blob_at(pid, l, heaps, is_ra ? pc - 1 : pc, &blob))
		return false;
	if (blob.is_interpreter)
		return interpreted_unit(pid, l, v, pc, bp, leaf_bcp, f);
	if (!blob.is_nmethod)
		return false;
	if (!hotspot_jit_seen_before(pid, &blob, v->rec->time_ns)) {
		hotspot_names_count_stale();
		return false;
	}
	*f = (struct cfi_interp_frame){.code = blob.addr | (uint64_t)(uint16_t)blob.compile_id
							       << HOTSPOT_CODE_ID_SHIFT,
				       .instr = (uint32_t)pc,
				       .owner = HOTSPOT_FRAME_COMPILED,
				       .scope = (uint16_t)blob.compile_id};
	return true;
}

/* Whether one of units names the frame at pc. */
static bool unit_at_pc(const struct cfi_interp_frame *units, uint32_t n, uint64_t pc)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (interp_frame_at_pc(&units[i], pc))
			return true;
	return false;
}

size_t hotspot_deferred_units(void *rt, struct cfi_sample_record *out, size_t size,
			      const struct deferred_view *v, const __u64 *bps)
{
	const struct cfi_sample_record *r = v->rec;
	struct cfi_interp_frame *units;
	struct hotspot_layout l;
	struct hotspot_heaps heaps;
	uint32_t i, n, added = 0;
	bool truncated = false;
	const __u64 *user;

	(void)rt;
	if (out->runtime != RT_HOTSPOT && out->runtime != RT_NONE)
		return size;
	/* the units follow the pcs: a record the walk did not lay out so is left alone */
	if (size != sizeof(*out) + ((size_t)out->nr_kernel + out->nr_user) * sizeof(__u64) +
			(size_t)out->nr_rt * RT_UNIT_BYTES ||
	    out->nr_rt > HOTSPOT_MAX_FRAMES || out->nr_user <= r->nr_user)
		return size;
	if (!hotspot_jvm_layout(out->pid, &l) || hotspot_heaps_read(out->pid, &l, &heaps))
		return size;
	user = out->pcs + out->nr_kernel;
	units = (struct cfi_interp_frame *)(user + out->nr_user);
	n = out->nr_rt;
	/*
	 * The frame the kernel's walk stopped at (most often the leaf, in the
	 * interpreter before the code cache had rows) has a unit only if the
	 * kernel's runtime read it there; its rbp is the deferral's.  Units go in
	 * frame order: any the kernel read are of this frame or those before it.
	 */
	if (r->nr_user && v->d->bp_valid && !unit_at_pc(units, n, user[r->nr_user - 1]) &&
	    n < HOTSPOT_MAX_FRAMES) {
		struct cfi_interp_frame f;
		bool is_ra = r->nr_user > 1 || v->d->ip_is_ra;
		/* the leaf's bcp is in its register, its frame's slot stale while it runs */
		uint64_t leaf_bcp = r->nr_user == 1 ? DEFERRED_LEAF_BCP(v->d) : 0;

		if (java_unit(out->pid, &l, &heaps, v, user[r->nr_user - 1], is_ra, v->d->bp,
			      leaf_bcp, &f)) {
			units[n++] = f;
			added++;
		}
	}
	for (i = r->nr_user; i < out->nr_user; i++) {
		struct cfi_interp_frame f;

		if (!java_unit(out->pid, &l, &heaps, v, user[i], true, bps[i], 0, &f))
			continue;
		/* one more than the bound: the sample says so, as the kernel's walk does */
		if (n >= HOTSPOT_MAX_FRAMES) {
			truncated = true;
			break;
		}
		units[n++] = f;
		added++;
	}
	if (!added && !truncated)
		return size;
	out->nr_rt = (__u16)n;
	out->runtime = RT_HOTSPOT;
	if (truncated)
		out->rt_status = HOTSPOT_STATUS_TRUNCATED;
	else if (out->rt_status == HOTSPOT_STATUS_NO_JAVA || out->rt_status == 0)
		out->rt_status = HOTSPOT_STATUS_OK;
	return size + (size_t)added * sizeof(struct cfi_interp_frame);
}
