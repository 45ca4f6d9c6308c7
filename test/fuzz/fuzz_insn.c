/* fuzz_insn — the x86_64 length decoder, insn_boundary_check,
 * exit_sites_find (both architectures, ART and native mode, with and without
 * a frame size) and the ART breakpoint check over arbitrary bytes.  The code
 * is copied into an exactly sized buffer so ASan catches any read past its end.
 * Seeds: a few real method bodies (arm64 v170/v225/v244, x86_64 v183). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/exit_sites.h"
#include "formats/insn.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void sites(enum code_arch a, enum code_kind k, const uint8_t *c, size_t n)
{
	struct exit_sites s;

	if (!exit_sites_find(a, k, c, n, &s, NULL)) {
		for (uint32_t i = 0; i < s.count; i++)
			if (s.offsets[i] >= n || (i && s.offsets[i] <= s.offsets[i - 1]))
				abort();        /* sites must be inside and ascending */
		exit_sites_free(&s);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct insn_x86_64 in;
	struct exit_sites s;
	uint32_t frame;
	uint8_t *c;

	if (size < 2 || size > 4096)
		return 0;
	c = malloc(size - 1);
	if (!c)
		return 0;
	memcpy(c, data + 1, size - 1);
	size--;
	for (size_t at = 0; at < size;) {
		unsigned n = insn_x86_64_decode(c + at, size - at, &in);
		if (n > 15 || at + n > size)
			abort();
		at += n ? n : 1;
	}
	insn_boundary_check(CODE_ARCH_X86_64, c, size, data[0] % size, NULL);
	insn_boundary_check(CODE_ARCH_ARM64, c, size, data[0] % size, NULL);
	exit_sites_art_boundary_check(CODE_ARCH_X86_64, c, size, data[0] % size, NULL);
	if (size >= 4)
		exit_sites_art_boundary_check(CODE_ARCH_ARM64, c, size & ~(size_t)3,
					      data[0] % (size & ~(size_t)3), NULL);
	sites(CODE_ARCH_X86_64, CODE_ART_METHOD, c, size);
	sites(CODE_ARCH_X86_64, CODE_NATIVE_FUNCTION, c, size);
	sites(CODE_ARCH_ARM64, CODE_ART_METHOD, c, size & ~(size_t)3);
	sites(CODE_ARCH_ARM64, CODE_NATIVE_FUNCTION, c, size & ~(size_t)3);
	exit_sites_prologue_frame(CODE_ARCH_ARM64, c, size & ~(size_t)3, &frame, NULL);
	exit_sites_prologue_frame(CODE_ARCH_X86_64, c, size, &frame, NULL);
	if (!exit_sites_find_art(CODE_ARCH_ARM64, c, size & ~(size_t)3, 16u * data[0], &s, NULL))
		exit_sites_free(&s);
	free(c);
	return 0;
}
