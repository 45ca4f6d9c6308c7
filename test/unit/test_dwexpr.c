/* test_dwexpr.c — the DWARF expression evaluator (formats/dwexpr.c): the two CFA
 * expressions real files carry (Debian libart's mterp handlers, x86_64 PLT entries),
 * every operator class against values worked out by hand from DWARF 5 section 2.5,
 * and hostile expressions: each must fail with its error, never read outside the
 * expression or loop without bound. */
#include <errno.h>
#include <string.h>

#include "formats/dwexpr.h"
#include "ut.h"

#define MEM_BASE 0x10000ull

struct fake {
	uint64_t regs[40];
	uint64_t known;          /* bit per register */
	uint8_t mem[256];        /* MEM_BASE.. */
	int mem_reads;
};

static bool fake_reg(void *ctx, uint32_t reg, uint64_t *v)
{
	struct fake *f = ctx;

	if (reg >= 40 || !(f->known >> reg & 1))
		return false;
	*v = f->regs[reg];
	return true;
}

static bool fake_mem(void *ctx, uint64_t addr, unsigned size, uint64_t *v)
{
	struct fake *f = ctx;

	f->mem_reads++;
	if (addr < MEM_BASE || addr - MEM_BASE > sizeof(f->mem) - size)
		return false;
	*v = 0;
	memcpy(v, f->mem + (addr - MEM_BASE), size);
	return true;
}

static int eval(struct fake *f, const uint8_t *ops, size_t len, uint64_t *out)
{
	const struct dwexpr_env env = { f, fake_reg, fake_mem };
	const char *why = NULL;
	int rc = dwexpr_eval(ops, len, &env, NULL, out, &why);

	/* a failure says why, a success nothing (-1000: the two disagree) */
	return (rc != 0) == (why != NULL) ? rc : -1000;
}

static void set_reg(struct fake *f, unsigned r, uint64_t v)
{
	f->regs[r] = v;
	f->known |= 1ull << r;
}

static void put_mem(struct fake *f, uint64_t addr, uint64_t v)
{
	memcpy(f->mem + (addr - MEM_BASE), &v, 8);
}

#define EVAL(f, out, ...)                                                        \
	({                                                                        \
		static const uint8_t ops_[] = { __VA_ARGS__ };                    \
		eval((f), ops_, sizeof(ops_), (out));                             \
	})

/* mterp (Debian's libart.so, x86_64): bregx r15 -8; deref; plus_uconst 88. */
UT_TEST(dwexpr_mterp_cfa)
{
	struct fake f = { 0 };
	uint64_t v = 0;

	set_reg(&f, 15, MEM_BASE + 0x48);
	put_mem(&f, MEM_BASE + 0x40, 0x7ffc1000);
	UT_EQ_INT(EVAL(&f, &v, 0x92, 15, 0x78, 0x06, 0x23, 88), 0);
	UT_EQ_U64(v, 0x7ffc1000 + 88);
	UT_EQ_INT(f.mem_reads, 1);
	/* r9 as the other handlers have it; unknown: -EFAULT, nothing read */
	f.mem_reads = 0;
	UT_EQ_INT(EVAL(&f, &v, 0x92, 9, 0x78, 0x06, 0x23, 88), -EFAULT);
	UT_EQ_INT(f.mem_reads, 0);
	/* memory outside what can be read */
	set_reg(&f, 15, 0x1000);
	UT_EQ_INT(EVAL(&f, &v, 0x92, 15, 0x78, 0x06, 0x23, 88), -EFAULT);
}

/* An x86_64 PLT entry's CFA: rsp + 8 + ((rip & 15) >= 11 ? 8 : 0). */
UT_TEST(dwexpr_plt_cfa)
{
	struct fake f = { 0 };
	uint64_t v = 0;

	set_reg(&f, 7, 0x7000);
	set_reg(&f, 16, 0x401a);   /* & 15 = 10 */
	UT_EQ_INT(EVAL(&f, &v, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22), 0);
	UT_EQ_U64(v, 0x7008);
	set_reg(&f, 16, 0x401b);   /* 11 */
	UT_EQ_INT(EVAL(&f, &v, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22), 0);
	UT_EQ_U64(v, 0x7010);
}

UT_TEST(dwexpr_constants_and_stack_ops)
{
	struct fake f = { 0 };
	uint64_t v = 0;

	UT_EQ_INT(EVAL(&f, &v, 0x08, 0xff), 0);                 /* const1u */
	UT_EQ_U64(v, 0xff);
	UT_EQ_INT(EVAL(&f, &v, 0x09, 0xff), 0);                 /* const1s */
	UT_EQ_U64(v, ~0ull);
	UT_EQ_INT(EVAL(&f, &v, 0x0b, 0x00, 0x80), 0);           /* const2s */
	UT_EQ_U64(v, (uint64_t)-32768);
	UT_EQ_INT(EVAL(&f, &v, 0x0c, 0x44, 0x45, 0x58, 0x31), 0);
	UT_EQ_U64(v, 0x31584544);
	UT_EQ_INT(EVAL(&f, &v, 0x0e, 1, 2, 3, 4, 5, 6, 7, 8), 0);
	UT_EQ_U64(v, 0x0807060504030201ull);
	UT_EQ_INT(EVAL(&f, &v, 0x10, 0xe5, 0x8e, 0x26), 0);     /* constu 624485 */
	UT_EQ_U64(v, 624485);
	UT_EQ_INT(EVAL(&f, &v, 0x11, 0xc0, 0xbb, 0x78), 0);     /* consts -123456 */
	UT_EQ_U64(v, (uint64_t)-123456);
	UT_EQ_INT(EVAL(&f, &v, 0x03, 8, 7, 6, 5, 4, 3, 2, 1), 0);
	UT_EQ_U64(v, 0x0102030405060708ull);
	/* lit1 lit2 lit3 rot: 3 1 2 (top 2); pick 2 -> 3 */
	UT_EQ_INT(EVAL(&f, &v, 0x31, 0x32, 0x33, 0x17), 0);
	UT_EQ_U64(v, 2);
	UT_EQ_INT(EVAL(&f, &v, 0x31, 0x32, 0x33, 0x17, 0x15, 2), 0);
	UT_EQ_U64(v, 3);
	UT_EQ_INT(EVAL(&f, &v, 0x31, 0x32, 0x16), 0);           /* swap */
	UT_EQ_U64(v, 1);
	UT_EQ_INT(EVAL(&f, &v, 0x31, 0x32, 0x14), 0);           /* over */
	UT_EQ_U64(v, 1);
	UT_EQ_INT(EVAL(&f, &v, 0x35, 0x12, 0x22), 0);           /* dup plus */
	UT_EQ_U64(v, 10);
	UT_EQ_INT(EVAL(&f, &v, 0x35, 0x36, 0x13), 0);           /* drop */
	UT_EQ_U64(v, 5);
	UT_EQ_INT(EVAL(&f, &v, 0x96, 0x4f), 0);                 /* nop, lit31 */
	UT_EQ_U64(v, 31);
}

UT_TEST(dwexpr_arithmetic)
{
	struct fake f = { 0 };
	uint64_t v = 0;

	UT_EQ_INT(EVAL(&f, &v, 0x37, 0x33, 0x1c), 0);           /* 7 - 3 */
	UT_EQ_U64(v, 4);
	UT_EQ_INT(EVAL(&f, &v, 0x33, 0x37, 0x1c), 0);           /* 3 - 7 */
	UT_EQ_U64(v, (uint64_t)-4);
	UT_EQ_INT(EVAL(&f, &v, 0x11, 0x79, 0x32, 0x1b), 0);     /* -7 / 2 (signed) */
	UT_EQ_U64(v, (uint64_t)-3);
	UT_EQ_INT(EVAL(&f, &v, 0x37, 0x33, 0x1d), 0);           /* 7 mod 3 */
	UT_EQ_U64(v, 1);
	UT_EQ_INT(EVAL(&f, &v, 0x37, 0x33, 0x1e), 0);
	UT_EQ_U64(v, 21);
	UT_EQ_INT(EVAL(&f, &v, 0x3c, 0x3a, 0x1a), 0);           /* 12 & 10 */
	UT_EQ_U64(v, 8);
	UT_EQ_INT(EVAL(&f, &v, 0x3c, 0x3a, 0x21), 0);
	UT_EQ_U64(v, 14);
	UT_EQ_INT(EVAL(&f, &v, 0x3c, 0x3a, 0x27), 0);
	UT_EQ_U64(v, 6);
	UT_EQ_INT(EVAL(&f, &v, 0x31, 0x34, 0x24), 0);           /* 1 << 4 */
	UT_EQ_U64(v, 16);
	UT_EQ_INT(EVAL(&f, &v, 0x31, 0x08, 64, 0x24), 0);       /* 1 << 64: 0, no UB */
	UT_EQ_U64(v, 0);
	UT_EQ_INT(EVAL(&f, &v, 0x11, 0x70, 0x32, 0x26), 0);     /* -16 >>a 2 */
	UT_EQ_U64(v, (uint64_t)-4);
	UT_EQ_INT(EVAL(&f, &v, 0x11, 0x70, 0x32, 0x25), 0);     /* -16 >> 2 */
	UT_EQ_U64(v, ~0ull >> 2 & ~3ull);
	UT_EQ_INT(EVAL(&f, &v, 0x11, 0x7b, 0x19), 0);           /* abs -5 */
	UT_EQ_U64(v, 5);
	UT_EQ_INT(EVAL(&f, &v, 0x35, 0x1f), 0);                 /* neg */
	UT_EQ_U64(v, (uint64_t)-5);
	UT_EQ_INT(EVAL(&f, &v, 0x30, 0x20), 0);                 /* not */
	UT_EQ_U64(v, ~0ull);
	/* INT64_MIN / -1 wraps, no trap */
	UT_EQ_INT(EVAL(&f, &v, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0x80, 0x11, 0x7f, 0x1b), 0);
	UT_EQ_U64(v, 1ull << 63);
	UT_EQ_INT(EVAL(&f, &v, 0x33, 0x35, 0x2d), 0);           /* 3 < 5 */
	UT_EQ_U64(v, 1);
	UT_EQ_INT(EVAL(&f, &v, 0x33, 0x35, 0x2b), 0);           /* 3 > 5 */
	UT_EQ_U64(v, 0);
	UT_EQ_INT(EVAL(&f, &v, 0x35, 0x35, 0x29), 0);
	UT_EQ_U64(v, 1);
	UT_EQ_INT(EVAL(&f, &v, 0x35, 0x35, 0x2e), 0);
	UT_EQ_U64(v, 0);
}

UT_TEST(dwexpr_registers_memory_and_branches)
{
	struct fake f = { 0 };
	uint64_t v = 0;

	set_reg(&f, 3, 100);
	set_reg(&f, 31, MEM_BASE);
	UT_EQ_INT(EVAL(&f, &v, 0x73, 0x7c), 0);                 /* breg3 -4 */
	UT_EQ_U64(v, 96);
	put_mem(&f, MEM_BASE + 8, 0x1122334455667788ull);
	UT_EQ_INT(EVAL(&f, &v, 0x8f, 8, 0x94, 1), 0);           /* breg31 8; deref_size 1 */
	UT_EQ_U64(v, 0x88);
	UT_EQ_INT(EVAL(&f, &v, 0x8f, 8, 0x94, 2), 0);
	UT_EQ_U64(v, 0x7788);
	UT_EQ_INT(EVAL(&f, &v, 0x8f, 8, 0x94, 4), 0);
	UT_EQ_U64(v, 0x55667788);
	UT_EQ_INT(EVAL(&f, &v, 0x8f, 8, 0x94, 3), -EINVAL);
	/* lit1; bra +1 (taken) over lit5; lit7: 7 */
	UT_EQ_INT(EVAL(&f, &v, 0x31, 0x28, 1, 0, 0x35, 0x37), 0);
	UT_EQ_U64(v, 7);
	/* lit0; bra +1 (not taken): lit5 lit7 */
	UT_EQ_INT(EVAL(&f, &v, 0x30, 0x28, 1, 0, 0x35), 0);
	UT_EQ_U64(v, 5);
	/* skip +1 over lit5; lit6 */
	UT_EQ_INT(EVAL(&f, &v, 0x2f, 1, 0, 0x35, 0x36), 0);
	UT_EQ_U64(v, 6);
	/* skip 0: to the very end */
	UT_EQ_INT(EVAL(&f, &v, 0x31, 0x2f, 0, 0), 0);
	UT_EQ_U64(v, 1);
	/* an initial value (DW_CFA_expression's CFA) */
	{
		static const uint8_t plus8[] = { 0x23, 8 };
		const struct dwexpr_env env = { &f, fake_reg, fake_mem };
		uint64_t init = 40;
		UT_EQ_INT(dwexpr_eval(plus8, 2, &env, &init, &v, NULL), 0);
		UT_EQ_U64(v, 48);
	}
}

UT_TEST(dwexpr_hostile_expressions_fail_cleanly)
{
	struct fake f = { 0 };
	uint8_t big[DWEXPR_MAX_STACK + 1];
	uint64_t v = 0;

	UT_EQ_INT(eval(&f, NULL, 0, &v), -EINVAL);               /* empty: no value */
	UT_EQ_INT(EVAL(&f, &v, 0x13), -EINVAL);                  /* drop: underflow */
	UT_EQ_INT(EVAL(&f, &v, 0x22), -EINVAL);
	UT_EQ_INT(EVAL(&f, &v, 0x31, 0x17), -EINVAL);            /* rot needs 3 */
	UT_EQ_INT(EVAL(&f, &v, 0x31, 0x15, 1), -EINVAL);         /* pick past the stack */
	UT_EQ_INT(EVAL(&f, &v, 0x31, 0x30, 0x1b), -EINVAL);      /* div by 0 */
	UT_EQ_INT(EVAL(&f, &v, 0x31, 0x30, 0x1d), -EINVAL);      /* mod by 0 */
	UT_EQ_INT(EVAL(&f, &v, 0x0e, 1, 2, 3), -EINVAL);         /* truncated operand */
	UT_EQ_INT(EVAL(&f, &v, 0x10, 0x80, 0x80), -EINVAL);      /* truncated LEB128 */
	UT_EQ_INT(EVAL(&f, &v, 0x10, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
		       0x80, 0x80, 0x80, 0x01), -EINVAL);        /* LEB128 too long */
	UT_EQ_INT(EVAL(&f, &v, 0x2f, 0x10, 0), -EINVAL);         /* skip past the end */
	UT_EQ_INT(EVAL(&f, &v, 0x2f, 0xf0, 0xff), -EINVAL);      /* skip before the start */
	UT_EQ_INT(EVAL(&f, &v, 0x2f, 0xfd, 0xff), -E2BIG);       /* skip -3: itself, forever */
	UT_EQ_INT(EVAL(&f, &v, 0x50), -ENOTSUP);                 /* reg0: a location */
	UT_EQ_INT(EVAL(&f, &v, 0x31, 0x9f), -ENOTSUP);           /* stack_value */
	UT_EQ_INT(EVAL(&f, &v, 0xe0), -ENOTSUP);                 /* vendor */
	UT_EQ_INT(EVAL(&f, &v, 0x92, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0), -EINVAL);
	UT_EQ_INT(EVAL(&f, &v, 0x70, 0), -EFAULT);               /* breg0 unknown */
	memset(big, 0x30, sizeof(big));                           /* 65 x lit0 */
	UT_EQ_INT(eval(&f, big, sizeof(big), &v), -EINVAL);
	UT_EQ_INT(eval(&f, big, sizeof(big) - 1, &v), 0);
	/* no callbacks: registers and memory unknown */
	{
		static const uint8_t breg[] = { 0x70, 0 }, deref[] = { 0x31, 0x06 };
		const struct dwexpr_env none = { NULL, NULL, NULL };
		UT_EQ_INT(dwexpr_eval(breg, 2, &none, NULL, &v, NULL), -EFAULT);
		UT_EQ_INT(dwexpr_eval(deref, 2, &none, NULL, &v, NULL), -EFAULT);
	}
}
