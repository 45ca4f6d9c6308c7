/* fuzz_dex — dex_open and every query over arbitrary bytes: class data
 * iteration, string/type binary searches (with strings taken from the input
 * itself), method matching and pretty printing.
 * Seeds: classes.dex of three small jars/apks from the test data. */
#include <stdint.h>

#include "formats/dex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dex_file *d;
	struct err e;
	char buf[512];

	if (dex_open("fuzz.dex", data, size, 0, &d, &e))
		return 0;
	for (uint32_t c = 0; c < dex_class_def_count(d) && c < 2000; c++) {
		struct dex_class_def cd;
		struct dex_class_iter it;
		struct dex_method m;
		const char *desc;
		uint32_t found;
		if (dex_class_def_at(d, c, &cd))
			continue;
		if ((desc = dex_type_descriptor(d, cd.class_idx)))
			dex_find_class_def(d, desc, &found);
		if (dex_class_iter_init(d, c, &it, &e))
			continue;
		while (dex_class_iter_next(&it, &m, &e) > 0) {
			struct dex_method_id mid;
			const char *name;
			dex_pretty_method(d, m.method_idx, buf, sizeof(buf));
			if (!dex_method_id_at(d, m.method_idx, &mid) &&
			    (name = dex_string(d, mid.name_idx))) {
				const char *p[] = { "I", "Ljava/lang/String;" };
				dex_method_matches(d, m.method_idx, name, "V", p, 2);
				dex_find_method(d, c, name, NULL, p, 1, &m);
			}
		}
	}
	uint32_t idx;
	dex_find_string(d, "<init>", &idx);
	dex_find_type(d, "Ljava/lang/Object;", &idx);
	dex_close(d);
	return 0;
}
