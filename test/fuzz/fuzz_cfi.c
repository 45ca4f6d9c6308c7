/* fuzz_cfi — the CFI reader over arbitrary .eh_frame/.eh_frame_hdr/.debug_frame
 * contents: byte 0 picks the machine and which sections exist, bytes 1-2 and
 * 3-4 the split of the rest; every FDE is evaluated at its start, middle and
 * end, plus at addresses taken from the input; a CFA expression a row keeps
 * is evaluated (registers made up, no memory).
 * Seeds: the first entries of real sections (libz, an oat's .debug_frame). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elfwrap.h"
#include "formats/cfi.h"
#include "formats/dwexpr.h"
#include "formats/elf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static bool reg(void *ctx, uint32_t r, uint64_t *v)
{
	*v = 0x7ffd0000 + r * 8;
	return r < 40;
}

static void probe(const struct cfi_table *t, uint64_t a)
{
	const struct dwexpr_env env = { NULL, reg, NULL };
	struct cfi_row r;
	uint64_t cfa;

	/* a CFA expression kept in the row: evaluated as the unwinder would */
	if (!cfi_row_at(t, a, &r, NULL) && r.cfa_expr_len)
		dwexpr_eval(r.cfa_expr, r.cfa_expr_len, &env, NULL, &cfa, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct wrap_sec s[3];
	struct elf_file *e = NULL;
	struct cfi_table *t = NULL;
	size_t n = 0, len, a, b;
	uint8_t *elf;

	if (size < 5)
		return 0;
	uint8_t sel = data[0];
	a = (size_t)(data[1] | data[2] << 8);
	b = (size_t)(data[3] | data[4] << 8);
	data += 5, size -= 5;
	a = a > size ? size : a;
	b = b > size - a ? size - a : b;
	if (sel & 1)
		s[n++] = (struct wrap_sec){ ".eh_frame", data, a, 0x2000 };
	if (sel & 2)
		s[n++] = (struct wrap_sec){ ".eh_frame_hdr", data + a, b, 0x1000 };
	if (sel & 4)
		s[n++] = (struct wrap_sec){ ".debug_frame", data + a + b, size - a - b, 0 };
	if (!(elf = elfwrap(sel & 8 ? EM_AARCH64 : EM_X86_64, s, n, &len)))
		return 0;
	if (!elf_open_mem("fuzz", elf, len, &e, NULL) && !cfi_open(e, &t, NULL)) {
		for (size_t i = 0; i < cfi_fde_count(t) && i < 64; i++) {
			uint64_t lo, hi;
			cfi_fde_range(t, i, &lo, &hi);
			probe(t, lo);
			probe(t, lo + (hi - lo) / 2);
			probe(t, hi - 1);
		}
		for (size_t i = 0; i + 8 <= size && i < 64; i += 8) {
			uint64_t v;
			memcpy(&v, data + i, 8);
			probe(t, v & 0xffffff);
		}
		cfi_close(t);
	}
	elf_close(e);
	free(elf);
	return 0;
}
