/* libvlib_b.so — the other half of target_vmlibs' call chain (vlib_2, vlib_4), built
 * WITHOUT frame pointers (-fomit-frame-pointer) but with .eh_frame.  vlib_2 also uses
 * x29 as an ordinary register around its call, so a frame-pointer walk through it would
 * go wrong: only the CFI unwinds it.  Its calls go through its PLT into libvlib_a.so. */
#include "vlib.h"

VLIB_EXPORT long vlib_4(long x)
{
	long r = vlib_5(x + 1);

	vlib_ra[4] = __builtin_return_address(0);
	VLIB_KEEP(r);
	return r + 4;
}

VLIB_EXPORT long vlib_2(long x)
{
	long r;

#if defined(__aarch64__)
	__asm__ volatile("mov x29, %0" ::"r"(x ^ 0x5a5a) : "x29");
#elif defined(__x86_64__)
	__asm__ volatile("mov %0, %%rbp" ::"r"(x ^ 0x5a5a) : "rbp");
#endif
	r = vlib_3(x + 1);
	vlib_ra[2] = __builtin_return_address(0);
	VLIB_KEEP(r);
	return r + 2;
}
