// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The decoders of an nmethod's debug info (hotspot_debuginfo.h) on bytes
 * built here from JDK 17's formats and JDK 20's (the zero byte excluded from
 * UNSIGNED5), not from the decoders: UNSIGNED5
 * numbers as CompressedWriteStream::write_int writes them (an encoder
 * written from compressedStream.cpp, and numbers worked out by hand),
 * scopes as DebugInformationRecorder lays them out, line number tables as
 * CompressedLineNumberWriteStream writes them; each cut short and garbage.
 * Then hotspot_code_read (hotspot_scopes.h) on a forged nmethod, methods,
 * pools and symbols in this process's own memory, read as a JVM's are,
 * with a layout made for them: the chains and lines it gives, and what
 * it falls back to on each kind of broken debug info.  And the digest an
 * interpreted frame's Method is checked by when it is named
 * (hotspot_method_digest_now) on such a Method whose class's name Symbol is
 * freed and another made at its address.
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/lib/harness.h"
#include "tests/lib/xorshift.h"
#include "user/runtimes/hotspot/hotspot_codecache.h"
#include "user/runtimes/hotspot/hotspot_debuginfo.h"
#include "user/runtimes/hotspot/hotspot_scopes.h"

/*
 * CompressedWriteStream::write_int: UNSIGNED5, H = 64 high codes, 5 bytes at
 * most; JDK 17's with no byte excluded (X = 0, L = 192 low codes), JDK 20's
 * on (utilities/unsigned5.hpp's write_uint) with the zero byte excluded (X = 1,
 * L = 191).  The bytes, or 0 when v is past what 5 bytes hold.
 */
static uint8_t u5_x; /* X of the format written: 0 or 1 */

static uint32_t put_u5(uint8_t *out, uint32_t v)
{
	const uint32_t low = 256 - 64 - u5_x;
	uint64_t sum = v;
	uint32_t n = 0;

	for (int i = 0;; i++) {
		if (sum < low || i == 4) {
			if (u5_x + sum > 255)
				return 0;
			out[n++] = (uint8_t)(u5_x + sum);
			return n;
		}
		sum -= low;
		out[n++] = (uint8_t)(u5_x + low + sum % 64);
		sum >>= 6;
	}
}

/* CompressedWriteStream::write_signed_int: encode_sign */
static uint32_t put_signed(uint8_t *out, int32_t v)
{
	return put_u5(out, ((uint32_t)v << 1) ^ (uint32_t)(v >> 31));
}

static void test_unsigned5(void)
{
	/*
	 * by hand, X = 0: 192 = 192 + 0 * 64, 1000 = 232 + 12 * 64; X = 1 (each
	 * byte worth one less): 191 = (192 - 1) + (1 - 1) * 64, 1000 = (233 - 1)
	 * + (13 - 1) * 64
	 */
	static const struct {
		uint8_t x, b[5];
		uint32_t n, v;
	} hand[] = {
	    {0, {0x00}, 1, 0},	       {0, {0xbf}, 1, 191},	   {0, {0xc0, 0x00}, 2, 192},
	    {0, {0xc8, 0x00}, 2, 200}, {0, {0xe8, 0x0c}, 2, 1000}, {1, {0x01}, 1, 0},
	    {1, {0xbf}, 1, 190},       {1, {0xc0, 0x01}, 2, 191},  {1, {0xe9, 0x0d}, 2, 1000}};
	static const uint32_t values[] = {
	    0,	   1,	  63,	  190,	  191,	    192,       255,	    256,
	    12287, 12288, 786431, 786432, 1u << 30, INT32_MAX, 0xfffffffeu, 0xffffffffu};
	uint8_t buf[16];

	for (size_t i = 0; i < sizeof(hand) / sizeof(hand[0]); i++) {
		struct hotspot_stream s = {
		    .buf = hand[i].b, .len = hand[i].n, .excluded = hand[i].x};
		uint32_t v = hotspot_read_u5(&s);

		CHECK(v == hand[i].v && !s.bad && s.pos == hand[i].n, "case %zu: %u, not %u", i, v,
		      hand[i].v);
	}
	for (u5_x = 0; u5_x <= 1; u5_x++) {
		for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
			uint32_t n = put_u5(buf, values[i]);
			struct hotspot_stream s = {.buf = buf, .len = n, .excluded = u5_x};
			struct hotspot_stream cut = {.buf = buf, .len = n - 1, .excluded = u5_x};
			uint32_t v;

			/* X = 1 holds less than 2^32 in 5 bytes */
			if (!n && u5_x && values[i] > INT32_MAX)
				continue;
			v = hotspot_read_u5(&s);
			CHECK(n && v == values[i] && !s.bad && s.pos == n,
			      "X %u: %u read as %u (%u bytes)", u5_x, values[i], v, n);
			/* one byte short: bad, whatever it read */
			hotspot_read_u5(&cut);
			CHECK(cut.bad, "X %u: %u cut to %u bytes not bad", u5_x, values[i], n - 1);
		}
		for (int32_t v = -300; v <= 300; v += 7) {
			uint32_t n = put_signed(buf, v);
			struct hotspot_stream s = {.buf = buf, .len = n, .excluded = u5_x};

			CHECK(hotspot_read_signed(&s) == v && !s.bad, "X %u: signed %d", u5_x, v);
		}
	}
	u5_x = 0;
	/* the excluded byte is no number: a stream of a JDK 20 on holding one is bad */
	{
		struct hotspot_stream s = {.buf = (const uint8_t[]){0x00}, .len = 1, .excluded = 1};

		CHECK(hotspot_read_u5(&s) == 0 && s.bad, "a zero byte read as a number at X = 1");
	}
	/* the JDK's version picks X */
	CHECK(hotspot_u5_excluded(17 << 8) == 0 && hotspot_u5_excluded(19 << 8 | 2) == 0 &&
		  hotspot_u5_excluded(20 << 8) == 1 && hotspot_u5_excluded(25 << 8) == 1,
	      "X by version");
	/* a bad stream stays bad */
	{
		struct hotspot_stream s = {.buf = buf, .len = 0};

		hotspot_read_u5(&s);
		s.len = 1;
		buf[0] = 5;
		CHECK(hotspot_read_u5(&s) == 0 && s.bad, "a bad stream read on");
	}
}

/* A scope's header at out (its locals', expressions', monitors' offsets 0): its bytes. */
static uint32_t put_scope(uint8_t *out, uint32_t sender, uint32_t method, int32_t bci)
{
	uint32_t n = put_u5(out, sender);

	n += put_u5(out + n, method);
	n += put_u5(out + n, (uint32_t)(bci + 1)); /* read_bci: read_int() + InvocationEntryBci */
	for (int i = 0; i < 3; i++)
		n += put_u5(out + n, 0);
	return n;
}

static void test_scopes(void)
{
	uint8_t d[64] = {0};
	struct hotspot_scope sc;
	uint32_t a = 1, b, end;

	/* offset 0 is serialized_null: the recorder never puts a scope there */
	b = a + put_scope(d + a, 0, 1, -1);
	end = b + put_scope(d + b, a, 300, 200);
	CHECK(!hotspot_scope_at(d, end, a, 0, &sc) && sc.sender == 0 && sc.method == 1 &&
		  sc.bci == -1,
	      "scope a: %u %u %d", sc.sender, sc.method, sc.bci);
	CHECK(!hotspot_scope_at(d, end, b, 0, &sc) && sc.sender == a && sc.method == 300 &&
		  sc.bci == 200,
	      "scope b: %u %u %d", sc.sender, sc.method, sc.bci);
	CHECK(hotspot_scope_at(d, end, 0, 0, &sc) && hotspot_scope_at(d, end, end, 0, &sc) &&
		  hotspot_scope_at(d, end, 1000, 0, &sc),
	      "no scope at 0 or past the end");
	/* cut inside b's header: method 300 is two bytes, bci 201 two */
	for (uint32_t len = b; len < b + 5; len++)
		CHECK(hotspot_scope_at(d, len, b, 0, &sc), "scope b cut at %u decoded", len);
}

static void test_pcdesc_find(void)
{
	const struct hotspot_pcdesc pcs[] = {{0x10, 0}, {0x20, 1}, {0x30, 2}};
	static const struct {
		uint32_t off;
		int64_t want;
	} q[] = {{0, 0},    {0x10, 0},	{0x11, 1},	  {0x20, 1},	   {0x2f, 2},
		 {0x30, 2}, {0x31, -1}, {0x7fffffff, -1}, {0xffffffff, -1}};

	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		int64_t got = hotspot_pcdesc_find(pcs, 3, q[i].off);

		CHECK(got == q[i].want, "pc offset %#x: %lld, not %lld", q[i].off, (long long)got,
		      (long long)q[i].want);
	}
	CHECK(hotspot_pcdesc_find(pcs, 0, 0) == -1, "a PcDesc of none");
}

/* CompressedLineNumberWriteStream::write_pair: one byte when it fits, else 0xff and deltas */
static uint32_t put_pair(uint8_t *out, int32_t *bci, int32_t *line, int32_t nb, int32_t nl)
{
	int32_t db = nb - *bci, dl = nl - *line;
	uint32_t n;

	*bci = nb;
	*line = nl;
	if (db >= 0 && db <= 0x1f && dl >= 0 && dl <= 7) {
		out[0] = (uint8_t)(db << 3 | dl);
		/* 0 is the terminator: a pair of no change is written escaped */
		if (out[0])
			return 1;
	}
	out[0] = 0xff;
	n = 1 + put_signed(out + 1, db);
	return n + put_signed(out + n, dl);
}

static void test_lines(void)
{
	uint8_t t[64];
	int32_t bci = 0, line = 0;
	uint32_t n = 0;

	n += put_pair(t + n, &bci, &line, 0, 16); /* escaped: line + 16 */
	n += put_pair(t + n, &bci, &line, 4, 17); /* (4 << 3) | 1 */
	n += put_pair(t + n, &bci, &line, 10, 19);
	n += put_pair(t + n, &bci, &line, 8, 30); /* not sorted: bci - 2, escaped */
	n += put_pair(t + n, &bci, &line, 2, 25);
	t[n++] = 0;
	CHECK(t[0] == 0xff && t[3] == 0x21 && t[4] == 0x32, "the table as the format writes it");
	CHECK(hotspot_line_of(t, n, 0, 20, 0) == 16 && hotspot_line_of(t, n, 4, 20, 0) == 17 &&
		  hotspot_line_of(t, n, 10, 20, 0) == 19 && hotspot_line_of(t, n, 8, 20, 0) == 30 &&
		  hotspot_line_of(t, n, 2, 20, 0) == 25,
	      "exact bcis");
	/* the greatest bci below, as Method::line_number_from_bci */
	CHECK(hotspot_line_of(t, n, 5, 20, 0) == 17 && hotspot_line_of(t, n, 9, 20, 0) == 30 &&
		  hotspot_line_of(t, n, 19, 20, 0) == 19 && hotspot_line_of(t, n, 3, 20, 0) == 25,
	      "bcis between");
	/* SynchronizationEntryBCI is the entry's; out of the code: none */
	CHECK(hotspot_line_of(t, n, -1, 20, 0) == 16 && hotspot_line_of(t, n, 20, 20, 0) == -1 &&
		  hotspot_line_of(t, n, -2, 20, 0) == -1,
	      "entry and outside");
	/* cut: a bci met before the cut is found, else none */
	CHECK(hotspot_line_of(t, 4, 4, 20, 0) == 17 && hotspot_line_of(t, 4, 12, 20, 0) == -1 &&
		  hotspot_line_of(t, 2, 0, 20, 0) == -1 && hotspot_line_of(t, 0, 0, 20, 0) == -1,
	      "cut tables");
	CHECK(hotspot_line_of((const uint8_t[]){0}, 1, 3, 20, 0) == -1, "an empty table");
}

/*
 * JDK 20 on: the same scopes and tables written with the zero byte excluded
 * (X = 1), read so; and the first bytes of a real one, JDK 25's javac and
 * JVM: Busy.main's table began ff 01 51 (bci 0 at line 40, its first
 * statement's line, as javap -l says) in Temurin 25.0.3's ConstMethod.
 */
static void test_jdk20_streams(void)
{
	static const uint8_t real[] = {0xff, 0x01, 0x51, 0x00};
	uint8_t t[64] = {0}, d[64] = {0};
	int32_t bci = 0, line = 0;
	struct hotspot_scope sc;
	uint32_t n = 0, a = 1, b, end;

	u5_x = 1;
	n += put_pair(t + n, &bci, &line, 0, 16);
	n += put_pair(t + n, &bci, &line, 4, 17);
	n += put_pair(t + n, &bci, &line, 8, 300); /* a line delta of two bytes */
	n += put_pair(t + n, &bci, &line, 2, 25);
	t[n++] = 0;
	b = a + put_scope(d + a, 0, 1, -1);
	end = b + put_scope(d + b, a, 300, 200);
	u5_x = 0;
	CHECK(t[1] == 0x01 && hotspot_line_of(t, n, 0, 20, 1) == 16 &&
		  hotspot_line_of(t, n, 4, 20, 1) == 17 && hotspot_line_of(t, n, 8, 20, 1) == 300 &&
		  hotspot_line_of(t, n, 2, 20, 1) == 25 && hotspot_line_of(t, n, 5, 20, 1) == 17,
	      "a JDK 20 table");
	/* read as JDK 17's, the same bytes give other lines: X is no detail */
	CHECK(hotspot_line_of(t, n, 8, 20, 0) != 300, "a JDK 20 table read as JDK 17's");
	CHECK(hotspot_line_of(real, sizeof(real), 0, 105, 1) == 40, "JDK 25's Busy.main: line %d",
	      hotspot_line_of(real, sizeof(real), 0, 105, 1));
	CHECK(!hotspot_scope_at(d, end, b, 1, &sc) && sc.sender == a && sc.method == 300 &&
		  sc.bci == 200,
	      "a JDK 20 scope: %u %u %d", sc.sender, sc.method, sc.bci);
}

/* Random bytes through each decoder: whatever they say, no read outside (ASan). */
static void test_garbage(void)
{
	uint8_t buf[64];
	struct hotspot_pcdesc pcs[16];

	for (int round = 0; round < 20000; round++) {
		uint32_t len = (uint32_t)rnd_below(sizeof(buf) + 1), n = (uint32_t)rnd_below(17);
		uint8_t *p = malloc(len ? len : 1);
		struct hotspot_scope sc;
		uint8_t x = (uint8_t)(round & 1);
		struct hotspot_stream s = {.buf = p, .len = len, .excluded = x};

		for (uint32_t i = 0; i < len; i++)
			p[i] = (uint8_t)(rnd_below(4) ? rnd() : 0xff);
		for (uint32_t i = 0; i < n; i++)
			pcs[i] = (struct hotspot_pcdesc){(int32_t)rnd(), (uint32_t)rnd()};
		while (!s.bad)
			hotspot_read_u5(&s);
		hotspot_scope_at(p, len, (uint32_t)rnd_below(len + 2), x, &sc);
		hotspot_line_of(p, len, (int32_t)rnd_below(70) - 1, 64, x);
		hotspot_pcdesc_find(pcs, n, (uint32_t)rnd());
		free(p);
	}
	memcpy(buf, "ok", 3);
	CHECK(!strcmp((char *)buf, "ok"), "garbage decoded");
}

/*
 * Forged objects in this process, laid out as the layout below says (not
 * as a JVM does: only the layout is read by): a Symbol {u2 length @0,
 * body @2}, a Klass {name @8}, a ConstantPool {holder @8, int length @16,
 * u2 source file index @20, 64 bytes, then its slots}, a ConstMethod
 * {pool @8, u2 flags @16, u2 code size @18, u2 name and signature
 * indexes @20 @22, int size in words @24, 32 bytes, then its bytecodes and
 * line number table}, a Method {ConstMethod @8}, an nmethod {code begin
 * @8, scopes data begin @16, int metadata, scopes pcs and dependencies
 * offsets @24 @28 @32, its sections from @256}, PcDescs {int pc offset
 * @0, int scope @4, 16 bytes}.
 */
#define F(o, s, fl) ((struct hotspot_field){(o), (s), HOTSPOT_F_FOUND | (fl)})

static struct hotspot_layout forged_layout(void)
{
	struct hotspot_layout l = {0};

	l.symbol_length = F(0, 2, 0);
	l.symbol_body = F(2, 0, 0);
	l.klass_name = F(8, 8, 0);
	l.pool_holder = F(8, 8, 0);
	l.pool_length = F(16, 4, HOTSPOT_F_SIGNED);
	l.pool_source_file = F(20, 2, 0);
	l.pool_size = 64;
	l.const_pool = F(8, 8, 0);
	l.const_flags = F(16, 2, 0);
	l.const_code_size = F(18, 2, 0);
	l.const_name_index = F(20, 2, 0);
	l.const_sig_index = F(22, 2, 0);
	l.const_size = F(24, 4, HOTSPOT_F_SIGNED);
	l.const_method_size = 32;
	l.method_const = F(8, 8, 0);
	l.blob_code_begin = F(8, 8, 0);
	l.nm_scopes_data = F(16, 8, 0);
	l.nm_metadata = F(24, 4, HOTSPOT_F_SIGNED);
	l.nm_scopes_pcs = F(28, 4, HOTSPOT_F_SIGNED);
	l.nm_dependencies = F(32, 4, HOTSPOT_F_SIGNED);
	l.pcdesc_pc = F(0, 4, HOTSPOT_F_SIGNED);
	l.pcdesc_scope = F(4, 4, HOTSPOT_F_SIGNED);
	l.pcdesc_size = 16;
	l.has_line_table = 1;
	l.scopes = l.lines = l.source_file = true;
	return l;
}

/* pool slots: 1 the class's name, 2 and 3 the methods', 4 the signature, 5 the source file */
struct forged_method {
	uint8_t symbols[5][32];
	uint8_t klass[16];
	uint8_t pool[64 + 8 * 6];
	uint8_t cm[128];
	uint8_t method[16];
};

static void put64(uint8_t *at, uint64_t v)
{
	memcpy(at, &v, 8);
}

static void put32(uint8_t *at, uint32_t v)
{
	memcpy(at, &v, 4);
}

static void put16(uint8_t *at, uint16_t v)
{
	memcpy(at, &v, 2);
}

static uint64_t addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

/* Method name of class T (source file T.java), code_size bytes of bytecode, lines pairs */
static void forge_method(struct forged_method *m, const char *name, uint16_t code_size,
			 const int32_t (*lines)[2], int nr_lines)
{
	const char *strs[5] = {"T", name, "other", "()V", "T.java"};
	int32_t bci = 0, line = 0;
	uint32_t n = 32 + code_size;

	memset(m, 0, sizeof(*m));
	for (int i = 0; i < 5; i++) {
		put16(m->symbols[i], (uint16_t)strlen(strs[i]));
		memcpy(m->symbols[i] + 2, strs[i], strlen(strs[i]));
		put64(m->pool + 64 + 8 * (i + 1), addr(m->symbols[i]));
	}
	put64(m->klass + 8, addr(m->symbols[0]));
	put64(m->pool + 8, addr(m->klass));
	put32(m->pool + 16, 6);
	put16(m->pool + 20, 5);
	put64(m->cm + 8, addr(m->pool));
	put16(m->cm + 18, code_size);
	put16(m->cm + 20, 2);
	put16(m->cm + 22, 4);
	for (int i = 0; i < nr_lines; i++)
		n += put_pair(m->cm + n, &bci, &line, lines[i][0], lines[i][1]);
	m->cm[n++] = 0;
	put16(m->cm + 16, nr_lines ? 1 : 0);
	put32(m->cm + 24, (n + 7) / 8);
	put64(m->method + 8, addr(m->cm));
}

/*
 * An nmethod of hot with leaf inlined: scopes a (hot at bci 3) and b
 * (leaf at bci 2, its sender a); PcDescs at 0x10 (no scope), 0x20 (a),
 * 0x30 (b) between the two sentinels; metadata [hot, leaf].
 */
struct forged_nm {
	uint8_t nm[1024];
	uint32_t scope_a, scope_b;
};

enum { META = 256, SCOPES = 272, PCS = 512 };

static void forge_nm(struct forged_nm *f, const struct forged_method *hot,
		     const struct forged_method *leaf)
{
	const int32_t pcs[][2] = {{-1, 0}, {0x10, 0}, {0x20, 1}, {0x30, 8}, {INT32_MAX, 0}};
	uint32_t end;

	memset(f, 0, sizeof(*f));
	f->scope_a = 1;
	f->scope_b = f->scope_a + put_scope(f->nm + SCOPES + 1, 0, 1, 3);
	end = f->scope_b + put_scope(f->nm + SCOPES + f->scope_b, f->scope_a, 2, 2);
	CHECK(f->scope_b == 7 && end < PCS - SCOPES, "the scopes as laid out: b at %u", f->scope_b);
	put64(f->nm + 8, addr(f->nm) + 0x400); /* code begin: not read, only subtracted */
	put64(f->nm + 16, addr(f->nm + SCOPES));
	put32(f->nm + 24, META);
	put32(f->nm + 28, PCS);
	put32(f->nm + 32, PCS + 16 * 5);
	put64(f->nm + META, addr(hot->method));
	put64(f->nm + META + 8, addr(leaf->method));
	for (int i = 0; i < 5; i++) {
		put32(f->nm + PCS + 16 * i, (uint32_t)pcs[i][0]);
		put32(f->nm + PCS + 16 * i + 4, pcs[i][1] == 8 ? f->scope_b : (uint32_t)pcs[i][1]);
	}
}

static struct forged_method hot_m, leaf_m, other_m;
static struct forged_nm fnm;

/* The methods and nmethod, in the UNSIGNED5 of u5_x. */
static void forge_all(void)
{
	static const int32_t hot_lines[][2] = {{0, 10}, {3, 12}};
	static const int32_t leaf_lines[][2] = {{0, 20}, {2, 21}};

	forge_method(&hot_m, "hot", 8, hot_lines, 2);
	forge_method(&leaf_m, "leaf", 4, leaf_lines, 2);
	forge_method(&other_m, "other", 4, leaf_lines, 0);
	forge_nm(&fnm, &hot_m, &leaf_m);
}

/* hotspot_code_read of the forged nmethod; its chain at code begin + off (NULL: none). */
static const struct hotspot_chain *chain_at(const struct hotspot_code *c, uint32_t off)
{
	return c ? hotspot_code_at(c, (uint32_t)(addr(fnm.nm) + 0x400 + off)) : NULL;
}

/* The chains and lines of the forged nmethod, read by layout l. */
static void check_forged(const struct hotspot_layout *l, const char *jdk)
{
	const struct hotspot_chain *ch;
	struct hotspot_code *c;
	const char *strs;

	c = hotspot_code_read((uint32_t)getpid(), l, addr(hot_m.method), addr(fnm.nm));
	CHECK(c && c->nr_pcs == 3, "%s: forged nmethod: %u PcDescs", jdk, c ? c->nr_pcs : 0);
	if (!c || c->nr_pcs != 3)
		goto out;
	strs = hotspot_code_strs(c);
	CHECK(!strcmp(strs + c->name, "T.hot") && !strcmp(strs + c->file, "T.java"), "%s in %s",
	      strs + c->name, strs + c->file);
	/* before 0x10: its PcDesc, no scope: the method's entry line */
	ch = chain_at(c, 0x5);
	CHECK(ch && ch->line == 10 && ch->nr == 0, "at 0x5: line %u, %u levels", ch ? ch->line : 0,
	      ch ? ch->nr : 0);
	ch = chain_at(c, 0x11);
	CHECK(ch && ch->line == 12 && ch->nr == 0, "at 0x11 (scope a): line %u, %u levels",
	      ch ? ch->line : 0, ch ? ch->nr : 0);
	/* the return address of a call in leaf: exactly its PcDesc */
	ch = chain_at(c, 0x30);
	CHECK(ch && ch->line == 12 && ch->nr == 1 &&
		  !strcmp(strs + hotspot_chain_levels(c, ch)[0].name, "T.leaf") &&
		  !strcmp(strs + hotspot_chain_levels(c, ch)[0].file, "T.java") &&
		  hotspot_chain_levels(c, ch)[0].line == 21,
	      "at 0x30 (scope b): line %u, %u levels", ch ? ch->line : 0, ch ? ch->nr : 0);
	/* past the last PcDesc (the upper sentinel left out), below the code */
	CHECK(!chain_at(c, 0x31) && !chain_at(c, (uint32_t)-1), "past the PcDescs: a chain");
out:
	free(c);
}

static void test_forged_nmethod(void)
{
	struct hotspot_layout l = forged_layout();

	forge_all();
	check_forged(&l, "JDK 17");
}

/*
 * JDK 25's nmethod (its nmethod.hpp): the code begin an int offset from the
 * blob @8; the PcDescs and scopes data in a block of their own,
 * _immutable_data @40 (its int size @48): the PcDescs from the int
 * _scopes_pcs_offset @28 to _scopes_data_offset @52, the scopes data from
 * there; the metadata in CodeBlob::_mutable_data @56 (its int size @64)
 * after the relocations, _relocation_size @68 bytes.  Its UNSIGNED5 has
 * the zero byte excluded, in the scopes and line tables alike.
 */
static struct hotspot_layout forged_layout_jdk25(void)
{
	struct hotspot_layout l = forged_layout();

	l.nm_scopes_data = l.nm_metadata = l.nm_dependencies = (struct hotspot_field){0};
	l.code_relative = true;
	l.blob_code_begin = F(8, 4, HOTSPOT_F_SIGNED);
	l.nm_immutable = F(40, 8, 0);
	l.nm_immutable_size = F(48, 4, HOTSPOT_F_SIGNED);
	l.nm_scopes_data_off = F(52, 4, HOTSPOT_F_SIGNED);
	l.blob_mutable = F(56, 8, 0);
	l.blob_mutable_size = F(64, 4, HOTSPOT_F_SIGNED);
	l.blob_relocation_size = F(68, 4, HOTSPOT_F_SIGNED);
	l.scopes_immutable = true;
	l.vm_version = 25 << 8;
	return l;
}

static uint8_t imm25[512], mut25[64];

static void test_forged_nmethod_jdk25(void)
{
	struct hotspot_layout l = forged_layout_jdk25();
	const int32_t pcs[][2] = {{-1, 0}, {0x10, 0}, {0x20, 1}, {0x30, 8}, {INT32_MAX, 0}};
	enum { PCS25 = 16, DATA25 = PCS25 + 16 * 5, RELOC = 24 };
	uint32_t scope_b, end;

	u5_x = 1;
	forge_all();
	memset(fnm.nm, 0, sizeof(fnm.nm));
	memset(imm25, 0, sizeof(imm25));
	scope_b = 1 + put_scope(imm25 + DATA25 + 1, 0, 1, 3);
	end = scope_b + put_scope(imm25 + DATA25 + scope_b, 1, 2, 2);
	u5_x = 0;
	put32(fnm.nm + 8, 0x400);
	put64(fnm.nm + 40, addr(imm25));
	put32(fnm.nm + 48, DATA25 + end + 8);
	put32(fnm.nm + 28, PCS25);
	put32(fnm.nm + 52, DATA25);
	put64(fnm.nm + 56, addr(mut25));
	put32(fnm.nm + 64, RELOC + 16);
	put32(fnm.nm + 68, RELOC);
	put64(mut25 + RELOC, addr(hot_m.method));
	put64(mut25 + RELOC + 8, addr(leaf_m.method));
	for (int i = 0; i < 5; i++) {
		put32(imm25 + PCS25 + 16 * i, (uint32_t)pcs[i][0]);
		put32(imm25 + PCS25 + 16 * i + 4, pcs[i][1] == 8 ? scope_b : (uint32_t)pcs[i][1]);
	}
	check_forged(&l, "JDK 25");
	/* the same bytes read as JDK 17's UNSIGNED5: not these chains */
	l.vm_version = 17 << 8;
	{
		struct hotspot_code *c =
		    hotspot_code_read((uint32_t)getpid(), &l, addr(hot_m.method), addr(fnm.nm));
		const struct hotspot_chain *ch = chain_at(c, 0x30);

		CHECK(!ch || ch->nr != 1 || ch->line != 12, "JDK 25's nmethod read as JDK 17's");
		free(c);
	}
}

/* The forged nmethod broken by fn: read, its chain at 0x30 (scope b) as expected. */
static void broken(const char *what, void (*fn)(void), int want_pcs, bool want_levels)
{
	struct hotspot_layout l = forged_layout();
	const struct hotspot_chain *ch;
	struct hotspot_code *c;

	forge_all();
	fn();
	c = hotspot_code_read((uint32_t)getpid(), &l, addr(hot_m.method), addr(fnm.nm));
	ch = chain_at(c, 0x30);
	CHECK(c && !strcmp(hotspot_code_strs(c) + c->name, "T.hot") && (int)c->nr_pcs == want_pcs &&
		  (ch && ch->nr) == want_levels,
	      "%s: %s, %u PcDescs (want %d), levels at 0x30: %u", what,
	      c ? hotspot_code_strs(c) + c->name : "no code", c ? c->nr_pcs : 0, want_pcs,
	      ch ? ch->nr : 0);
	free(c);
}

static void unsorted(void)
{
	put32(fnm.nm + PCS + 16 * 3, 0x18);
}

static void method_index_out(void)
{
	fnm.nm[SCOPES + fnm.scope_b + 1] = 3; /* metadata holds 2 */
}

static void outer_not_own(void)
{
	put64(fnm.nm + META, addr(other_m.method));
}

static void sender_loop(void)
{
	fnm.nm[SCOPES + fnm.scope_b] = (uint8_t)fnm.scope_b;
}

static void sections_crossed(void)
{
	put32(fnm.nm + 32, PCS - 16);
}

static void scope_past_end(void)
{
	put32(fnm.nm + PCS + 16 * 3 + 4, 4000);
}

static void leaf_unreadable(void)
{
	put64(fnm.nm + META + 8, 0x10);
}

static void no_line_table(void)
{
	put16(leaf_m.cm + 16, 0);
}

static void test_forged_broken(void)
{
	struct hotspot_layout l = forged_layout();
	struct hotspot_code *c;

	broken("well formed", forge_all, 3, true);
	/* not PcDescs: none, the frame's method alone */
	broken("PcDescs not sorted", unsorted, 0, false);
	broken("sections crossed", sections_crossed, 0, false);
	broken("a scope past the data", scope_past_end, 0, false);
	/* one chain bad: its pcs show the method alone, the others as they are */
	broken("metadata index past the metadata", method_index_out, 3, false);
	broken("outermost method not the nmethod's", outer_not_own, 3, false);
	broken("senders in a loop", sender_loop, 3, false);
	broken("an inlined Method* unreadable", leaf_unreadable, 3, false);
	broken("no line number table", no_line_table, 3, true);
	/* no debug info in the layout: named as before */
	forge_all();
	l.scopes = false;
	c = hotspot_code_read((uint32_t)getpid(), &l, addr(hot_m.method), addr(fnm.nm));
	CHECK(c && c->nr_pcs == 0 && !chain_at(c, 0x30), "without the layout's scopes");
	free(c);
	/* the method unreadable: no code, as before */
	l = forged_layout();
	CHECK(!hotspot_code_read((uint32_t)getpid(), &l, 0x10, addr(fnm.nm)), "Method* 0x10 read");
}

/* Random bytes over the nmethod's sections, 2,000 times: no read outside (ASan), its name kept. */
static void test_forged_garbage(void)
{
	struct hotspot_layout l = forged_layout();
	int named = 0;

	for (int round = 0; round < 2000; round++) {
		struct hotspot_code *c;

		forge_all();
		for (int i = 0, n = (int)rnd_below(40) + 1; i < n; i++)
			fnm.nm[24 + rnd_below(sizeof(fnm.nm) - 24)] = (uint8_t)rnd();
		c = hotspot_code_read((uint32_t)getpid(), &l, addr(hot_m.method), addr(fnm.nm));
		named += c && !strcmp(hotspot_code_strs(c) + c->name, "T.hot");
		for (uint32_t off = 0; c && off < 0x40; off++)
			chain_at(c, off);
		free(c);
	}
	CHECK(named == 2000, "%d of 2000 garbled nmethods named", named);
}

/* The forged class name Symbol sym made anew as name, with identity hash hash at @28. */
static void remake_symbol(uint8_t *sym, const char *name, uint16_t hash)
{
	memset(sym, 0, 32);
	put16(sym, (uint16_t)strlen(name));
	memcpy(sym + 2, name, strlen(name));
	put32(sym + 28, (uint32_t)hash << 16 | 3); /* a refcount of 3 below it */
}

static uint16_t digest_of(const struct hotspot_layout *l, const struct forged_method *m)
{
	return hotspot_method_digest_now((uint32_t)getpid(), l, addr(m->method));
}

/*
 * A class unloaded and the next one's Method made at its Method's address,
 * with the same indices, and its name Symbol made where the old class's was
 * (Gen5's freed, Gen6's malloc'd there: what test_hotspot_unload's JVM does,
 * and what named a late-read frame of Gen5 "Gen6.run" while the digest
 * read only the Symbol's address): the digest tells them apart by the
 * name's last bytes, and by the Symbol's identity hash where a JDK has one
 * (names alike in their last bytes), and reads the same Method the same.
 */
static void test_interpreted_digest(void)
{
	static struct forged_method m;
	struct hotspot_layout l = forged_layout(), hashed = forged_layout();
	uint16_t d[6];

	hashed.symbol_hash = F(28, 4, 0);
	forge_method(&m, "run", 4, NULL, 0);
	remake_symbol(m.symbols[0], "Gen5", 0x1234);
	d[0] = digest_of(&l, &m);
	CHECK(d[0] && d[0] == digest_of(&l, &m), "the same Method read twice: %#x, %#x", d[0],
	      digest_of(&l, &m));
	remake_symbol(m.symbols[0], "Gen6", 0x1234);
	d[1] = digest_of(&l, &m);
	CHECK(d[1] && d[1] != d[0], "Gen5's and Gen6's Method at one address: %#x, %#x", d[0],
	      d[1]);
	remake_symbol(m.symbols[0], "com/example/Handler5", 0x1234);
	d[2] = digest_of(&l, &m);
	remake_symbol(m.symbols[0], "com/example/Handler6", 0x1234);
	d[3] = digest_of(&l, &m);
	CHECK(d[2] && d[3] && d[2] != d[3], "names that differ in their last byte: %#x, %#x", d[2],
	      d[3]);
	/* alike in length and last bytes: the identity hash, made anew with the Symbol */
	remake_symbol(m.symbols[0], "a/Handler", 0x1234);
	d[4] = digest_of(&hashed, &m);
	remake_symbol(m.symbols[0], "b/Handler", 0x4321);
	d[5] = digest_of(&hashed, &m);
	CHECK(d[4] && d[5] && d[4] != d[5], "a/Handler and b/Handler by their hashes: %#x, %#x",
	      d[4], d[5]);
	/* the refcount below the hash moves as the JVM runs: not a new Symbol */
	put32(m.symbols[0] + 28, 0x4321u << 16 | 9);
	CHECK(digest_of(&hashed, &m) == d[5], "a refcount's change read as a new Symbol");
	/* an unreadable Symbol: no digest, not one of a readable Method */
	put64(m.klass + 8, 8);
	CHECK(digest_of(&l, &m) == 0, "a Symbol at address 8 read");
}

int main(int argc, char **argv)
{
	harness_init(argc, argv);
	RUN_TEST(test_unsigned5);
	RUN_TEST(test_scopes);
	RUN_TEST(test_pcdesc_find);
	RUN_TEST(test_lines);
	RUN_TEST(test_jdk20_streams);
	RUN_TEST(test_garbage);
	RUN_TEST(test_forged_nmethod);
	RUN_TEST(test_forged_nmethod_jdk25);
	RUN_TEST(test_forged_broken);
	RUN_TEST(test_forged_garbage);
	RUN_TEST(test_interpreted_digest);
	return HARNESS_DONE();
}
