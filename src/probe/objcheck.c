#include "probe/objcheck.h"

#include <bpf/libbpf.h>
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
	return bad;
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
