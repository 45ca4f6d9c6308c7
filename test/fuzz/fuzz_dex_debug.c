/* fuzz_dex_debug — line-number programs and source files of every method of an
 * arbitrary dex (standard or compact).  Seeds: small real dex files. */
#include <stdint.h>
#include <stdlib.h>

#include "formats/dex.h"
#include "formats/dex_debug.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dex_file *d = NULL;
	unsigned budget = 2000;

	if (dex_open("fuzz", data, size, 0, &d, NULL))
		return 0;
	for (uint32_t c = 0; c < dex_class_def_count(d) && budget; c++) {
		struct dex_class_iter it;
		struct dex_method m;
		dex_class_source_file(d, c);
		if (dex_class_iter_init(d, c, &it, NULL))
			continue;
		while (budget-- && dex_class_iter_next(&it, &m, NULL) == 1) {
			struct dex_position *v;
			size_t n;
			uint32_t line;
			if (!dex_method_positions(d, &m, &v, &n, NULL))
				free(v);
			dex_method_line(d, &m, 3, &line, NULL);
		}
	}
	dex_close(d);
	return 0;
}
