/* cfi.c — DWARF CFI reader (see cfi.h).
 *
 * At open every FDE of .eh_frame (found through .eh_frame_hdr's table when it
 * is usable, else by walking the section) and of .debug_frame is indexed as
 * {start, end, section, offset} in one array sorted by start.  A lookup is a
 * binary search plus one run of that FDE's CIE and FDE instructions. */
#include "formats/cfi.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/grow.h"

#define SEC_EH 0
#define SEC_DEBUG 1
#define MAX_STATE_DEPTH 16
#define MAX_INSNS 100000

struct cfi_sec {
	const uint8_t *p;
	size_t len;
	uint64_t addr;      /* sh_addr */
	bool present;
};

struct fde_ent {
	uint64_t start, end;
	uint64_t off;       /* of the FDE's length field in its section */
	uint8_t sec;
};

struct cfi_table {
	const struct elf_file *elf;
	uint16_t machine;
	uint8_t addr_size;
	struct cfi_sec sec[2];
	uint64_t hdr_addr;  /* .eh_frame_hdr sh_addr (datarel base) */
	struct fde_ent *fdes;
	size_t n, cap, bad;
};

/* A bounded reader over one section. */
struct cur {
	const uint8_t *p;
	size_t len;
	uint64_t off, end;
	uint64_t base;      /* section address, for pcrel */
	bool ok;
};

static uint64_t rd_n(struct cur *c, unsigned n)
{
	uint64_t v = 0;

	if (!c->ok || c->off > c->end || n > c->end - c->off) {
		c->ok = false;
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)c->p[c->off + i] << (8 * i);
	c->off += n;
	return v;
}

static uint64_t rd_uleb64(struct cur *c)
{
	uint64_t v = 0;

	for (unsigned shift = 0; c->ok; shift += 7) {
		uint8_t b = (uint8_t)rd_n(c, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
		if (shift > 70)
			c->ok = false;
	}
	return 0;
}

static int64_t rd_sleb64(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		b = (uint8_t)rd_n(c, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (shift > 77)
			c->ok = false;
	} while (c->ok && (b & 0x80));
	if (shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return (int64_t)v;
}

/* Reads a DW_EH_PE_* encoded pointer; indirect and aligned are refused. */
static uint64_t rd_enc(struct cur *c, uint8_t enc, uint64_t datarel, uint8_t asz)
{
	uint64_t here = c->base + c->off, v;

	if (enc == 0xff)    /* omit */
		return 0;
	switch (enc & 0x0f) {
	case 0x00: v = rd_n(c, asz); break;
	case 0x01: v = rd_uleb64(c); break;
	case 0x02: v = rd_n(c, 2); break;
	case 0x03: v = rd_n(c, 4); break;
	case 0x04: v = rd_n(c, 8); break;
	case 0x09: v = (uint64_t)rd_sleb64(c); break;
	case 0x0a: v = (uint64_t)(int64_t)(int16_t)rd_n(c, 2); break;
	case 0x0b: v = (uint64_t)(int64_t)(int32_t)rd_n(c, 4); break;
	case 0x0c: v = rd_n(c, 8); break;
	default: c->ok = false; return 0;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += here; break;
	case 0x30: v += datarel; break;
	default: c->ok = false; return 0;
	}
	if (enc & 0x80)
		c->ok = false;
	if (asz == 4)
		v &= 0xffffffffu;
	return v;
}

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint32_t ra_reg;
	uint8_t fde_enc, lsda_enc;
	bool has_z, signal;
	uint64_t insn_off, insn_end;
};

/* Reads an entry header at off: its length, where its body starts and ends,
 * and its id/pointer field. */
static int entry_header(const struct cfi_table *t, uint8_t sec, uint64_t off, struct cur *c,
			uint64_t *id, bool *is_cie)
{
	const struct cfi_sec *s = &t->sec[sec];
	uint64_t len;
	bool is64 = false;

	*c = (struct cur){ .p = s->p, .len = s->len, .off = off, .end = s->len, .base = s->addr,
			   .ok = true };
	len = rd_n(c, 4);
	if (len == 0xffffffffu) {
		is64 = true;
		len = rd_n(c, 8);
	}
	if (!c->ok || len == 0 || len > s->len - c->off)
		return -EINVAL;
	c->end = c->off + len;
	*id = rd_n(c, is64 ? 8 : 4);
	if (!c->ok)
		return -EINVAL;
	if (sec == SEC_EH)
		*is_cie = *id == 0;
	else
		*is_cie = is64 ? *id == ~0ull : *id == 0xffffffffu;
	return 0;
}

static int parse_cie(const struct cfi_table *t, uint8_t sec, uint64_t off, struct cie *ci)
{
	struct cur c;
	uint64_t id;
	bool is_cie;
	const char *aug;
	size_t aug_len;

	memset(ci, 0, sizeof(*ci));
	ci->fde_enc = 0;
	ci->lsda_enc = 0xff;
	if (entry_header(t, sec, off, &c, &id, &is_cie) || !is_cie)
		return -EINVAL;
	uint8_t ver = (uint8_t)rd_n(&c, 1);
	if (ver != 1 && ver != 3 && ver != 4)
		return -EINVAL;
	aug = (const char *)c.p + c.off;
	aug_len = strnlen(aug, c.end - c.off);
	if (aug_len == c.end - c.off)
		return -EINVAL;
	c.off += aug_len + 1;
	if (aug_len && aug[0] != 'z' && strcmp(aug, "eh"))
		return -ENOTSUP;
	if (!strcmp(aug, "eh"))
		rd_n(&c, t->addr_size);
	if (ver == 4) {
		rd_n(&c, 1);  /* address_size */
		if (rd_n(&c, 1))
			return -ENOTSUP;  /* segment selectors */
	}
	ci->code_align = rd_uleb64(&c);
	ci->data_align = rd_sleb64(&c);
	ci->ra_reg = ver == 1 ? (uint32_t)rd_n(&c, 1) : (uint32_t)rd_uleb64(&c);
	if (aug_len && aug[0] == 'z') {
		uint64_t alen = rd_uleb64(&c), aend = c.off + alen;
		if (!c.ok || alen > c.end - c.off)
			return -EINVAL;
		ci->has_z = true;
		for (size_t i = 1; i < aug_len && c.ok; i++) {
			switch (aug[i]) {
			case 'L': ci->lsda_enc = (uint8_t)rd_n(&c, 1); break;
			case 'R': ci->fde_enc = (uint8_t)rd_n(&c, 1); break;
			case 'P': {
				uint8_t penc = (uint8_t)rd_n(&c, 1);
				struct cur pc = c;
				pc.end = aend;
				rd_enc(&pc, penc & 0x7f, t->hdr_addr, t->addr_size);
				c.off = pc.off;
				c.ok = pc.ok;
				break;
			}
			case 'S': ci->signal = true; break;
			case 'B': case 'G': break;
			default: i = aug_len; break;   /* unknown: the length skips the rest */
			}
		}
		c.off = aend;
	}
	if (!c.ok || c.off > c.end)
		return -EINVAL;
	ci->insn_off = c.off;
	ci->insn_end = c.end;
	return 0;
}

/* Parses the FDE at off: its CIE, range and instruction bounds. */
static int parse_fde(const struct cfi_table *t, uint8_t sec, uint64_t off, struct cie *ci,
		     uint64_t *start, uint64_t *end, uint64_t *ioff, uint64_t *iend)
{
	struct cur c;
	uint64_t id, cie_off;
	bool is_cie;
	int rc;

	if (entry_header(t, sec, off, &c, &id, &is_cie) || is_cie)
		return -EINVAL;
	if (sec == SEC_EH) {
		/* CIE pointer: distance back from the pointer field itself. */
		uint64_t field = c.off - 4;
		if (id > field)
			return -EINVAL;
		cie_off = field - id;
	} else {
		cie_off = id;
	}
	if ((rc = parse_cie(t, sec, cie_off, ci)))
		return rc;
	if (sec == SEC_EH) {
		*start = rd_enc(&c, ci->fde_enc, t->hdr_addr, t->addr_size);
		*end = rd_enc(&c, ci->fde_enc & 0x0f, 0, t->addr_size);
	} else {
		*start = rd_n(&c, t->addr_size);
		*end = rd_n(&c, t->addr_size);
	}
	*end += *start;
	if (ci->has_z) {
		uint64_t alen = rd_uleb64(&c);
		if (!c.ok || alen > c.end - c.off)
			return -EINVAL;
		c.off += alen;
	}
	if (!c.ok || *end < *start)
		return -EINVAL;
	*ioff = c.off;
	*iend = c.end;
	return 0;
}

static int add_fde(struct cfi_table *t, uint8_t sec, uint64_t off)
{
	struct cie ci;
	uint64_t s, e, io, ie;

	if (parse_fde(t, sec, off, &ci, &s, &e, &io, &ie)) {
		t->bad++;
		return 0;
	}
	if (s == e)
		return 0;
	if (grow_array(&t->fdes, &t->cap, t->n + 1, 256) < 0)
		return -ENOMEM;
	t->fdes[t->n++] = (struct fde_ent){ .start = s, .end = e, .off = off, .sec = sec };
	return 0;
}

/* Walks every entry of a section, indexing the FDEs. */
static int scan_section(struct cfi_table *t, uint8_t sec, struct err *err)
{
	const struct cfi_sec *s = &t->sec[sec];
	uint64_t off = 0;
	int rc;

	while (off + 4 <= s->len) {
		struct cur c;
		uint64_t id;
		bool is_cie;
		if (ld32(s->p + off) == 0 && sec == SEC_EH)
			break;  /* terminator */
		if (entry_header(t, sec, off, &c, &id, &is_cie))
			return err_set(err, -EINVAL,
				       "%s: %s+0x%llx: entry length runs past the section",
				       elf_name(t->elf),
				       sec == SEC_EH ? ".eh_frame" : ".debug_frame",
				       (unsigned long long)off);
		if (!is_cie && (rc = add_fde(t, sec, off)))
			return err_set(err, rc, "%s: out of memory indexing CFI", elf_name(t->elf));
		off = c.end;
	}
	return 0;
}

/* Indexes .eh_frame through .eh_frame_hdr's table; false when unusable.  Also false
 * when an entry points at an empty FDE (pc range 0): the linker keeps one entry per
 * start address, and where an empty FDE shares its start with the function's real
 * one (bionic's arm64 libc.so) the table hides the real one, which only a scan of
 * .eh_frame finds (test/diff/elf_diff.c found it against readelf). */
static bool index_from_hdr(struct cfi_table *t, const struct elf_section *hs)
{
	size_t sz;
	const uint8_t *d = elf_data(t->elf, &sz);
	struct cur c;
	uint8_t tenc;
	uint64_t count;

	if (!rng_ok(sz, hs->offset, hs->size) || hs->size < 4)
		return false;
	c = (struct cur){ .p = d + hs->offset, .len = hs->size, .off = 0, .end = hs->size,
			  .base = hs->addr, .ok = true };
	if (rd_n(&c, 1) != 1)
		return false;
	uint8_t penc = (uint8_t)rd_n(&c, 1), cenc = (uint8_t)rd_n(&c, 1);
	tenc = (uint8_t)rd_n(&c, 1);
	rd_enc(&c, penc, hs->addr, t->addr_size);
	count = rd_enc(&c, cenc, hs->addr, t->addr_size);
	if (!c.ok || tenc != 0x3b || cenc == 0xff || count > (c.end - c.off) / 8)
		return false;
	for (uint64_t i = 0; i < count; i++) {
		int32_t loc = (int32_t)ld32(c.p + c.off + i * 8);
		int32_t fde = (int32_t)ld32(c.p + c.off + i * 8 + 4);
		uint64_t fa = hs->addr + (uint64_t)(int64_t)fde;
		(void)loc;
		if (fa < t->sec[SEC_EH].addr || fa - t->sec[SEC_EH].addr >= t->sec[SEC_EH].len) {
			t->bad++;
			continue;
		}
		size_t n = t->n, bad = t->bad;
		if (add_fde(t, SEC_EH, fa - t->sec[SEC_EH].addr))
			return false;
		if (t->n == n && t->bad == bad)
			return false;   /* empty: may shadow a real FDE of that start */
	}
	return true;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde_ent *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (int)x->sec - (int)y->sec;
}

static bool load_sec(struct cfi_table *t, const char *name, struct cfi_sec *s)
{
	struct elf_section es;
	size_t sz;
	const uint8_t *d = elf_data(t->elf, &sz);

	if (elf_find_section(t->elf, name, &es) || es.type == SHT_NOBITS ||
	    !rng_ok(sz, es.offset, es.size) || !es.size)
		return false;
	*s = (struct cfi_sec){ .p = d + es.offset, .len = es.size, .addr = es.addr,
			       .present = true };
	return true;
}

int cfi_open(const struct elf_file *elf, struct cfi_table **out, struct err *err)
{
	struct cfi_table *t = calloc(1, sizeof(*t));
	struct elf_section hs;
	int rc = 0;

	*out = NULL;
	if (!t)
		return err_set(err, -ENOMEM, "out of memory");
	t->elf = elf;
	t->machine = elf_machine(elf);
	t->addr_size = elf_class(elf) == 32 ? 4 : 8;
	load_sec(t, ".eh_frame", &t->sec[SEC_EH]);
	load_sec(t, ".debug_frame", &t->sec[SEC_DEBUG]);
	if (!t->sec[SEC_EH].present && !t->sec[SEC_DEBUG].present) {
		free(t);
		return err_set(err, -ENOENT, "%s: no .eh_frame or .debug_frame section",
			       elf_name(elf));
	}
	bool have_hdr = !elf_find_section(elf, ".eh_frame_hdr", &hs);
	if (have_hdr)
		t->hdr_addr = hs.addr;
	if (t->sec[SEC_EH].present && !(have_hdr && index_from_hdr(t, &hs))) {
		t->n = 0;
		t->bad = 0;
		rc = scan_section(t, SEC_EH, err);
	}
	if (!rc && t->sec[SEC_DEBUG].present)
		rc = scan_section(t, SEC_DEBUG, err);
	if (rc) {
		cfi_close(t);
		return rc;
	}
	if (t->n)
		qsort(t->fdes, t->n, sizeof(*t->fdes), cmp_fde);
	*out = t;
	return 0;
}

void cfi_close(struct cfi_table *t)
{
	if (!t)
		return;
	free(t->fdes);
	free(t);
}

size_t cfi_fde_count(const struct cfi_table *t) { return t ? t->n : 0; }
size_t cfi_bad_fdes(const struct cfi_table *t) { return t ? t->bad : 0; }

int cfi_fde_range(const struct cfi_table *t, size_t i, uint64_t *start, uint64_t *end)
{
	if (!t || i >= t->n)
		return -ERANGE;
	*start = t->fdes[i].start;
	*end = t->fdes[i].end;
	return 0;
}

/* --- the instruction evaluator --------------------------------------------------- */

struct cfi_state {
	uint32_t cfa_reg;
	int64_t cfa_off;
	bool cfa_expr;
	uint16_t cfa_expr_len;          /* > CFI_MAX_EXPR: too long to keep */
	uint8_t cfa_expr_bytes[CFI_MAX_EXPR];
	struct cfi_rule regs[CFI_MAX_REGS];
	bool ra_signed;
};

struct eval {
	const struct cfi_table *t;
	const struct cie *ci;
	struct cfi_state st, init, stack[MAX_STATE_DEPTH];
	unsigned depth;
	uint64_t loc, target, next_loc;
	bool done;
	const char *why;    /* set on a refusal */
	unsigned insns;
};

/* factor * data_align, wrapping like the hardware would (hostile input). */
static int64_t scale(uint64_t factor, int64_t da)
{
	return (int64_t)(factor * (uint64_t)da);
}

static void set_rule(struct eval *ev, uint64_t reg, uint8_t kind, int64_t off, uint64_t r2)
{
	if (reg >= CFI_MAX_REGS)
		return;
	ev->st.regs[reg] = (struct cfi_rule){ .kind = kind, .off = off, .reg = (uint16_t)r2 };
}

static void advance(struct eval *ev, uint64_t delta)
{
	uint64_t nl = ev->loc + delta * ev->ci->code_align;

	if (nl > ev->target) {
		ev->next_loc = nl;
		ev->done = true;
		return;
	}
	ev->loc = nl;
}

/* DW_CFA_remember_state / restore_state (which restores the CFA too, DWARF 5
 * 6.4.2.4). */
static void state_op(struct eval *ev, struct cur *c, uint8_t op)
{
	if (op == 0x0a && ev->depth == MAX_STATE_DEPTH) {
		ev->why = "remember_state nested too deep";
		c->ok = false;
	} else if (op == 0x0a) {
		ev->stack[ev->depth++] = ev->st;
	} else if (!ev->depth) {
		ev->why = "restore_state without remember_state";
		c->ok = false;
	} else {
		ev->st = ev->stack[--ev->depth];
	}
}

/* DW_CFA_def_cfa_expression: its bytes kept (up to CFI_MAX_EXPR) for the
 * unwinder to evaluate. */
static void cfa_expression(struct eval *ev, struct cur *c)
{
	uint64_t v = rd_uleb64(c);

	if (!c->ok || v > c->end - c->off) {
		c->ok = false;
		return;
	}
	ev->st.cfa_expr = true;
	/* an empty one (no value) is kept as unusable, like a too long one */
	ev->st.cfa_expr_len = v > CFI_MAX_EXPR || !v ? CFI_MAX_EXPR + 1 : (uint16_t)v;
	if (v && v <= CFI_MAX_EXPR)
		memcpy(ev->st.cfa_expr_bytes, c->p + c->off, (size_t)v);
	c->off += v;
}

/* ART's dex-pc marker (libunwindstack's DwarfOp reads the same form): a
 * DW_CFA_val_expression of len bytes at c's offset that is
 *   DW_OP_const4u 0x31584544 ("DEX1"), DW_OP_drop, then DW_OP_breg<N> off or
 *   DW_OP_bregx N off, and nothing else:
 * the register's value plus off is the address of the interpreted method's
 * current dex instruction.  Any other expression is not evaluated. */
static bool dex_pc_expr(const struct cur *c, uint64_t len, uint64_t *reg, int64_t *off)
{
	struct cur e = *c;
	uint8_t op;

	e.end = c->off + len;
	if (len < 8 || rd_n(&e, 1) != 0x0c || rd_n(&e, 4) != 0x31584544u || rd_n(&e, 1) != 0x13)
		return false;
	op = (uint8_t)rd_n(&e, 1);
	if (op >= 0x70 && op <= 0x8f)
		*reg = op - 0x70u;
	else if (op == 0x92)
		*reg = rd_uleb64(&e);
	else
		return false;
	*off = rd_sleb64(&e);
	return e.ok && e.off == e.end && *reg < CFI_MAX_REGS;
}

/* The DW_CFA_* operations with operands in following bytes. */
static void extended_op(struct eval *ev, struct cur *c, uint8_t op)
{
	int64_t da = ev->ci->data_align;
	uint64_t r, v, dreg;
	int64_t doff;

	switch (op) {
	case 0x00: break;                                            /* nop */
	case 0x01: {                                                 /* set_loc */
		uint64_t nl = rd_enc(c, ev->ci->fde_enc, ev->t->hdr_addr, ev->t->addr_size);
		if (nl > ev->target) {
			ev->next_loc = nl;
			ev->done = true;
		} else {
			ev->loc = nl;
		}
		break;
	}
	case 0x02: advance(ev, rd_n(c, 1)); break;
	case 0x03: advance(ev, rd_n(c, 2)); break;
	case 0x04: advance(ev, rd_n(c, 4)); break;
	case 0x05: r = rd_uleb64(c); set_rule(ev, r, CFI_RULE_OFFSET, scale(rd_uleb64(c), da), 0);
		break;
	case 0x06: r = rd_uleb64(c); if (r < CFI_MAX_REGS) ev->st.regs[r] = ev->init.regs[r]; break;
	case 0x07: set_rule(ev, rd_uleb64(c), CFI_RULE_UNDEFINED, 0, 0); break;
	case 0x08: set_rule(ev, rd_uleb64(c), CFI_RULE_SAME, 0, 0); break;
	case 0x09: r = rd_uleb64(c); set_rule(ev, r, CFI_RULE_REGISTER, 0, rd_uleb64(c)); break;
	case 0x0a: case 0x0b: state_op(ev, c, op); break;
	case 0x0c: ev->st.cfa_reg = (uint32_t)rd_uleb64(c); ev->st.cfa_off = (int64_t)rd_uleb64(c);
		ev->st.cfa_expr = false; break;
	case 0x0d: ev->st.cfa_reg = (uint32_t)rd_uleb64(c); ev->st.cfa_expr = false; break;
	case 0x0e: ev->st.cfa_off = (int64_t)rd_uleb64(c); break;
	case 0x0f: cfa_expression(ev, c); break;
	case 0x10: case 0x16:
		r = rd_uleb64(c);
		v = rd_uleb64(c);
		if (v > c->end - c->off) {
			c->ok = false;
			break;
		}
		if (op == 0x16 && dex_pc_expr(c, v, &dreg, &doff))
			set_rule(ev, r, CFI_RULE_DEX_PC, doff, dreg);
		else
			set_rule(ev, r, CFI_RULE_EXPR, 0, 0);
		c->off += v;
		break;
	case 0x11: r = rd_uleb64(c);
		set_rule(ev, r, CFI_RULE_OFFSET, scale((uint64_t)rd_sleb64(c), da), 0); break;
	case 0x12: ev->st.cfa_reg = (uint32_t)rd_uleb64(c);
		ev->st.cfa_off = scale((uint64_t)rd_sleb64(c), da);
		ev->st.cfa_expr = false; break;
	case 0x13: ev->st.cfa_off = scale((uint64_t)rd_sleb64(c), da); break;
	case 0x14: r = rd_uleb64(c);
		set_rule(ev, r, CFI_RULE_VAL_OFFSET, scale(rd_uleb64(c), da), 0); break;
	case 0x15: r = rd_uleb64(c);
		set_rule(ev, r, CFI_RULE_VAL_OFFSET, scale((uint64_t)rd_sleb64(c), da), 0);
		break;
	case 0x2d:
		if (ev->t->machine == EM_AARCH64) {
			ev->st.ra_signed = !ev->st.ra_signed;
		} else {
			ev->why = "DW_CFA_GNU_window_save (SPARC) is not supported";
			c->ok = false;
		}
		break;
	case 0x2e: rd_uleb64(c); break;                              /* GNU_args_size */
	case 0x2f: r = rd_uleb64(c);
		set_rule(ev, r, CFI_RULE_OFFSET, scale(0 - rd_uleb64(c), da), 0); break;
	default:
		ev->why = "unknown DW_CFA opcode";
		c->ok = false;
	}
}

/* Runs instructions [off, end) until target is passed.  0 or -EINVAL. */
static int run(struct eval *ev, uint64_t off, uint64_t end, uint8_t sec)
{
	const struct cfi_sec *s = &ev->t->sec[sec];
	struct cur c = { .p = s->p, .len = s->len, .off = off, .end = end, .base = s->addr,
			 .ok = true };

	while (c.ok && !ev->done && c.off < c.end) {
		uint8_t op = (uint8_t)rd_n(&c, 1);
		if (++ev->insns > MAX_INSNS) {
			ev->why = "too many CFA instructions";
			return -EINVAL;
		}
		switch (op >> 6) {
		case 1: advance(ev, op & 0x3f); break;
		case 2: set_rule(ev, op & 0x3f, CFI_RULE_OFFSET,
				 scale(rd_uleb64(&c), ev->ci->data_align), 0); break;
		case 3:
			if ((op & 0x3f) < CFI_MAX_REGS)
				ev->st.regs[op & 0x3f] = ev->init.regs[op & 0x3f];
			break;
		default: extended_op(ev, &c, op);
		}
	}
	if (!c.ok) {
		if (!ev->why)
			ev->why = "instruction operands run past the entry";
		return -EINVAL;
	}
	return 0;
}

static const struct fde_ent *find_fde(const struct cfi_table *t, uint64_t vaddr)
{
	size_t lo = 0, hi = t->n;

	while (lo < hi) {   /* first entry with start > vaddr */
		size_t mid = lo + (hi - lo) / 2;
		if (t->fdes[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Prefer .eh_frame, then any covering entry, nearest start first. */
	const struct fde_ent *best = NULL;
	for (size_t i = lo; i > 0 && lo - i < 8; i--) {
		const struct fde_ent *f = &t->fdes[i - 1];
		if (vaddr >= f->end)
			continue;
		if (!best || (best->sec == SEC_DEBUG && f->sec == SEC_EH))
			best = f;
	}
	return best;
}

static void fill_row(const struct eval *ev, const struct cie *ci, const struct fde_ent *f,
		     struct cfi_row *row)
{
	memset(row, 0, sizeof(*row));
	row->fde_start = f->start;
	row->fde_end = f->end;
	row->row_start = ev->loc;
	row->row_end = ev->done && ev->next_loc < f->end ? ev->next_loc : f->end;
	row->cfa_reg = ev->st.cfa_reg;
	row->cfa_off = ev->st.cfa_off;
	if (ev->st.cfa_expr) {
		row->cfa_expr_len = (uint8_t)ev->st.cfa_expr_len;
		memcpy(row->cfa_expr, ev->st.cfa_expr_bytes, ev->st.cfa_expr_len);
	}
	row->ra_reg = ci->ra_reg;
	memcpy(row->regs, ev->st.regs, sizeof(row->regs));
	row->signal_frame = ci->signal;
	row->ra_signed = ev->st.ra_signed;
	row->from_debug_frame = f->sec == SEC_DEBUG;
}

int cfi_row_at(const struct cfi_table *t, uint64_t vaddr, struct cfi_row *row, struct err *err)
{
	const struct fde_ent *f = find_fde(t, vaddr);
	const char *sn;
	struct cie ci;
	uint64_t s, e, io, ie;
	struct eval *ev;
	int rc;

	if (!f)
		return err_set(err, -ENOENT, "%s: no CFI covers 0x%llx", elf_name(t->elf),
			       (unsigned long long)vaddr);
	sn = f->sec == SEC_EH ? ".eh_frame" : ".debug_frame";
	if ((rc = parse_fde(t, f->sec, f->off, &ci, &s, &e, &io, &ie)))
		return err_set(err, rc, "%s: %s+0x%llx: malformed FDE or CIE", elf_name(t->elf), sn,
			       (unsigned long long)f->off);
	if (!(ev = calloc(1, sizeof(*ev))))
		return err_set(err, -ENOMEM, "out of memory");
	ev->t = t;
	ev->ci = &ci;
	ev->target = vaddr;
	ev->loc = f->start;
	rc = run(ev, ci.insn_off, ci.insn_end, f->sec);
	ev->init = ev->st;
	ev->depth = 0;
	ev->done = false;
	ev->loc = f->start;
	if (!rc)
		rc = run(ev, io, ie, f->sec);
	if (rc) {
		err_set(err, rc, "%s: %s+0x%llx (FDE for 0x%llx..0x%llx): %s", elf_name(t->elf), sn,
			(unsigned long long)f->off, (unsigned long long)f->start,
			(unsigned long long)f->end, ev->why);
	} else if (ev->st.cfa_expr && ev->st.cfa_expr_len > CFI_MAX_EXPR) {
		rc = err_set(err, -ENOTSUP,
			     "%s: %s+0x%llx: the CFA at 0x%llx is a DWARF expression not kept (empty or over 32 bytes)",
			     elf_name(t->elf), sn, (unsigned long long)f->off,
			     (unsigned long long)vaddr);
	} else {
		fill_row(ev, &ci, f, row);
	}
	free(ev);
	return rc;
}

const char *cfi_reg_name(uint16_t e_machine, uint32_t reg, char *buf, size_t size)
{
	static const char *const x86[] = { "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp",
					   "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
					   "r15", "rip" };
	if (e_machine == EM_X86_64 && reg < 17)
		snprintf(buf, size, "%s", x86[reg]);
	else if (e_machine == EM_AARCH64 && reg == 31)
		snprintf(buf, size, "sp");
	else if (e_machine == EM_AARCH64 && reg < 31)
		snprintf(buf, size, "x%u", reg);
	else
		snprintf(buf, size, "r%u", reg);
	return buf;
}
