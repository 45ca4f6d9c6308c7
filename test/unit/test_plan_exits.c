/* Unit tests: the plan's choice between a uretprobe and exit probes
 * (plan/exits.c), on small code files written here. */
#include "ut.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/exits.h"

/* 16 bytes of padding, then the function: "xor eax, eax; ret". */
static const uint8_t leaf[] = {
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	0x31, 0xc0, 0xc3,
};

/* A function that ends in a tail call: "jmp rel32" out of itself. */
static const uint8_t tail[] = { 0x31, 0xc0, 0xe9, 0x00, 0x10, 0x00, 0x00 };

static const struct catalog_program *return_program(const char *name)
{
	const struct catalog_object *obj;
	const struct catalog_program *prog;

	return catalog_find_program(name, &obj, &prog) == 0 ? prog : NULL;
}

static void setup(struct plan_probe *p, struct probe_config *pc, const uint8_t *code,
		  size_t size, uint64_t offset, bool java)
{
	const char *path = ut_tmpfile(java ? "code-java.bin" : "code-native.bin");
	FILE *f = fopen(path, "wb");

	memset(p, 0, sizeof(*p));
	memset(pc, 0, sizeof(*pc));
	if (f) {
		fwrite(code, 1, size, f);
		fclose(f);
	}
	pc->method_signature = java ? "int a.B.get()" : "fn";
	p->cfg = pc;
	p->prog = return_program("prog_Uprobestats_uretprobe_call_return");
	snprintf(p->program_name, sizeof(p->program_name), "prog_Uprobestats_uretprobe_call_return");
	snprintf(p->path, sizeof(p->path), "%s", path);
	p->offset = offset;
	p->code_size = size - offset;
	p->machine = EM_X86_64;
	p->java = java;
	p->how = java ? RESOLVED_OAT_BUILTIN : RESOLVED_ELF_SYMBOL;
}

UT_TEST(plan_exits_native_keeps_its_uretprobe_unless_asked)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { 0 };
	struct err e = { 0 };

	setup(&p, &pc, leaf, sizeof(leaf), 16, false);
	UT_ASSERT(p.prog);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(!p.exit_probes);
	o.exit_probes = true;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(p.exit_probes);
	UT_EQ_INT(p.n_exits, 1);
	UT_EQ_U64(p.exit_offsets[0], 16 + 2);  /* file offset of the ret */
	UT_CONTAINS(p.note, "exit probes at 1 exit site");
	free(p.exit_offsets);
}

UT_TEST(plan_exits_field_overrides_the_option_per_probe)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { .exit_probes = true };
	struct err e = { 0 };

	setup(&p, &pc, leaf, sizeof(leaf), 16, false);
	pc.has_exit_probes = true;
	pc.exit_probes = false;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(!p.exit_probes);
	o.exit_probes = false;
	pc.exit_probes = true;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(p.exit_probes);
	free(p.exit_offsets);
}

UT_TEST(plan_exits_native_unprovable_exits_are_refused)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { .exit_probes = true };
	struct err e = { 0 };

	setup(&p, &pc, tail, sizeof(tail), 0, false);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), PLAN_REFUSED);
	UT_CONTAINS(e.msg, "fn: no exit probes: its exits cannot be proven");
	UT_ASSERT(!p.exit_probes && !p.exit_offsets);
}

UT_TEST(plan_exits_java_gets_exit_probes_by_default)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { 0 };
	struct err e = { 0 };

	setup(&p, &pc, leaf, sizeof(leaf), 16, true);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(p.exit_probes);
	UT_EQ_INT(p.n_exits, 1);
	UT_EQ_U64(p.exit_offsets[0], 18);
	free(p.exit_offsets);
}

UT_TEST(plan_exits_java_uretprobe_refused_unless_unsafe)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { 0 };
	struct err e = { 0 };

	setup(&p, &pc, leaf, sizeof(leaf), 16, true);
	pc.has_exit_probes = true;
	pc.exit_probes = false;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), PLAN_REFUSED);
	UT_CONTAINS(e.msg, "int a.B.get(): refusing a uretprobe on ART code (the probe sets "
			   "exit_probes: false)");
	UT_CONTAINS(e.msg, "--unsafe-uretprobe");
	o.unsafe_uretprobe = true;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(!p.exit_probes);
	UT_CONTAINS(p.note, "UNSAFE: uretprobe on ART code");
}

UT_TEST(plan_exits_java_without_code_size_is_refused_with_the_reason)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { 0 };
	struct err e = { 0 };

	setup(&p, &pc, leaf, sizeof(leaf), 16, true);
	p.code_size = 0;
	p.how = RESOLVED_OATDUMP;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), PLAN_REFUSED);
	UT_CONTAINS(e.msg, "no exit sites: the code size is unknown (resolved through oatdump)");
	o.unsafe_uretprobe = true;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(!p.exit_probes);
}

UT_TEST(plan_exits_entry_programs_are_untouched)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { .exit_probes = true };
	struct err e = { 0 };

	setup(&p, &pc, leaf, sizeof(leaf), 16, true);
	p.prog = return_program("prog_GenericInstrumentation_uprobe_call_detail");
	UT_ASSERT(p.prog);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(!p.exit_probes && !p.exit_offsets);
}

UT_TEST(plan_exits_a_bare_return_is_refused)
{
	static const uint8_t bare[] = { 0xc3 };
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { .exit_probes = true };
	struct err e = { 0 };

	setup(&p, &pc, bare, sizeof(bare), 0, false);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), PLAN_REFUSED);
	UT_CONTAINS(e.msg, "its first instruction is a return");
	setup(&p, &pc, bare, sizeof(bare), 0, true);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), PLAN_REFUSED);
	UT_CONTAINS(e.msg, "refusing a uretprobe on ART code (no exit sites: its first "
			   "instruction is a return");
}
