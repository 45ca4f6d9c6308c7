/* target_jit — Java frames the way an app runs them, for the --stack tests
 * of JIT and interpreted code, over the test libart.so (art_jit/libart.c:
 * ART's debugger interface, no real ART).
 *
 *   target_jit [--go-fifo PATH] COUNT DEX INSNS_A DEXPC_A INSNS_B
 *
 * DEX is a dex file; INSNS_A / INSNS_B the file offsets of two methods'
 * instructions (from dexdump), DEXPC_A a dex pc in the first.  Maps the dex
 * and registers it, "JIT-compiles" three methods, then COUNT times:
 *   len 1: main -> art_quick_invoke -> JitA.first -> JitB.second ->
 *          JitC.callsWrite -> write(fd, buf, 1)
 *   len 2: main -> art_interpret -> art_nterp_entry (dex pc INSNS_A+2*DEXPC_A
 *          in r12, x22 on arm64) -> JitB.second -> JitC.callsWrite -> write(fd, buf, 2)
 *   len 3: main -> art_interpret -> art_switch_entry (dex pc INSNS_B in rbx,
 *          x19 on arm64)
 *          -> JitC.callsWrite -> write(fd, buf, 3)
 * writing to /dev/null; everything is set up before the go line and nothing
 * else is written after it. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "art_jit/art_jit.h"
#include "go_fifo.h"

int main(int argc, char **argv)
{
	struct jit_method m[3] = {
		{ "com.example.JitA.first", false, 0, 0, 0 },
		{ "com.example.JitB.second", false, 0, 0, 0 },
		{ "com.example.JitC.callsWrite", true, 0, 0, 0 },
	};
	static const char buf[4] = "jit";
	int argi = argc >= 3 && !strcmp(argv[1], "--go-fifo") ? 3 : 1, fd, dfd;
	struct stat st;
	uint8_t *dex;
	long n;

	if (argc - argi != 5) {
		fprintf(stderr, "usage: target_jit [--go-fifo PATH] COUNT DEX INSNS_A DEXPC_A INSNS_B\n");
		return 2;
	}
	n = atol(argv[argi]);
	dfd = open(argv[argi + 1], O_RDONLY);
	if (dfd < 0 || fstat(dfd, &st) < 0)
		return 1;
	dex = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, dfd, 0);
	if (dex == MAP_FAILED)
		return 1;
	art_dex_register(dex, (size_t)st.st_size);
	if (art_jit_setup(m, 3) < 0)
		return 1;
	/* all of it set up before the go line: no write is the setup's */
	go_fifo_wait(argc, argv);
	fd = open("/dev/null", O_WRONLY);
	const uint8_t *pc_a = dex + strtoul(argv[argi + 2], NULL, 0) +
			      2 * strtoul(argv[argi + 3], NULL, 0);
	const uint8_t *pc_b = dex + strtoul(argv[argi + 4], NULL, 0);
	uint64_t w = (uint64_t)(uintptr_t)write;
	uint64_t chain1[] = { m[0].addr, m[1].addr, m[2].addr, w, (uint64_t)fd,
			      (uint64_t)(uintptr_t)buf, 1 };
	uint64_t chain2[] = { m[1].addr, m[2].addr, w, (uint64_t)fd, (uint64_t)(uintptr_t)buf, 2 };
	uint64_t chain3[] = { m[2].addr, w, (uint64_t)fd, (uint64_t)(uintptr_t)buf, 3 };

	for (long i = 0; i < n; i++) {
		art_quick_invoke(chain1);
		art_interpret(0, pc_a, chain2);
		art_interpret(1, pc_b, chain3);
	}
	return 0;
}
