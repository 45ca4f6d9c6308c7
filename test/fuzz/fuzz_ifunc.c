/* fuzz_ifunc — the ifunc resolver readers (arm64 adrp + add, x86_64 rip-relative
 * lea) over arbitrary bytes, copied into an exactly sized buffer so ASan catches any
 * read past its end.  The first byte picks the machine; targets must be distinct and
 * at most the maximum asked for. */
#include <elf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/ifunc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t t[8];
	uint8_t *c;
	size_t n;

	if (size < 1 || size > 4096)
		return 0;
	c = malloc(size - 1 ? size - 1 : 1);
	if (!c)
		return 0;
	memcpy(c, data + 1, size - 1);
	n = ifunc_targets(data[0] & 1 ? EM_AARCH64 : EM_X86_64, c, size - 1,
			  0x400000 + (uint64_t)data[0] * 0x1000, t, 8);
	if (n > 8)
		abort();
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (t[i] == t[j])
				abort();
	free(c);
	return 0;
}
