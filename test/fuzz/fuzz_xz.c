/* fuzz_xz — the xz/LZMA2 decoder over arbitrary bytes (output capped at 1 MiB).
 * Seeds: small streams made by `xz` with each check type and a multi-block one. */
#include <stdint.h>
#include <stdlib.h>

#include "formats/xz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *out = NULL;
	size_t n = 0;

	if (!xz_decode("fuzz", data, size, 1u << 20, &out, &n, NULL))
		free(out);
	return 0;
}
