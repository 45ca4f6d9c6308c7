/* objcheck.h — the static check of a BPF object against what a kernel
 * version accepts (sys/kfeatures.h's tables), without that kernel.
 *
 * It is how the legacy objects are held to the oldest supported kernel in
 * `make test` (`uprobestats check-objects`, run on each shipped binary: it
 * checks the objects that binary embeds).  Per program: a helper newer than
 * the kernel (or not in the table), more instructions than the kernel
 * verifies, a back-edge, a BPF-to-BPF call or a JMP32 instruction the kernel
 * lacks, a map value passed as a map helper's key or value (before 4.18; a
 * forward data flow over registers and stack slots); per object: a
 * .rodata/.data/.bss/.kconfig section or map, a map type the kernel lacks,
 * CO-RE relocations (they need kernel BTF). */
#ifndef UPROBESTATS_PROBE_OBJCHECK_H
#define UPROBESTATS_PROBE_OBJCHECK_H

#include <linux/bpf.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

/* Receives one problem as a line ("program x: instruction 12 calls helper
 * probe_read_user (112), new in 5.5"). */
typedef void (*objcheck_report_fn)(void *ctx, const char *object, const char *problem);

/* The instruction checks of one program; returns the number of problems. */
size_t objcheck_insns(const char *object, const char *prog, const struct bpf_insn *insns,
		      size_t n, unsigned kver, objcheck_report_fn report, void *ctx);

/* Every check on one ELF object; returns the number of problems, or a
 * negative errno (with err) when the object cannot be read at all. */
int objcheck_object(const char *object, const void *elf, size_t size, unsigned kver,
		    objcheck_report_fn report, void *ctx, struct err *err);

#endif
