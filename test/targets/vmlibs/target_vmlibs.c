/* target_vmlibs — a known call chain across two shared libraries, for the arm64 VM's
 * --stack scenarios (test/vm/vmtest_stack.c).  A dynamically linked glibc program: the
 * VM holds the dynamic loader and libc beside it (test/vm/mkinitramfs.sh).
 *
 *   target_vmlibs [--go-fifo PATH] COUNT OUT
 *
 * Calls, COUNT times, every call between the program and the libraries and between the
 * two libraries through a PLT:
 *   main -> vlib_1 (libvlib_a.so, frame pointers)
 *   -> vlib_2 (libvlib_b.so, no frame pointers, x29 clobbered) -> vlib_3 (libvlib_a.so)
 *   -> vlib_4 (libvlib_b.so) -> vlib_5 (libvlib_a.so, the probed leaf)
 * so a stack taken at vlib_5's entry is exactly vlib_5, vlib_4, vlib_3, vlib_2, vlib_1,
 * main, (libc start code).  At exit OUT gets one line:
 *   {"leaf": ADDR, "ra": [RA5, RA4, RA3, RA2, RA1]}
 * ADDR being vlib_5's address (frame 0's pc; the program is PIE, so a function of a
 * library has its own address, not a PLT stub's) and RAn the return address vlib_n saw,
 * the pc of its caller's frame.  Built by mk/vm.mk with rpath $ORIGIN. */
#include <stdio.h>
#include <stdlib.h>

#include "../go_fifo.h"
#include "vlib.h"

int main(int argc, char **argv)
{
	int argi = go_fifo_wait(argc, argv);
	long n, sum = 0;
	FILE *f;

	if (argc - argi != 2) {
		fprintf(stderr, "usage: target_vmlibs [--go-fifo PATH] COUNT OUT\n");
		return 2;
	}
	n = atol(argv[argi]);
	for (long i = 0; i < n; i++) {
		long r = vlib_1(i);

		VLIB_KEEP(r);
		sum += r;
	}
	f = fopen(argv[argi + 1], "w");
	if (!f) {
		perror(argv[argi + 1]);
		return 1;
	}
	fprintf(f, "{\"leaf\": %lu, \"ra\": [%lu, %lu, %lu, %lu, %lu]}\n",
		(unsigned long)&vlib_5, (unsigned long)vlib_ra[5], (unsigned long)vlib_ra[4],
		(unsigned long)vlib_ra[3], (unsigned long)vlib_ra[2], (unsigned long)vlib_ra[1]);
	printf("%ld\n", sum);
	return fclose(f) ? 1 : 0;
}
