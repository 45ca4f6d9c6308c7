/* fuzz_dwexpr — the DWARF expression evaluator over arbitrary expressions: byte 0
 * is a mask of which of 8 registers are known (their values from bytes 1-8, spread
 * over a small memory window and outside it), bytes 9-10 the split between the
 * memory window's contents and the expression; evaluated with and without an
 * initial value.  Registers and memory reads are bounds-checked here: the
 * evaluator must never read outside the expression or the window, nor run
 * unbounded.
 * Seeds: mterp's CFA expression (Debian libart), an x86_64 PLT entry's, a loop. */
#include <stdint.h>
#include <string.h>

#include "formats/dwexpr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define WIN_BASE 0x7ffd0000ull

struct env {
	uint8_t known;
	uint64_t regs[8];
	const uint8_t *win;
	size_t win_len;
};

static bool reg(void *ctx, uint32_t r, uint64_t *v)
{
	const struct env *e = ctx;
	uint32_t i = r % 8;

	if (r > 40 || !(e->known >> i & 1))
		return false;
	*v = e->regs[i];
	return true;
}

static bool mem(void *ctx, uint64_t addr, unsigned size, uint64_t *v)
{
	const struct env *e = ctx;

	if (size > 8 || addr < WIN_BASE || addr - WIN_BASE > e->win_len ||
	    e->win_len - (addr - WIN_BASE) < size)
		return false;
	*v = 0;
	memcpy(v, e->win + (addr - WIN_BASE), size);
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct env e = { 0 };
	uint64_t out, init = WIN_BASE + 16;
	size_t split;

	if (size < 11)
		return 0;
	e.known = data[0];
	for (int i = 0; i < 8; i++)
		e.regs[i] = WIN_BASE + (uint64_t)data[1 + i] * 4 - 64;
	split = (size_t)(data[9] | data[10] << 8);
	data += 11, size -= 11;
	split = split > size ? size : split;
	e.win = data;
	e.win_len = split;
	const struct dwexpr_env env = { &e, reg, mem };
	dwexpr_eval(data + split, size - split, &env, NULL, &out, NULL);
	dwexpr_eval(data + split, size - split, &env, &init, &out, NULL);
	return 0;
}
