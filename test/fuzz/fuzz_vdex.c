/* fuzz_vdex — vdex_open_mem, the dex-section walk and each embedded dex
 * (standard and compact, whose data lives after the dex section).
 * Seeds: 021/000 and 027 headers cut from real vdex files, the real
 * TrustZoneAccessService.vdex compact dex with its verifier data cut off,
 * and 021/002 and 027 vdex files built around a real small dex. */
#include <stdint.h>

#include "formats/vdex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct vdex_file *v;
	struct err e;
	uint64_t cur = 0;
	uint32_t off;
	char buf[256];

	if (vdex_open_mem("fuzz.vdex", data, size, &v, &e))
		return 0;
	for (uint32_t i = 0; i < vdex_dex_count(v) && i < 64; i++)
		vdex_checksum(v, i);
	for (int n = 0; n < 16 && vdex_next_dex(v, &cur, &off, &e) > 0; n++) {
		struct dex_file *d;
		if (vdex_open_dex(v, off, &d, &e))
			continue;
		for (uint32_t c = 0; c < dex_class_def_count(d) && c < 500; c++) {
			struct dex_class_iter it;
			struct dex_method m;
			if (dex_class_iter_init(d, c, &it, &e))
				continue;
			while (dex_class_iter_next(&it, &m, &e) > 0)
				dex_pretty_method(d, m.method_idx, buf, sizeof(buf));
		}
		dex_close(d);
	}
	vdex_close(v);
	return 0;
}
