/* codeinfo, exit_sites, oat_exits: CodeInfo bit streams built by hand for each
 * layout (170 sequential, 173-190 interleaved N=6, 191+ N=7, deduplicated
 * tables, truncation); exit sites of hand-assembled arm64 and x86_64 code
 * (literal pool and jump table holding the `ret` encoding, constant area,
 * missing epilogue, native refusals); and every compiled method of the real
 * arm64/x86_64 oat files: CodeInfo frame = the prologue's frame, stack maps
 * inside the code and at the return address of every direct call, exit sites
 * found for every method. */
#include "ut.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>

#include "formats/codeinfo.h"
#include "formats/exit_sites.h"
#include "formats/insn.h"
#include "formats/oat.h"
#include "formats/oat_dexfile.h"
#include "formats/oat_exits.h"
#include "formats/oat_methods.h"
#include "oat_testlib.h"

/* ---- a CodeInfo bit writer ------------------------------------------------ */

struct bw {
	uint8_t b[256];
	unsigned pos;               /* bits */
};

static void put(struct bw *w, uint32_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++, w->pos++)
		if (v >> i & 1)
			w->b[w->pos / 8] |= (uint8_t)(1u << (w->pos % 8));
}

static unsigned payload_bytes(uint32_t v)
{
	return v <= 11 ? 0 : v <= 0xff ? 1 : v <= 0xffff ? 2 : v <= 0xffffff ? 3 : 4;
}

static void varint(struct bw *w, uint32_t v)
{
	unsigned n = payload_bytes(v);
	put(w, n ? 11 + n : v, 4);
	if (n)
		put(w, v, 8 * n);
}

static void interleaved(struct bw *w, const uint32_t *v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		put(w, payload_bytes(v[i]) ? 11 + payload_bytes(v[i]) : v[i], 4);
	for (unsigned i = 0; i < n; i++)
		if (payload_bytes(v[i]))
			put(w, v[i], 8 * payload_bytes(v[i]));
}

/* A StackMap table of two rows, Kind width 2, PackedNativePc 6, DexPc 5,
 * other columns 0: rows (kind -1, pc 3, dex 4) and (kind 0 = catch, pc 9, dex 7). */
static void stack_maps(struct bw *w, bool interleave)
{
	uint32_t h[9] = { 2, 2, 6, 5, 0, 0, 0, 0, 0 };

	if (interleave) {
		interleaved(w, h, 9);
	} else {
		for (int i = 0; i < 9; i++)
			varint(w, h[i]);
	}
	put(w, 0, 2), put(w, 3 + 1, 6), put(w, 4 + 1, 5);
	put(w, 1, 2), put(w, 9 + 1, 6), put(w, 7 + 1, 5);
}

static void expect_rows(const struct art_stack_map *r, uint32_t n, unsigned scale)
{
	UT_EQ_INT(n, 2);
	UT_EQ_INT(r[0].kind, -1);
	UT_EQ_INT(r[0].native_pc, 3 * scale);
	UT_EQ_INT(r[0].dex_pc, 4);
	UT_EQ_INT(r[1].kind, 0);
	UT_EQ_INT(r[1].native_pc, 9 * scale);
	UT_EQ_INT(r[1].dex_pc, 7);
}

UT_TEST(codeinfo_v170_sequential_varints)
{
	struct bw w = { 0 };
	struct art_frame_info fi;
	struct art_stack_map *rows;
	uint32_t n;
	struct err e = { 0 };

	varint(&w, 3), varint(&w, 0x40600000), varint(&w, 0x300), varint(&w, 2);
	put(&w, 0, 1);              /* stack maps not deduplicated */
	stack_maps(&w, false);
	UT_EQ_INT(codeinfo_decode(170, CODE_ARCH_ARM64, w.b, sizeof(w.b), 0, &fi, &rows, &n, &e),
		  0);
	UT_EQ_INT(fi.frame_size, 48);
	UT_EQ_U64(fi.core_spill_mask, 0x40600000);
	UT_EQ_U64(fi.fp_spill_mask, 0x300);
	UT_EQ_INT(fi.num_dex_registers, 2);
	UT_EQ_INT(fi.num_stack_maps, 2);
	UT_ASSERT(!fi.frameless_leaf && !fi.has_code_size);
	expect_rows(rows, n, 4);
	free(rows);
}

UT_TEST(codeinfo_v183_interleaved_six)
{
	struct bw w = { 0 };
	uint32_t h[6] = { 1, 0, 0x40000000, 0, 1, 1 };   /* frameless, stack maps present */
	struct art_frame_info fi;
	struct art_stack_map *rows;
	uint32_t n;
	struct err e = { 0 };

	interleaved(&w, h, 6);
	stack_maps(&w, true);
	UT_EQ_INT(codeinfo_decode(183, CODE_ARCH_X86_64, w.b, sizeof(w.b), 0, &fi, &rows, &n, &e),
		  0);
	UT_EQ_INT(fi.frame_size, 0);
	UT_ASSERT(fi.frameless_leaf);
	UT_EQ_INT(fi.flags, 1);
	UT_EQ_U64(fi.core_spill_mask, 0x40000000);
	expect_rows(rows, n, 1);
	free(rows);
	/* the same stream read as a 7-varint layout is wrong or refused */
	UT_ASSERT(codeinfo_decode(199, CODE_ARCH_X86_64, w.b, sizeof(w.b), 0, &fi, NULL, NULL,
				  &e) != 0 || fi.core_spill_mask != 0x40000000);
}

UT_TEST(codeinfo_v199_code_size_and_dedup_before_the_start)
{
	struct bw w = { 0 };
	uint32_t h[7] = { 0, 200, 4, 0x40300000, 0, 3, 0x101 };  /* stack maps deduped */
	struct art_frame_info fi;
	struct art_stack_map *rows;
	uint32_t n;
	unsigned table_at = 0, ci_at, ref_at;
	struct err e = { 0 };

	stack_maps(&w, true);       /* the shared table, before this CodeInfo */
	ci_at = (w.pos + 7) / 8;
	w.pos = ci_at * 8;
	interleaved(&w, h, 7);
	ref_at = w.pos - ci_at * 8;
	varint(&w, ref_at + ci_at * 8 - table_at);
	UT_EQ_INT(codeinfo_decode(199, CODE_ARCH_ARM64, w.b, sizeof(w.b), ci_at, &fi, &rows, &n,
				  &e), 0);
	UT_EQ_INT(fi.frame_size, 64);
	UT_ASSERT(fi.has_code_size);
	UT_EQ_INT(fi.code_size, 200);
	UT_EQ_INT(fi.num_stack_maps, 2);
	expect_rows(rows, n, 4);
	free(rows);
	/* the same CodeInfo copied to the buffer start: the reference points before it */
	UT_EQ_INT(codeinfo_decode(199, CODE_ARCH_ARM64, w.b + ci_at, sizeof(w.b) - ci_at, 0, &fi,
				  NULL, NULL, &e), -EINVAL);
	UT_CONTAINS(e.msg, "points outside the data");
	/* no stack-map table at all */
	memset(&w, 0, sizeof(w));
	h[6] = 0;
	interleaved(&w, h, 7);
	UT_EQ_INT(codeinfo_decode(244, CODE_ARCH_ARM64, w.b, 16, 0, &fi, &rows, &n, &e), 0);
	UT_EQ_INT(fi.num_stack_maps, 0);
	UT_EQ_INT(n, 0);
}

UT_TEST(codeinfo_refuses_truncation_and_unknown_versions)
{
	struct bw w = { 0 };
	uint32_t h[7] = { 0, 200, 4, 0x40300000, 0, 3, 1 };
	struct art_frame_info fi;
	struct err e = { 0 };
	unsigned full;

	interleaved(&w, h, 7);
	stack_maps(&w, true);
	full = (w.pos + 7) / 8;
	UT_EQ_INT(codeinfo_decode(199, CODE_ARCH_ARM64, w.b, full, 0, &fi, NULL, NULL, &e), 0);
	for (unsigned len = 1; len < full; len++) {
		uint8_t *cut = malloc(len);     /* exact size: ASan sees any overread */
		memcpy(cut, w.b, len);
		int rc = codeinfo_decode(199, CODE_ARCH_ARM64, cut, len, 0, &fi, NULL, NULL, &e);
		free(cut);
		if (rc != -EINVAL) {
			ut_fail(__FILE__, __LINE__, "CodeInfo cut to %u of %u bytes: rc %d", len,
				full, rc);
			return;
		}
	}
	UT_EQ_INT(codeinfo_decode(171, CODE_ARCH_ARM64, w.b, full, 0, &fi, NULL, NULL, &e),
		  -ENOTSUP);
	UT_EQ_INT(codeinfo_decode(266, CODE_ARCH_ARM64, w.b, full, 0, &fi, NULL, NULL, &e),
		  -ENOTSUP);
	UT_EQ_INT(codeinfo_decode(199, CODE_ARCH_ARM64, w.b, full, full, &fi, NULL, NULL, &e),
		  -EINVAL);
}

/* ---- exit sites of hand-assembled code ----------------------------------- */

static void put_words(uint8_t *b, const uint32_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 4; k++)
			b[4 * i + k] = (uint8_t)(w[i] >> (8 * k));
}

static int a64_sites(const uint32_t *w, size_t n, int frame, struct exit_sites *s,
		     struct err *e)
{
	uint8_t b[256];

	put_words(b, w, n);
	if (frame < 0)
		return exit_sites_find(CODE_ARCH_ARM64, CODE_ART_METHOD, b, 4 * n, s, e);
	return exit_sites_find_art(CODE_ARCH_ARM64, b, 4 * n, (uint32_t)frame, s, e);
}

UT_TEST(exit_sites_arm64_skip_literal_pools_and_confirm_epilogues)
{
	static const uint32_t m[] = {
		0xf81e0fe0,             /* str x0, [sp, #-32]! */
		0xf9000ffe,             /* str x30, [sp, #24] */
		0x34000060,             /* cbz w0, +12 */
		0xf9400ffe,             /* ldr x30, [sp, #24] */
		0x910083ff,             /* add sp, sp, #32 */
		0xd65f03c0,             /* ret                      <- site +0x14 */
		0xf9400ffe,             /* ldr x30, [sp, #24] */
		0xa8c203ff,             /* ldp xzr, x0, [sp], #32 */
		0xd65f03c0,             /* ret (lr reloaded above)  <- site +0x20 */
		0x5800007f,             /* ldr xzr, #3: literal pool of 3 words */
		0xd65f03c0,             /* data that encodes `ret` */
		0x12345678,
	};
	uint32_t bad[sizeof(m) / 4];
	struct exit_sites s;
	struct err e = { 0 };

	UT_EQ_INT(a64_sites(m, 12, 32, &s, &e), 0);
	UT_EQ_INT(s.count, 2);
	UT_EQ_INT(s.offsets[0], 0x14);
	UT_EQ_INT(s.offsets[1], 0x20);
	exit_sites_free(&s);
	UT_EQ_INT(a64_sites(m, 12, -1, &s, &e), 0);     /* frame from the prologue */
	UT_EQ_INT(s.count, 2);
	exit_sites_free(&s);
	/* breakpoints: code words pass, pool words and the marker do not */
	{
		uint8_t b[48];
		put_words(b, m, 12);
		UT_EQ_INT(exit_sites_art_boundary_check(CODE_ARCH_ARM64, b, 48, 0x14, &e), 0);
		UT_EQ_INT(exit_sites_art_boundary_check(CODE_ARCH_ARM64, b, 48, 0x28, &e),
			  -EINVAL);
		UT_CONTAINS(e.msg, "offset +0x28 is data");
		UT_EQ_INT(exit_sites_art_boundary_check(CODE_ARCH_ARM64, b, 48, 0x24, &e),
			  -EINVAL);
		UT_EQ_INT(exit_sites_art_boundary_check(CODE_ARCH_ARM64, b, 48, 0x15, &e),
			  -EINVAL);
		UT_CONTAINS(e.msg, "not 4-byte aligned");
	}
	/* a CodeInfo frame that disagrees with the epilogue: refused */
	UT_EQ_INT(a64_sites(m, 12, 48, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "`ret` at +0x14 does not follow an epilogue");
	/* without the pool marker the data word is an unconfirmed `ret`: refused */
	memcpy(bad, m, sizeof(m));
	bad[9] = 0xd503201f;        /* nop */
	UT_EQ_INT(a64_sites(bad, 12, 32, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "+0x28");
	/* a pool running past the end */
	bad[9] = 0x5800009f;        /* ldr xzr, #4 */
	UT_EQ_INT(a64_sites(bad, 12, 32, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "literal pool at +0x24");
}

UT_TEST(exit_sites_arm64_prologue_after_a_class_init_check)
{
	static const uint32_t m[] = {
		0xb9400010,             /* ldr w16, [x0] */
		0x3941ce11,             /* ldrb w17, [x16, #115] */
		0x7103423f,             /* cmp w17, #208 */
		0x54000062,             /* b.hs +12 (frame entry) */
		0xf9407270,             /* ldr x16, [x19, #224] */
		0xd61f0200,             /* br x16 (resolution trampoline) */
		0xa9bf7be0,             /* stp x0, x30, [sp, #-16]! */
		0xa8c17bff,             /* ldp xzr, x30, [sp], #16 */
		0xd65f03c0,             /* ret  <- site +0x20 */
	};
	uint8_t b[sizeof(m)];
	struct exit_sites s;
	struct err e = { 0 };
	uint32_t frame;

	put_words(b, m, 9);
	UT_EQ_INT(exit_sites_prologue_frame(CODE_ARCH_ARM64, b, sizeof(b), &frame, &e), 0);
	UT_EQ_INT(frame, 16);
	UT_EQ_INT(a64_sites(m, 9, 16, &s, &e), 0);
	UT_EQ_INT(s.count, 1);
	UT_EQ_INT(s.offsets[0], 0x20);
	exit_sites_free(&s);
}

UT_TEST(exit_sites_arm64_skip_jump_tables)
{
	static const uint32_t m[] = {
		0x71000c3f,             /* cmp w1, #3 */
		0x540000a2,             /* b.hs +20 (to the ret) */
		0x100000b0,             /* adr x16, +20 (the table) */
		0xb8615a11,             /* ldr w17, [x16, w1, uxtw #2] */
		0x8b31c210,             /* add x16, x16, w17, sxtw */
		0xd61f0200,             /* br x16 */
		0xd65f03c0,             /* ret (frameless)  <- site +0x18 */
		0xd65f03c0,             /* table[0]: data that encodes `ret` */
		0x00000008, 0xfffffff4,
	};
	uint32_t bad[10];
	struct exit_sites s;
	struct err e = { 0 };

	UT_EQ_INT(a64_sites(m, 10, 0, &s, &e), 0);
	UT_EQ_INT(s.count, 1);
	UT_EQ_INT(s.offsets[0], 0x18);
	exit_sites_free(&s);
	memcpy(bad, m, sizeof(m));
	bad[0] = 0xd503201f;        /* no `cmp #n`: the table size is unknown */
	UT_EQ_INT(a64_sites(bad, 10, 0, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "jump table dispatch at +0x8");
}

UT_TEST(exit_sites_x86_64_stop_at_the_constant_area)
{
	static const uint8_t m[] = {
		0x48, 0x8b, 0x05, 0x05, 0, 0, 0,        /* mov rax, [rip+5] -> +12 */
		0xc3,                                   /* ret  <- site +7 */
		0x90, 0x90, 0x90, 0x90,                 /* padding */
		0xc3, 0xc3, 0x06, 0xff,                 /* constant area */
	};
	struct exit_sites s;
	struct err e = { 0 };
	uint8_t bad[sizeof(m)];

	UT_EQ_INT(exit_sites_find(CODE_ARCH_X86_64, CODE_ART_METHOD, m, sizeof(m), &s, &e), 0);
	UT_EQ_INT(s.count, 1);
	UT_EQ_INT(s.offsets[0], 7);
	exit_sites_free(&s);
	UT_EQ_INT(exit_sites_art_boundary_check(CODE_ARCH_X86_64, m, sizeof(m), 7, &e), 0);
	UT_EQ_INT(exit_sites_art_boundary_check(CODE_ARCH_X86_64, m, sizeof(m), 12, &e),
		  -EINVAL);
	UT_CONTAINS(e.msg, "offset +0xc is in the constant area (data) that starts at +0xc");
	UT_EQ_INT(exit_sites_art_boundary_check(CODE_ARCH_X86_64, m, sizeof(m), 3, &e),
		  -EINVAL);
	UT_CONTAINS(e.msg, "inside the instruction at +0x0 (7 bytes)");
	UT_EQ_INT(exit_sites_art_boundary_check(CODE_ARCH_X86_64, m, sizeof(m), 16, &e),
		  -ERANGE);
	memcpy(bad, m, sizeof(m));
	bad[3] = 0x10;              /* constant area beyond the end: 0x06 must be decoded */
	UT_EQ_INT(exit_sites_find(CODE_ARCH_X86_64, CODE_ART_METHOD, bad, sizeof(m), &s, &e),
		  -EILSEQ);
	UT_CONTAINS(e.msg, "cannot decode the instruction at +0xe");
}

UT_TEST(exit_sites_x86_64_confirm_epilogues)
{
	static const uint8_t m[] = {
		0x53,                                   /* push rbx */
		0x48, 0x83, 0xec, 0x10,                 /* sub rsp, 16 */
		0x85, 0xff, 0x74, 0x06,                 /* test edi, edi; je +6 */
		0x48, 0x83, 0xc4, 0x10,                 /* add rsp, 16 */
		0x5b, 0xc3,                             /* pop rbx; ret   <- site +0xe */
		0x48, 0x83, 0xc4, 0x10,                 /* add rsp, 16 */
		0x5b, 0xc3,                             /* pop rbx; ret   <- site +0x14 */
	};
	uint8_t bad[sizeof(m)];
	struct exit_sites s;
	struct err e = { 0 };

	UT_EQ_INT(exit_sites_find(CODE_ARCH_X86_64, CODE_ART_METHOD, m, sizeof(m), &s, &e), 0);
	UT_EQ_INT(s.count, 2);
	UT_EQ_INT(s.offsets[0], 0xe);
	UT_EQ_INT(s.offsets[1], 0x14);
	exit_sites_free(&s);
	UT_EQ_INT(exit_sites_find_art(CODE_ARCH_X86_64, m, sizeof(m), 32, &s, &e), 0);
	exit_sites_free(&s);
	UT_EQ_INT(exit_sites_find_art(CODE_ARCH_X86_64, m, sizeof(m), 48, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "`ret` at +0xe does not follow an epilogue that removes the 48-byte");
	memcpy(bad, m, sizeof(m));
	bad[19] = 0x90;             /* the second path forgets its pop */
	UT_EQ_INT(exit_sites_find(CODE_ARCH_X86_64, CODE_ART_METHOD, bad, sizeof(m), &s, &e),
		  -EINVAL);
	UT_CONTAINS(e.msg, "+0x14");
}

UT_TEST(exit_sites_x86_64_prologue_after_a_class_init_check)
{
	static const uint8_t m[] = {
		0x44, 0x8b, 0x1f,                       /* mov r11d, [rdi] */
		0x41, 0x80, 0x7b, 0x73, 0xd0,           /* cmp byte [r11+0x73], 0xd0 */
		0x73, 0x08,                             /* jae frame entry (+0x12) */
		0x65, 0xff, 0x24, 0x25, 0xe0, 0, 0, 0,  /* jmp gs:[0xe0] (resolution) */
		0x53,                                   /* push rbx */
		0x48, 0x83, 0xec, 0x10,                 /* sub rsp, 16 */
		0x48, 0x83, 0xc4, 0x10,                 /* add rsp, 16 */
		0x5b, 0xc3,                             /* pop rbx; ret  <- site +0x1c */
	};
	struct exit_sites s;
	struct err e = { 0 };
	uint32_t frame;

	UT_EQ_INT(exit_sites_prologue_frame(CODE_ARCH_X86_64, m, sizeof(m), &frame, &e), 0);
	UT_EQ_INT(frame, 32);
	UT_EQ_INT(exit_sites_find(CODE_ARCH_X86_64, CODE_ART_METHOD, m, sizeof(m), &s, &e), 0);
	UT_EQ_INT(s.count, 1);
	UT_EQ_INT(s.offsets[0], 0x1c);
	exit_sites_free(&s);
}

static int native(enum code_arch a, const uint8_t *b, size_t n, struct exit_sites *s,
		  struct err *e)
{
	return exit_sites_find(a, CODE_NATIVE_FUNCTION, b, n, s, e);
}

UT_TEST(exit_sites_native_refuse_what_cannot_be_proven)
{
	static const uint8_t ok[] = { 0x85, 0xff, 0x74, 0x01, 0xc3, 0x31, 0xc0, 0xf3, 0xc3 };
	static const uint8_t tail[] = { 0x85, 0xff, 0x74, 0x01, 0xc3, 0xe9, 0, 1, 0, 0 };
	static const uint8_t out[] = { 0x85, 0xff, 0x0f, 0x84, 0, 1, 0, 0, 0xc3 };
	static const uint8_t ind[] = { 0x85, 0xff, 0x74, 0x01, 0xc3, 0xff, 0xe0 };
	static const uint8_t mid[] = { 0xeb, 0x01, 0xb8, 0xc3, 0, 0, 0, 0xc3 };
	static const uint8_t und[] = { 0x55, 0x0f, 0x04, 0xc3 };
	uint8_t a[16];
	struct exit_sites s;
	struct err e = { 0 };

	UT_EQ_INT(native(CODE_ARCH_X86_64, ok, sizeof(ok), &s, &e), 0);
	UT_EQ_INT(s.count, 2);
	UT_EQ_INT(s.offsets[0], 4);
	UT_EQ_INT(s.offsets[1], 7);
	exit_sites_free(&s);
	UT_EQ_INT(native(CODE_ARCH_X86_64, tail, sizeof(tail), &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "tail call at +0x5");
	UT_EQ_INT(native(CODE_ARCH_X86_64, out, sizeof(out), &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "jump out of the function at +0x2");
	UT_EQ_INT(native(CODE_ARCH_X86_64, ind, sizeof(ind), &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "indirect jump at +0x5");
	UT_EQ_INT(native(CODE_ARCH_X86_64, mid, sizeof(mid), &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "a branch lands at +0x3, inside an instruction");
	UT_EQ_INT(native(CODE_ARCH_X86_64, und, sizeof(und), &s, &e), -EILSEQ);
	UT_CONTAINS(e.msg, "cannot decode the instruction at +0x1");

	put_words(a, (const uint32_t[]){ 0x34000040, 0xd65f03c0, 0xd65f03c0, 0xd503201f }, 4);
	UT_EQ_INT(native(CODE_ARCH_ARM64, a, 16, &s, &e), 0);
	UT_EQ_INT(s.count, 2);
	exit_sites_free(&s);
	put_words(a, (const uint32_t[]){ 0x34000040, 0xd65f03c0, 0x14000100, 0xd503201f }, 4);
	UT_EQ_INT(native(CODE_ARCH_ARM64, a, 16, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "tail call at +0x8");
	put_words(a, (const uint32_t[]){ 0x34000400, 0xd65f03c0, 0xd503201f, 0xd503201f }, 4);
	UT_EQ_INT(native(CODE_ARCH_ARM64, a, 16, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "jump out of the function at +0x0");
	put_words(a, (const uint32_t[]){ 0xd61f0200, 0xd65f03c0, 0xd503201f, 0xd503201f }, 4);
	UT_EQ_INT(native(CODE_ARCH_ARM64, a, 16, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "indirect jump at +0x0");
	UT_EQ_INT(native(CODE_ARCH_ARM64, a, 0, &s, &e), -EINVAL);
}

/* arm64: the scan keeps the branches out (for plan/exits_tail.c) and says
 * whether sp is written anywhere; x86_64 still refuses a tail jmp. */
UT_TEST(exit_sites_scan_native_keeps_arm64_tail_branches)
{
	/* bionic's write: mov x8,#64; svc #0; cmn x0,#1,lsl #12; cneg x0,x0,hi;
	 * b.hi .-0x4fc; ret */
	static const uint32_t wrapper[] = { 0xd2800808, 0xd4000001, 0xb140041f, 0xda809400,
					    0x54ffd828, 0xd65f03c0 };
	static const uint8_t x86_tail[] = { 0x31, 0xc0, 0xe9, 0x00, 0x10, 0x00, 0x00 };
	uint8_t a[4 * 6];
	struct exit_scan sc;
	struct err e = { 0 };

	put_words(a, wrapper, 6);
	UT_EQ_INT(exit_sites_scan_native(CODE_ARCH_ARM64, a, sizeof(a), &sc, &e), 0);
	UT_EQ_INT(sc.sites.count, 1);
	UT_EQ_INT(sc.sites.count ? sc.sites.offsets[0] : 0, 20);
	UT_EQ_INT(sc.n_tails, 1);
	UT_EQ_INT(sc.n_tails ? sc.tails[0].at : 0, 16);
	UT_ASSERT(sc.n_tails && sc.tails[0].conditional && sc.tails[0].target == 16 - 0x4fc);
	UT_ASSERT(!sc.moves_sp);
	exit_scan_free(&sc);
	UT_EQ_INT(exit_sites_scan_native(CODE_ARCH_X86_64, x86_tail, sizeof(x86_tail), &sc, &e),
		  -EINVAL);
	UT_CONTAINS(e.msg, "tail call at +0x2");
}

struct sp_case {
	uint32_t w;
	bool writes;
	const char *what;
};

/* Each instruction, then ret: whether the scan says it writes sp (there). */
static void check_sp_writes(const struct sp_case *cases, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t a[8];
		struct exit_scan sc;
		struct err e = { 0 };

		put_words(a, (const uint32_t[]){ cases[i].w, 0xd65f03c0 }, 2);
		UT_EQ_INT(exit_sites_scan_native(CODE_ARCH_ARM64, a, sizeof(a), &sc, &e), 0);
		if (sc.moves_sp != cases[i].writes)
			fprintf(stderr, "%s: moves_sp %d\n", cases[i].what, sc.moves_sp);
		UT_ASSERT(sc.moves_sp == cases[i].writes && (!sc.moves_sp || !sc.sp_write_at));
		exit_scan_free(&sc);
	}
}

/* Every way an arm64 instruction writes sp, and look-alikes that only read it. */
UT_TEST(exit_sites_scan_native_sees_every_sp_write)
{
	static const struct sp_case cases[] = {
		{ 0xa9bf7bfd, true, "stp x29, x30, [sp, #-16]!" },
		{ 0xa8c17bfd, true, "ldp x29, x30, [sp], #16" },
		{ 0xd10043ff, true, "sub sp, sp, #16" },
		{ 0x910043ff, true, "add sp, sp, #16" },
		{ 0x9100001f, true, "mov sp, x0" },
		{ 0xcb2063ff, true, "sub sp, sp, x0 (extended)" },
		{ 0x927cebff, true, "and sp, xzr, #~15" },
		{ 0xf81f0fe0, true, "str x0, [sp, #-16]!" },
		{ 0xf84107e0, true, "ldr x0, [sp], #16" },
		{ 0x3cdf0fe0, true, "ldr q0, [sp, #-16]!" },
		{ 0x4cdf73e0, true, "ld1 {v0.16b}, [sp], #16" },
		{ 0xa9017bfd, false, "stp x29, x30, [sp, #16]" },
		{ 0x910003fd, false, "mov x29, sp" },
		{ 0xeb2063ff, false, "cmp sp, x0" },
		{ 0xf94007e0, false, "ldr x0, [sp, #8]" },
		{ 0xf81f83e0, false, "stur x0, [sp, #-8]" },
		{ 0xb100041f, false, "cmn x0, #1" },
		{ 0xaa0003ff, false, "mov xzr, x0 (orr, register: xzr)" },
	};

	check_sp_writes(cases, sizeof(cases) / sizeof(cases[0]));
}

/* The sp writes of the extensions: SVE/SME stack adjustment (Rd = sp) and
 * FEAT_LRCPC3's writeback forms; a tail branch after one of them must not
 * count as leaving with the entry's sp. */
UT_TEST(exit_sites_scan_native_sees_sp_writes_of_extensions)
{
	static const struct sp_case cases[] = {
		{ 0x043f57df, true, "addvl sp, sp, #-2" },
		{ 0x047f507f, true, "addpl sp, sp, #3" },
		{ 0x043f583f, true, "addsvl sp, sp, #1" },
		{ 0x047f583f, true, "addspl sp, sp, #1" },
		{ 0x99010be0, true, "stilp w0, w1, [sp, #-8]!" },
		{ 0x99c00be0, true, "ldapr w0, [sp], #4 (FEAT_LRCPC3)" },
		{ 0x02000000, true, "unallocated (op0 0001): not known not to" },
		{ 0x060003ff, true, "unallocated (op0 0011): not known not to" },
		{ 0x043f5020, false, "addvl x0, sp, #1" },
		{ 0x994003e0, false, "ldapur w0, [sp]" },
	};

	check_sp_writes(cases, sizeof(cases) / sizeof(cases[0]));
}

/* FEAT_HBC's bc.cond is a conditional branch like b.cond: out of the
 * function it is a way out, refused (kept as a tail by the scan). */
UT_TEST(exit_sites_arm64_bc_cond_out_of_the_function_is_a_jump_out)
{
	uint8_t a[16];
	struct exit_sites s;
	struct exit_scan sc;
	struct err e = { 0 };

	/* bc.eq .+0x80; ret; nop; nop */
	put_words(a, (const uint32_t[]){ 0x54000410, 0xd65f03c0, 0xd503201f, 0xd503201f }, 4);
	UT_EQ_INT(native(CODE_ARCH_ARM64, a, 16, &s, &e), -EINVAL);
	UT_CONTAINS(e.msg, "jump out of the function at +0x0");
	UT_EQ_INT(exit_sites_scan_native(CODE_ARCH_ARM64, a, sizeof(a), &sc, &e), 0);
	UT_EQ_INT(sc.n_tails, 1);
	UT_ASSERT(sc.n_tails && sc.tails[0].conditional && sc.tails[0].target == 0x80);
	exit_scan_free(&sc);
}

/* ---- every compiled method of the real files ------------------------------ */

struct real_stats {
	unsigned long methods, ranges, frame_eq, maps, calls, calls_mapped, exits, sites;
	unsigned long bad;
	char first_bad[512];
};

static void real_bad(struct real_stats *st, const char *what, uint32_t code_offset,
		     unsigned long a, unsigned long b)
{
	st->bad++;
	if (!st->first_bad[0])
		snprintf(st->first_bad, sizeof(st->first_bad), "code 0x%x: %s (%lu vs %lu)",
			 code_offset, what, a, b);
}

static bool has_map_at(const struct art_stack_map *r, uint32_t n, uint32_t pc)
{
	for (uint32_t i = 0; i < n; i++)
		if (r[i].native_pc == pc && r[i].kind != 0)
			return true;
	return false;
}

/* Calls into managed code (arm64 `bl`; x86_64 `call rel32` and `call [rdi+disp]`,
 * the callee ArtMethod's entry point) and whether a stack map sits at their
 * return address, as ART records for every such call. */
static void check_calls(struct real_stats *st, enum code_arch a, const uint8_t *code,
			uint32_t size, const struct art_stack_map *r, uint32_t n)
{
	if (a == CODE_ARCH_ARM64) {
		for (uint32_t i = 0; i + 4 <= size; i += 4)
			if ((a64_word(code + i) & 0xfc000000u) == 0x94000000u) {
				st->calls++;
				st->calls_mapped += has_map_at(r, n, i + 4);
			}
		return;
	}
	for (uint32_t at = 0; at < size;) {
		struct insn_x86_64 in;
		unsigned len = insn_x86_64_decode(code + at, size - at, &in);
		if (!len)
			break;
		/* call rel32, or call [rdi + disp]: the callee ArtMethod's entry point */
		if (in.is_call && (in.has_rel_target || (in.is_indirect && !in.rex &&
		    (in.modrm == 0x57 || in.modrm == 0x97)))) {
			st->calls++;
			st->calls_mapped += has_map_at(r, n, at + len);
		}
		at += len;
	}
}

static void check_method(struct real_stats *st, const struct oat_file *o, enum code_arch a,
			 const struct oat_method *m)
{
	const struct oat_code *c = &m->code;
	uint64_t len;
	const uint8_t *code = oat_region(o, &len) + c->code_offset;
	struct art_frame_info fi;
	struct art_stack_map *r;
	struct oat_method_exits x;
	uint32_t n, pro;
	struct err e = { 0 };

	st->ranges++;
	if (oat_code_frame_info(o, c, &fi, &r, &n, &e)) {
		real_bad(st, e.msg, c->code_offset, 0, 0);
		return;
	}
	if (exit_sites_prologue_frame(a, code, c->code_size, &pro, &e) || pro != fi.frame_size)
		real_bad(st, "CodeInfo frame != prologue frame", c->code_offset, fi.frame_size,
			 pro);
	else
		st->frame_eq++;
	st->maps += n;
	for (uint32_t i = 0; i < n; i++)
		if (r[i].native_pc > c->code_size || (a == CODE_ARCH_ARM64 && r[i].native_pc % 4) ||
		    (i && r[i].kind != 0 && r[i - 1].kind != 0 &&
		     r[i].native_pc < r[i - 1].native_pc))
			real_bad(st, "stack map pc outside, unaligned or unsorted", c->code_offset,
				 r[i].native_pc, c->code_size);
	if (!(m->access_flags & 0x100))        /* JNI stubs record no stack maps */
		check_calls(st, a, code, c->code_size, r, n);
	free(r);
	oat_method_exits_get(o, c, &x);
	if (x.exits_rc)
		real_bad(st, x.exits_err.msg, c->code_offset, 0, 0);
	else
		st->exits++, st->sites += x.sites.count;
	if (exit_sites_art_boundary_check(a, code, c->code_size, 0, &e))
		real_bad(st, e.msg, c->code_offset, 0, 0);
	for (uint32_t i = 0; i < x.sites.count; i++)
		if (exit_sites_art_boundary_check(a, code, c->code_size, x.sites.offsets[i], &e))
			real_bad(st, e.msg, c->code_offset, x.sites.offsets[i], 0);
	oat_method_exits_free(&x);
}

static void check_real_file(const char *rel, struct real_stats *total)
{
	struct oat_file *o;
	struct oat_dexset *ds;
	struct oat_method_list l;
	struct real_stats st = { 0 };
	enum code_arch a;
	struct err e = { 0 };

	UT_EQ_INT(oat_open(ut_testdata(rel), &o, &e), 0);
	if (oat_code_arch(o, &a, &e)) {
		oat_close(o);
		return;
	}
	UT_EQ_INT(oat_dexset_new(o, ut_testdata(rel), NULL, 0, &ds, &e), 0);
	UT_EQ_INT(oat_list_methods(o, ds, &l, &e), 0);
	st.methods = l.n;
	for (size_t i = 0; i < l.n; i++)
		if (l.v[i].dedup_first == i)
			check_method(&st, o, a, &l.v[i]);
	printf("    %s: %lu methods, %lu code ranges, frame = prologue %lu, stack maps %lu, "
	       "managed calls %lu with a stack map at the return address %lu, exit sites found "
	       "for %lu ranges (%lu sites), problems %lu%s%s\n", rel, st.methods, st.ranges,
	       st.frame_eq, st.maps, st.calls, st.calls_mapped, st.exits, st.sites, st.bad,
	       st.bad ? ": first " : "", st.first_bad);
	oat_method_list_free(&l);
	oat_dexset_free(ds);
	oat_close(o);
	total->ranges += st.ranges, total->frame_eq += st.frame_eq, total->bad += st.bad;
	total->calls += st.calls, total->calls_mapped += st.calls_mapped;
	total->exits += st.exits;
}

UT_TEST(codeinfo_every_compiled_method_of_the_real_files)
{
	struct real_stats t = { 0 };

	for (size_t i = 0; i < sizeof(TD_COMPILED) / sizeof(TD_COMPILED[0]); i++)
		check_real_file(TD_COMPILED[i], &t);
	UT_ASSERT(t.ranges > 3000);
	UT_EQ_INT(t.bad, 0);
	UT_EQ_INT(t.frame_eq, t.ranges);
	UT_EQ_INT(t.exits, t.ranges);
	UT_EQ_INT(t.calls_mapped, t.calls);
}

/* oat_method_exits_in over the file at path, opened for the call. */
static int exits_at(const char *path, uint64_t off, struct oat_method_exits *x, struct err *e)
{
	struct oat_file *o;
	int rc;

	memset(x, 0, sizeof(*x));
	if ((rc = oat_open(path, &o, e)))
		return rc;
	rc = oat_method_exits_in(o, off, x, e);
	oat_close(o);
	return rc;
}

UT_TEST(oat_method_exits_at_a_resolved_file_offset)
{
	const char *f = ut_testdata(TD_A13 "com.android.location.provider.odex");
	struct oat_method_exits x;
	struct err e = { 0 };

	UT_EQ_INT(exits_at(f, 0x4010, &x, &e), 0);
	UT_EQ_INT(x.frame_rc, 0);
	UT_EQ_INT(x.frame.frame_size, 64);
	UT_EQ_INT(x.frame.num_stack_maps, 6);
	UT_EQ_INT(x.exits_rc, 0);
	UT_EQ_INT(x.sites.count, 1);
	UT_EQ_U64(x.code_file_offset + x.sites.offsets[0], 16476);
	oat_method_exits_free(&x);
	UT_ASSERT(exits_at(f, 0x4014, &x, &e) < 0);    /* not a method start */
	UT_ASSERT(exits_at(f, 0x10, &x, &e) < 0);
	UT_CONTAINS(e.msg, "not inside the oat data");
	UT_ASSERT(exits_at(ut_testdata(TD_A11X86 "com.android.location.provider.odex"),
			   0x1000, &x, &e) < 0 || x.frame_rc == -ENOTSUP);
	oat_method_exits_free(&x);
}
