/* fuzz_elf — elf_open_mem and every query over arbitrary bytes.
 * Seeds: tiny shared objects built with
 *   clang -target <t> -nostdlib -shared -fPIC -fuse-ld=lld -Wl,--hash-style=...
 * (aarch64: gnu+sysv hash, i386: sysv only) and the first KiB of a real odex. */
#include <stddef.h>
#include <stdint.h>

#include "formats/elf.h"

static int sym_cb(void *ctx, const char *name, const struct elf_symbol *sym)
{
	uint64_t off;
	(void)name;
	elf_vaddr_to_offset(ctx, sym->value, &off, NULL);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_file *f;
	struct err e;
	struct elf_symbol s;
	struct elf_section sec;
	const struct elf_segment *segs;
	uint64_t off;

	if (elf_open_mem("fuzz", data, size, &f, &e))
		return 0;
	if (!elf_find_symbol(f, "oatdata", &s))
		elf_vaddr_to_offset(f, s.value, &off, NULL);
	elf_find_symbol(f, "oatexec", &s);
	elf_foreach_symbol(f, sym_cb, f);
	elf_find_section(f, ".text", &sec);
	for (size_t i = 0; i < elf_section_count(f); i++)
		elf_section_at(f, i, &sec);
	elf_load_segments(f, &segs);
	elf_segments(f, &segs);
	elf_close(f);
	return 0;
}
