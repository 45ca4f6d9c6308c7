/* fuzz_artdebug — ART's debugger interface of a "process" whose memory is the
 * input (code/artdebug.h): the input is the memory at 0x10000, the JIT
 * descriptor at its start and the dex descriptor at +0x80 (the layout
 * gen_artdebug_seed.py writes), everything else unreadable.  Each lookup
 * walks the lists (loops, sizes, pointers anywhere, seqlocks), copies and
 * parses the symfiles (ELF, .gnu_debugdata, .debug_frame) and dex files.
 * The last 8 bytes also give a dex address to name.  Seeds: the generator's
 * two images (a JIT symfile; and a real dex from the shared test data). */
#include <stdint.h>
#include <string.h>

#include "code/artdebug.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BASE 0x10000u

struct mem {
	const uint8_t *p;
	size_t n;
};

static int rd(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct mem *m = ctx;

	if (addr < BASE || addr - BASE > m->n || len > m->n - (addr - BASE))
		return -14;   /* -EFAULT */
	memcpy(buf, m->p + (addr - BASE), len);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mem m = { data, size };
	struct art_debug *a;
	struct code_info ci;
	uint64_t dex_addr = BASE;

	if (size >= 8)
		memcpy(&dex_addr, data + size - 8, 8);
	a = art_debug_new(BASE, BASE + 0x80, size && (data[size - 1] & 1), rd, &m);
	if (!a)
		return 0;
	for (uint64_t pc = 0x70000000; pc < 0x70000020; pc += 7) {
		memset(&ci, 0, sizeof(ci));
		art_debug_jit(a, pc, pc - 1, &ci);
	}
	memset(&ci, 0, sizeof(ci));
	art_debug_dex(a, dex_addr, &ci);
	memset(&ci, 0, sizeof(ci));
	art_debug_dex(a, BASE + 0x100 + 0x370 + 0x714, &ci);
	art_debug_free(a);
	return 0;
}
