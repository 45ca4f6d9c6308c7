/* fuzz_minidebug — .gnu_debugdata holding arbitrary bytes (wrapped in an ELF):
 * decompression, the embedded ELF, its symbols and its .debug_frame.
 * Byte 0 picks the machine.  Seeds: real .gnu_debugdata sections of arm64 odex
 * files from the test data, and Android 11 x86_64 toybox's (the only symbol table
 * of its local functions, which patterns and config symbols now read). */
#include <stdint.h>
#include <stdlib.h>

#include "elfwrap.h"
#include "formats/cfi.h"
#include "formats/elf.h"
#include "formats/minidebug.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(void *ctx, const char *name, const struct elf_symbol *s)
{
	(void)name;
	*(uint64_t *)ctx += s->value;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wrap_sec s;
	struct elf_file *e = NULL;
	struct minidebug md;
	size_t len;
	uint8_t *elf;
	uint64_t sum = 0;

	if (size < 1)
		return 0;
	/* byte 0: the outer ELF's machine (it must match the embedded one) */
	s = (struct wrap_sec){ ".gnu_debugdata", data + 1, size - 1, 0 };
	if (!(elf = elfwrap(data[0] & 1 ? EM_AARCH64 : EM_X86_64, &s, 1, &len)))
		return 0;
	if (!elf_open_mem("fuzz", elf, len, &e, NULL)) {
		if (!minidebug_open(e, &md, NULL)) {
			struct cfi_table *t = NULL;
			elf_foreach_symbol(md.elf, count, &sum);
			if (!cfi_open(md.elf, &t, NULL)) {
				for (size_t i = 0; i < cfi_fde_count(t) && i < 32; i++) {
					uint64_t lo, hi;
					struct cfi_row r;
					cfi_fde_range(t, i, &lo, &hi);
					cfi_row_at(t, lo, &r, NULL);
				}
				cfi_close(t);
			}
			minidebug_close(&md);
		}
		elf_close(e);
	}
	free(elf);
	return sum == 1;
}
