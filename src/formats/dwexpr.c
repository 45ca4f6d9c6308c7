/* dwexpr.c — DWARF expressions for the unwinder (see dwexpr.h). */
#include "formats/dwexpr.h"

#include <errno.h>

struct vm {
	const uint8_t *p;
	size_t len, pc;
	const struct dwexpr_env *env;
	uint64_t st[DWEXPR_MAX_STACK];
	unsigned n;
	int rc;
	const char *why;
};

static bool fail(struct vm *m, int rc, const char *why)
{
	if (!m->rc) {
		m->rc = rc;
		m->why = why;
	}
	return false;
}

static uint64_t rd_n(struct vm *m, unsigned n)
{
	uint64_t v = 0;

	if (n > m->len - m->pc) {
		fail(m, -EINVAL, "operand runs past the expression");
		return 0;
	}
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)m->p[m->pc + i] << (8 * i);
	m->pc += n;
	return v;
}

static uint64_t rd_uleb(struct vm *m)
{
	uint64_t v = 0;

	for (unsigned shift = 0; !m->rc; shift += 7) {
		uint8_t b = (uint8_t)rd_n(m, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
		if (shift > 70)
			fail(m, -EINVAL, "LEB128 operand too long");
	}
	return 0;
}

static int64_t rd_sleb(struct vm *m)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b = 0;

	do {
		b = (uint8_t)rd_n(m, 1);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (shift > 77)
			fail(m, -EINVAL, "LEB128 operand too long");
	} while (!m->rc && (b & 0x80));
	if (shift < 64 && (b & 0x40))
		v |= ~0ull << shift;
	return (int64_t)v;
}

static bool push(struct vm *m, uint64_t v)
{
	if (m->n == DWEXPR_MAX_STACK)
		return fail(m, -EINVAL, "expression stack overflow");
	m->st[m->n++] = v;
	return true;
}

/* At least k entries on the stack. */
static bool need(struct vm *m, unsigned k)
{
	return m->n >= k ? true : fail(m, -EINVAL, "expression stack underflow");
}

static uint64_t pop(struct vm *m)
{
	return need(m, 1) ? m->st[--m->n] : 0;
}

static void sign_extend(uint64_t *v, unsigned bytes)
{
	if (bytes < 8 && (*v >> (bytes * 8 - 1) & 1))
		*v |= ~0ull << (bytes * 8);
}

/* const1u .. const8s: 0x08 .. 0x0f */
static void op_const(struct vm *m, uint8_t op)
{
	static const unsigned size[] = { 1, 1, 2, 2, 4, 4, 8, 8 };
	unsigned k = size[(op - 0x08) & 7];
	uint64_t v = rd_n(m, k);

	if (op & 1)
		sign_extend(&v, k);
	if (!m->rc)
		push(m, v);
}

static void op_reg(struct vm *m, uint32_t reg, int64_t off)
{
	uint64_t v;

	if (m->rc)
		return;
	if (!m->env->reg || !m->env->reg(m->env->ctx, reg, &v)) {
		fail(m, -EFAULT, "a register the expression reads is unknown");
		return;
	}
	push(m, v + (uint64_t)off);
}

static void op_deref(struct vm *m, unsigned size)
{
	uint64_t addr = pop(m), v;

	if (m->rc)
		return;
	if (size != 1 && size != 2 && size != 4 && size != 8) {
		fail(m, -EINVAL, "bad DW_OP_deref_size");
		return;
	}
	if (!m->env->mem || !m->env->mem(m->env->ctx, addr, size, &v)) {
		fail(m, -EFAULT, "memory the expression reads is unreadable");
		return;
	}
	push(m, v);
}

/* dup, drop, over, pick, swap, rot */
static void op_stack(struct vm *m, uint8_t op)
{
	uint64_t a, b, c;

	switch (op) {
	case 0x12: if (need(m, 1)) push(m, m->st[m->n - 1]); break;
	case 0x13: pop(m); break;
	case 0x14: if (need(m, 2)) push(m, m->st[m->n - 2]); break;
	case 0x15: a = rd_n(m, 1);
		if (!m->rc && need(m, (unsigned)a + 1))
			push(m, m->st[m->n - 1 - a]);
		break;
	case 0x16: if (need(m, 2)) {
			a = m->st[m->n - 1];
			m->st[m->n - 1] = m->st[m->n - 2];
			m->st[m->n - 2] = a;
		}
		break;
	default: /* rot: the top three, the first to the third place */
		if (need(m, 3)) {
			a = m->st[m->n - 1], b = m->st[m->n - 2], c = m->st[m->n - 3];
			m->st[m->n - 1] = b, m->st[m->n - 2] = c, m->st[m->n - 3] = a;
		}
		break;
	}
}

static bool compare(uint8_t op, int64_t a, int64_t b)
{
	switch (op) {
	case 0x29: return a == b;
	case 0x2a: return a >= b;
	case 0x2b: return a > b;
	case 0x2c: return a <= b;
	case 0x2d: return a < b;
	default: return a != b;
	}
}

/* The binary operators: b (below) op a (the top). */
static void op_binary(struct vm *m, uint8_t op)
{
	uint64_t a = pop(m), b = pop(m), r = 0;

	if (m->rc)
		return;
	if ((op == 0x1b || op == 0x1d) && a == 0) {
		fail(m, -EINVAL, "division by zero");
		return;
	}
	switch (op) {
	case 0x1a: r = b & a; break;
	case 0x1b: r = (int64_t)a == -1 ? -b : (uint64_t)((int64_t)b / (int64_t)a); break;
	case 0x1c: r = b - a; break;
	case 0x1d: r = b % a; break;
	case 0x1e: r = b * a; break;
	case 0x21: r = b | a; break;
	case 0x22: r = b + a; break;
	case 0x24: r = a >= 64 ? 0 : b << a; break;
	case 0x25: r = a >= 64 ? 0 : b >> a; break;
	case 0x26: r = a >= 64 ? ((int64_t)b < 0 ? ~0ull : 0)
			       : (uint64_t)((int64_t)b >> a); break;
	case 0x27: r = b ^ a; break;
	default: r = compare(op, (int64_t)b, (int64_t)a); break;
	}
	push(m, r);
}

static void op_unary(struct vm *m, uint8_t op)
{
	uint64_t a = pop(m);

	if (m->rc)
		return;
	if (op == 0x19)
		a = (int64_t)a < 0 ? -a : a;
	else if (op == 0x1f)
		a = -a;
	else
		a = ~a;
	push(m, a);
}

/* skip (0x2f) and bra (0x28): a signed 2-byte offset from after the operand. */
static void op_branch(struct vm *m, uint8_t op)
{
	int64_t off = (int16_t)rd_n(m, 2);
	bool take = op == 0x2f || pop(m) != 0;

	if (m->rc || !take)
		return;
	if ((off < 0 && (uint64_t)-off > m->pc) || (off > 0 && (uint64_t)off > m->len - m->pc)) {
		fail(m, -EINVAL, "branch outside the expression");
		return;
	}
	m->pc = (size_t)((int64_t)m->pc + off);
}

static void push_if_ok(struct vm *m, uint64_t v)
{
	if (!m->rc)
		push(m, v);
}

static void op_bregx(struct vm *m)
{
	uint64_t r = rd_uleb(m);
	int64_t off = rd_sleb(m);

	if (m->rc)
		return;
	if (r > UINT32_MAX)
		fail(m, -EINVAL, "DW_OP_bregx register out of range");
	else
		op_reg(m, (uint32_t)r, off);
}

/* The operators outside the ranges step() dispatches. */
static void op_other(struct vm *m, uint8_t op)
{
	uint64_t v;

	switch (op) {
	case 0x03: push_if_ok(m, rd_n(m, 8)); break;                 /* addr (64-bit) */
	case 0x06: op_deref(m, 8); break;
	case 0x94: v = rd_n(m, 1); if (!m->rc) op_deref(m, (unsigned)v); break;
	case 0x10: push_if_ok(m, rd_uleb(m)); break;                  /* constu */
	case 0x11: push_if_ok(m, (uint64_t)rd_sleb(m)); break;        /* consts */
	case 0x23: v = rd_uleb(m); if (!m->rc) push(m, pop(m) + v); break;
	case 0x92: op_bregx(m); break;
	case 0x96: break;                                             /* nop */
	default: fail(m, -ENOTSUP, "a DWARF operator not evaluated"); break;
	}
}

static void step(struct vm *m)
{
	uint8_t op = (uint8_t)rd_n(m, 1);

	if (m->rc)
		return;
	if (op >= 0x30 && op <= 0x4f)
		push(m, op - 0x30u);
	else if (op >= 0x70 && op <= 0x8f)
		op_reg(m, op - 0x70u, rd_sleb(m));
	else if (op >= 0x08 && op <= 0x0f)
		op_const(m, op);
	else if (op >= 0x12 && op <= 0x17)
		op_stack(m, op);
	else if (op == 0x19 || op == 0x1f || op == 0x20)
		op_unary(m, op);
	else if ((op >= 0x1a && op <= 0x1e) || op == 0x21 || op == 0x22 ||
		 (op >= 0x24 && op <= 0x27) || (op >= 0x29 && op <= 0x2e))
		op_binary(m, op);
	else if (op == 0x28 || op == 0x2f)
		op_branch(m, op);
	else
		op_other(m, op);
}

int dwexpr_eval(const uint8_t *ops, size_t len, const struct dwexpr_env *env,
		const uint64_t *initial, uint64_t *out, const char **why)
{
	struct vm m = { .p = ops, .len = ops ? len : 0, .env = env };
	unsigned steps = 0;

	if (initial)
		push(&m, *initial);
	while (!m.rc && m.pc < m.len) {
		if (++steps > DWEXPR_MAX_OPS) {
			fail(&m, -E2BIG, "more DWARF operations than the bound");
			break;
		}
		step(&m);
	}
	if (!m.rc && !m.n)
		fail(&m, -EINVAL, "the expression leaves no value");
	if (why)
		*why = m.rc ? m.why : NULL;
	if (!m.rc)
		*out = m.st[m.n - 1];
	return m.rc;
}
