/* Unit tests: the plan's choice between a uretprobe and exit probes
 * (plan/exits.c), on small code files written here. */
#include "ut.h"

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/exits.h"
#include "plan/plan.h"

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

#define ODEX "oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/" \
	     "com.android.location.provider.odex"

/* A Java method of the real Android 11 x86_64 odex, at its code's file
 * offset (from the independent table in oat-expected). */
static void setup_java(struct plan_probe *p, struct probe_config *pc, uint64_t offset)
{
	memset(p, 0, sizeof(*p));
	memset(pc, 0, sizeof(*pc));
	pc->method_signature = "int a.B.get()";
	p->cfg = pc;
	p->prog = return_program("prog_Uprobestats_uretprobe_call_return");
	snprintf(p->program_name, sizeof(p->program_name), "prog_Uprobestats_uretprobe_call_return");
	snprintf(p->path, sizeof(p->path), "%s", ut_testdata(ODEX));
	p->offset = offset;
	p->machine = EM_X86_64;
	p->java = true;
	p->how = RESOLVED_OAT_BUILTIN;
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

	/* int ActivityRecognitionEvent.getEventType(): mov eax, [rsi+12]; ret */
	setup_java(&p, &pc, 0x3430);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(p.exit_probes);
	UT_EQ_INT(p.n_exits, 1);
	UT_EQ_U64(p.exit_offsets[0], 0x3433);
	free(p.exit_offsets);
	/* void LocationProviderBase.setAllowed(boolean): two returns */
	setup_java(&p, &pc, 0x60c0);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_EQ_INT(p.n_exits, 2);
	UT_EQ_U64(p.exit_offsets[0], 0x612d);
	UT_EQ_U64(p.exit_offsets[1], 0x61ef);
	UT_CONTAINS(p.note, "exit probes at 2 exit sites");
	free(p.exit_offsets);
}

/* The same methods in the Android 13 arm64 odex (the VM scenarios' file). */
UT_TEST(plan_exits_java_arm64_methods)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { 0 };
	struct err e = { 0 };

	setup_java(&p, &pc, 31328);  /* isEnabled(): ret at +0x38 */
	snprintf(p.path, sizeof(p.path), "%s",
		 ut_testdata("oat/android-13/arm64/realme_ice_ossi_TP1A.220905.001/"
			     "com.android.location.provider.odex"));
	p.machine = EM_AARCH64;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_EQ_INT(p.n_exits, 1);
	UT_EQ_U64(p.exit_offsets[0], 31328 + 0x38);
	free(p.exit_offsets);
	p.exit_offsets = NULL;
	p.note[0] = '\0';
	p.offset = 32224;            /* setAllowed(boolean): rets at +0x78, +0x17c */
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_EQ_INT(p.n_exits, 2);
	UT_EQ_U64(p.exit_offsets[0], 32224 + 0x78);
	UT_EQ_U64(p.exit_offsets[1], 32224 + 0x17c);
	free(p.exit_offsets);
}

UT_TEST(plan_exits_java_uretprobe_refused_unless_unsafe)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { 0 };
	struct err e = { 0 };

	setup_java(&p, &pc, 0x3430);
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

UT_TEST(plan_exits_java_without_exit_sites_is_refused_with_the_reason)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { 0 };
	struct err e = { 0 };

	/* Not an oat file: no method header, no CodeInfo, no exits. */
	setup(&p, &pc, leaf, sizeof(leaf), 16, true);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), PLAN_REFUSED);
	UT_CONTAINS(e.msg, "refusing a uretprobe on ART code (no exit sites: ");
	o.unsafe_uretprobe = true;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(!p.exit_probes);
	UT_CONTAINS(p.note, "UNSAFE: uretprobe on ART code (--unsafe-uretprobe; no exit sites)");
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
}

/* void FusedProvider.<init>(): a lone ret, a frameless leaf without stack
 * maps.  It cannot reach a safepoint, so its uretprobe is safe and is used
 * (entry and exit probes on one instruction could not be ordered). */
UT_TEST(plan_exits_an_empty_java_leaf_keeps_a_safe_uretprobe)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { 0 };
	struct err e = { 0 };

	setup_java(&p, &pc, 0x4ee0);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(!p.exit_probes);
	UT_EQ_INT(p.n_exits, 0);
	UT_CONTAINS(p.note, "cannot reach a safepoint");
	/* A method with a frame and stack maps never gets one: setAllowed()
	 * keeps its exit probes. */
	setup_java(&p, &pc, 0x60c0);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(p.exit_probes);
	free(p.exit_offsets);
}

/* An ELF symbol in an OAT file is ART code too: no uretprobe there either. */
UT_TEST(plan_exits_native_probe_in_an_oat_file_is_art_code)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { 0 };
	struct err e = { 0 };

	setup_java(&p, &pc, 0x3430);
	p.java = false;
	p.how = RESOLVED_ELF_SYMBOL;
	p.code_size = 4;           /* getEventType's code, as if a symbol named it */
	pc.method_signature = "oatexec";
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(p.exit_probes);  /* by default, as for Java methods */
	UT_EQ_U64(p.exit_offsets[0], 0x3433);
	free(p.exit_offsets);
	p.exit_offsets = NULL;
	p.exit_probes = false;
	pc.has_exit_probes = true;
	pc.exit_probes = false;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), PLAN_REFUSED);
	UT_CONTAINS(e.msg, "oatexec: refusing a uretprobe on ART code");
}
