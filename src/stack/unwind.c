#include "stack/unwind.h"

#include <errno.h>
#include <string.h>

#include "formats/dwexpr.h"

#define X86_RBP 6
#define X86_RSP 7
#define X86_RIP 16
#define A64_FP 29
#define A64_LR 30
#define A64_SP 31
#define A64_PC 32

struct walk {
	const struct unwind_input *in;
	uint64_t r[UNWIND_NREGS];
	uint64_t valid;          /* bit per register of r[] */
	unwind_lookup_fn lookup;
	void *ctx;
	uint32_t idx;            /* the frame being stepped, from 0 */
	bool has_given;          /* the step's return PC is given (kernel walk) */
	uint64_t given;
	uint32_t max;            /* frames */
};

static int sp_reg(const struct walk *w)
{
	return w->in->arch == UNWIND_X86_64 ? X86_RSP : A64_SP;
}

static int pc_reg(const struct walk *w)
{
	return w->in->arch == UNWIND_X86_64 ? X86_RIP : A64_PC;
}

static int fp_reg(const struct walk *w)
{
	return w->in->arch == UNWIND_X86_64 ? X86_RBP : A64_FP;
}

/* An aligned u64 of the captured slice; false outside it. */
static bool read_u64(const struct walk *w, uint64_t addr, uint64_t *v)
{
	uint64_t base = w->in->stack_base;

	if (addr < base || addr - base > w->in->stack_len ||
	    w->in->stack_len - (addr - base) < 8)
		return false;
	memcpy(v, w->in->stack + (addr - base), 8);
	return true;
}

static void set_reg(struct walk *w, int reg, uint64_t v)
{
	w->r[reg] = v;
	w->valid |= 1ull << reg;
}

static bool has_reg(const struct walk *w, int reg)
{
	return reg >= 0 && reg < UNWIND_NREGS && (w->valid >> reg) & 1;
}

/* Return address and caller sp when no frame exists (a function's first
 * instruction, a frameless leaf): [sp] and sp+8 on x86_64, lr and sp on arm64. */
static const char *step_no_frame(struct walk *w, uint64_t *ret)
{
	uint64_t sp = w->r[sp_reg(w)];

	if (w->in->arch == UNWIND_ARM64) {
		if (!w->has_given && !has_reg(w, A64_LR))
			return "lr unknown";
		*ret = w->has_given ? w->given : w->r[A64_LR];
		w->valid &= ~(1ull << A64_LR);
		return NULL;
	}
	if (w->has_given)
		*ret = w->given;
	else if (!read_u64(w, sp, ret))
		return "stack slice ends";
	set_reg(w, X86_RSP, sp + 8);
	return NULL;
}

/* The callee saves a compiled Java frame spilled (art-frames.md §1.2), so a
 * native caller's CFI finds them: x86_64 pushes them from r15 down, the
 * highest register at sp+F-16; arm64 stores them ascending from
 * sp+F-8*popcount(mask), lr last at sp+F-8. */
static void restore_java_saves(struct walk *w, uint64_t sp, const struct code_info *ci)
{
	/* ART's x86_64 register numbers -> DWARF */
	static const int8_t x86_dwarf[16] = { 0, 2, 1, 3, -1, 6, 4, 5,
					      8, 9, 10, 11, 12, 13, 14, 15 };
	uint32_t mask = ci->core_spill_mask;
	uint64_t v;

	if (w->in->arch == UNWIND_X86_64) {
		uint64_t slot = sp + ci->frame_size - 16;
		for (int r = 15; r >= 0; r--) {
			if (!((mask >> r) & 1) || x86_dwarf[r] < 0)
				continue;
			if (read_u64(w, slot, &v))
				set_reg(w, x86_dwarf[r], v);
			slot -= 8;
		}
		return;
	}
	uint64_t slot = sp + ci->frame_size - 8ull * (uint64_t)__builtin_popcount(mask);
	for (int r = 0; r < 31; r++) {
		if (!((mask >> r) & 1))
			continue;
		if (r != A64_LR && read_u64(w, slot, &v))
			set_reg(w, r, v);
		slot += 8;
	}
}

/* Compiled Java: return PC at sp+F-8, caller sp = sp+F, callee saves from
 * their spill slots.  ART keeps no frame pointer. */
static const char *step_java(struct walk *w, const struct code_info *ci, bool first,
			     uint64_t *ret)
{
	uint64_t sp = w->r[sp_reg(w)];

	if (ci->frameless || (first && (ci->at_start || ci->at_exit)))
		return step_no_frame(w, ret);
	if (ci->frame_size < 16 || ci->frame_size % 16)
		return "bad frame size";
	if (w->has_given)
		*ret = w->given;
	else if (!read_u64(w, sp + ci->frame_size - 8, ret))
		return "stack slice ends";
	w->valid = 0;
	restore_java_saves(w, sp, ci);
	set_reg(w, sp_reg(w), sp + ci->frame_size);
	return NULL;
}

static bool cfi_reg_value(struct walk *w, const struct cfi_row *row, uint32_t reg, uint64_t cfa,
			  uint64_t *v)
{
	const struct cfi_rule *rule;

	if (reg >= CFI_MAX_REGS)
		return false;
	rule = &row->regs[reg];
	switch (rule->kind) {
	case CFI_RULE_SAME:
		*v = w->r[reg];
		return has_reg(w, (int)reg);
	case CFI_RULE_OFFSET:
		return read_u64(w, cfa + (uint64_t)rule->off, v);
	case CFI_RULE_VAL_OFFSET:
		*v = cfa + (uint64_t)rule->off;
		return true;
	case CFI_RULE_REGISTER:
		*v = rule->reg < UNWIND_NREGS ? w->r[rule->reg] : 0;
		return has_reg(w, rule->reg);
	default:
		return false;
	}
}

/* DWARF expression callbacks: the frame's registers, the captured slice. */
static bool expr_reg(void *ctx, uint32_t reg, uint64_t *v)
{
	const struct walk *w = ctx;

	if (reg >= UNWIND_NREGS || !has_reg(w, (int)reg))
		return false;
	*v = w->r[reg];
	return true;
}

static bool expr_mem(void *ctx, uint64_t addr, unsigned size, uint64_t *v)
{
	uint64_t full;

	if (size == 8)
		return read_u64(ctx, addr, v);
	if (!read_u64(ctx, addr, &full))
		return false;
	*v = full & ((1ull << (size * 8)) - 1);
	return true;
}

/* A CFA given by DW_CFA_def_cfa_expression (mterp's handlers, PLT entries). */
static const char *cfa_by_expression(struct walk *w, const struct cfi_row *row, uint64_t *cfa)
{
	const struct dwexpr_env env = { w, expr_reg, expr_mem };
	const char *why = NULL;
	int rc = dwexpr_eval(row->cfa_expr, row->cfa_expr_len, &env, NULL, cfa, &why);

	if (rc == -EFAULT)
		return "CFA expression reads a register or memory not captured";
	return rc ? "CFA expression not evaluated" : NULL;
}

/* Native with a CFI row.  Returns NULL, or why the walk stops; *outermost
 * when the return-address rule is "undefined" (the end of the stack). */
static const char *step_cfi(struct walk *w, const struct cfi_row *row, uint64_t *ret,
			    bool *outermost)
{
	uint64_t cfa, regs[UNWIND_NREGS] = { 0 };
	uint64_t valid = 0;

	if (row->cfa_expr_len) {
		const char *why = cfa_by_expression(w, row, &cfa);
		if (why)
			return why;
	} else if (!has_reg(w, (int)row->cfa_reg)) {
		return "CFA register unknown";
	} else {
		cfa = w->r[row->cfa_reg] + (uint64_t)row->cfa_off;
	}
	if (row->ra_reg >= CFI_MAX_REGS)
		return "bad return-address column";
	if (row->regs[row->ra_reg].kind == CFI_RULE_UNDEFINED) {
		*outermost = true;
		return "outermost frame";
	}
	if (!cfi_reg_value(w, row, row->ra_reg, cfa, ret))
		return "stack slice ends";
	for (uint32_t r = 0; r < UNWIND_NREGS && r < CFI_MAX_REGS; r++) {
		uint64_t v;

		if (row->regs[r].kind == CFI_RULE_SAME && !has_reg(w, (int)r))
			continue;
		if (cfi_reg_value(w, row, r, cfa, &v)) {
			regs[r] = v;
			valid |= 1ull << r;
		}
	}
	memcpy(w->r, regs, sizeof(regs));
	w->valid = valid & ~(1ull << row->ra_reg);
	set_reg(w, sp_reg(w), cfa);
	return NULL;
}

/* Native without CFI: the frame-pointer chain, which must move up the stack. */
static const char *step_fp(struct walk *w, uint64_t *ret)
{
	uint64_t fp, next_fp, sp = w->r[sp_reg(w)];
	int fpr = fp_reg(w);

	if (!has_reg(w, fpr))
		return "no CFI and no frame pointer";
	fp = w->r[fpr];
	if (fp < sp || fp % 8)
		return "no CFI, frame pointer below sp";
	if (!read_u64(w, fp, &next_fp) || !read_u64(w, fp + 8, ret))
		return "stack slice ends";
	w->valid = 0;
	set_reg(w, sp_reg(w), fp + 16);
	if (next_fp > fp)
		set_reg(w, fpr, next_fp);
	return NULL;
}

static bool is_art_file(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	b = b ? b + 1 : path;
	return b && (!strcmp(b, "libart.so") || !strcmp(b, "libartd.so"));
}

static void fill_frame(struct stack_frame *f, uint64_t pc, const struct code_info *ci)
{
	*f = (struct stack_frame){
		.pc = pc,
		.kind = ci->kind,
		.file = ci->file,
		.offset = ci->offset,
		.symbol = ci->symbol,
		.symbol_off = ci->symbol_off,
		.dex_pc = ci->kind == FRAME_JAVA || ci->kind == FRAME_INTERPRETED ? ci->dex_pc
										  : UINT32_MAX,
		.line = ci->line,
		.art = ci->kind != FRAME_JAVA && is_art_file(ci->file),
	};
}

/* The dex address a DEX1 rule of row gives, from this frame's registers. */
static bool dex_address(const struct walk *w, const struct cfi_row *row, uint64_t *addr)
{
	for (uint32_t r = 0; r < CFI_MAX_REGS; r++) {
		const struct cfi_rule *rule = &row->regs[r];
		if (rule->kind != CFI_RULE_DEX_PC)
			continue;
		if (!has_reg(w, rule->reg))
			return false;
		*addr = w->r[rule->reg] + (uint64_t)rule->off;
		return true;
	}
	return false;
}

/* A native frame by its CFI row; when the row carries ART's DEX1 rule, the
 * interpreted method it runs follows as the next frame. */
static const char *step_native_cfi(struct walk *w, struct stack_trace *out,
				   const struct cfi_row *row, uint64_t *ret, bool *outermost)
{
	uint64_t addr = 0;
	bool has_dex = w->in->dex && dex_address(w, row, &addr);
	const char *why = step_cfi(w, row, ret, outermost);
	struct code_info di;

	if (why || !has_dex || out->n >= w->max)
		return why;
	memset(&di, 0, sizeof(di));
	di.dex_pc = UINT32_MAX;
	if (w->in->dex(w->ctx, addr, &di) < 0 || di.kind != FRAME_INTERPRETED)
		return NULL;
	fill_frame(&out->frames[out->n], addr, &di);
	out->frames[out->n].offset = di.offset;
	out->n++;
	return NULL;
}

/* Frame k of a kernel walk: NULL to step it (its return PC the next walked
 * PC, but for the last one that continues from the slice), or why the walk
 * ends here.  The kernel stepped frame 0 as having no frame yet (a
 * function's first instruction or a return) unless it is a return PC, and
 * every other walked frame by its Java frame size. */
static const char *kernel_step(struct walk *w, const struct code_info *ci, bool first,
			       bool is_return, uint32_t k, bool *end)
{
	if (first && !is_return && ci->kind == FRAME_JAVA && !ci->frameless && !ci->at_start &&
	    !ci->at_exit)
		return "probe inside a framed Java method: the kernel walk cannot step from here";
	if (k + 1 == w->in->n_pcs) {
		*end = !w->in->pcs_continue;
		return NULL;
	}
	if (ci->kind != FRAME_JAVA)
		return "the code map finds no compiled Java method where the kernel walk did";
	memcpy(&w->given, w->in->pcs + k + 1, sizeof(w->given));
	w->has_given = true;
	return NULL;
}

/* One frame: look up pc, record it, and step to the caller.  Returns NULL to
 * go on, or why the walk ends (the frame's note when it is a refusal). */
static const char *one_frame(struct walk *w, struct stack_trace *out, bool first,
			     uint64_t *next_pc)
{
	uint64_t pc = w->r[pc_reg(w)];
	struct stack_frame *f = &out->frames[out->n];
	struct code_info ci;
	bool outermost = false, is_return = !first || w->in->first_is_return;
	uint32_t k = w->idx++;
	const char *why;

	memset(&ci, 0, sizeof(ci));
	ci.dex_pc = UINT32_MAX;
	w->has_given = false;
	if (w->lookup(w->ctx, pc, is_return, &ci) < 0 || ci.kind == FRAME_UNKNOWN) {
		ci.kind = FRAME_UNKNOWN;
		fill_frame(f, pc, &ci);
		out->n++;
		f->note = ci.why ? ci.why : "unknown";
		return "unknown code";
	}
	fill_frame(f, pc, &ci);
	out->n++;
	if (ci.kind == FRAME_JAVA && is_return && !ci.stack_map_hit) {
		f->note = "return PC matches no stack map";
		return f->note;
	}
	if (k < w->in->n_pcs) {
		bool end = false;

		why = kernel_step(w, &ci, first, is_return, k, &end);
		if (why)
			f->note = why;
		if (why || end)
			return why ? why : UNWIND_END_KWALK;
	}
	switch (ci.kind) {
	case FRAME_JAVA:
		why = step_java(w, &ci, first, next_pc);
		break;
	case FRAME_INTERPRETED:
	case FRAME_JIT:
		if (!ci.has_cfi) {
			f->note = ci.kind == FRAME_JIT ? "jit" : "interpreted";
			return ci.kind == FRAME_JIT ? "JIT frame" : "interpreted frame";
		}
		if (ci.kind == FRAME_INTERPRETED)
			f->kind = FRAME_NATIVE;   /* the interpreter's own code */
		why = step_native_cfi(w, out, &ci.cfi, next_pc, &outermost);
		if (outermost)
			return why;
		break;
	case FRAME_NATIVE:
		if (ci.has_cfi)
			why = step_native_cfi(w, out, &ci.cfi, next_pc, &outermost);
		else if (ci.at_start && first)
			why = step_no_frame(w, next_pc);
		else if (!ci.file_has_cfi)
			why = step_fp(w, next_pc);
		else
			why = ci.cfi_error == -ENOENT ? "no CFI covers this PC"
						      : "CFI at this PC not readable";
		if (outermost)
			return why;
		break;
	default:
		return "unknown code";
	}
	if (why)
		f->note = why;
	return why;
}

void unwind_walk(const struct unwind_input *in, unwind_lookup_fn lookup, void *ctx,
		 struct stack_trace *out)
{
	struct walk w = { .in = in, .lookup = lookup, .ctx = ctx };
	uint32_t max = in->max_frames && in->max_frames < UNWIND_MAX_FRAMES ? in->max_frames
									 : UNWIND_MAX_FRAMES;

	w.max = max;
	out->n = 0;
	out->truncated = false;
	out->end = NULL;
	memcpy(w.r, in->regs, sizeof(w.r));
	w.valid = (UNWIND_NREGS >= 64 ? ~0ull : (1ull << UNWIND_NREGS) - 1);
	for (bool first = true; out->n < max; first = false) {
		uint64_t next = 0, prev_sp = w.r[sp_reg(&w)];
		const char *why = one_frame(&w, out, first, &next);

		if (why) {
			out->end = why;
			return;
		}
		if (!next) {
			out->end = "outermost frame";
			return;
		}
		if (w.r[sp_reg(&w)] < prev_sp || (w.r[sp_reg(&w)] == prev_sp && !first)) {
			out->frames[out->n - 1].note = "stack pointer does not move up";
			out->end = "stack pointer does not move up";
			return;
		}
		set_reg(&w, pc_reg(&w), next);
	}
	out->truncated = true;
	out->end = "frame limit";
}
