/* libvlib_a.so — half of target_vmlibs' call chain (vlib_1, vlib_3, vlib_5), built WITH
 * frame pointers (-fno-omit-frame-pointer).  Its calls to vlib_2 and vlib_4 go through
 * its PLT into libvlib_b.so. */
#include "vlib.h"

void *vlib_ra[VLIB_DEPTH + 1];

VLIB_EXPORT long vlib_5(long x)
{
	vlib_ra[5] = __builtin_return_address(0);
	VLIB_KEEP(x);
	return x * 3;
}

VLIB_EXPORT long vlib_3(long x)
{
	long r = vlib_4(x + 1);

	vlib_ra[3] = __builtin_return_address(0);
	VLIB_KEEP(r);
	return r + 3;
}

VLIB_EXPORT long vlib_1(long x)
{
	long r = vlib_2(x + 1);

	vlib_ra[1] = __builtin_return_address(0);
	VLIB_KEEP(r);
	return r + 1;
}
