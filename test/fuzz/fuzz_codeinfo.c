/* fuzz_codeinfo — codeinfo_decode over arbitrary bytes: the first two bytes
 * pick the oat version (170..265) and the CodeInfo offset inside the rest, so
 * deduplicated-table references that point backwards are exercised too; the
 * stack-map rows are read as well.
 * Seeds: CodeInfo blobs (with the bytes before them) cut from the real files. */
#include <stdint.h>
#include <stdlib.h>

#include "formats/codeinfo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct art_frame_info fi;
	struct art_stack_map *rows;
	uint32_t n;
	unsigned ver;
	size_t off;

	if (size < 3)
		return 0;
	ver = 170 + data[0] % 96;
	off = size > 3 ? data[1] % (size - 2) : 0;
	data += 2, size -= 2;
	if (!codeinfo_decode(ver, data[0] & 1 ? CODE_ARCH_ARM64 : CODE_ARCH_X86_64, data, size,
			     off, &fi, &rows, &n, NULL)) {
		for (uint32_t i = 0; i < n; i++)
			if (rows[i].kind < -1 && rows[i].native_pc == rows[i].dex_pc)
				fi.num_stack_maps++;    /* touch every row */
		free(rows);
	}
	codeinfo_decode(ver, CODE_ARCH_X86_64, data, size, off, &fi, NULL, NULL, NULL);
	return 0;
}
