/* The legacy-object support: config immediates patched into instructions
 * (probe/legacy_cfg), raw UTF-16 Strings turned into the UTF-8 the normal
 * objects write (probe/legacy_str), the kernel version table
 * (sys/kfeatures) and the static check's instruction rules (probe/objcheck). */
#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>

#include "probe/legacy_cfg.h"
#include "probe/legacy_str.h"
#include "probe/objcheck.h"
#include "probe/verifier_log.h"
#include "records.h"
#include "sys/kfeatures.h"
#include "ut.h"

#define LD64(dst, lo, hi) \
	{ .code = BPF_LD | BPF_IMM | BPF_DW, .dst_reg = dst, .imm = (int32_t)(lo) }, \
	{ .imm = (int32_t)(hi) }
#define EXIT_INSN { .code = BPF_JMP | BPF_EXIT }
#define MOV0 { .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = 0, .imm = 0 }

UT_TEST(legacy_cfg_patches_every_config_load)
{
	struct bpf_insn insns[] = {
		LD64(1, UPS_IMM_PROBE_ID, UPS_IMM_MAGIC),
		LD64(2, 0x1234, 0x5678),                       /* an ordinary constant */
		LD64(3, UPS_IMM_STRING_REG + 2, UPS_IMM_MAGIC),
		LD64(4, UPS_IMM_FILTER_PIDS, UPS_IMM_MAGIC),
		LD64(5, UPS_IMM_STRING_POS + 3, UPS_IMM_MAGIC),
		LD64(6, UPS_IMM_LONE_RET, UPS_IMM_MAGIC),
		EXIT_INSN,
	};
	struct ups_prog_config cfg = { .probe_id = 77, .filter_pids = 1,
				       .string_reg = { 0, 0, 5, 0 }, .string_pos = { 0, 0, 0, 9 },
				       .lone_ret = 1 };
	struct err e = { 0 };
	size_t patched;

	UT_EQ_INT(legacy_patch_insns(insns, 13, &cfg, &patched, &e), 0);
	UT_EQ_INT(patched, 5);
	UT_EQ_INT(insns[0].imm, 77);
	UT_EQ_INT(insns[1].imm, 0);
	UT_EQ_INT(insns[2].imm, 0x1234);
	UT_EQ_INT(insns[3].imm, 0x5678);
	UT_EQ_INT(insns[4].imm, 5);
	UT_EQ_INT(insns[6].imm, 1);
	UT_EQ_INT(insns[8].imm, 9);
	UT_EQ_INT(insns[9].imm, 0);
	UT_EQ_INT(insns[10].imm, 1);
	UT_EQ_INT(insns[11].imm, 0);
}

UT_TEST(legacy_cfg_refuses_unknown_fields_and_cut_loads)
{
	struct bpf_insn unknown[] = { LD64(1, 0x99, UPS_IMM_MAGIC), EXIT_INSN };
	struct bpf_insn cut[] = { MOV0, { .code = BPF_LD | BPF_IMM | BPF_DW } };
	struct ups_prog_config cfg = { 0 };
	struct err e = { 0 };
	size_t patched;

	UT_ASSERT(legacy_patch_insns(unknown, 3, &cfg, &patched, &e) < 0);
	UT_CONTAINS(e.msg, "unknown config immediate 0x99");
	UT_ASSERT(legacy_patch_insns(cut, 2, &cfg, &patched, &e) < 0);
	UT_CONTAINS(e.msg, "instruction 1");
}

/* A field as a legacy object fills it: header, then the units. */
static void raw(char *buf, size_t size, const uint16_t *u, size_t n)
{
	memset(buf, 0x55, size);   /* stale bytes past the units must not show */
	buf[0] = (char)UPS_RAW_UTF16_TAG;
	buf[1] = (char)n;
	buf[2] = (char)(size & 0xff);
	buf[3] = (char)(size >> 8);
	for (size_t i = 0; i < n; i++) {
		buf[4 + 2 * i] = (char)(u[i] & 0xff);
		buf[5 + 2 * i] = (char)(u[i] >> 8);
	}
}

UT_TEST(legacy_str_converts_like_the_bpf_converter)
{
	/* "café ☕ 𝄞": é 2 bytes, ☕ 3, 𝄞 a surrogate pair, 4 */
	static const uint16_t u[] = { 'c', 'a', 'f', 0xE9, ' ', 0x2615, ' ', 0xD834, 0xDD1E };
	static const uint16_t lone[] = { 'a', 0xDC00, 'b', 0xD800 };
	char buf[64];

	raw(buf, sizeof(buf), u, 9);
	UT_ASSERT(legacy_str_fix(buf, sizeof(buf)));
	UT_EQ_STR(buf, "caf\xc3\xa9 \xe2\x98\x95 \xf0\x9d\x84\x9e");
	raw(buf, sizeof(buf), lone, 4);   /* unpaired surrogates: U+FFFD each */
	UT_ASSERT(legacy_str_fix(buf, sizeof(buf)));
	UT_EQ_STR(buf, "a\xef\xbf\xbd" "b\xef\xbf\xbd");
}

UT_TEST(legacy_str_truncates_on_a_character_boundary)
{
	static const uint16_t u[] = { 0x2615, 0x2615, 0x2615, 0x2615 };
	char buf[12];   /* 11 bytes of text: three 3-byte chars, not a fourth */

	raw(buf, sizeof(buf), u, 4);
	UT_ASSERT(legacy_str_fix(buf, sizeof(buf)));
	UT_EQ_INT(strlen(buf), 9);
	UT_EQ_INT(buf[11], 0);
}

UT_TEST(legacy_str_leaves_bad_headers_alone)
{
	static const uint16_t u[] = { 'x', 'y' };
	char buf[16];

	raw(buf, sizeof(buf), u, 2);
	UT_ASSERT(!legacy_str_fix(buf, 15));          /* the field would pass the record */
	raw(buf, sizeof(buf), u, 2);
	buf[1] = 7;                                   /* 4 + 14 units > 16 bytes */
	UT_ASSERT(!legacy_str_fix(buf, sizeof(buf)));
	memcpy(buf, "plain", 6);
	UT_ASSERT(!legacy_str_fix(buf, sizeof(buf)));
	UT_EQ_STR(buf, "plain");
}

UT_TEST(legacy_str_raw_form_matches_the_bpf_key)
{
	char key[128], back[128];

	UT_ASSERT(!legacy_str_raw_form("android.os.IFoo", key, sizeof(key)));  /* compressed */
	UT_ASSERT(legacy_str_raw_form("\xc3\xbc.IFilter", key, sizeof(key)));   /* ü */
	UT_EQ_INT((unsigned char)key[0], UPS_RAW_UTF16_TAG);
	UT_EQ_INT(key[1], 9);
	UT_EQ_INT((unsigned char)key[2], 128);
	UT_EQ_INT((unsigned char)key[4], 0xFC);
	UT_EQ_INT(key[4 + 2 * 9], 0);                 /* zero-padded like the BPF memset */
	memcpy(back, key, sizeof(back));
	UT_ASSERT(legacy_str_fix(back, sizeof(back)));
	UT_EQ_STR(back, "\xc3\xbc.IFilter");
}

UT_TEST(kfeatures_table_and_versions)
{
	struct kfeatures k;
	struct err e = { 0 };
	unsigned v;
	const char *name;
	enum kfeature why;

	UT_EQ_INT(kfeatures_parse_version("4.19.157-g1234", &v, &e), 0);
	UT_EQ_INT(v, KVER(4, 19));
	UT_ASSERT(kfeatures_parse_version("4.9", &v, &e) < 0);
	UT_CONTAINS(e.msg, "oldest supported, 4.14");
	UT_ASSERT(kfeatures_parse_version("four", &v, &e) < 0);
	kfeatures_for_version(KVER(4, 14), &k);
	UT_ASSERT(!k.has[KF_UPROBE_PMU] && !k.has[KF_RINGBUF] && !k.has[KF_CAP_BPF]);
	UT_ASSERT(kfeatures_need_legacy(&k, &why));
	UT_EQ_INT(why, KF_GLOBAL_DATA);
	kfeatures_for_version(KVER(5, 4), &k);
	UT_ASSERT(k.has[KF_UPROBE_PMU] && k.has[KF_GLOBAL_DATA] && kfeatures_need_legacy(&k, &why));
	UT_EQ_INT(why, KF_PROBE_READ_USER);
	kfeatures_for_version(KVER(5, 10), &k);
	UT_ASSERT(!kfeatures_need_legacy(&k, NULL) && k.has[KF_RINGBUF] && !k.has[KF_UPROBE_MULTI]);
	UT_EQ_INT(kfeatures_helper_since(BPF_FUNC_probe_read_str, &name), KVER(4, 11));
	UT_EQ_STR(name, "probe_read_str");
	UT_EQ_INT(kfeatures_helper_since(BPF_FUNC_probe_read_user, NULL), KVER(5, 5));
	UT_EQ_INT(kfeatures_helper_since(100000, &name), 0);
	UT_EQ_INT(kfeatures_map_type_since(BPF_MAP_TYPE_PERF_EVENT_ARRAY, NULL), KVER(4, 3));
	UT_EQ_INT(kfeatures_map_type_since(BPF_MAP_TYPE_RINGBUF, NULL), KVER(5, 8));
}

struct problems {
	size_t n;
	char last[256];
};

static void collect(void *ctx, const char *object, const char *problem)
{
	struct problems *p = ctx;

	(void)object;
	p->n++;
	snprintf(p->last, sizeof(p->last), "%s", problem);
}

UT_TEST(objcheck_tells_loops_from_backward_jumps)
{
	/* 0: if r0 == 0 goto 3; 1: goto 4; 2: exit; 3: goto 2 (back, not a loop); 4: exit */
	struct bpf_insn acyclic[] = {
		{ .code = BPF_JMP | BPF_JEQ | BPF_K, .off = 2 },
		{ .code = BPF_JMP | BPF_JA, .off = 2 },
		EXIT_INSN,
		{ .code = BPF_JMP | BPF_JA, .off = -2 },
		EXIT_INSN,
	};
	/* 0: r0 = 0; 1: if r0 > 5 goto 3; 2: goto 1 (a loop); 3: exit */
	struct bpf_insn loop[] = {
		MOV0,
		{ .code = BPF_JMP | BPF_JGT | BPF_K, .off = 1, .imm = 5 },
		{ .code = BPF_JMP | BPF_JA, .off = -2 },
		EXIT_INSN,
	};
	struct problems p = { 0 };

	UT_EQ_INT(objcheck_insns("t", "acyclic", acyclic, 5, KVER(4, 14), collect, &p), 0);
	UT_EQ_INT(objcheck_insns("t", "loop", loop, 4, KVER(4, 14), collect, &p), 1);
	UT_CONTAINS(p.last, "instruction 2 jumps back to 1");
	UT_EQ_INT(objcheck_insns("t", "loop", loop, 4, KVER(5, 3), collect, &p), 0);
}

UT_TEST(objcheck_checks_helpers_against_the_kernel)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_probe_read },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_probe_read_user_str },
		{ .code = BPF_JMP | BPF_CALL, .src_reg = BPF_PSEUDO_CALL, .imm = 1 },
		EXIT_INSN,
	};
	struct problems p = { 0 };

	UT_EQ_INT(objcheck_insns("t", "p", insns, 4, KVER(4, 14), collect, &p), 2);
	UT_CONTAINS(p.last, "BPF-to-BPF call");
	p.n = 0;
	UT_EQ_INT(objcheck_insns("t", "p", insns, 4, KVER(5, 5), collect, &p), 0);
}

UT_TEST(verifier_log_reason_skips_the_statistics)
{
	static const char log[] =
		"0: R1=ctx(off=0,imm=0) R10=fp0\n"
		"0: (85) call bpf_probe_read_user#112\n"
		"unknown func bpf_probe_read_user#112\n"
		"processed 1 insns (limit 131072) max_states_per_insn 0 total_states 0\n"
		"verification time 12 usec\n"
		"stack depth 0\n\n";
	char out[64];

	verifier_log_reason(log, sizeof(log), out, sizeof(out));
	UT_EQ_STR(out, "unknown func bpf_probe_read_user#112");
	verifier_log_reason("only line", 9, out, sizeof(out));   /* no NUL, no newline */
	UT_EQ_STR(out, "only line");
	verifier_log_reason("processed 3 insns\n", 18, out, sizeof(out));
	UT_EQ_STR(out, "");
}

UT_TEST(objcheck_finds_map_values_used_as_map_keys)
{
	/* r2 = r10 - 4; call lookup; if r0 == 0 goto exit; r7 = r0; (join) r2 = r7; call lookup */
	struct bpf_insn bad[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = 2, .imm = -4 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem },
		{ .code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = 0, .off = 4 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 7, .src_reg = 0 },
		{ .code = BPF_JMP | BPF_JA, .off = 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = 2, .src_reg = 7 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_delete_elem },
		EXIT_INSN,
	};
	struct problems p = { 0 };

	UT_EQ_INT(objcheck_insns("t", "p", bad, 9, KVER(4, 14), collect, &p), 1);
	UT_CONTAINS(p.last, "instruction 7 passes a map value as the key");
	p.n = 0;
	UT_EQ_INT(objcheck_insns("t", "p", bad, 9, KVER(4, 18), collect, &p), 0);
	bad[6].src_reg = 10;   /* a stack pointer instead: fine on 4.14 */
	UT_EQ_INT(objcheck_insns("t", "p", bad, 9, KVER(4, 14), collect, &p), 0);
}
