/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * HotSpot (the JVM) frames: what crosses the kernel/user boundary for this
 * runtime alone (bpf/hotspot.bpf.h, user/runtimes/hotspot/).  Included
 * through bpf/runtime_table.h after cfiprof_abi.h's runtime-generic part.
 *
 * Like V8's, HotSpot's compiled frames are native frames (JIT code in its
 * code heaps, unwound by rows user space builds from the code cache): each
 * unit names one native frame of the sample, the one whose PC's low 32
 * bits it holds: by the nmethod found at the sample (compiled) or the
 * Method* its interpreted frame holds.
 */
#ifndef CFIPROF_HOTSPOT_ABI_H
#define CFIPROF_HOTSPOT_ABI_H

#define HOTSPOT_MAX_FRAMES 64
/* code heaps BPF looks a pc up in (JDK 9 on: 3 with segmentation, else 1) */
#define HOTSPOT_BPF_HEAPS 3

/*
 * struct cfi_interp_frame's owner: a compiled (nmethod) frame.  Its code is
 * the nmethod's address (below 2^47) with the low 16 bits of its compile id
 * from bit 48: user space names the frame from the nmethod only while the
 * nmethod there is still that compile (ids are unique in a JVM's life),
 * else counts it stale; scope holds the id too.
 */
#define HOTSPOT_FRAME_COMPILED 1
#define HOTSPOT_CODE_ID_SHIFT  48
/*
 * ... an interpreted frame (the template interpreter's): code its Method*
 * with, from bit 48, a digest of what that Method was at the sample (its
 * class's name Symbol*, that name's length, last bytes and identity hash,
 * and its name and signature indices): a class unloaded gives its Method's
 * memory back, and another class's Method made there is another method at
 * the same address, often with its name Symbol made where the old one's was
 * too (Gen5's freed, Gen6's malloc'd there): the name's own bytes and hash
 * tell those apart.  User space names the frame only if the Method there
 * still has that digest, else counts it stale.
 * scope holds its bci + 1, 0 when not known: a caller's from the bcp its
 * frame saved at the call, the leaf's from the register the interpreter
 * keeps it in (x86-64's r13; its frame's slot is stale while it runs; on
 * arm64, x22, which the walk does not keep: 0).
 */
#define HOTSPOT_FRAME_INTERPRETED 2

/* the bytes of a class name's end a digest reads (its whole name when shorter) */
#define HOTSPOT_DIGEST_TAIL 8
/* an offset of struct cfi_hotspot_proc's whose field this JDK lacks */
#define HOTSPOT_NO_FIELD 0xffff

/*
 * The digest of an interpreted frame's Method (never 0: 0 is none read):
 * its class's name Symbol* klass_name, the Symbol's name_len and last
 * min(name_len, HOTSPOT_DIGEST_TAIL) bytes read into a zeroed u64
 * name_tail, and its identity hash (a random number each Symbol gets when
 * made: two loads of one name differ; 0 when the JDK has none).
 */
static inline __attribute__((always_inline)) __u16
hotspot_method_digest(__u64 klass_name, __u16 name_index, __u16 sig_index, __u16 name_len,
		      __u64 name_tail, __u16 name_hash)
{
	__u64 x = klass_name ^ ((__u64)name_index << 48) ^ ((__u64)sig_index << 32) ^ name_len ^
		  ((__u64)name_hash << 16);

	/* a 64-bit finalizer's mix, twice: every bit of Symbol* and name moves the 16 kept */
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x ^= name_tail;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	x = (x ^ (x >> 16) ^ (x >> 32) ^ (x >> 48)) & 0xffff;
	return x ? (__u16)x : 1;
}

/* A frame of 8 MiB: no Java frame is near (a larger size is garbage read) */
#define HOTSPOT_FRAME_WORDS_MAX (1 << 20)

/*
 * The slots of an interpreted frame below its frame pointer (rbp, x29:
 * frame_x86.hpp's and frame_aarch64.hpp's interpreter_frame_*_offset words;
 * arm64 has a padding slot after mdp): its Method* (method_offset -3), its
 * bcp, saved at calls (bcp_offset), and its class's java mirror
 * (mirror_offset), which keeps the class alive while the frame is: user
 * space tells a Method* of the sample's from its memory made another's by it.
 */
#if defined(__TARGET_ARCH_arm64) || defined(__aarch64__)
#define HOTSPOT_INTERP_METHOD_OFF (-24)
#define HOTSPOT_INTERP_BCP_OFF	  (-72)
#define HOTSPOT_INTERP_MIRROR_OFF (-48)
#else
#define HOTSPOT_INTERP_METHOD_OFF (-24)
#define HOTSPOT_INTERP_BCP_OFF	  (-64)
#define HOTSPOT_INTERP_MIRROR_OFF (-32)
#endif

enum cfi_hotspot_status {
	HOTSPOT_STATUS_NONE = 0,       /* not a JVM cfiprof reads */
	HOTSPOT_STATUS_OK = 1,	       /* Java frames read */
	HOTSPOT_STATUS_NO_JAVA = 2,    /* no frame of the sample in compiled Java code */
	HOTSPOT_STATUS_TRUNCATED = 3,  /* more than HOTSPOT_MAX_FRAMES: the innermost kept */
	HOTSPOT_STATUS_UNREADABLE = 4, /* a frame's nmethod could not be read */
	HOTSPOT_STATUS_MAX,
};

/* One code heap: its reserved range's start and its segment map (a byte per segment). */
struct cfi_hotspot_heap {
	__u64 low;    /* reserved from here: segment 0 */
	__u64 segmap; /* its segment map's first byte */
};

/*
 * A process running a JVM whose layout its libjvm.so exports
 * (gHotSpotVMStructs), keyed by tgid: what BPF needs to find, for a pc in
 * a code heap, the nmethod there and the Method* it compiles, or the
 * interpreter, whose frame keeps its Method* below its rbp.
 */
struct cfi_hotspot_proc {
	struct cfi_hotspot_heap heap[HOTSPOT_BPF_HEAPS];
	__u32 size[HOTSPOT_BPF_HEAPS]; /* each heap's reserved bytes (at most 2 GiB) */
	__u8 nr_heaps;		       /* 0: the code cache not read yet (the JVM starting) */
	__u8 log2_segment;
	__u16 block_size;     /* sizeof(HeapBlock): the CodeBlob after it */
	__u64 nmethod_name;   /* CodeBlob::_name of an nmethod (a libjvm string): tells one */
	__u64 interp_name;    /* ... of the template interpreter's blob; both 0 until seen */
	__u16 off_name;	      /* CodeBlob::_name */
	__u16 off_method;     /* nmethod's Method* */
	__u16 off_compile_id; /* nmethod::_compile_id, an int */
	__u16 layout;	      /* user space's index of the process's layout */
	/* what an interpreted frame's digest reads (hotspot_method_digest) */
	__u16 off_method_const; /* Method::_constMethod */
	__u16 off_const_pool;	/* ConstMethod::_constants */
	__u16 off_pool_holder;	/* ConstantPool::_pool_holder */
	__u16 off_klass_name;	/* Klass::_name */
	__u16 off_name_index;	/* ConstMethod::_name_index, a u2 */
	__u16 off_sig_index;	/* ConstMethod::_signature_index, a u2 */
	__u16 const_size;	/* sizeof(ConstMethod): its bytecodes follow it (0: no bci) */
	__u16 off_frame_size;	/* CodeBlob::_frame_size, an int: words, return address included */
	__u16 off_symbol_length; /* Symbol::_length, a u2 */
	__u16 off_symbol_body;	 /* Symbol::_body */
	__u16 off_symbol_hash;	 /* Symbol::_hash_and_refcount, a u4; HOTSPOT_NO_FIELD: none */
	__u64 maps_read_ns;   /* as every runtime's: struct cfi_runtime_proc */
};

#endif
