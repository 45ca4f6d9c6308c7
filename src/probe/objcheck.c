#include "probe/objcheck.h"

#include <bpf/libbpf.h>
#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/elf.h"
#include "sys/kfeatures.h"

#define OLD_MAX_INSNS 4096   /* BPF_MAXINSNS, the cap before 5.2 */

static void problem(objcheck_report_fn report, void *ctx, const char *object, const char *fmt,
		    ...) __attribute__((format(printf, 4, 5)));
static void problem(objcheck_report_fn report, void *ctx, const char *object, const char *fmt,
		    ...)
{
	char line[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	report(ctx, object, line);
}

static bool has(unsigned kver, enum kfeature f)
{
	return kfeature_since(f) <= kver;
}

/* One call instruction: a helper the kernel must know, or a BPF-to-BPF call. */
static size_t check_call(const char *object, const char *prog, size_t i,
			 const struct bpf_insn *in, unsigned kver, objcheck_report_fn report,
			 void *ctx)
{
	const char *name;
	unsigned since;

	if (in->src_reg == BPF_PSEUDO_CALL) {
		if (has(kver, KF_BPF_CALLS))
			return 0;
		problem(report, ctx, object, "program %s: instruction %zu is a BPF-to-BPF call "
			"(4.16+)", prog, i);
		return 1;
	}
	since = kfeatures_helper_since(in->imm, &name);
	if (since && since <= kver)
		return 0;
	if (since)
		problem(report, ctx, object, "program %s: instruction %zu calls helper %s (%d), "
			"new in %u.%u", prog, i, name, in->imm, KVER_MAJOR(since),
			KVER_MINOR(since));
	else
		problem(report, ctx, object, "program %s: instruction %zu calls helper %d, newer "
			"than the table knows", prog, i, in->imm);
	return 1;
}

/* The successors of instruction i: *a (and *b for a conditional jump);
 * SIZE_MAX when there is none. */
static void successors(const struct bpf_insn *insns, size_t n, size_t i, size_t *a, size_t *b)
{
	const struct bpf_insn *in = &insns[i];
	unsigned cls = BPF_CLASS(in->code), op = BPF_OP(in->code);
	long target = (long)i + 1 + in->off;

	*a = *b = SIZE_MAX;
	if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
		*a = i + 2 < n ? i + 2 : SIZE_MAX;
		return;
	}
	if ((cls == BPF_JMP || cls == BPF_JMP32) && op == BPF_EXIT)
		return;
	if ((cls == BPF_JMP || cls == BPF_JMP32) && op != BPF_CALL) {
		*b = target >= 0 && (size_t)target < n ? (size_t)target : SIZE_MAX;
		if (op == BPF_JA)
			return;
	}
	*a = i + 1 < n ? i + 1 : SIZE_MAX;
}

/* A depth-first walk from instruction 0, as the kernel's check_cfg does
 * before 5.3: an edge to an instruction still on the walk's stack is a
 * back-edge (a loop); a backward jump to a finished one is not. */
static size_t check_loops(const char *object, const char *prog, const struct bpf_insn *insns,
			  size_t n, objcheck_report_fn report, void *ctx)
{
	enum { NEW, ON_STACK, DONE };
	unsigned char *state = calloc(n ? n : 1, 1), *seen = calloc(n ? n : 1, 1);
	size_t *stack = malloc((n ? n : 1) * sizeof(*stack)), depth = 0, bad = 0;

	if (!state || !seen || !stack || !n)
		goto out;
	stack[depth++] = 0;
	state[0] = ON_STACK;
	while (depth) {
		size_t i = stack[depth - 1], succ[2], next = SIZE_MAX;

		successors(insns, n, i, &succ[0], &succ[1]);
		/* seen[i]: how many of i's edges were followed already */
		while (seen[i] < 2 && next == SIZE_MAX) {
			size_t t = succ[seen[i]++];
			if (t == SIZE_MAX)
				continue;
			if (state[t] == NEW)
				next = t;
			else if (state[t] == ON_STACK && bad++ < 8)
				problem(report, ctx, object, "program %s: instruction %zu "
					"jumps back to %zu (a loop; bounded loops need 5.3)",
					prog, i, t);
		}
		if (next == SIZE_MAX) {
			state[i] = DONE;
			depth--;
		} else {
			state[next] = ON_STACK;
			stack[depth++] = next;
		}
	}
out:
	free(state);
	free(seen);
	free(stack);
	return bad;
}

/* What a register or 8-byte stack slot may hold, as a set: a pointer to the
 * stack, a map value (from bpf_map_lookup_elem), or anything else. */
enum { MAY_STACK = 1, MAY_MAP_VALUE = 2, MAY_OTHER = 4 };

#define STACK_SLOTS 64   /* 512 bytes of stack, 8 per slot */

struct flow_state {
	unsigned char reg[11];
	unsigned char slot[STACK_SLOTS];
};

/* The stack slot a load or store at [r10 + off] of 8 bytes names, or -1. */
static int stack_slot(const struct bpf_insn *in, unsigned base)
{
	int off = in->off;

	if (base != BPF_REG_10 || off >= 0 || off < -8 * STACK_SLOTS || off % 8)
		return -1;
	return (-off / 8) - 1;
}

/* The state after instruction i (one of the two halves of a 64-bit load is i). */
static void flow_step(const struct bpf_insn *in, struct flow_state *st)
{
	unsigned cls = BPF_CLASS(in->code), op = BPF_OP(in->code), d = in->dst_reg & 0xf;
	unsigned sreg = in->src_reg & 0xf;
	int slot;

	if (d > 10 || sreg > 10)
		return;
	if (cls == BPF_JMP && op == BPF_CALL) {
		for (unsigned r = 1; r <= 5; r++)
			st->reg[r] = MAY_OTHER;
		st->reg[0] = in->src_reg == 0 && in->imm == BPF_FUNC_map_lookup_elem
			     ? MAY_MAP_VALUE : MAY_OTHER;
	} else if (cls == BPF_ALU64 && op == BPF_MOV) {
		st->reg[d] = BPF_SRC(in->code) == BPF_X ? st->reg[sreg] : MAY_OTHER;
	} else if (cls == BPF_ALU64 && (op == BPF_ADD || op == BPF_SUB)) {
		/* pointer +/- something stays that pointer */
		if (BPF_SRC(in->code) == BPF_X && !(st->reg[d] & (MAY_STACK | MAY_MAP_VALUE)))
			st->reg[d] = (st->reg[sreg] & (MAY_STACK | MAY_MAP_VALUE)) | MAY_OTHER;
	} else if (cls == BPF_ALU64 || cls == BPF_ALU || cls == BPF_LD) {
		st->reg[d] = MAY_OTHER;
	} else if (cls == BPF_LDX) {
		slot = BPF_SIZE(in->code) == BPF_DW ? stack_slot(in, sreg) : -1;
		st->reg[d] = slot >= 0 ? st->slot[slot] : MAY_OTHER;
	} else if (cls == BPF_STX || cls == BPF_ST) {
		slot = stack_slot(in, d);
		if (slot >= 0)
			st->slot[slot] = cls == BPF_STX && BPF_SIZE(in->code) == BPF_DW &&
					 BPF_MODE(in->code) == BPF_MEM ? st->reg[sreg] : MAY_OTHER;
	}
}

static bool flow_merge(struct flow_state *into, const struct flow_state *from)
{
	bool changed = false;

	for (size_t r = 0; r < sizeof(into->reg); r++) {
		changed |= (into->reg[r] | from->reg[r]) != into->reg[r];
		into->reg[r] |= from->reg[r];
	}
	for (size_t k = 0; k < STACK_SLOTS; k++) {
		changed |= (into->slot[k] | from->slot[k]) != into->slot[k];
		into->slot[k] |= from->slot[k];
	}
	return changed;
}

/* Forward data flow to a fixed point (the sets only grow, so it ends). */
static void flow_run(const struct bpf_insn *insns, size_t n, struct flow_state *in_state,
		     bool *reached)
{
	size_t *work = malloc(n * sizeof(*work)), top = 0;
	bool *queued = calloc(n, sizeof(*queued));

	if (!work || !queued)
		goto out;
	memset(&in_state[0], MAY_OTHER, sizeof(in_state[0]));
	in_state[0].reg[BPF_REG_10] = MAY_STACK;
	reached[0] = queued[0] = true;
	work[top++] = 0;
	while (top) {
		size_t i = work[--top], succ[2];
		struct flow_state st = in_state[i];

		queued[i] = false;
		flow_step(&insns[i], &st);
		successors(insns, n, i, &succ[0], &succ[1]);
		for (size_t k = 0; k < 2; k++) {
			size_t t = succ[k];
			if (t == SIZE_MAX)
				continue;
			if ((!reached[t] || flow_merge(&in_state[t], &st)) && !queued[t]) {
				if (!reached[t])
					in_state[t] = st;
				reached[t] = queued[t] = true;
				work[top++] = t;
			}
		}
	}
out:
	free(work);
	free(queued);
}

/* A map value as a map helper's key or value: before 4.18 the verifier takes
 * only stack pointers there. */
static size_t check_map_args(const char *object, const char *prog, const struct bpf_insn *insns,
			     size_t n, objcheck_report_fn report, void *ctx)
{
	struct flow_state *in_state = n ? calloc(n, sizeof(*in_state)) : NULL;
	bool *reached = n ? calloc(n, sizeof(*reached)) : NULL;
	size_t bad = 0;

	if (!in_state || !reached)
		goto out;
	flow_run(insns, n, in_state, reached);
	for (size_t i = 0; i < n; i++) {
		int id = insns[i].imm;
		unsigned last = id == BPF_FUNC_map_update_elem ? BPF_REG_3 : BPF_REG_2;

		if (!reached[i] || insns[i].code != (BPF_JMP | BPF_CALL) || insns[i].src_reg != 0 ||
		    (id != BPF_FUNC_map_lookup_elem && id != BPF_FUNC_map_update_elem &&
		     id != BPF_FUNC_map_delete_elem))
			continue;
		for (unsigned reg = BPF_REG_2; reg <= last; reg++) {
			if (!(in_state[i].reg[reg] & MAY_MAP_VALUE))
				continue;
			problem(report, ctx, object, "program %s: instruction %zu passes a map "
				"value as the %s of a map helper (stack only before 4.18)", prog,
				i, reg == BPF_REG_2 ? "key" : "value");
			bad++;
		}
	}
out:
	free(in_state);
	free(reached);
	return bad;
}

size_t objcheck_insns(const char *object, const char *prog, const struct bpf_insn *insns,
		      size_t n, unsigned kver, objcheck_report_fn report, void *ctx)
{
	size_t bad = 0;

	if (n > OLD_MAX_INSNS && !has(kver, KF_LARGE_PROGS)) {
		problem(report, ctx, object, "program %s: %zu instructions, over the %d a kernel "
			"before 5.2 verifies", prog, n, OLD_MAX_INSNS);
		bad++;
	}
	for (size_t i = 0; i < n; i++) {
		const struct bpf_insn *in = &insns[i];
		unsigned cls = BPF_CLASS(in->code), op = BPF_OP(in->code);

		if (in->code == (BPF_LD | BPF_IMM | BPF_DW)) {
			i++;   /* its second half */
			continue;
		}
		if (cls == BPF_JMP32 && kver < KVER(5, 1)) {
			problem(report, ctx, object, "program %s: instruction %zu is a JMP32 "
				"instruction (5.1+)", prog, i);
			bad++;
		}
		if (cls != BPF_JMP && cls != BPF_JMP32)
			continue;
		if (op == BPF_CALL)
			bad += check_call(object, prog, i, in, kver, report, ctx);
	}
	if (!has(kver, KF_BOUNDED_LOOPS))
		bad += check_loops(object, prog, insns, n, report, ctx);
	if (kver < KVER(4, 18))
		bad += check_map_args(object, prog, insns, n, report, ctx);
	return bad;
}

static const char *elf_type_name(uint16_t t)
{
	return t == ET_REL ? "object file" : t == ET_EXEC ? "executable"
	       : t == ET_DYN ? "shared object or PIE" : t == ET_CORE ? "core dump" : "file";
}

static const char *elf_machine_name(uint16_t m)
{
	return m == EM_BPF ? "BPF" : m == EM_X86_64 ? "x86_64" : m == EM_AARCH64 ? "arm64"
	       : m == EM_ARM ? "arm" : m == EM_386 ? "x86" : "not BPF";
}

/* Sections a kernel without global data cannot have; .BTF.ext's CO-RE part. */
static size_t check_sections(const char *object, const void *elf, size_t size, unsigned kver,
			     objcheck_report_fn report, void *ctx, struct err *err)
{
	static const char *const global[] = { ".rodata", ".data", ".bss", ".kconfig" };
	struct elf_file *f;
	struct elf_section sec;
	size_t bad = 0;
	int rc = elf_open_mem(object, elf, size, &f, err);

	if (rc < 0)
		return (size_t)-1;
	if (elf_machine(f) != EM_BPF || elf_type(f) != ET_REL) {
		err_set(err, -ENOEXEC, "%s: not a BPF object: an ELF %s for machine %u (%s); "
			"check-objects reads BPF objects (clang -target bpf -c: ET_REL, "
			"EM_BPF)", object, elf_type_name(elf_type(f)), elf_machine(f),
			elf_machine_name(elf_machine(f)));
		elf_close(f);
		return (size_t)-1;
	}
	for (size_t i = 0; i < elf_section_count(f); i++) {
		if (elf_section_at(f, i, &sec) < 0)
			continue;
		for (size_t g = 0; g < sizeof(global) / sizeof(global[0]); g++) {
			size_t l = strlen(global[g]);
			if (strncmp(sec.name, global[g], l) == 0 &&
			    (sec.name[l] == '\0' || sec.name[l] == '.') &&
			    !has(kver, KF_GLOBAL_DATA)) {
				problem(report, ctx, object, "section %s: global data (5.2+)",
					sec.name);
				bad++;
			}
		}
	}
	if (elf_find_section(f, ".BTF.ext", &sec) == 0 && sec.size >= 32) {
		size_t len;
		const uint8_t *base = elf_data(f, &len);
		const uint8_t *d = base + (sec.offset <= len - 32 ? sec.offset : 0);
		uint32_t hdr_len, core_len = 0;

		/* struct btf_ext_header: magic, version, flags (4 bytes), hdr_len,
		 * func/line info (off, len) x2, then core_relo_off, core_relo_len.
		 * elf_open_mem checked that the section lies in the file. */
		memcpy(&hdr_len, d + 4, sizeof(hdr_len));
		if (hdr_len >= 32 && len >= 32 && sec.offset <= len - 32)
			memcpy(&core_len, d + 28, sizeof(core_len));
		if (core_len) {
			problem(report, ctx, object, "CO-RE relocations (%u bytes): they need "
				"kernel BTF", core_len);
			bad++;
		}
	}
	elf_close(f);
	return bad;
}

static size_t check_maps(const char *object, struct bpf_object *obj, unsigned kver,
			 objcheck_report_fn report, void *ctx)
{
	struct bpf_map *map;
	size_t bad = 0;

	bpf_object__for_each_map(map, obj) {
		const char *name;
		unsigned since = kfeatures_map_type_since(bpf_map__type(map), &name);

		if (bpf_map__is_internal(map)) {
			if (!has(kver, KF_GLOBAL_DATA)) {
				problem(report, ctx, object, "map %s: global data (5.2+)",
					bpf_map__name(map));
				bad++;
			}
			continue;
		}
		if (!since) {
			problem(report, ctx, object, "map %s: type %d, unknown to the table",
				bpf_map__name(map), bpf_map__type(map));
			bad++;
		} else if (since > kver) {
			problem(report, ctx, object, "map %s: type %s (%d), new in %u.%u",
				bpf_map__name(map), name, bpf_map__type(map), KVER_MAJOR(since),
				KVER_MINOR(since));
			bad++;
		}
	}
	return bad;
}

int objcheck_object(const char *object, const void *elf, size_t size, unsigned kver,
		    objcheck_report_fn report, void *ctx, struct err *err)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = object);
	struct bpf_object *obj;
	struct bpf_program *prog;
	size_t bad = check_sections(object, elf, size, kver, report, ctx, err);

	if (bad == (size_t)-1)
		return err->code;
	obj = bpf_object__open_mem(elf, size, &oo);
	if (!obj)
		return err_set(err, -errno, "%s: libbpf cannot open it: %s", object,
			       strerror(errno));
	bpf_object__for_each_program(prog, obj)
		bad += objcheck_insns(object, bpf_program__name(prog), bpf_program__insns(prog),
				      bpf_program__insn_cnt(prog), kver, report, ctx);
	bad += check_maps(object, obj, kver, report, ctx);
	bpf_object__close(obj);
	return (int)bad;
}
