/* insn: the x86_64 length decoder over hand-checked encodings (each checked
 * with llvm-mc), and insn_boundary_check / linear decoding over every
 * function of real binaries against llvm-objdump's instruction starts. */
#include "ut.h"

#include <errno.h>
#include <stdlib.h>

#include "formats/elf.h"
#include "formats/exit_sites.h"
#include "formats/insn.h"

struct enc {
	const char *hex;
	unsigned len;               /* 0: refused */
	const char *what;           /* r=ret c=call j=jmp k=jcc i=indirect p=rip-relative */
	long long disp;             /* rel_disp or rip_disp */
};

static const struct enc ENCODINGS[] = {
	{ "c3", 1, "r", 0 },                            /* ret */
	{ "c208 00", 3, "r", 0 },                       /* ret 8 */
	{ "f3c3", 2, "r", 0 },                          /* rep ret */
	{ "55", 1, "", 0 },                             /* push rbp */
	{ "4157", 2, "", 0 },                           /* push r15 */
	{ "4883ec28", 4, "", 0 },                       /* sub rsp, 0x28 */
	{ "4881ec00010000", 7, "", 0 },                 /* sub rsp, 0x100 */
	{ "488b0510000000", 7, "p", 0x10 },             /* mov rax, [rip+0x10] */
	{ "8b442408", 4, "", 0 },                       /* mov eax, [rsp+8] */
	{ "8b042500000000", 7, "", 0 },                 /* mov eax, [0] (SIB, no base) */
	{ "8b8424 00010000", 7, "", 0 },                /* mov eax, [rsp+0x100] */
	{ "48b80102030405060708", 10, "", 0 },          /* movabs rax, imm64 */
	{ "b801000000", 5, "", 0 },                     /* mov eax, 1 */
	{ "66b83412", 4, "", 0 },                       /* mov ax, 0x1234 */
	{ "e810000000", 5, "c", 0x10 },                 /* call rel32 */
	{ "e9f0ffffff", 5, "j", -0x10 },                /* jmp rel32 */
	{ "eb05", 2, "j", 5 },                          /* jmp rel8 */
	{ "74fe", 2, "k", -2 },                         /* je . */
	{ "0f8400010000", 6, "k", 0x100 },              /* je rel32 */
	{ "e3fe", 2, "k", -2 },                         /* jrcxz */
	{ "ffd0", 2, "ci", 0 },                         /* call rax */
	{ "ffe0", 2, "ji", 0 },                         /* jmp rax */
	{ "ff2500000000", 6, "jip", 0 },                /* jmp [rip] */
	{ "3effe0", 3, "ji", 0 },                       /* notrack jmp rax */
	{ "f30f1efa", 4, "", 0 },                       /* endbr64 */
	{ "0f1f440000", 5, "", 0 },                     /* nop dword [rax+rax] */
	{ "662e0f1f840000000000", 10, "", 0 },          /* nop word cs:[rax+rax] */
	{ "f20f100508000000", 8, "p", 8 },              /* movsd xmm0, [rip+8] */
	{ "660f3a0fc108", 6, "", 0 },                   /* palignr */
	{ "660f3800c1", 5, "", 0 },                     /* pshufb */
	{ "c5f877", 3, "", 0 },                         /* vzeroupper */
	{ "c4e2791805 00000000", 9, "p", 0 },           /* vbroadcastss xmm0, [rip] */
	{ "c5fb1005 00000000", 8, "p", 0 },             /* vmovsd xmm0, [rip] */
	{ "c4e37916c001", 6, "", 0 },                   /* vpextrd eax, xmm0, 1 */
	{ "c4e2f9f7c1", 5, "", 0 },                     /* shlx rax, rcx, rax */
	{ "488584 2400e0ffff", 8, "", 0 },              /* test [rsp-0x2000], rax (ART) */
	{ "f6c101", 3, "", 0 },                         /* test cl, 1 */
	{ "f7c101000000", 6, "", 0 },                   /* test ecx, 1 */
	{ "f6d1", 2, "", 0 },                           /* not cl */
	{ "c7042400000000", 7, "", 0 },                 /* mov dword [rsp], 0 */
	{ "65488b042528000000", 9, "", 0 },             /* mov rax, gs:[0x28] */
	{ "c8100000", 4, "", 0 },                       /* enter 16, 0 */
	{ "48a10102030405060708", 10, "", 0 },          /* movabs rax, [moffs64] */
	{ "67a101020304", 6, "", 0 },                   /* mov eax, [moffs32] */
	{ "c6f805", 3, "", 0 },                         /* xabort 5 */
	{ "c7f810000000", 6, "k", 0x10 },               /* xbegin +0x10 */
	{ "f3480fb8c1", 5, "", 0 },                     /* popcnt rax, rcx */
	{ "0faef0", 3, "", 0 },                         /* mfence */
	{ "480fc70e", 4, "", 0 },                       /* cmpxchg16b [rsi] */
	{ "0f0b", 2, "", 0 },                           /* ud2 */
	{ "cc", 1, "", 0 },                             /* int3 */
	{ "06", 0, "", 0 },                             /* push es: invalid in 64-bit */
	{ "62f17c4810c1", 6, "", 0 },                   /* vmovups zmm0, zmm1 (EVEX) */
	{ "62f17fc96f0f", 6, "", 0 },                   /* vmovdqu8 zmm1{k1}{z}, [rdi] */
	{ "62f1fd4873d008", 7, "", 0 },                 /* vpsrlq zmm0, zmm0, 8 */
	{ "62f37d4839c101", 7, "", 0 },                 /* vextracti32x4 xmm1, zmm0, 1 */
	{ "62f57c4858c1", 0, "", 0 },                   /* EVEX map 5 (FP16): refused */
	{ "0f04", 0, "", 0 },                           /* undefined */
	{ "66e80000", 0, "", 0 },                       /* 16-bit call: refused */
	{ "e800", 0, "", 0 },                           /* truncated */
	{ "48", 0, "", 0 },                             /* REX alone */
	{ "4866b801000000", 0, "", 0 },                 /* REX before a prefix */
	{ "6666666666666666666666666666b80100", 0, "", 0 }, /* longer than 15 */
	{ "8f c8", 0, "", 0 },                          /* XOP */
	{ "c5", 0, "", 0 },                             /* truncated VEX */
};

static size_t unhex(const char *s, uint8_t *out, size_t cap)
{
	size_t n = 0;

	for (; *s && n < cap; s++) {
		unsigned v;
		if (*s == ' ')
			continue;
		if (sscanf(s, "%2x", &v) != 1)
			break;
		out[n++] = (uint8_t)v;
		s++;
	}
	return n;
}

UT_TEST(insn_x86_64_decodes_hand_checked_encodings)
{
	for (size_t i = 0; i < sizeof(ENCODINGS) / sizeof(ENCODINGS[0]); i++) {
		const struct enc *t = &ENCODINGS[i];
		uint8_t b[32];
		size_t n = unhex(t->hex, b, sizeof(b));
		struct insn_x86_64 in;
		unsigned len = insn_x86_64_decode(b, n, &in);

		if (len != t->len) {
			ut_fail(__FILE__, __LINE__, "%s: length %u, expected %u", t->hex, len,
				t->len);
			return;
		}
		if (!len)
			continue;
		UT_EQ_INT(in.len, len);
		UT_EQ_INT(in.is_ret, strchr(t->what, 'r') != NULL);
		UT_EQ_INT(in.is_call, strchr(t->what, 'c') != NULL);
		UT_EQ_INT(in.is_jmp, strchr(t->what, 'j') != NULL);
		UT_EQ_INT(in.is_jcc, strchr(t->what, 'k') != NULL);
		UT_EQ_INT(in.is_indirect, strchr(t->what, 'i') != NULL);
		UT_EQ_INT(in.rip_relative, strchr(t->what, 'p') != NULL);
		if (in.has_rel_target)
			UT_EQ_INT(in.rel_disp, t->disp);
		if (in.rip_relative)
			UT_EQ_INT(in.rip_disp, t->disp);
		/* one byte short is always refused */
		UT_EQ_INT(insn_x86_64_decode(b, n - 1, NULL), 0);
	}
}

UT_TEST(insn_boundary_check_reports_what_is_there)
{
	/* push rbp; mov rbp, rsp; movabs rax, imm64; ret */
	static const uint8_t f[] = { 0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8,
				     0xc3 };
	static const uint8_t bad[] = { 0x55, 0x06, 0xc3 };
	struct err e = { 0 };

	UT_EQ_INT(insn_boundary_check(CODE_ARCH_X86_64, f, sizeof(f), 0, &e), 0);
	UT_EQ_INT(insn_boundary_check(CODE_ARCH_X86_64, f, sizeof(f), 4, &e), 0);
	UT_EQ_INT(insn_boundary_check(CODE_ARCH_X86_64, f, sizeof(f), 14, &e), 0);
	UT_EQ_INT(insn_boundary_check(CODE_ARCH_X86_64, f, sizeof(f), 7, &e), -EINVAL);
	UT_CONTAINS(e.msg, "offset +0x7 is inside the instruction at +0x4 (10 bytes)");
	UT_EQ_INT(insn_boundary_check(CODE_ARCH_X86_64, f, sizeof(f), 15, &e), -ERANGE);
	UT_EQ_INT(insn_boundary_check(CODE_ARCH_X86_64, bad, sizeof(bad), 2, &e), -EILSEQ);
	UT_CONTAINS(e.msg, "cannot decode the instruction at +0x1");
	UT_EQ_INT(insn_boundary_check(CODE_ARCH_ARM64, f, 12, 8, &e), 0);
	UT_EQ_INT(insn_boundary_check(CODE_ARCH_ARM64, f, 12, 6, &e), -EINVAL);
	UT_CONTAINS(e.msg, "not 4-byte aligned");
	UT_EQ_INT(insn_boundary_check(CODE_ARCH_ARM64, f, 12, 12, &e), -ERANGE);
}

/* ---- real binaries against llvm-objdump ----------------------------------- */

struct func_cmp {
	struct elf_file *elf;
	const uint8_t *data;
	size_t size;
	uint64_t start;             /* vaddr of the current function */
	uint64_t *starts;           /* objdump's instruction starts in it */
	bool *is_ret;               /* ... and whether each is a `ret` */
	size_t n, cap;
	unsigned long native_proven, native_refused, native_sites;
	unsigned long funcs, insns, mismatches, boundary_checks;
	uint64_t prefix_at;         /* a prefix objdump printed alone, for the next line */
	char first_bad[256];
};

static void note_bad(struct func_cmp *c, const char *fmt, unsigned long long a,
		     unsigned long long b)
{
	c->mismatches++;
	if (!c->first_bad[0])
		snprintf(c->first_bad, sizeof(c->first_bad), fmt, a, b);
}

/* exit_sites_find in native mode: when it proves a function's exits, they are
 * exactly objdump's `ret` instructions. */
static void compare_native_exits(struct func_cmp *c, const uint8_t *f, size_t len)
{
	struct exit_sites s;
	size_t k = 0, rets = 0;

	if (exit_sites_find(CODE_ARCH_X86_64, CODE_NATIVE_FUNCTION, f, len, &s, NULL)) {
		c->native_refused++;
		return;
	}
	c->native_proven++;
	c->native_sites += s.count;
	for (size_t i = 0; i < c->n; i++) {
		if (!c->is_ret[i])
			continue;
		rets++;
		while (k < s.count && s.offsets[k] < c->starts[i] - c->start)
			k++;
		if (k == s.count || s.offsets[k] != c->starts[i] - c->start)
			note_bad(c, "objdump ret at 0x%llx is not an exit site (function 0x%llx)",
				 c->starts[i], c->start);
	}
	if (rets != s.count)
		note_bad(c, "%llu exit sites but %llu objdump rets", s.count, rets);
	exit_sites_free(&s);
}

/* Decode [start, end) linearly and compare with objdump's starts; check the
 * boundary verdict at every byte of small functions. */
static void compare_function(struct func_cmp *c, uint64_t end)
{
	uint64_t off;
	uint32_t flags;
	size_t k = 0;

	if (!c->n || elf_vaddr_to_offset(c->elf, c->start, &off, &flags) ||
	    off + (end - c->start) > c->size)
		return;
	const uint8_t *f = c->data + off;
	size_t len = (size_t)(end - c->start);
	c->funcs++;
	for (size_t at = 0; at < len && k < c->n;) {
		unsigned n;
		if (c->starts[k] - c->start != at) {
			note_bad(c, "at vaddr 0x%llx objdump starts at 0x%llx",
				 c->start + at, c->starts[k]);
			return;
		}
		n = insn_x86_64_decode(f + at, len - at, NULL);
		if (!n) {
			note_bad(c, "cannot decode at vaddr 0x%llx (objdump: an instruction)%llx",
				 c->start + at, 0);
			return;
		}
		c->insns++;
		at += n, k++;
	}
	compare_native_exits(c, f, len);
	if (len > 256)
		return;
	k = 0;
	for (size_t at = 0; at < len; at++) {
		bool is_start = k < c->n && c->starts[k] - c->start == at;
		int rc = insn_boundary_check(CODE_ARCH_X86_64, f, len, at, NULL);
		c->boundary_checks++;
		if ((rc == 0) != is_start)
			note_bad(c, "boundary check wrong at vaddr 0x%llx (objdump start: %llu)",
				 c->start + at, is_start);
		k += is_start;
	}
}

/* llvm-objdump prints some prefixes (lock, rep, data16, ...) on a line of their
 * own: the instruction starts there, not at the next line's address. */
static bool prefix_only(const char *line)
{
	static const char *const P[] = { "lock", "rep", "repe", "repne", "data16", "cs", "ds",
					 "ss", "es", "fs", "gs", "notrack", "bnd", "addr32" };
	const char *t = strchr(line, '\t');
	char word[32];

	if (!t || sscanf(t, " %31s", word) != 1 || strchr(t + 1, '\t'))
		return false;
	for (size_t i = 0; i < sizeof(P) / sizeof(P[0]); i++)
		if (!strcmp(word, P[i]))
			return true;
	return false;
}

static bool is_ret_line(const char *line)
{
	const char *t = strchr(line, '\t');
	char word[32];

	return t && sscanf(t, " %31s", word) == 1 && (!strcmp(word, "retq") ||
						       !strcmp(word, "ret"));
}

static void objdump_line(struct func_cmp *c, const char *line)
{
	unsigned long long a;
	char name[512];

	if (sscanf(line, "%llx <%511[^>]>:", &a, name) == 2 && line[0] != ' ') {
		compare_function(c, a);
		c->start = a, c->n = 0;
		return;
	}
	if (sscanf(line, " %llx:", &a) == 1 && line[0] == ' ' && c->start) {
		if (prefix_only(line)) {
			if (!c->prefix_at)
				c->prefix_at = a;
			return;
		}
		if (c->prefix_at)
			a = c->prefix_at, c->prefix_at = 0;
		if (c->n == c->cap) {
			c->cap = c->cap ? 2 * c->cap : 1024;
			c->starts = realloc(c->starts, c->cap * sizeof(*c->starts));
			c->is_ret = realloc(c->is_ret, c->cap * sizeof(*c->is_ret));
		}
		c->is_ret[c->n] = is_ret_line(line);
		c->starts[c->n++] = a;
	}
}

static void check_binary(const char *path, unsigned long min_funcs)
{
	char cmd[1024], line[4096];
	struct func_cmp c = { 0 };
	struct err e = { 0 };
	FILE *p;

	if (elf_open(path, &c.elf, &e)) {
		ut_fail(__FILE__, __LINE__, "%s: %s", path, e.msg);
		return;
	}
	c.data = elf_data(c.elf, &c.size);
	snprintf(cmd, sizeof(cmd), "llvm-objdump -d -z --no-show-raw-insn --section=.text '%s'",
		 path);
	p = popen(cmd, "r");
	UT_ASSERT(p != NULL);
	while (fgets(line, sizeof(line), p))
		objdump_line(&c, line);
	pclose(p);
	free(c.starts);
	free(c.is_ret);
	elf_close(c.elf);
	printf("    %s: %lu functions, %lu instructions decoded, %lu boundary verdicts, "
	       "native exits proven for %lu functions (%lu sites = objdump's rets), refused for "
	       "%lu, %lu mismatches%s%s\n", path, c.funcs, c.insns, c.boundary_checks,
	       c.native_proven, c.native_sites, c.native_refused, c.mismatches,
	       c.mismatches ? ": first " : "", c.first_bad);
	UT_ASSERT(c.funcs >= min_funcs);
	UT_ASSERT(c.native_proven > 0 && c.native_sites > 0);
	UT_EQ_INT(c.mismatches, 0);
}

UT_TEST(insn_x86_64_matches_llvm_objdump_on_libc)
{
	check_binary("/usr/lib/x86_64-linux-gnu/libc.so.6", 1000);
}

UT_TEST(insn_x86_64_matches_llvm_objdump_on_libz)
{
	check_binary("/usr/lib/x86_64-linux-gnu/libz.so.1", 50);
}
