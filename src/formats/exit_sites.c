#include "formats/exit_sites.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

#define MAX_CODE_SIZE (16u << 20)   /* larger "functions" are refused */
#define LR_SEARCH_WORDS 32          /* how far back from `add sp`/`ldp` lr's reload may be */

struct sitebuf {
	uint32_t *v;
	uint32_t n;
	size_t cap;
};

static int push_site(struct sitebuf *b, size_t off, struct err *err)
{
	if (grow_array(&b->v, &b->cap, (size_t)b->n + 1, 8) < 0)
		return err_set(err, -ENOMEM, "out of memory for exit sites");
	b->v[b->n++] = (uint32_t)off;
	return 0;
}

/* ---- arm64 -------------------------------------------------------------- */

static int64_t sext(uint64_t v, unsigned bits)
{
	return (int64_t)(v << (64 - bits)) >> (64 - bits);
}

static bool a64_is_ret_any(uint32_t w)
{
	return (w & 0xfffffc1fu) == 0xd65f0000u || w == 0xd65f0bffu || w == 0xd65f0fffu;
}

/* `add sp, sp, #imm` (64-bit, optionally lsl 12); the byte amount, or 0. */
static uint32_t a64_add_sp(uint32_t w)
{
	if ((w & 0xff8003ffu) != 0x910003ffu)
		return 0;
	return ((w >> 10) & 0xfff) << ((w >> 22 & 1) ? 12 : 0);
}

/* `ldp xA, xB, [sp], #imm` (64-bit post-index); true with the amount. */
static bool a64_ldp_post_sp(uint32_t w, int64_t *imm)
{
	if ((w & 0xffc003e0u) != 0xa8c003e0u)
		return false;
	*imm = sext(w >> 15 & 0x7f, 7) * 8;
	return true;
}

/* A reload of lr from [sp, #F-8]: `ldr x30, [sp, #F-8]` or `ldp xA, x30, [sp, #F-16]`. */
static bool a64_reloads_lr(uint32_t w, uint32_t frame)
{
	if ((w & 0xffc003ffu) == 0xf94003feu)
		return ((w >> 10) & 0xfff) * 8ull == (uint64_t)frame - 8;
	if ((w & 0xffc07fe0u) == 0xa9407be0u)
		return sext(w >> 15 & 0x7f, 7) * 8 == (int64_t)frame - 16;
	return false;
}

struct a64 {
	const uint8_t *code;
	size_t nwords;
	uint32_t frame;
	uint8_t *data;              /* per word: 1 = data (jump table or literal pool) */
};

static uint32_t wd(const struct a64 *a, size_t i)
{
	return a64_word(a->code + 4 * i);
}

/* The epilogue before the ret at word i tears down exactly the CodeInfo frame and reloads lr. */
static bool a64_epilogue_ok(const struct a64 *a, size_t i)
{
	uint32_t w, amount;
	int64_t post;
	size_t adj;

	if (a->frame == 0)
		return true;            /* frameless: lr still holds the return address */
	if (i == 0 || a->data[i - 1])
		return false;
	w = wd(a, i - 1);
	adj = i - 1;
	if ((amount = a64_add_sp(w))) {
		if (amount != a->frame && adj > 0 && !a->data[adj - 1] &&
		    a64_add_sp(wd(a, adj - 1)))
			amount += a64_add_sp(wd(a, --adj));
		if (amount != a->frame)
			return false;
	} else if (a64_ldp_post_sp(w, &post)) {
		if (post != a->frame)
			return false;
		if ((w & 31) == 30 || (w >> 10 & 31) == 30)
			return true;
	} else {
		return false;
	}
	for (size_t k = 1; k <= LR_SEARCH_WORDS && k <= adj && !a->data[adj - k]; k++)
		if (a64_reloads_lr(wd(a, adj - k), a->frame))
			return true;
	return false;
}

/* A packed-switch dispatch at word i: cmp wIdx,#n; b.hs; adr xT,tbl; ldr wJ,[xT,wIdx,uxtw #2];
 * add xT,xT,wJ,sxtw; br xT.  Marks the n table words as data. */
static int a64_jump_table(struct a64 *a, size_t i, struct err *err)
{
	uint32_t adr = wd(a, i), ldr, cmp, rd = adr & 31, idx, n;
	int64_t tgt;

	if (i + 3 >= a->nwords)
		return 0;
	ldr = wd(a, i + 1);
	if ((ldr & 0xffe0fc00u) != 0xb8605800u || (ldr >> 5 & 31) != rd ||
	    (wd(a, i + 2) & 0xffe0fc00u) != 0x8b20c000u || wd(a, i + 3) != (0xd61f0000u | rd << 5))
		return 0;
	idx = ldr >> 16 & 31;
	tgt = (int64_t)i * 4 + sext((uint64_t)(adr >> 5 & 0x7ffff) << 2 | (adr >> 29 & 3), 21);
	cmp = i >= 2 ? wd(a, i - 2) : 0;
	if (i < 2 || (cmp & 0xff80001fu) != 0x7100001fu || (cmp >> 5 & 31) != idx ||
	    (wd(a, i - 1) & 0xff00001fu) != 0x54000002u)
		return err_set(err, -EINVAL, "jump table dispatch at +0x%zx: no "
			       "`cmp w%u, #n; b.hs` before it gives the table size", i * 4, idx);
	n = ((cmp >> 10) & 0xfff) << ((cmp >> 22 & 1) ? 12 : 0);
	if (tgt < 0 || tgt % 4 || (uint64_t)tgt / 4 + n > a->nwords)
		return err_set(err, -EINVAL, "jump table of %u entries at +0x%llx (from the adr at "
			       "+0x%zx) lies outside the code", n, (long long)tgt, i * 4);
	memset(a->data + tgt / 4, 1, n);
	return 0;
}

/* Marks ART's data inside the code: jump tables (from their dispatch) and
 * literal pools (from their marker, in code order). */
static int a64_mark_data(struct a64 *a, struct err *err)
{
	int rc;

	for (size_t i = 0; i < a->nwords; i++)
		if ((wd(a, i) & 0x9f000000u) == 0x10000000u && (rc = a64_jump_table(a, i, err)))
			return rc;
	for (size_t i = 0; i < a->nwords; i++) {
		uint32_t w = wd(a, i);
		size_t n = w >> 5 & 0x7ffff;
		if (a->data[i] || (w & 0xff00001fu) != 0x5800001fu)
			continue;               /* not `ldr xzr, #n`, the literal pool marker */
		if (n == 0 || n > a->nwords - i)
			return err_set(err, -EINVAL, "literal pool at +0x%zx claims %zu words, "
				       "past the code end", i * 4, n);
		memset(a->data + i, 1, n);
		i += n - 1;
	}
	return 0;
}

static int a64_art(struct a64 *a, struct sitebuf *b, struct err *err)
{
	int rc;

	if ((rc = a64_mark_data(a, err)))
		return rc;
	for (size_t i = 0; i < a->nwords; i++) {
		uint32_t w = wd(a, i);
		if (a->data[i] || !a64_is_ret_any(w))
			continue;
		if (w != A64_RET)
			return err_set(err, -EINVAL, "return at +0x%zx is not `ret` (0x%08x), "
				       "which ART does not emit", i * 4, w);
		if (!a64_epilogue_ok(a, i))
			return err_set(err, -EINVAL, "`ret` at +0x%zx does not follow an epilogue "
				       "that removes the %u-byte frame and reloads lr", i * 4,
				       a->frame);
		if ((rc = push_site(b, i * 4, err)))
			return rc;
	}
	return 0;
}

/* Branch target (byte offset) of an arm64 direct branch at word i; false if not one.
 * *uncond: B (a tail call when it leaves the function). */
static bool a64_branch(uint32_t w, size_t i, int64_t *tgt, bool *uncond)
{
	*uncond = false;
	if ((w & 0xfc000000u) == 0x14000000u) {
		*uncond = true;
		*tgt = (int64_t)i * 4 + sext(w & 0x3ffffff, 26) * 4;
	} else if ((w & 0xff000000u) == 0x54000000u ||          /* b.cond, bc.cond (HBC) */
		   (w & 0x7e000000u) == 0x34000000u) {
		*tgt = (int64_t)i * 4 + sext(w >> 5 & 0x7ffff, 19) * 4;
	} else if ((w & 0x7e000000u) == 0x36000000u) {
		*tgt = (int64_t)i * 4 + sext(w >> 5 & 0x3fff, 14) * 4;
	} else {
		return false;
	}
	return true;
}

/* Whether the instruction writes sp (register 31 as sp, not xzr): add/sub
 * (immediate, extended register), addg/subg, logical immediate, irg and
 * SVE/SME addvl/addpl/addsvl/addspl with Rd = sp, and a load or store that
 * writes its base back when the base is sp (pair and register
 * pre/post-index, ldraa/ldrab with writeback, SIMD structure post-index, MTE
 * stg pre/post-index; the whole FEAT_LRCPC3 class, whose ldiapp/stilp and
 * ldapr/stlr forms write back). */
static bool a64_writes_sp(uint32_t w)
{
	bool rd_sp = (w & 31) == 31, rn_sp = (w >> 5 & 31) == 31;

	if ((w >> 25 & 0xd) == 1)      /* op0 0001/0011, unallocated: not known not to */
		return true;
	if (rd_sp && (w & 0x3f800000u) == 0x11000000u)         /* add/sub imm, S = 0 */
		return true;
	if (rd_sp && (w & 0xffa0f000u) == 0x04205000u)         /* addvl/addpl/addsvl/addspl */
		return true;
	if (rd_sp && (w & 0x3f800000u) == 0x11800000u)         /* addg/subg */
		return true;
	if (rd_sp && (w & 0x3fe00000u) == 0x0b200000u)         /* add/sub ext, S = 0 */
		return true;
	if (rd_sp && (w & 0x1f800000u) == 0x12000000u && (w >> 29 & 3) != 3)
		return true;                                    /* and/orr/eor imm */
	if (rd_sp && (w & 0xffe0fc00u) == 0x9ac01000u)         /* irg */
		return true;
	if (!rn_sp)
		return false;
	return (w & 0x3b800000u) == 0x28800000u ||             /* ldp/stp post-index */
	       (w & 0x3b800000u) == 0x29800000u ||             /* ldp/stp pre-index */
	       ((w & 0x3b200000u) == 0x38000000u && (w >> 10 & 1)) || /* ldr/str pre/post */
	       (w & 0xff200c00u) == 0xf8200c00u ||             /* ldraa/ldrab pre-index */
	       (w & 0xbf800000u) == 0x0c800000u ||             /* ld1..4/st1..4 post */
	       (w & 0xbf800000u) == 0x0d800000u ||             /* single structure post */
	       ((w & 0xff200000u) == 0xd9200000u && (w >> 10 & 1)) || /* stg pre/post */
	       (w & 0xbf200c00u) == 0x99000800u;               /* FEAT_LRCPC3 */
}

static int push_tail(struct exit_scan *scan, size_t at, int64_t target, bool conditional,
		     struct err *err)
{
	if (grow_array(&scan->tails, &scan->tails_cap, (size_t)scan->n_tails + 1, 4) < 0)
		return err_set(err, -ENOMEM, "out of memory for tail branches");
	scan->tails[scan->n_tails++] = (struct exit_tail){ (uint32_t)at, target, conditional };
	return 0;
}

/* scan: NULL refuses every branch out of the function; else each direct one
 * is kept there (for plan/exits_tail.c to prove), as is whether sp moves. */
static int a64_native(const struct a64 *a, struct sitebuf *b, struct exit_scan *scan,
		      struct err *err)
{
	for (size_t i = 0; i < a->nwords; i++) {
		uint32_t w = wd(a, i);
		int64_t t;
		bool uncond;
		int rc;

		if (scan && !scan->moves_sp && a64_writes_sp(w)) {
			scan->moves_sp = true;
			scan->sp_write_at = (uint32_t)(i * 4);
		}
		/* bl, blr, blraa/blrab/blraaz/blrabz */
		if (scan && !scan->calls && ((w & 0xfc000000u) == 0x94000000u ||
					     (w & 0xfffffc1fu) == 0xd63f0000u ||
					     (w & 0xfefff800u) == 0xd63f0800u)) {
			scan->calls = true;
			scan->call_at = (uint32_t)(i * 4);
		}
		if (a64_is_ret_any(w)) {
			if ((rc = push_site(b, i * 4, err)))
				return rc;
		} else if ((w & 0xfffffc1fu) == 0xd61f0000u || (w & 0xfefff800u) == 0xd61f0800u) {
			return err_set(err, -EINVAL, "indirect jump at +0x%zx (br): its targets "
				       "cannot be bounded", i * 4);
		} else if (w == 0xd69f03e0u) {
			return err_set(err, -EINVAL, "exception return at +0x%zx", i * 4);
		} else if (a64_branch(w, i, &t, &uncond) &&
			   (t < 0 || (uint64_t)t >= a->nwords * 4)) {
			if (scan) {
				if ((rc = push_tail(scan, i * 4, t, !uncond, err)))
					return rc;
				continue;
			}
			return err_set(err, -EINVAL, "%s at +0x%zx (to %+lld from the function "
				       "start)", uncond ? "tail call" : "jump out of the function",
				       i * 4, (long long)t);
		}
	}
	return 0;
}

static int find_arm64(enum code_kind kind, const uint8_t *code, size_t size, uint32_t frame,
		      struct sitebuf *b, struct exit_scan *scan, struct err *err)
{
	struct a64 a = { .code = code, .nwords = size / 4, .frame = frame };
	int rc;

	if (size % 4)
		return err_set(err, -EINVAL, "arm64 code size %zu is not a multiple of 4", size);
	a.data = calloc(a.nwords ? a.nwords : 1, 1);
	if (!a.data)
		return err_set(err, -ENOMEM, "out of memory for %zu code words", a.nwords);
	rc = kind == CODE_ART_METHOD ? a64_art(&a, b, err) : a64_native(&a, b, scan, err);
	free(a.data);
	return rc;
}

/* ---- x86_64 ------------------------------------------------------------- */

static int x86_undecodable(const uint8_t *code, size_t size, size_t at, struct err *err)
{
	return err_set(err, -EILSEQ, "cannot decode the instruction at +0x%zx (bytes %02x %02x "
		       "%02x ...)", at, code[at], at + 1 < size ? code[at + 1] : 0,
		       at + 2 < size ? code[at + 2] : 0);
}

#define X86_HIST 8                  /* > 6 pops + add rsp */

static bool x86_is_pop_reg(const struct insn_x86_64 *in)
{
	return in->map == 0 && in->opcode >= 0x58 && in->opcode <= 0x5f &&
	       (!in->rex || (in->rex & 0xfe) == 0x40);
}

/* The epilogue before a ret removes exactly the frame: pops, before them an
 * optional `add rsp, N`, with 8 * pops + N + 8 (the return address) = frame.
 * hist[0] is the instruction just before the ret. */
static bool x86_epilogue_ok(const struct insn_x86_64 *hist, unsigned n, uint32_t frame)
{
	uint64_t amount = 8;
	unsigned k = 0;

	if (frame == 0)
		return true;            /* frameless: [rsp] holds the return address */
	while (k < n && x86_is_pop_reg(&hist[k]))
		amount += 8, k++;
	if (k < n && hist[k].map == 0 && (hist[k].opcode == 0x83 || hist[k].opcode == 0x81) &&
	    hist[k].rex == 0x48 && hist[k].modrm == 0xc4 && hist[k].imm > 0)
		amount += (uint64_t)hist[k].imm;
	return amount == frame;
}

/* ART: linear decode from the start, stopping at the lowest RIP-relative target
 * inside the method (the constant area ART appends after the code); each ret
 * must follow an epilogue that removes the frame. */
static int x86_art(const uint8_t *code, size_t size, uint32_t frame, struct sitebuf *b,
		   struct err *err)
{
	size_t limit = size, at = 0;
	struct insn_x86_64 in, hist[X86_HIST];
	unsigned nhist = 0;
	int rc;

	while (at < limit) {
		unsigned n = insn_x86_64_decode(code + at, size - at, &in);
		if (!n)
			return x86_undecodable(code, size, at, err);
		if (at + n > limit)
			return err_set(err, -EINVAL, "the instruction at +0x%zx (%u bytes) runs "
				       "into the constant area at +0x%zx", at, n, limit);
		if (in.rip_relative) {
			int64_t t = (int64_t)(at + n) + in.rip_disp;
			if (t >= (int64_t)(at + n) && t < (int64_t)limit)
				limit = (size_t)t;
		}
		if (in.is_ret && !x86_epilogue_ok(hist, nhist, frame))
			return err_set(err, -EINVAL, "`ret` at +0x%zx does not follow an epilogue "
				       "that removes the %u-byte frame", at, frame);
		if (in.is_ret && (rc = push_site(b, at, err)))
			return rc;
		memmove(hist + 1, hist, sizeof(hist[0]) * (X86_HIST - 1));
		hist[0] = in;
		nhist += nhist < X86_HIST;
		at += n;
	}
	return 0;
}

static int x86_branch_check(const struct insn_x86_64 *in, size_t at, size_t size,
			    struct err *err)
{
	int64_t t = (int64_t)(at + in->len) + in->rel_disp;

	if (in->opcode == 0xca || in->opcode == 0xcb || in->opcode == 0xcf)
		if (in->map == 0)
			return err_set(err, -EINVAL, "far return at +0x%zx", at);
	if (in->is_jmp && in->is_indirect)
		return err_set(err, -EINVAL, "indirect jump at +0x%zx: its targets cannot be "
			       "bounded (a tail call or a jump table)", at);
	if (!in->has_rel_target || in->is_call || (t >= 0 && t < (int64_t)size))
		return 0;
	return err_set(err, -EINVAL, "%s at +0x%zx (to %+lld from the function start)",
		       in->is_jmp ? "tail call" : "jump out of the function", at, (long long)t);
}

/* Native: every byte decodes, every direct branch lands on an instruction start
 * inside the function, no tail call, no indirect jump. */
static int x86_native(const uint8_t *code, size_t size, struct sitebuf *b, struct err *err)
{
	uint8_t *start = calloc(size + 1, 1);
	size_t at = 0, nt = 0;
	uint32_t *targets = calloc(size + 1, sizeof(*targets));
	struct insn_x86_64 in;
	int rc = 0;

	if (!start || !targets) {
		rc = err_set(err, -ENOMEM, "out of memory for %zu code bytes", size);
		goto out;
	}
	while (at < size && !rc) {
		unsigned n = insn_x86_64_decode(code + at, size - at, &in);
		if (!n) {
			rc = x86_undecodable(code, size, at, err);
			break;
		}
		start[at] = 1;
		if (!(rc = x86_branch_check(&in, at, size, err)) && in.has_rel_target &&
		    !in.is_call)
			targets[nt++] = (uint32_t)((int64_t)(at + n) + in.rel_disp);
		if (!rc && in.is_ret)
			rc = push_site(b, at, err);
		at += n;
	}
	for (size_t i = 0; i < nt && !rc; i++)
		if (!start[targets[i]])
			rc = err_set(err, -EINVAL, "a branch lands at +0x%x, inside an instruction",
				     targets[i]);
out:
	free(start);
	free(targets);
	return rc;
}

/* ---- prologue frame ----------------------------------------------------- */

/* `sub sp, sp, #n`, `stp xA, xB, [sp, #-n]!` or `str xA, [sp, #-n]!`: n, else 0. */
static uint32_t a64_push_amount(uint32_t w)
{
	if ((w & 0xff8003ffu) == 0xd10003ffu)
		return ((w >> 10) & 0xfff) << ((w >> 22 & 1) ? 12 : 0);
	if ((w & 0xffc003e0u) == 0xa98003e0u && sext(w >> 15 & 0x7f, 7) < 0)
		return (uint32_t)(-sext(w >> 15 & 0x7f, 7) * 8);
	if ((w & 0xffe00fe0u) == 0xf8000fe0u && sext(w >> 12 & 0x1ff, 9) < 0)
		return (uint32_t)-sext(w >> 12 & 0x1ff, 9);
	return 0;
}

static int prologue_arm64(const uint8_t *code, size_t size, uint32_t *frame)
{
	size_t n = size / 4;

	*frame = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t w = a64_word(code + 4 * i), a = a64_push_amount(w);
		if (a64_is_ret_any(w))
			return 0;
		if (!a)
			continue;
		*frame = a;
		/* a large frame may take a second `sub sp` */
		while (++i < n && (a = a64_push_amount(a64_word(code + 4 * i))) &&
		       (a64_word(code + 4 * i) & 0xff8003ffu) == 0xd10003ffu)
			*frame += a;
		return 0;
	}
	return 0;
}

static bool x86_is_push_reg(const struct insn_x86_64 *in)
{
	return in->map == 0 && in->opcode >= 0x50 && in->opcode <= 0x57 && in->len <= 2 &&
	       (!in->rex || (in->rex & 0xfe) == 0x40);
}

static bool x86_is_sub_rsp(const struct insn_x86_64 *in)
{
	return in->map == 0 && (in->opcode == 0x83 || in->opcode == 0x81) && in->rex == 0x48 &&
	       in->modrm == 0xec && in->imm > 0;
}

/* The first run of register pushes, and the `sub rsp, N` right after it (or a
 * lone `sub rsp, N`), before the first `ret`.  The Android 14+ class-init check
 * before the frame ends in a `jmp` to the resolution stub: the scan goes on. */
static int prologue_x86_64(const uint8_t *code, size_t size, uint32_t *frame, struct err *err)
{
	size_t at = 0;
	uint32_t pushes = 0;
	struct insn_x86_64 in;

	*frame = 0;
	while (at < size) {
		unsigned n = insn_x86_64_decode(code + at, size - at, &in);
		if (!n)
			return x86_undecodable(code, size, at, err);
		if (in.is_ret)
			break;
		if (x86_is_push_reg(&in)) {
			pushes++;
		} else if (x86_is_sub_rsp(&in)) {
			*frame = 8 * pushes + (uint32_t)in.imm + 8;
			return 0;
		} else if (pushes) {
			break;
		}
		at += n;
	}
	if (pushes)
		*frame = 8 * pushes + 8;
	return 0;
}

int exit_sites_prologue_frame(enum code_arch arch, const uint8_t *code, size_t size,
			      uint32_t *frame, struct err *err)
{
	if (!code || size > MAX_CODE_SIZE)
		return err_set(err, -EINVAL, "code of %zu bytes is not analysed", size);
	if (arch == CODE_ARCH_ARM64)
		return prologue_arm64(code, size, frame);
	return prologue_x86_64(code, size, frame, err);
}

/* ---- entry points ------------------------------------------------------- */

static int find(enum code_arch arch, enum code_kind kind, const uint8_t *code, size_t size,
		uint32_t frame, struct exit_sites *out, struct exit_scan *scan, struct err *err)
{
	struct sitebuf b = { 0 };
	int rc;

	if (arch == CODE_ARCH_ARM64)
		rc = find_arm64(kind, code, size, frame, &b, scan, err);
	else if (kind == CODE_ART_METHOD)
		rc = x86_art(code, size, frame, &b, err);
	else
		rc = x86_native(code, size, &b, err);
	if (rc) {
		free(b.v);
		return rc;
	}
	out->count = b.n;
	out->offsets = b.v;
	return 0;
}

static int check_args(enum code_arch arch, const uint8_t *code, size_t size, struct err *err)
{
	if (arch != CODE_ARCH_ARM64 && arch != CODE_ARCH_X86_64)
		return err_set(err, -EINVAL, "unknown code architecture %d", (int)arch);
	if (!code || size == 0)
		return err_set(err, -EINVAL, "no code to analyse");
	if (size > MAX_CODE_SIZE)
		return err_set(err, -E2BIG, "code of %zu bytes is larger than the %u analysed",
			       size, MAX_CODE_SIZE);
	return 0;
}

int exit_sites_find(enum code_arch arch, enum code_kind kind, const uint8_t *code, size_t size,
		    struct exit_sites *out, struct err *err)
{
	uint32_t frame = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = check_args(arch, code, size, err)))
		return rc;
	if (kind == CODE_ART_METHOD &&
	    (rc = exit_sites_prologue_frame(arch, code, size, &frame, err)))
		return rc;
	return find(arch, kind, code, size, frame, out, NULL, err);
}

int exit_sites_find_art(enum code_arch arch, const uint8_t *code, size_t size, uint32_t frame,
			struct exit_sites *out, struct err *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = check_args(arch, code, size, err)))
		return rc;
	return find(arch, CODE_ART_METHOD, code, size, frame, out, NULL, err);
}

int exit_sites_scan_native(enum code_arch arch, const uint8_t *code, size_t size,
			   struct exit_scan *out, struct err *err)
{
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = check_args(arch, code, size, err)))
		return rc;
	rc = find(arch, CODE_NATIVE_FUNCTION, code, size, 0, &out->sites,
		  arch == CODE_ARCH_ARM64 ? out : NULL, err);
	if (rc)
		exit_scan_free(out);
	return rc;
}

void exit_scan_free(struct exit_scan *s)
{
	if (!s)
		return;
	exit_sites_free(&s->sites);
	free(s->tails);
	s->tails = NULL;
	s->n_tails = 0;
	s->tails_cap = 0;
}

static int art_a64_boundary(const uint8_t *code, size_t size, size_t off, struct err *err)
{
	struct a64 a = { .code = code, .nwords = size / 4 };
	int rc;

	if ((rc = insn_boundary_check(CODE_ARCH_ARM64, code, size, off, err)))
		return rc;
	if (!(a.data = calloc(a.nwords, 1)))
		return err_set(err, -ENOMEM, "out of memory for %zu code words", a.nwords);
	if (!(rc = a64_mark_data(&a, err)) && a.data[off / 4])
		rc = err_set(err, -EINVAL, "offset +0x%zx is data (a literal pool or jump table) "
			     "inside the method's code", off);
	free(a.data);
	return rc;
}

/* Decodes the whole method up to its constant area (which is only known at the
 * end) and checks that off started one of the instructions. */
static int art_x86_boundary(const uint8_t *code, size_t size, size_t off, struct err *err)
{
	size_t limit = size, at = 0, inside = SIZE_MAX;
	struct insn_x86_64 in;
	unsigned n = 0, inside_len = 0;

	while (at < limit) {
		if (!(n = insn_x86_64_decode(code + at, size - at, &in)))
			return x86_undecodable(code, size, at, err);
		if (in.rip_relative) {
			int64_t t = (int64_t)(at + n) + in.rip_disp;
			if (t >= (int64_t)(at + n) && t < (int64_t)limit)
				limit = (size_t)t;
		}
		if (off > at && off < at + n)
			inside = at, inside_len = n;
		at += n;
	}
	if (off >= limit)
		return err_set(err, -EINVAL, "offset +0x%zx is in the constant area (data) that "
			       "starts at +0x%zx", off, limit);
	if (inside != SIZE_MAX)
		return err_set(err, -EINVAL, "offset +0x%zx is inside the instruction at +0x%zx "
			       "(%u bytes)", off, inside, inside_len);
	return 0;
}

int exit_sites_art_boundary_check(enum code_arch arch, const uint8_t *code, size_t size,
				  size_t off, struct err *err)
{
	int rc;

	if ((rc = check_args(arch, code, size, err)))
		return rc;
	if (off >= size)
		return err_set(err, -ERANGE, "offset +0x%zx is outside the method's %zu bytes of "
			       "code", off, size);
	if (arch == CODE_ARCH_ARM64)
		return art_a64_boundary(code, size, off, err);
	return art_x86_boundary(code, size, off, err);
}

void exit_sites_free(struct exit_sites *s)
{
	if (!s)
		return;
	free(s->offsets);
	s->offsets = NULL;
	s->count = 0;
}
