/* Unit tests of stack/unwind.c (the stepping rules, over a fake stack and a
 * fake code lookup) and of stack_record_parse (exact record length). */
#include <errno.h>
#include <string.h>

#include "stack/stacks.h"
#include "stack/unwind.h"
#include "ut.h"

#define BASE 0x7ffe0000ull

/* Fake code: [0x1000,0x2000) Java method J1 (frame 64, stack map at +0x40),
 * [0x2000,0x3000) Java J2 (frame 32, stack maps at +0x10), [0x3000,0x4000)
 * native N with a CFI row "CFA = rsp+16, RA at CFA-8", [0x4000,0x5000) native
 * F without CFI in a file without CFI, 0x5000 interpreted, 0x6000 JIT. */
struct fake {
	int lookups;
};

static int fake_lookup(void *ctx, uint64_t pc, bool is_return, struct code_info *ci)
{
	struct fake *f = ctx;
	uint64_t q = is_return ? pc - 1 : pc;

	f->lookups++;
	if (q >= 0x1000 && q < 0x2000) {
		ci->kind = FRAME_JAVA;
		ci->symbol = "J1";
		ci->frame_size = 64;
		ci->core_spill_mask = (1u << 16) | (1u << 5) | (1u << 3); /* ra, rbp, rbx */
		ci->at_start = pc == 0x1000;
		ci->stack_map_hit = pc == 0x1040;
		ci->dex_pc = ci->stack_map_hit ? 7 : UINT32_MAX;
	} else if (q >= 0x2000 && q < 0x3000) {
		ci->kind = FRAME_JAVA;
		ci->symbol = "J2";
		ci->frame_size = 32;
		ci->at_start = pc == 0x2000;
		ci->at_exit = pc == 0x2ff0;         /* J2's ret */
		ci->stack_map_hit = pc == 0x2010;
	} else if (q >= 0x3000 && q < 0x4000) {
		ci->kind = FRAME_NATIVE;
		ci->symbol = "N";
		ci->file_has_cfi = true;
		ci->has_cfi = true;
		ci->cfi.cfa_reg = 7;
		ci->cfi.cfa_off = 16;
		ci->cfi.ra_reg = 16;
		ci->cfi.regs[16].kind = CFI_RULE_OFFSET;
		ci->cfi.regs[16].off = -8;
		ci->cfi.regs[6].kind = CFI_RULE_OFFSET;
		ci->cfi.regs[6].off = -16;
	} else if (q >= 0x4000 && q < 0x5000) {
		ci->kind = FRAME_NATIVE;
		ci->symbol = "F";
		ci->file_has_cfi = false;
	} else if (q >= 0x5000 && q < 0x6000) {
		ci->kind = FRAME_INTERPRETED;
	} else if (q >= 0x6000 && q < 0x7000) {
		ci->kind = FRAME_JIT;
	} else if (q >= 0x8000 && q < 0x9000) {
		ci->kind = FRAME_NATIVE;       /* CFA from rbp, as a stub with a frame pointer */
		ci->symbol = "S";
		ci->file_has_cfi = true;
		ci->has_cfi = true;
		ci->cfi.cfa_reg = 6;
		ci->cfi.cfa_off = 16;
		ci->cfi.ra_reg = 16;
		ci->cfi.regs[16].kind = CFI_RULE_OFFSET;
		ci->cfi.regs[16].off = -8;
		ci->cfi.regs[6].kind = CFI_RULE_OFFSET;
		ci->cfi.regs[6].off = -16;
	} else if (q >= 0xa000 && q < 0xb000) {
		ci->kind = FRAME_INTERPRETED;  /* libart's interpreter, with CFI and DEX1 */
		ci->symbol = "I";
		ci->file = "/apex/com.android.art/lib64/libart.so";
		ci->file_has_cfi = true;
		ci->has_cfi = true;
		ci->cfi.cfa_reg = 7;
		ci->cfi.cfa_off = 16;
		ci->cfi.ra_reg = 16;
		ci->cfi.regs[16].kind = CFI_RULE_OFFSET;
		ci->cfi.regs[16].off = -8;
		ci->cfi.regs[5].kind = CFI_RULE_DEX_PC;   /* rdi: DEX1 over r12 + 4 */
		ci->cfi.regs[5].reg = 12;
		ci->cfi.regs[5].off = 4;
	} else if (q >= 0xb000 && q < 0xc000) {
		ci->kind = FRAME_JIT;          /* named by ART's symfile, with its CFI */
		ci->symbol = "Jit.m";
		ci->file = "/memfd:jit-cache (deleted)";
		ci->file_has_cfi = true;
		ci->has_cfi = true;
		ci->cfi.cfa_reg = 7;
		ci->cfi.cfa_off = 32;
		ci->cfi.ra_reg = 16;
		ci->cfi.regs[16].kind = CFI_RULE_OFFSET;
		ci->cfi.regs[16].off = -8;
	} else if (q >= 0xe000 && q < 0xf000) {
		/* mterp's handlers as Debian's libart has them: CFA = [r15 - 8] + 88
		 * (DW_CFA_def_cfa_expression: bregx r15 -8; deref; plus_uconst 88),
		 * RA at CFA-8, DEX1 over r12 + 4 */
		static const uint8_t expr[] = { 0x92, 15, 0x78, 0x06, 0x23, 88 };
		ci->kind = FRAME_NATIVE;
		ci->symbol = "M";
		ci->file = "/apex/com.android.art/lib64/libart.so";
		ci->file_has_cfi = true;
		ci->has_cfi = true;
		ci->cfi.cfa_expr_len = sizeof(expr);
		memcpy(ci->cfi.cfa_expr, expr, sizeof(expr));
		ci->cfi.ra_reg = 16;
		ci->cfi.regs[16].kind = CFI_RULE_OFFSET;
		ci->cfi.regs[16].off = -8;
		ci->cfi.regs[5].kind = CFI_RULE_DEX_PC;
		ci->cfi.regs[5].reg = 12;
		ci->cfi.regs[5].off = 4;
	} else if (q >= 0x7000 && q < 0x8000) {
		ci->kind = FRAME_NATIVE;
		ci->symbol = "E";
		ci->file_has_cfi = true;
		ci->cfi_error = -ENOENT;
	} else {
		ci->kind = FRAME_UNKNOWN;
		ci->why = "unknown in test";
	}
	return 0;
}

static void put(uint8_t *stack, uint64_t addr, uint64_t v)
{
	memcpy(stack + (addr - BASE), &v, 8);
}

static void input(struct unwind_input *in, uint8_t *stack, size_t len, uint64_t pc)
{
	memset(in, 0, sizeof(*in));
	in->arch = UNWIND_X86_64;
	in->regs[16] = pc;
	in->regs[7] = BASE;
	in->stack_base = BASE;
	in->stack = stack;
	in->stack_len = len;
}

/* J2 (probed mid-method, frame 32) -> J1 (frame 64) -> N (CFI) -> F (FP) */
UT_TEST(unwind_java_frames_then_cfi_then_frame_pointer)
{
	uint8_t stack[512] = { 0 };
	struct unwind_input in;
	struct stack_trace st;
	struct fake fk = { 0 };

	input(&in, stack, sizeof(stack), 0x2100);
	put(stack, BASE + 32 - 8, 0x1040);          /* J2's return PC: J1 +0x40 */
	put(stack, BASE + 32 + 64 - 8, 0x3010);     /* J1's return PC: N */
	/* N: CFA = sp + 16 = BASE+112; RA at BASE+104, rbp at BASE+96 */
	put(stack, BASE + 104, 0x4010);
	put(stack, BASE + 96, BASE + 200);          /* F's frame pointer */
	put(stack, BASE + 200, BASE + 300);         /* F: saved rbp, then return 0 */
	put(stack, BASE + 208, 0);
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 4);
	UT_ASSERT(!strcmp(st.frames[0].symbol, "J2"));
	UT_ASSERT(!strcmp(st.frames[1].symbol, "J1"));
	UT_EQ_INT(st.frames[1].dex_pc, 7);
	UT_EQ_INT(st.frames[1].kind, FRAME_JAVA);
	UT_ASSERT(!strcmp(st.frames[2].symbol, "N"));
	UT_ASSERT(!strcmp(st.frames[3].symbol, "F"));
	UT_ASSERT(!strcmp(st.end, "outermost frame"));
}

UT_TEST(unwind_java_return_pc_without_stack_map_stops)
{
	uint8_t stack[256] = { 0 };
	struct unwind_input in;
	struct stack_trace st;
	struct fake fk = { 0 };

	input(&in, stack, sizeof(stack), 0x2100);
	put(stack, BASE + 24, 0x1044);              /* inside J1 but no stack map there */
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 2);
	UT_ASSERT(!strcmp(st.frames[1].symbol, "J1"));
	UT_ASSERT(st.frames[1].note && strstr(st.frames[1].note, "no stack map"));
	UT_ASSERT(strstr(st.end, "no stack map"));
}

UT_TEST(unwind_java_entry_uses_return_address_at_sp)
{
	uint8_t stack[256] = { 0 };
	struct unwind_input in;
	struct stack_trace st;
	struct fake fk = { 0 };

	input(&in, stack, sizeof(stack), 0x2000);   /* J2's first instruction */
	put(stack, BASE, 0x1040);
	put(stack, BASE + 8 + 64 - 8, 0);           /* J1 returns to 0: the end */
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 2);
	UT_ASSERT(!strcmp(st.frames[1].symbol, "J1"));
	UT_ASSERT(!strcmp(st.end, "outermost frame"));
}

UT_TEST(unwind_interpreted_jit_unknown_are_marked_and_end)
{
	uint64_t pcs[3] = { 0x5000, 0x6000, 0x9000 };
	const char *notes[3] = { "interpreted", "jit", "unknown in test" };

	for (int i = 0; i < 3; i++) {
		uint8_t stack[64] = { 0 };
		struct unwind_input in;
		struct stack_trace st;
		struct fake fk = { 0 };

		input(&in, stack, sizeof(stack), 0x2000);
		put(stack, BASE, pcs[i] + 4);
		unwind_walk(&in, fake_lookup, &fk, &st);
		UT_EQ_INT(st.n, 2);
		UT_ASSERT(st.frames[1].note && !strcmp(st.frames[1].note, notes[i]));
	}
}

UT_TEST(unwind_no_cfi_row_in_a_file_with_cfi_stops_instead_of_guessing)
{
	uint8_t stack[128] = { 0 };
	struct unwind_input in;
	struct stack_trace st;
	struct fake fk = { 0 };

	input(&in, stack, sizeof(stack), 0x7010);   /* not the first instruction */
	in.regs[6] = BASE + 32;                     /* a plausible frame pointer */
	put(stack, BASE + 32, BASE + 64);
	put(stack, BASE + 40, 0x4010);
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 1);
	UT_ASSERT(!strcmp(st.end, "no CFI covers this PC"));
}

UT_TEST(unwind_reads_stop_at_the_slice_end_and_frame_limit_holds)
{
	uint8_t stack[16] = { 0 };
	struct unwind_input in;
	struct stack_trace st;
	struct fake fk = { 0 };

	input(&in, stack, sizeof(stack), 0x2100);   /* needs sp+24: outside 16 bytes */
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 1);
	UT_ASSERT(!strcmp(st.end, "stack slice ends"));

	/* a return address pointing at itself with a moving sp: the limit ends it */
	uint8_t big[4096] = { 0 };
	input(&in, big, sizeof(big), 0x2000);
	for (uint64_t a = BASE; a + 8 <= BASE + sizeof(big); a += 8)
		put(big, a, 0x4010);
	in.regs[6] = BASE;
	for (uint64_t a = BASE + 8; a + 16 <= BASE + sizeof(big); a += 16)
		put(big, a, a + 8);                 /* rbp chain, 16 bytes a frame */
	in.max_frames = 5;
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_ASSERT(st.n <= 5);
}

UT_TEST(stack_record_length_is_exact)
{
	uint8_t rec[sizeof(struct ups_stack_hdr) + 128 + 64 + 64 * 8] = { 0 };
	struct ups_stack_hdr h = { 0 };
	struct stack_record r;

	h.env.kind = UPS_REC_STACK;
	h.inner_len = 44;                           /* padded to 48 */
	h.stack_len = 64;
	memcpy(rec, &h, sizeof(h));
	UT_EQ_INT(stack_record_parse(rec, sizeof(h) + 48 + 64, &r), 0);
	UT_ASSERT(r.stack == rec + sizeof(h) + 48);
	UT_EQ_INT(stack_record_parse(rec, sizeof(h) + 48 + 63, &r), -EINVAL);
	UT_EQ_INT(stack_record_parse(rec, sizeof(h) + 48 + 65, &r), -EINVAL);
	h.stack_len = UPS_STACK_MAX_BYTES + 8;      /* over the bound */
	memcpy(rec, &h, sizeof(h));
	UT_EQ_INT(stack_record_parse(rec, sizeof(rec), &r), -EINVAL);
	h.stack_len = 64;                           /* a kernel walk: PCs, then a slice */
	h.n_pcs = 3;
	memcpy(rec, &h, sizeof(h));
	UT_EQ_INT(stack_record_parse(rec, sizeof(h) + 48 + 24 + 64, &r), 0);
	UT_ASSERT((const uint8_t *)r.pcs == rec + sizeof(h) + 48);
	UT_ASSERT(r.stack == rec + sizeof(h) + 48 + 24);
	UT_EQ_INT(stack_record_parse(rec, sizeof(h) + 48 + 24 + 56, &r), -EINVAL);
	UT_EQ_INT(stack_record_parse(rec, sizeof(h) + 48 + 64, &r), -EINVAL);
	h.n_pcs = UPS_STACK_MAX_FRAMES + 1;
	memcpy(rec, &h, sizeof(h));
	UT_EQ_INT(stack_record_parse(rec, sizeof(rec), &r), -EINVAL);
	h.n_pcs = 0;
	h.stack_len = 0;
	h.inner_len = 8;                            /* shorter than an envelope */
	memcpy(rec, &h, sizeof(h));
	UT_EQ_INT(stack_record_parse(rec, sizeof(h) + 8, &r), -EINVAL);
}

/* J2 -> J1 (spills rbp at sp+F-16, rbx at sp+F-24) -> S, whose CFA is rbp+16:
 * only the rbp restored from J1's spill slot finds S's caller. */
UT_TEST(unwind_java_frame_restores_callee_saves_for_a_native_caller)
{
	uint8_t stack[512] = { 0 };
	struct unwind_input in;
	struct stack_trace st;
	struct fake fk = { 0 };
	uint64_t j1 = BASE + 32, s_sp = j1 + 64, s_fp = BASE + 256;

	input(&in, stack, sizeof(stack), 0x2100);
	put(stack, BASE + 24, 0x1040);              /* J2 -> J1 at a stack map */
	put(stack, j1 + 56, 0x8010);                /* J1 -> S */
	put(stack, j1 + 48, s_fp);                  /* J1's spilled rbp: S's frame pointer */
	put(stack, j1 + 40, 0x1234);                /* J1's spilled rbx */
	put(stack, s_fp, 0);                        /* S: saved rbp, return address 0 */
	put(stack, s_fp + 8, 0);
	(void)s_sp;
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 3);
	UT_ASSERT(!strcmp(st.frames[2].symbol, "S"));
	UT_ASSERT(!strcmp(st.end, "outermost frame"));
}

/* At a Java method's ret (an exit probe) the frame is gone: [sp] is the
 * return address, as at entry, not sp+F-8. */
UT_TEST(unwind_java_exit_uses_return_address_at_sp)
{
	uint8_t stack[256] = { 0 };
	struct unwind_input in;
	struct stack_trace st;
	struct fake fk = { 0 };

	input(&in, stack, sizeof(stack), 0x2ff0);
	put(stack, BASE, 0x1040);
	put(stack, BASE + 24, 0x9999);              /* where sp+F-8 would wrongly look */
	put(stack, BASE + 8 + 64 - 8, 0);
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 2);
	UT_ASSERT(!strcmp(st.frames[1].symbol, "J1"));
}

/* --stack-mode kernel at a uretprobe into J2 (its stack map): the program
 * walked J2 -> J1 -> S and stopped at S (native).  The slice starts inside
 * J1's frame (UPS_KWALK_LEAD below S's sp in the tool): J2's return slot is
 * not in it, the walked PCs stand in for it; J1's spilled rbp is, so S's
 * CFA (rbp+16) is known and the walk goes on past S from the slice. */
static void kernel_input(struct unwind_input *in, uint8_t *stack, uint64_t from,
			 const uint64_t *pcs, uint32_t n, bool cont)
{
	input(in, stack + (from - BASE), 512 - (from - BASE), pcs[0]);
	in->stack_base = from;
	in->first_is_return = true;
	in->pcs = pcs;
	in->n_pcs = n;
	in->pcs_continue = cont;
}

UT_TEST(unwind_kernel_walk_continues_with_restored_callee_saves)
{
	static const uint64_t pcs[] = { 0x2010, 0x1040, 0x8010 };
	uint8_t stack[512] = { 0 };
	struct unwind_input in;
	struct stack_trace st;
	struct fake fk = { 0 };
	uint64_t j1 = BASE + 32, s_fp = BASE + 256;

	put(stack, BASE + 24, 0x9999);              /* not in the slice: never read */
	put(stack, j1 + 56, 0x8010);
	put(stack, j1 + 48, s_fp);                  /* J1's spilled rbp */
	put(stack, s_fp, 0);
	put(stack, s_fp + 8, 0x3010);               /* S -> N */
	put(stack, s_fp + 16 + 8, 0);               /* N: return address 0 */
	kernel_input(&in, stack, j1, pcs, 3, true);
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 4);
	UT_ASSERT(!strcmp(st.frames[0].symbol, "J2") && !st.frames[0].note);
	UT_ASSERT(!strcmp(st.frames[1].symbol, "J1") && st.frames[1].dex_pc == 7);
	UT_ASSERT(!strcmp(st.frames[2].symbol, "S") && !st.frames[2].note);
	UT_ASSERT(!strcmp(st.frames[3].symbol, "N"));
	UT_ASSERT(!strcmp(st.end, "outermost frame"));

	/* the slice starts above J1's rbp slot: rbp is unknown, S is not guessed */
	kernel_input(&in, stack, j1 + 56, pcs, 3, true);
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 3);
	UT_ASSERT(!strcmp(st.frames[2].note, "CFA register unknown"));

	/* the program's walk stopped at S without a slice to go on (its limit) */
	kernel_input(&in, stack, j1, pcs, 3, false);
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 3);
	UT_ASSERT(!strcmp(st.end, UNWIND_END_KWALK) && !st.frames[2].note);
}

UT_TEST(unwind_kernel_walk_refuses_what_the_code_map_disagrees_with)
{
	static const uint64_t native_mid[] = { 0x2010, 0x3010, 0x8010 };
	static const uint64_t no_map[] = { 0x2010, 0x1041, 0x8010 };
	static const uint64_t inside[] = { 0x2100, 0x1040, 0x8010 };
	uint8_t stack[512] = { 0 };
	struct unwind_input in;
	struct stack_trace st;
	struct fake fk = { 0 };

	kernel_input(&in, stack, BASE, native_mid, 3, true);
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 2);
	UT_ASSERT(st.frames[1].note && strstr(st.frames[1].note, "no compiled Java method"));

	kernel_input(&in, stack, BASE, no_map, 3, true);
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 2);
	UT_ASSERT(!strcmp(st.end, "return PC matches no stack map"));

	/* a probe inside a framed method: the program's [sp] was no return PC */
	kernel_input(&in, stack, BASE, inside, 3, true);
	in.first_is_return = false;
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 1);
	UT_ASSERT(strstr(st.end, "probe inside a framed Java method") != NULL);
}

static int fake_dex(void *ctx, uint64_t addr, struct code_info *ci)
{
	(void)ctx;
	if (addr != 0xd00c)
		return -ENOENT;
	ci->kind = FRAME_INTERPRETED;
	ci->symbol = "void A.b()";
	ci->file = "dex@0xd000";
	ci->offset = 0xc;
	ci->dex_pc = 3;
	ci->line = 9;
	return 0;
}

/* JIT code with its symfile's CFI -> libart's interpreter (CFI with the DEX1
 * rule over r12+4) -> F (frame pointers): the JIT frame is stepped, the
 * interpreter's own frame is native (libart's, marked art) and the method it
 * runs follows it, named by the dex lookup at r12+4. */
UT_TEST(unwind_jit_cfi_and_dex1_interpreted_frame)
{
	uint8_t stack[512] = { 0 };
	struct unwind_input in;
	struct stack_trace st;
	struct fake fk = { 0 };

	input(&in, stack, sizeof(stack), 0xb010);
	in.dex = fake_dex;
	in.regs[12] = 0xd008;
	put(stack, BASE + 24, 0xa010);              /* JIT: CFA rsp+32, RA at CFA-8 */
	put(stack, BASE + 32 + 8, 0x4010);          /* I: CFA rsp+16, RA at CFA-8 */
	in.regs[6] = BASE + 200;
	put(stack, BASE + 200, BASE + 300);
	put(stack, BASE + 208, 0);
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 4);
	UT_EQ_INT(st.frames[0].kind, FRAME_JIT);
	UT_EQ_STR(st.frames[0].symbol, "Jit.m");
	UT_ASSERT(!st.frames[0].art);
	UT_EQ_INT(st.frames[1].kind, FRAME_NATIVE);
	UT_EQ_STR(st.frames[1].symbol, "I");
	UT_ASSERT(st.frames[1].art);
	UT_EQ_INT(st.frames[2].kind, FRAME_INTERPRETED);
	UT_EQ_STR(st.frames[2].symbol, "void A.b()");
	UT_EQ_INT(st.frames[2].dex_pc, 3);
	UT_EQ_INT(st.frames[2].line, 9);
	UT_EQ_STR(st.frames[3].symbol, "F");
	UT_ASSERT(!st.frames[1].note && !st.frames[2].note);

	/* a dex address no registered dex holds: the interpreter's frame is stepped,
	 * no method is made up */
	input(&in, stack, sizeof(stack), 0xb010);
	in.dex = fake_dex;
	in.regs[6] = BASE + 200;
	in.regs[12] = 0xdead;
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 3);
	UT_EQ_STR(st.frames[2].symbol, "F");
}

/* JIT -> mterp-like M, whose CFA is a DWARF expression reading the caller's sp
 * saved in the interpreter's frame ([r15 - 8] + 88) -> F: M is stepped by the
 * expression's value, the method it runs follows, then F.  With r15 pointing
 * outside the captured slice the expression cannot be read: M is marked and
 * the walk ends there, no method made up. */
UT_TEST(unwind_cfa_expression_steps_mterp_frame)
{
	uint8_t stack[512] = { 0 };
	struct unwind_input in;
	struct stack_trace st;
	struct fake fk = { 0 };

	input(&in, stack, sizeof(stack), 0xb010);
	in.dex = fake_dex;
	in.regs[12] = 0xd008;
	in.regs[15] = BASE + 100;
	put(stack, BASE + 24, 0xe010);              /* JIT: CFA rsp+32, RA at CFA-8 */
	put(stack, BASE + 92, BASE + 120);          /* [r15 - 8]: CFA = BASE+120+88 */
	put(stack, BASE + 200, 0x4010);             /* M: RA at CFA-8 */
	in.regs[6] = BASE + 300;
	put(stack, BASE + 300, BASE + 400);
	put(stack, BASE + 308, 0);
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 4);
	UT_EQ_STR(st.frames[0].symbol, "Jit.m");
	UT_EQ_STR(st.frames[1].symbol, "M");
	UT_ASSERT(st.frames[1].art && !st.frames[1].note);
	UT_EQ_INT(st.frames[2].kind, FRAME_INTERPRETED);
	UT_EQ_STR(st.frames[2].symbol, "void A.b()");
	UT_EQ_STR(st.frames[3].symbol, "F");
	UT_EQ_U64(st.frames[3].pc, 0x4010);

	in.regs[15] = BASE + 4096;                  /* [r15 - 8] not captured */
	unwind_walk(&in, fake_lookup, &fk, &st);
	UT_EQ_INT(st.n, 2);
	UT_EQ_STR(st.frames[1].symbol, "M");
	UT_ASSERT(st.frames[1].note && strstr(st.frames[1].note, "CFA expression"));
}
