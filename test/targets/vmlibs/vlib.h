/* vlib.h — what target_vmlibs and its two libraries share (test/targets/vmlibs/). */
#ifndef UPROBESTATS_TEST_VLIB_H
#define UPROBESTATS_TEST_VLIB_H

#define VLIB_DEPTH 5

/* vlib_ra[n]: the return address vlib_n saw (__builtin_return_address(0)), which is the
 * pc the unwinder must report for the frame of vlib_n's caller.  Defined in libvlib_a.so,
 * reached through the GOT from the program and libvlib_b.so. */
extern void *vlib_ra[VLIB_DEPTH + 1];

long vlib_1(long x); /* libvlib_a.so */
long vlib_2(long x); /* libvlib_b.so */
long vlib_3(long x); /* libvlib_a.so */
long vlib_4(long x); /* libvlib_b.so */
long vlib_5(long x); /* libvlib_a.so, the probed leaf */

/* Each function calls on through the PLT and does work after the call: no tail calls,
 * every frame on the stack when the probe on vlib_5 fires. */
#define VLIB_KEEP(v) __asm__ volatile("" : "+r"(v)::"memory")
#define VLIB_EXPORT __attribute__((noinline, visibility("default")))

#endif
