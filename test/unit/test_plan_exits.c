/* Unit tests: the plan's choice between a uretprobe and exit probes
 * (plan/exits.c), on small code files written here. */
#include "ut.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/codecache.h"
#include "plan/exits.h"
#include "plan/exits_tail.h"
#include "plan/plan.h"
#include "resolve/native.h"

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

/* Issue 32: a config's native return probe gets exit probes by default, as
 * trace --ret does (a uretprobe kills a C++ program an exception passes
 * through); --exit-probes changes nothing there. */
UT_TEST(plan_exits_native_gets_exit_probes_by_default)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { .code = ut_code_cache() };
	struct err e = { 0 };

	for (int opt = 0; opt < 2; opt++) {
		setup(&p, &pc, leaf, sizeof(leaf), 16, false);
		UT_ASSERT(p.prog);
		o.exit_probes = opt;
		UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
		UT_ASSERT(p.exit_probes);
		UT_EQ_INT(p.n_exits, 1);
		UT_EQ_U64(p.exit_offsets[0], 16 + 2);  /* file offset of the ret */
		UT_CONTAINS(p.note, "exit probes at 1 exit site");
		free(p.exit_offsets);
	}
}

/* exit_probes: false asks for the uretprobe: refused, saying what it risks,
 * unless --unsafe-uretprobe, and then the note says UNSAFE. */
UT_TEST(plan_exits_native_uretprobe_only_behind_unsafe)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { .code = ut_code_cache() };
	struct err e = { 0 };

	setup(&p, &pc, leaf, sizeof(leaf), 16, false);
	pc.has_exit_probes = true;
	pc.exit_probes = false;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), PLAN_REFUSED);
	UT_CONTAINS(e.msg, "fn: refusing a uretprobe (the probe sets exit_probes: false)");
	UT_CONTAINS(e.msg, "C++ exception");
	UT_CONTAINS(e.msg, "--unsafe-uretprobe attaches it anyway");
	UT_ASSERT(!p.exit_probes && !p.exit_offsets);
	o.unsafe_uretprobe = true;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(!p.exit_probes);
	UT_CONTAINS(p.note, "UNSAFE: uretprobe (--unsafe-uretprobe): a C++ exception or longjmp "
		    "through it aborts the program");
}

/* Unprovable exits without the field: refused with the reason; behind
 * --unsafe-uretprobe a uretprobe instead (said); never when exit probes
 * were asked for. */
UT_TEST(plan_exits_native_unprovable_falls_back_only_behind_unsafe)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { .code = ut_code_cache() };
	struct err e = { 0 };

	setup(&p, &pc, tail, sizeof(tail), 0, false);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), PLAN_REFUSED);
	UT_CONTAINS(e.msg, "fn: no exit probes: its exits cannot be proven");
	UT_CONTAINS(e.msg, "--unsafe-uretprobe puts a uretprobe on it instead");
	o.unsafe_uretprobe = true;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(!p.exit_probes && !p.exit_offsets);
	UT_CONTAINS(p.note, "UNSAFE: uretprobe (--unsafe-uretprobe; no exit sites)");
	p.note[0] = '\0';
	o.exit_probes = true;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), PLAN_REFUSED);
	UT_CONTAINS(e.msg, "exit probes were asked for");
	o.exit_probes = false;
	pc.has_exit_probes = true;
	pc.exit_probes = true;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), PLAN_REFUSED);
	UT_CONTAINS(e.msg, "exit probes were asked for");
}

UT_TEST(plan_exits_field_overrides_the_option_per_probe)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { .exit_probes = true, .unsafe_uretprobe = true,
			       .code = ut_code_cache() };
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
	struct plan_opts o = { .exit_probes = true, .code = ut_code_cache() };
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
	struct plan_opts o = { .code = ut_code_cache() };
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
	struct plan_opts o = { .code = ut_code_cache() };
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
	struct plan_opts o = { .code = ut_code_cache() };
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
	struct plan_opts o = { .code = ut_code_cache() };
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
	struct plan_opts o = { .exit_probes = true, .code = ut_code_cache() };
	struct err e = { 0 };

	setup(&p, &pc, leaf, sizeof(leaf), 16, true);
	p.prog = return_program("prog_GenericInstrumentation_uprobe_call_detail");
	UT_ASSERT(p.prog);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(!p.exit_probes && !p.exit_offsets);
}

/* An empty native function (a lone return) is refused, not turned into a
 * lone-ret probe. */
UT_TEST(plan_exits_a_bare_return_is_refused)
{
	static const uint8_t bare[] = { 0xc3 };
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { .exit_probes = true, .code = ut_code_cache() };
	struct err e = { 0 };

	setup(&p, &pc, bare, sizeof(bare), 0, false);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), PLAN_REFUSED);
	UT_CONTAINS(e.msg, "its first instruction is a return");
}

#define ODEX_ARM64 "oat/android-13/arm64/realme_ice_ossi_TP1A.220905.001/" \
		   "com.android.location.provider.odex"

/* A lone `ret` of ART code: one exit probe at the entry, no entry program,
 * never a uretprobe (issue #24: it used to keep a uretprobe when frameless
 * without stack maps). */
static void check_lone_ret(struct plan_probe *p, const struct plan_opts *o, uint64_t offset)
{
	struct err e = { 0 };

	UT_EQ_INT(plan_choose_exits(p, o, &e), 0);
	UT_ASSERT(p->exit_probes && p->lone_ret);
	UT_EQ_INT(p->n_exits, 1);
	UT_EQ_U64(p->exit_offsets[0], offset);
	UT_CONTAINS(p->note, "one exit probe at its lone ret (the entry)");
	free(p->exit_offsets);
	p->exit_offsets = NULL;
}

/* x86_64: void FusedProvider.<init>() and LocationProviderBase.onDump(…)
 * are a lone `c3` (the oat-expected table: code_size 1). */
UT_TEST(plan_exits_a_lone_ret_java_method_gets_one_exit_probe_x86_64)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { .code = ut_code_cache() };

	setup_java(&p, &pc, 20192);
	check_lone_ret(&p, &o, 20192);
	setup_java(&p, &pc, 23648);
	check_lone_ret(&p, &o, 23648);
	/* --exit-probes changes nothing for Java code */
	o.exit_probes = true;
	setup_java(&p, &pc, 20192);
	check_lone_ret(&p, &o, 20192);
	/* A method with a frame and stack maps keeps its exit probes. */
	setup_java(&p, &pc, 0x60c0);
	UT_EQ_INT(plan_choose_exits(&p, &o, &(struct err){ 0 }), 0);
	UT_ASSERT(p.exit_probes && !p.lone_ret);
	UT_EQ_INT(p.n_exits, 2);
	free(p.exit_offsets);
}

/* arm64 (Android 13): FusedProvider.<init>(), injectDeviceContext(int) and
 * setPeriodInNS(long) are a lone `ret` (d65f03c0). */
UT_TEST(plan_exits_a_lone_ret_java_method_gets_one_exit_probe_arm64)
{
	static const uint64_t lone[] = { 24448, 24496, 24512 };
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { .code = ut_code_cache() };

	for (size_t i = 0; i < sizeof(lone) / sizeof(lone[0]); i++) {
		setup_java(&p, &pc, lone[i]);
		snprintf(p.path, sizeof(p.path), "%s", ut_testdata(ODEX_ARM64));
		p.machine = EM_AARCH64;
		check_lone_ret(&p, &o, lone[i]);
	}
}

/* The exit choice is never cut off the note: a method whose code many others
 * share (their names fill the note) still says what it gets. */
UT_TEST(plan_exits_the_choice_stays_in_a_full_note)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { .code = ut_code_cache() };

	setup_java(&p, &pc, 20192);
	memset(p.note, 'x', sizeof(p.note) - 1);
	p.note[sizeof(p.note) - 1] = '\0';
	check_lone_ret(&p, &o, 20192);
	UT_CONTAINS(p.note, "xxx...; one exit probe at its lone ret (the entry): call and return "
			    "in one hit, duration 0");
	UT_EQ_INT(strlen(p.note), sizeof(p.note) - 1);
}

/* exit_probes: false on a lone `ret` asks for the uretprobe, which ART code
 * never gets without --unsafe-uretprobe. */
UT_TEST(plan_exits_a_lone_ret_uretprobe_only_when_unsafe)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { .code = ut_code_cache() };
	struct err e = { 0 };

	setup_java(&p, &pc, 20192);
	pc.has_exit_probes = true;
	pc.exit_probes = false;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), PLAN_REFUSED);
	UT_CONTAINS(e.msg, "refusing a uretprobe on ART code");
	o.unsafe_uretprobe = true;
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_ASSERT(!p.exit_probes && !p.lone_ret && !p.exit_offsets);
	UT_CONTAINS(p.note, "UNSAFE: uretprobe on ART code");
}

/* trace --ret and every other caller of exits_choose see the same answer. */
UT_TEST(plan_exits_choose_answers_lone_ret_for_trace)
{
	struct exits_query q = {
		.path = ut_testdata(ODEX), .offset = 20192, .machine = EM_X86_64, .java = true,
		.program = "call_return", .what = "void a.B.<init>()",
		.has_exit_probes = true, .exit_probes = true, .code = ut_code_cache(),
	};
	struct exits_choice c;
	struct err e = { 0 };

	UT_EQ_INT(exits_choose(&q, &c, &e), 0);
	UT_ASSERT(c.exit_probes && c.lone_ret);
	UT_EQ_INT(c.n_exits, 1);
	UT_EQ_U64(c.exit_offsets[0], 20192);
	free(c.exit_offsets);
}

/* An ELF symbol in an OAT file is ART code too: no uretprobe there either. */
UT_TEST(plan_exits_native_probe_in_an_oat_file_is_art_code)
{
	struct plan_probe p;
	struct probe_config pc;
	struct plan_opts o = { .code = ut_code_cache() };
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
	/* a lone `ret` named by a symbol: its one exit probe, as for Java */
	setup_java(&p, &pc, 20192);
	p.java = false;
	p.how = RESOLVED_ELF_SYMBOL;
	p.code_size = 1;
	pc.method_signature = "oatexec";
	check_lone_ret(&p, &o, 20192);
}

/* ---- tail branches (plan/exits_tail.c) on the real arm64 bionic libc ---- */

#define BIONIC_LIBC "android-userland/arm64-android11/system/lib64/libc.so"

static uint64_t bionic_sym(const char *name, uint64_t *size)
{
	struct native_location loc = { 0 };
	struct err e = { 0 };
	struct native_cache *nc = native_cache_new(ut_code_cache());

	if (!nc || native_resolve(nc, ut_testdata(BIONIC_LIBC), name, 0, &loc, &e) < 0)
		fprintf(stderr, "%s: %s\n", name, nc ? e.msg : "out of memory");
	native_cache_free(nc);
	if (size)
		*size = loc.size;
	return loc.offset;
}

/* What plan_native_exit_sites gives for one of bionic's functions. */
struct bionic_x {
	struct code_cache *c;
	const struct exit_sites *s;
	uint64_t base;
};

/* The exits of bionic's NAME (its symbol at *at, *size); free x->c. */
static int bionic_exits(const char *name, uint64_t *at, uint64_t *size, struct bionic_x *x,
			struct err *e)
{
	*at = bionic_sym(name, size);
	x->s = NULL;
	if (!(x->c = code_cache_new(NULL)))
		return -ENOMEM;
	return plan_native_exit_sites(x->c, ut_testdata(BIONIC_LIBC), *at, *size, EM_AARCH64,
				      &x->s, &x->base, e);
}

static bool has_site(const struct bionic_x *x, uint64_t off)
{
	for (uint32_t i = 0; x->s && i < x->s->count; i++)
		if (x->base + x->s->offsets[i] == off)
			return true;
	return false;
}

/* write, read, writev, ...: `mov x8, #nr; svc #0; cmn; cneg; b.hi
 * __set_errno_internal; ret`: their exits are their own ret and
 * __set_errno_internal's (its last instruction, +0x28). */
UT_TEST(plan_exits_bionic_wrappers_exit_through_set_errno_internal)
{
	static const char *const wrappers[] = { "write", "read", "writev", "readv", "recvfrom",
						"__connect", "__sendmsg" };
	uint64_t errno_size, errno_at = bionic_sym("__set_errno_internal", &errno_size);

	UT_EQ_U64(errno_size, 44);
	for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++) {
		struct bionic_x x;
		struct err e = { 0 };
		uint64_t size, at;
		int rc = bionic_exits(wrappers[i], &at, &size, &x, &e);

		if (rc)
			fprintf(stderr, "%s: %s\n", wrappers[i], e.msg);
		UT_ASSERT(rc == 0 && x.s && x.s->count == 2);
		UT_ASSERT(has_site(&x, errno_at + 40));
		UT_ASSERT(has_site(&x, at + size - 4));
		code_cache_free(x.c);
	}
}

/* sendto has no tail branch (it calls through netd's dispatch table): its
 * own ret alone, as before. */
UT_TEST(plan_exits_bionic_function_without_tail_branch_is_unchanged)
{
	struct bionic_x x;
	struct err e = { 0 };
	uint64_t size, at;

	UT_EQ_INT(bionic_exits("sendto", &at, &size, &x, &e), 0);
	UT_ASSERT(x.s && x.s->count == 1 && x.base == at);
	UT_ASSERT(has_site(&x, at + size - 4));
	code_cache_free(x.c);
}

/* send is `b sendto@plt`-like: a branch onto no function symbol's start (a
 * PLT entry) stays refused, at the branch. */
UT_TEST(plan_exits_bionic_unproven_tail_branch_is_refused)
{
	struct bionic_x x;
	struct err e = { 0 };
	uint64_t size, at;

	UT_ASSERT(bionic_exits("send", &at, &size, &x, &e) < 0);
	UT_CONTAINS(e.msg, "tail call at +0x8");
	UT_CONTAINS(e.msg, "no function symbol starts at");
	UT_ASSERT(!x.s);
	code_cache_free(x.c);
}

/* trace --ret --exit-probes on write: the plan's exit probes include the
 * shared ret, so a failed write returns too. */
UT_TEST(plan_exits_choose_takes_tail_exits_for_trace)
{
	struct exits_query q = { .machine = EM_AARCH64, .program = "p", .what = "write",
				 .opt_exit_probes = true, .code = ut_code_cache() };
	struct exits_choice c;
	struct err e = { 0 };
	uint64_t errno_at = bionic_sym("__set_errno_internal", NULL);

	q.path = ut_testdata(BIONIC_LIBC);
	q.offset = bionic_sym("write", &q.code_size);
	UT_EQ_INT(exits_choose(&q, &c, &e), 0);
	UT_ASSERT(c.exit_probes && !c.lone_ret);
	UT_EQ_U64(c.n_exits, 2);
	UT_EQ_U64(c.n_exits == 2 ? c.exit_offsets[0] : 0, errno_at + 40);
	UT_EQ_U64(c.n_exits == 2 ? c.exit_offsets[1] : 0, q.offset + q.code_size - 4);
	free(c.exit_offsets);
}

static uint64_t analyses(const struct code_cache *c)
{
	struct code_cache_stats st;

	code_cache_get_stats(c, &st);
	return st.exits_analysed;
}

/* Each method's exits are worked out once per run, however many steps ask
 * (trace --ret: its selection, then the plan; methods --match --json and
 * traffic: the exit sites they print or check): the code cache keeps every
 * answer, the sites and the refusals alike. */
UT_TEST(plan_exits_each_method_analysed_once_per_code_cache)
{
	struct code_cache *c = code_cache_new(NULL);
	struct exits_query q = {
		.path = ut_testdata(ODEX), .offset = 0x60c0, .machine = EM_X86_64, .java = true,
		.program = "call_return", .what = "void a.B.setAllowed(boolean)",
		.has_exit_probes = true, .exit_probes = true, .code = c,
	};
	struct plan_opts o = { .exit_probes = true, .code = c };
	struct plan_probe p;
	struct probe_config pc;
	struct exits_choice ch;
	const struct exit_sites *s;
	uint64_t base;
	struct err e = { 0 }, e2 = { 0 };

	UT_ASSERT(c);
	/* a Java method: trace's selection, then the plan of the same method */
	UT_EQ_INT(exits_choose(&q, &ch, &e), 0);
	UT_EQ_INT(ch.n_exits, 2);
	free(ch.exit_offsets);
	UT_EQ_U64(analyses(c), 1);
	setup_java(&p, &pc, 0x60c0);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_EQ_INT(p.n_exits, 2);
	UT_EQ_U64(p.exit_offsets[0], 0x612d);
	UT_EQ_U64(p.exit_offsets[1], 0x61ef);
	free(p.exit_offsets);
	UT_EQ_U64(analyses(c), 1);
	/* a native function: the plan and the sites printed, copies of one answer */
	setup(&p, &pc, leaf, sizeof(leaf), 16, false);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), 0);
	UT_EQ_U64(p.exit_offsets[0], 16 + 2);
	free(p.exit_offsets);
	UT_EQ_INT(plan_native_exit_sites(c, p.path, 16, 3, EM_X86_64, &s, &base, &e), 0);
	UT_EQ_INT(s->count, 1);
	UT_EQ_INT(s->offsets[0], 2);
	UT_EQ_U64(analyses(c), 2);
	/* a refusal is kept too, told the same way each time */
	setup(&p, &pc, tail, sizeof(tail), 0, false);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e), PLAN_REFUSED);
	UT_EQ_INT(plan_choose_exits(&p, &o, &e2), PLAN_REFUSED);
	UT_EQ_STR(e.msg, e2.msg);
	UT_ASSERT(plan_native_exit_sites(c, p.path, 0, sizeof(tail), EM_X86_64, &s, &base, &e2) < 0);
	UT_CONTAINS(e.msg, e2.msg);
	UT_EQ_U64(analyses(c), 3);
	code_cache_free(c);
}

/* `mov x16, x30; <insn>; mov x30, x16; b.hi __set_errno_internal; ret` placed
 * at bionic's write: its exits through the tail branch, or the refusal. */
static int tail_after(uint32_t insn, struct native_exits *x, struct err *e)
{
	uint64_t errno_at = bionic_sym("__set_errno_internal", NULL);
	uint64_t at = bionic_sym("write", NULL);
	int64_t rel = (int64_t)errno_at - (int64_t)(at + 12);
	uint32_t w[] = { 0xaa1e03f0, insn, 0xaa1003fe,
			 0x54000008 | ((uint32_t)(rel / 4) & 0x7ffff) << 5, 0xd65f03c0 };
	uint8_t code[sizeof(w)];
	struct code_cache *c = code_cache_new(NULL);
	struct code_file *f = c ? code_cache_file(c, ut_testdata(BIONIC_LIBC)) : NULL;
	struct exit_scan scan;
	int rc = -ENOMEM;

	memcpy(code, w, sizeof(w));   /* (little-endian host, as the arm64 code) */
	if (f && (rc = exit_sites_scan_native(CODE_ARCH_ARM64, code, sizeof(code), &scan, e)) == 0) {
		rc = exits_tail_follow(f, CODE_ARCH_ARM64, at, sizeof(code), &scan, x, e);
		exit_scan_free(&scan);
	}
	code_cache_free(c);
	return rc;
}

/* A call made with sp at the entry's value runs the callee at that sp: its
 * way to one of the exits would pass for this function's return.  So a
 * function that calls (lr kept in x16) and never lowers sp gets no exits
 * through its tail branches; without the call it does. */
UT_TEST(plan_exits_tail_branch_of_a_function_calling_at_its_entry_sp_is_refused)
{
	struct native_exits x = { 0 };
	struct err e = { 0 };

	UT_EQ_INT(tail_after(0xd503201f /* nop */, &x, &e), 0);
	UT_EQ_INT(x.count, 2);
	native_exits_free(&x);
	UT_EQ_INT(tail_after(0x94000010 /* bl .+0x40 */, &x, &e), -EINVAL);
	UT_CONTAINS(e.msg, "jump out of the function at +0xc");
	UT_CONTAINS(e.msg, "calls (at file offset");
	UT_EQ_INT(tail_after(0xd63f0200 /* blr x16 */, &x, &e), -EINVAL);
	UT_CONTAINS(e.msg, "calls (at file offset");
}
