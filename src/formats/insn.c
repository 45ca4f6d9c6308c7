#include "formats/insn.h"

#include <errno.h>
#include <string.h>

#define X86_MAX_LEN 15

/* Operand shapes of an opcode: whether a ModRM byte follows and which immediate. */
enum imm_kind {
	I_NONE, I_B, I_W, I_Z,      /* 0, 1, 2, 2|4 (operand size) bytes */
	I_V,                        /* 2|4|8 (mov r, imm: REX.W gives 8) */
	I_WB,                       /* enter: iw + ib */
	I_MOFFS,                    /* 8 bytes of address (4 with 67) */
	I_GRP3,                     /* f6/f7: ib/iz only for /0 and /1 */
};

#define M 0x10u                     /* has ModRM */
#define BAD 0xffu                   /* invalid or unsupported in 64-bit code */
#define PFX 0xfeu                   /* a prefix byte, handled before the table */
#define ESC 0xfdu                   /* 0f escape / VEX / REX: handled specially */

/* One-byte opcode map: low nibble = imm_kind, M = ModRM. */
static const uint8_t MAP1[256] = {
	/* 00 */ M, M, M, M, I_B, I_Z, BAD, BAD, M, M, M, M, I_B, I_Z, BAD, ESC,
	/* 10 */ M, M, M, M, I_B, I_Z, BAD, BAD, M, M, M, M, I_B, I_Z, BAD, BAD,
	/* 20 */ M, M, M, M, I_B, I_Z, PFX, BAD, M, M, M, M, I_B, I_Z, PFX, BAD,
	/* 30 */ M, M, M, M, I_B, I_Z, PFX, BAD, M, M, M, M, I_B, I_Z, PFX, BAD,
	/* 40 */ ESC, ESC, ESC, ESC, ESC, ESC, ESC, ESC,
		 ESC, ESC, ESC, ESC, ESC, ESC, ESC, ESC,
	/* 50 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	/* 60 */ BAD, BAD, BAD, M, PFX, PFX, PFX, PFX, I_Z, M | I_Z, I_B, M | I_B, 0, 0, 0, 0,
	/* 70 */ I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_B,
	/* 80 */ M | I_B, M | I_Z, BAD, M | I_B, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 90 */ 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, BAD, 0, 0, 0, 0, 0,
	/* a0 */ I_MOFFS, I_MOFFS, I_MOFFS, I_MOFFS, 0, 0, 0, 0, I_B, I_Z, 0, 0, 0, 0, 0, 0,
	/* b0 */ I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_V, I_V, I_V, I_V, I_V, I_V, I_V, I_V,
	/* c0 */ M | I_B, M | I_B, I_W, 0, ESC, ESC, M | I_B, M | I_Z, I_WB, 0, I_W, 0, 0, I_B,
		 BAD, 0,
	/* d0 */ M, M, M, M, BAD, BAD, BAD, 0, M, M, M, M, M, M, M, M,
	/* e0 */ I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_B, I_Z, I_Z, BAD, I_B, 0, 0, 0, 0,
	/* f0 */ PFX, 0, PFX, PFX, 0, 0, M | I_GRP3, M | I_GRP3, 0, 0, 0, 0, 0, 0, M, M,
};

/* Two-byte map (0f xx). */
static const uint8_t MAP2[256] = {
	/* 00 */ M, M, M, M, BAD, 0, 0, 0, 0, 0, BAD, 0, BAD, M, 0, BAD,
	/* 10 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 20 */ M, M, M, M, BAD, BAD, BAD, BAD, M, M, M, M, M, M, M, M,
	/* 30 */ 0, 0, 0, 0, 0, 0, BAD, 0, ESC, BAD, ESC, BAD, BAD, BAD, BAD, BAD,
	/* 40 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 50 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 60 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* 70 */ M | I_B, M | I_B, M | I_B, M | I_B, M, M, M, 0, M, M, BAD, BAD, M, M, M, M,
	/* 80 */ I_Z, I_Z, I_Z, I_Z, I_Z, I_Z, I_Z, I_Z, I_Z, I_Z, I_Z, I_Z, I_Z, I_Z, I_Z, I_Z,
	/* 90 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* a0 */ 0, 0, 0, M, M | I_B, M, BAD, BAD, 0, 0, 0, M, M | I_B, M, M, M,
	/* b0 */ M, M, M, M, M, M, M, M, M, M, M | I_B, M, M, M, M, M,
	/* c0 */ M, M, M | I_B, M, M | I_B, M | I_B, M | I_B, M, 0, 0, 0, 0, 0, 0, 0, 0,
	/* d0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* e0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
	/* f0 */ M, M, M, M, M, M, M, M, M, M, M, M, M, M, M, M,
};

/* Defined opcodes of the 0f 38 map (all take ModRM, no immediate). */
static bool map3_defined(uint8_t op)
{
	return op <= 0x0b || op == 0x10 || op == 0x14 || op == 0x15 || op == 0x17 ||
	       (op >= 0x1c && op <= 0x1e) || (op >= 0x20 && op <= 0x25) ||
	       (op >= 0x28 && op <= 0x2b) || (op >= 0x30 && op <= 0x35) ||
	       (op >= 0x37 && op <= 0x41) || (op >= 0x80 && op <= 0x82) ||
	       (op >= 0xc8 && op <= 0xcd) || (op >= 0xdb && op <= 0xdf) ||
	       op == 0xf0 || op == 0xf1 || op == 0xf5 || op == 0xf6 || op == 0xf8 || op == 0xf9;
}

/* Defined opcodes of the 0f 3a map (all take ModRM and an imm8). */
static bool map4_defined(uint8_t op)
{
	return (op >= 0x08 && op <= 0x0f) || (op >= 0x14 && op <= 0x17) ||
	       (op >= 0x20 && op <= 0x22) || (op >= 0x40 && op <= 0x42) || op == 0x44 ||
	       (op >= 0x60 && op <= 0x63) || op == 0xcc || op == 0xce || op == 0xcf ||
	       op == 0xdf;
}

struct dec {
	const uint8_t *p;
	size_t avail;
	size_t i;                   /* next byte */
	bool opsize16, addr32, rex_w, rep, vex;
	struct insn_x86_64 *o;
};

static bool byte_at(struct dec *d, uint8_t *b)
{
	if (d->i >= d->avail || d->i >= X86_MAX_LEN)
		return false;
	*b = d->p[d->i++];
	return true;
}

static bool skip(struct dec *d, size_t n)
{
	if (n > X86_MAX_LEN || d->i + n > d->avail || d->i + n > X86_MAX_LEN)
		return false;
	d->i += n;
	return true;
}

static int64_t le_signed(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;

	for (unsigned k = 0; k < n; k++)
		v |= (uint64_t)p[k] << (8 * k);
	if (n < 8 && (v >> (8 * n - 1) & 1))
		v |= ~0ull << (8 * n);
	return (int64_t)v;
}

/* ModRM, SIB and displacement. */
static bool modrm(struct dec *d)
{
	uint8_t m, sib;
	unsigned mod, rm, disp = 0;

	if (!byte_at(d, &m))
		return false;
	d->o->has_modrm = true;
	d->o->modrm = m;
	mod = m >> 6, rm = m & 7;
	if (mod == 3)
		return true;
	if (rm == 4) {
		if (!byte_at(d, &sib))
			return false;
		if (mod == 0 && (sib & 7) == 5)
			disp = 4;
	} else if (mod == 0 && rm == 5) {
		if (!skip(d, 4))
			return false;
		d->o->rip_relative = true;
		d->o->rip_disp = (int32_t)le_signed(d->p + d->i - 4, 4);
		return true;
	}
	if (mod == 1)
		disp = 1;
	else if (mod == 2)
		disp = 4;
	return skip(d, disp);
}

static unsigned imm_size(struct dec *d, unsigned kind)
{
	switch (kind) {
	case I_B:
		return 1;
	case I_W:
		return 2;
	case I_Z:
		return d->opsize16 ? 2 : 4;
	case I_V:
		return d->rex_w ? 8 : d->opsize16 ? 2 : 4;
	case I_WB:
		return 3;
	case I_MOFFS:
		return d->addr32 ? 4 : 8;
	case I_GRP3:
		if ((d->o->modrm >> 3 & 7) > 1)
			return 0;
		return (d->o->opcode & 1) ? (d->opsize16 ? 2 : 4) : 1;
	default:
		return 0;
	}
}

static bool immediate(struct dec *d, unsigned kind)
{
	unsigned n = imm_size(d, kind);

	if (!skip(d, n))
		return false;
	if (n && n != 3)
		d->o->imm = le_signed(d->p + d->i - n, n);
	return true;
}

static bool is_legacy_prefix(uint8_t b)
{
	return b == 0x66 || b == 0x67 || b == 0xf2 || b == 0xf3 || b == 0xf0 || b == 0x2e ||
	       b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65;
}

/* VEX (c4/c5) or EVEX (62) instruction, first byte already consumed.  Only
 * the 0f, 0f 38 and 0f 3a maps are accepted. */
static bool vex(struct dec *d, uint8_t first)
{
	uint8_t b1, b2, b3, op;
	unsigned map = 1;

	if (d->opsize16 || d->rep || d->o->rex)
		return false;           /* 66/f2/f3/REX before VEX is #UD */
	d->vex = true;
	if (!byte_at(d, &b1))
		return false;
	if (first == 0xc4) {
		map = b1 & 0x1f;
		if (map < 1 || map > 3 || !byte_at(d, &b2))
			return false;
	} else if (first == 0x62) {
		map = b1 & 0x7;
		if ((b1 & 0x08) || map < 1 || map > 3 || !byte_at(d, &b2) || !(b2 & 0x04) ||
		    !byte_at(d, &b3))
			return false;
	}
	if (!byte_at(d, &op))
		return false;
	d->o->map = (uint8_t)map;
	d->o->opcode = op;
	if (map == 1 && op == 0x77)
		return true;            /* vzeroupper / vzeroall: no ModRM */
	if (!modrm(d))
		return false;
	if (map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
				      (op >= 0xc4 && op <= 0xc6))))
		return skip(d, 1);
	return true;
}

/* The 0f, 0f 38 and 0f 3a maps: 0f already consumed. */
static bool two_byte(struct dec *d)
{
	uint8_t op, op3, t;

	if (!byte_at(d, &op))
		return false;
	d->o->map = 1;
	d->o->opcode = op;
	if (op == 0x38 || op == 0x3a) {
		if (!byte_at(d, &op3))
			return false;
		d->o->map = op == 0x38 ? 2 : 3;
		d->o->opcode = op3;
		if (op == 0x38 ? !map3_defined(op3) : !map4_defined(op3))
			return false;
		return modrm(d) && (op == 0x38 || immediate(d, I_B));
	}
	t = MAP2[op];
	if (t == BAD || t == ESC)
		return false;
	if ((t & M) && !modrm(d))
		return false;
	return immediate(d, t & 0x0f);
}

static bool one_byte(struct dec *d, uint8_t op)
{
	uint8_t t = MAP1[op];

	d->o->map = 0;
	d->o->opcode = op;
	if (op == 0x0f)
		return two_byte(d);
	if (op == 0xc4 || op == 0xc5 || op == 0x62)
		return vex(d, op);
	if (t == BAD || t == ESC || t == PFX)
		return false;
	if ((t & M) && !modrm(d))
		return false;
	if (op == 0x8f && (d->o->modrm >> 3 & 7))
		return false;           /* XOP */
	if ((op == 0xc6 || op == 0xc7) && (d->o->modrm >> 3 & 7) && d->o->modrm != 0xf8)
		return false;
	if (op == 0xc7 && d->o->modrm == 0xf8) {       /* xbegin rel32: a branch */
		if (d->opsize16 || !skip(d, 4))
			return false;
		d->o->imm = le_signed(d->p + d->i - 4, 4);
		return true;
	}
	return immediate(d, t & 0x0f);
}

/* Branch, return and trap facts from the decoded opcode. */
static bool classify(struct dec *d)
{
	struct insn_x86_64 *o = d->o;
	unsigned reg = o->modrm >> 3 & 7;
	uint8_t op = o->opcode;

	if (o->map == 0) {
		o->is_ret = op == 0xc3 || op == 0xc2;
		o->is_call = op == 0xe8 || (op == 0xff && (reg == 2 || reg == 3));
		o->is_jmp = op == 0xe9 || op == 0xeb || (op == 0xff && (reg == 4 || reg == 5));
		o->is_jcc = (op >= 0x70 && op <= 0x7f) || (op >= 0xe0 && op <= 0xe3) ||
			    (op == 0xc7 && o->modrm == 0xf8);        /* xbegin's abort path */
		o->is_indirect = op == 0xff && reg >= 2 && reg <= 5;
		o->has_rel_target = op == 0xe8 || op == 0xe9 || op == 0xeb || o->is_jcc;
		o->is_int3 = op == 0xcc;
		o->is_hlt = op == 0xf4;
	} else if (o->map == 1 && !d->vex) {
		o->is_jcc = op >= 0x80 && op <= 0x8f;
		o->has_rel_target = o->is_jcc;
		o->is_ud = op == 0x0b || op == 0xb9 || op == 0xff;
	}
	if (o->has_rel_target) {
		if (d->opsize16)
			return false;   /* 16-bit branch targets: behaviour differs by vendor */
		o->rel_disp = o->imm;
	}
	return true;
}

unsigned insn_x86_64_decode(const uint8_t *p, size_t avail, struct insn_x86_64 *info)
{
	struct insn_x86_64 scratch;
	struct dec d = { .p = p, .avail = avail, .o = info ? info : &scratch };
	uint8_t b;

	memset(d.o, 0, sizeof(*d.o));
	if (!p)
		return 0;
	for (;;) {
		if (!byte_at(&d, &b))
			return 0;
		if (!is_legacy_prefix(b))
			break;
		d.opsize16 |= b == 0x66;
		d.addr32 |= b == 0x67;
		d.rep |= b == 0xf2 || b == 0xf3;
	}
	if (b >= 0x40 && b <= 0x4f) {
		d.o->rex = b;
		d.rex_w = b & 8;
		if (!byte_at(&d, &b) || is_legacy_prefix(b) || (b >= 0x40 && b <= 0x4f))
			return 0;
	}
	if (!one_byte(&d, b) || !classify(&d)) {
		memset(d.o, 0, sizeof(*d.o));
		return 0;
	}
	d.o->len = (unsigned)d.i;
	return d.o->len;
}

static int boundary_x86_64(const uint8_t *func, size_t size, size_t off, struct err *err)
{
	size_t at = 0;

	while (at < off) {
		unsigned n = insn_x86_64_decode(func + at, size - at, NULL);
		if (!n)
			return err_set(err, -EILSEQ, "cannot decode the instruction at +0x%zx "
				       "(bytes %02x %02x %02x ...), so +0x%zx cannot be proven "
				       "to start one",
				       at, func[at], at + 1 < size ? func[at + 1] : 0,
				       at + 2 < size ? func[at + 2] : 0, off);
		if (at + n > off)
			return err_set(err, -EINVAL, "offset +0x%zx is inside the instruction at "
				       "+0x%zx (%u bytes)", off, at, n);
		at += n;
	}
	return 0;
}

int insn_boundary_check(enum code_arch arch, const uint8_t *func, size_t size, size_t off,
			struct err *err)
{
	if (!func || off >= size)
		return err_set(err, -ERANGE, "offset +0x%zx is outside the function (%zu bytes)",
			       off, size);
	if (arch == CODE_ARCH_ARM64) {
		if (off % 4)
			return err_set(err, -EINVAL, "offset +0x%zx is not 4-byte aligned, so "
				       "it is inside the arm64 instruction at +0x%zx", off,
				       off & ~(size_t)3);
		if (off + 4 > size)
			return err_set(err, -ERANGE, "offset +0x%zx leaves no whole instruction "
				       "before the function end (%zu bytes)", off, size);
		return 0;
	}
	return boundary_x86_64(func, size, off, err);
}
