/* exits.h — the plan's choice, per return program (call_return,
 * call_latency), between a uretprobe and exit probes, and the file offsets
 * of the exit sites.
 *
 * A uretprobe rewrites the return address of the probed call; ART walks its
 * Java frames by those addresses (GC roots, exceptions, stack dumps) and
 * aborts, or visits the wrong roots, on one it did not compile.  So Java
 * methods always get exit probes: plain uprobes at the entry and at every
 * return instruction the oat reader proves against the method's CodeInfo
 * frame (formats/oat_exits.h; ELF functions: formats/exit_sites.h).  When
 * those cannot be found, the probe is refused (naming the method and why)
 * unless --unsafe-uretprobe.  ELF functions keep their uretprobe unless
 * --exit-probes or the probe's exit_probes field asks for exit sites; a
 * function whose exits cannot be proven is then refused, never guessed. */
#ifndef UPROBESTATS_PLAN_EXITS_H
#define UPROBESTATS_PLAN_EXITS_H

#include <errno.h>
#include <stdbool.h>

#include "common/err.h"
#include "formats/exit_sites.h"
#include "plan/plan.h"

/* The error code of a refusal (main maps it to the config-error exit). */
#define PLAN_REFUSED (-ECANCELED)

/* Decides p->exit_probes and fills p->exit_offsets for a resolved probe
 * (p->path, p->offset, p->code_size, p->machine, p->java).  Nothing to do
 * for programs without a return half.  0, or PLAN_REFUSED / another
 * negative errno with err set. */
int plan_choose_exits(struct plan_probe *p, const struct plan_opts *opts, struct err *err);

/* The exit sites --exit-probes would use for the ELF function at path+offset
 * (code_size bytes, machine EM_*): offsets from the function's start, proven
 * (formats/exit_sites.h) and not the first instruction; else a negative errno
 * and err saying why (the reason plan_choose_exits refuses the probe with).
 * c may be NULL.  Free sites with exit_sites_free(). */
int plan_native_exit_sites(struct exits_cache *c, const char *path, uint64_t offset,
			   uint64_t code_size, uint16_t machine, struct exit_sites *sites,
			   struct err *err);

/* The files plan_choose_exits reads (plan_opts.exits_cache), opened once
 * for all their probes; free after the last probe. */
struct exits_cache *exits_cache_new(void);
void exits_cache_free(struct exits_cache *c);

#endif
