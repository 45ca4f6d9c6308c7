/* formats/ifunc.c: the implementations a GNU ifunc resolver picks from, read from
 * its code; on the real Android 11 arm64 libc.so (bionic's resolvers: adrp + add
 * + ret, checked against aarch64 objdump: strlen_resolver -> 0x86470 strlen_default)
 * and on hand-assembled x86_64 and arm64 resolvers. */
#include "ut.h"

#include <elf.h>

#include "formats/elf.h"
#include "formats/ifunc.h"

struct ifunc_count {
	const struct elf_file *f;
	int ifuncs, named;
	char strlen_line[600];
};

static int each_ifunc(void *ctx, const char *name, const struct elf_symbol *sym)
{
	struct ifunc_count *c = ctx;
	char d[600];

	if (sym->type != STT_GNU_IFUNC || !sym->from_dynsym)
		return 0;
	c->ifuncs++;
	ifunc_describe(c->f, name, sym, d, sizeof(d));
	c->named += strstr(d, "probe one of those instead: ") != NULL;
	if (!strcmp(name, "strlen"))
		snprintf(c->strlen_line, sizeof(c->strlen_line), "%s", d);
	return 0;
}

UT_TEST(ifunc_names_every_bionic_arm64_implementation)
{
	struct elf_file *f;
	struct err e = { 0 };
	struct ifunc_count c = { 0 };

	UT_EQ_INT(elf_open(ut_testdata("android-userland/arm64-android11/system/lib64/libc.so"),
			   &f, &e), 0);
	c.f = f;
	elf_foreach_symbol(f, each_ifunc, &c);
	elf_close(f);
	UT_ASSERT(c.ifuncs >= 6);  /* memchr strchr strcmp strlen strncmp strnlen */
	UT_EQ_INT(c.named, c.ifuncs);
	UT_CONTAINS(c.strlen_line, "GNU ifunc: strlen is its resolver");
	UT_CONTAINS(c.strlen_line, "probe one of those instead: strlen_default");
}

UT_TEST(ifunc_targets_of_hand_assembled_resolvers)
{
	/* arm64 at 0xf43b8: adrp x0, 0x86000; add x0, x0, #0x470; ret; then a second pair
	 * into x8 with a mov in between that clobbers x8 first (no target from it). */
	static const uint8_t a64[] = {
		0x80, 0xfc, 0xff, 0xd0, 0x00, 0xc0, 0x11, 0x91,   /* adrp x0; add x0, #0x470 */
		0x88, 0xfc, 0xff, 0xd0, 0xe8, 0x03, 0x1f, 0xaa,   /* adrp x8; mov x8, xzr */
		0x08, 0xc1, 0x11, 0x91, 0xc0, 0x03, 0x5f, 0xd6,   /* add x8, x8, #0x470; ret */
	};
	/* x86_64 at 0x1000: lea rax, [rip+0x10]; test edi, edi; lea rdx, [rip+0x20];
	 * cmove rax, rdx; ret */
	static const uint8_t x64[] = {
		0x48, 0x8d, 0x05, 0x10, 0x00, 0x00, 0x00, 0x85, 0xff,
		0x48, 0x8d, 0x15, 0x20, 0x00, 0x00, 0x00, 0x48, 0x0f, 0x44, 0xc2, 0xc3,
	};
	uint64_t t[4];

	UT_EQ_INT(ifunc_targets(EM_AARCH64, a64, sizeof(a64), 0xf43b8, t, 4), 1);
	UT_EQ_INT(t[0], 0x86470);
	UT_EQ_INT(ifunc_targets(EM_X86_64, x64, sizeof(x64), 0x1000, t, 4), 2);
	UT_EQ_INT(t[0], 0x1000 + 7 + 0x10);
	UT_EQ_INT(t[1], 0x1000 + 16 + 0x20);
	UT_EQ_INT(ifunc_targets(EM_X86_64, x64, sizeof(x64), 0x1000, t, 1), 1);
	UT_EQ_INT(ifunc_targets(EM_ARM, x64, sizeof(x64), 0x1000, t, 4), 0);
	UT_EQ_INT(ifunc_targets(EM_AARCH64, a64, 3, 0, t, 4), 0);
}
