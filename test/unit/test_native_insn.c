/* test_native_insn.c — the instruction-boundary check the native resolver
 * relies on, against an independent disassembler (llvm-objdump, a build
 * dependency) over every function of real x86_64 binaries: this test binary
 * (the tool's own code, unstripped) and the host's libc.  No offset inside an
 * instruction may ever be accepted; nearly every real instruction start must
 * be (the check may refuse what it cannot prove, never the reverse). */
#include "ut.h"

#include <elf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "formats/elf.h"
#include "formats/insn.h"

struct starts {
	uint64_t lo, hi;     /* vaddr range covered */
	uint8_t *bits;       /* one bit per byte of [lo, hi) */
};

static bool is_start(const struct starts *s, uint64_t a)
{
	return a >= s->lo && a < s->hi && (s->bits[(a - s->lo) / 8] >> ((a - s->lo) % 8) & 1);
}

/* Every instruction address llvm-objdump prints for the executable sections. */
static int objdump_starts(const char *path, uint64_t lo, uint64_t hi, struct starts *s)
{
	char cmd[512], line[1024];
	FILE *p;
	size_t n = 0;

	s->lo = lo;
	s->hi = hi;
	s->bits = calloc((size_t)((hi - lo) / 8 + 1), 1);
	snprintf(cmd, sizeof(cmd), "llvm-objdump -d --no-show-raw-insn '%s' 2>/dev/null", path);
	p = popen(cmd, "r");
	if (!p || !s->bits)
		return -1;
	while (fgets(line, sizeof(line), p)) {
		char *end;
		const char *q = line;
		unsigned long long a;
		while (*q == ' ')
			q++;
		if (q == line)
			continue;  /* "0000000000001234 <name>:" headers start in column 0 */
		a = strtoull(q, &end, 16);
		if (end == q || *end != ':' || a < lo || a >= hi)
			continue;
		s->bits[(a - lo) / 8] |= (uint8_t)(1u << ((a - lo) % 8));
		n++;
	}
	pclose(p);
	return n ? 0 : -1;
}

struct tally {
	const struct elf_file *elf;
	const uint8_t *data;
	size_t size;
	const struct starts *st;
	unsigned long funcs, starts, accepted, inside, false_accepts;
	char first_bad[256];
};

static int check_fn(void *ctx, const char *name, const struct elf_symbol *sym)
{
	struct tally *t = ctx;
	uint64_t off;
	uint32_t flags;
	unsigned checked = 0;

	if (sym->type != STT_FUNC || !sym->size || sym->size > 8192 ||
	    elf_vaddr_to_offset(t->elf, sym->value, &off, &flags) < 0 || !(flags & PF_X) ||
	    off + sym->size > t->size || !is_start(t->st, sym->value))
		return 0;
	t->funcs++;
	/* every instruction start (up to 48 a function) and the byte after it */
	for (uint64_t i = 0; i < sym->size && checked < 48; i++) {
		struct err e = { 0 };
		if (!is_start(t->st, sym->value + i))
			continue;
		checked++;
		t->starts++;
		if (insn_boundary_check(CODE_ARCH_X86_64, t->data + off, sym->size, i, &e) == 0)
			t->accepted++;
		if (i + 1 >= sym->size || is_start(t->st, sym->value + i + 1))
			continue;
		t->inside++;
		if (insn_boundary_check(CODE_ARCH_X86_64, t->data + off, sym->size, i + 1,
					&e) == 0 && !t->false_accepts++)
			snprintf(t->first_bad, sizeof(t->first_bad), "%s+0x%llx", name,
				 (unsigned long long)(i + 1));
	}
	return 0;
}

static void check_binary(const char *path)
{
	struct elf_file *elf;
	struct err e = { 0 };
	struct starts st = { 0 };
	struct tally t = { 0 };
	uint64_t lo = UINT64_MAX, hi = 0;

	if (elf_open(path, &elf, &e) < 0) {
		ut_fail(__FILE__, __LINE__, "%s", e.msg);
		return;
	}
	for (size_t i = 0; i < elf_section_count(elf); i++) {
		struct elf_section s;
		if (elf_section_at(elf, i, &s) == 0 && (s.flags & SHF_EXECINSTR) && s.size) {
			lo = s.addr < lo ? s.addr : lo;
			hi = s.addr + s.size > hi ? s.addr + s.size : hi;
		}
	}
	if (elf_machine(elf) != EM_X86_64 || hi <= lo || objdump_starts(path, lo, hi, &st) < 0) {
		ut_fail(__FILE__, __LINE__, "%s: not x86_64 code llvm-objdump can list", path);
		elf_close(elf);
		free(st.bits);
		return;
	}
	t.elf = elf;
	t.data = elf_data(elf, &t.size);
	t.st = &st;
	elf_foreach_symbol(elf, check_fn, &t);
	fprintf(stderr, "  %s: %lu functions, %lu/%lu instruction starts accepted, %lu offsets "
		"inside instructions, %lu accepted\n", path, t.funcs, t.accepted, t.starts,
		t.inside, t.false_accepts);
	elf_close(elf);
	free(st.bits);
	if (t.false_accepts)
		ut_fail(__FILE__, __LINE__, "%lu offsets inside instructions accepted, first %s",
			t.false_accepts, t.first_bad);
	UT_ASSERT(t.funcs > 100);
	UT_ASSERT(t.inside > 1000);
	/* Refusing what cannot be proven is allowed, but must stay rare. */
	UT_ASSERT(t.accepted * 100 >= t.starts * 98);
}

UT_TEST(insn_boundaries_of_this_binary_match_llvm_objdump)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	UT_ASSERT(n > 0);
	self[n] = '\0';  /* the path: llvm-objdump's own /proc/self/exe is itself */
	check_binary(self);
}

UT_TEST(insn_boundaries_of_libc_match_llvm_objdump)
{
	const char *libc = "/lib/x86_64-linux-gnu/libc.so.6";
	FILE *f = fopen(libc, "r");

	if (!f) {
		ut_fail(__FILE__, __LINE__, "%s missing (a glibc x86_64 host is expected)", libc);
		return;
	}
	fclose(f);
	check_binary(libc);
}
