/* fuzz_zip — zip_open_mem, the central-directory walk and reading every
 * entry (stored views and zlib inflate with CRC checks).
 * Seeds: small archives made with Python's zipfile (a stored real dex plus a
 * deflated entry; a deflated entry with an archive comment; an empty zip). */
#include <stdint.h>
#include <stdlib.h>

#include "formats/zip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zip_archive *z;
	struct zip_entry en;
	struct err e;
	uint64_t cur = 0;

	if (zip_open_mem("fuzz.zip", data, size, &z, &e))
		return 0;
	for (int n = 0; n < 64 && zip_next(z, &cur, &en, &e) > 0; n++) {
		const uint8_t *p;
		size_t len;
		void *owned;
		if (!zip_read(z, &en, 1 << 20, &p, &len, &owned, &e))
			free(owned);
	}
	zip_find(z, "classes.dex", &en, &e);
	zip_close(z);
	return 0;
}
