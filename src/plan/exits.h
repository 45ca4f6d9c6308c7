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
 * unless --unsafe-uretprobe.  ART code whose first instruction is its return
 * (a lone `ret`: an empty method) gets one probe, the exit program alone at
 * that instruction, which reports the call there with duration 0 (an entry
 * and an exit probe on one instruction could not be ordered).  ELF functions
 * get exit probes too, by default on every path (a config's return probe as
 * much as trace --ret): a uretprobe there makes a C++ exception, longjmp or
 * unwinder passing through the function find the kernel's trampoline as a
 * return address, and the program aborts.  A function whose exits cannot be
 * proven (or that is a lone `ret`) is refused with the reason, never
 * guessed; a uretprobe is used only behind --unsafe-uretprobe (and then also
 * where a config sets exit_probes: false), the plan's note saying so.  A
 * native function's exits may lie in another function it tail-branches to
 * (plan/exits_tail.c). */
#ifndef UPROBESTATS_PLAN_EXITS_H
#define UPROBESTATS_PLAN_EXITS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "common/err.h"
#include "formats/exit_sites.h"

struct code_cache;

/* The error code of a refusal (main maps it to the config-error exit). */
#define PLAN_REFUSED (-ECANCELED)

/* One return probe's question, in neutral terms (the plan asks it for each
 * probe, plan_choose_exits in plan.h; trace's selection asks it per method). */
struct exits_query {
	const char *path;            /* the probed file */
	uint64_t offset;             /* file offset of the entry */
	uint64_t code_size;          /* bytes of code at offset (0: unknown) */
	uint16_t machine;            /* EM_* of the file */
	bool java;                   /* a Java method (ART code) */
	const char *program;         /* for messages: the program's configured name */
	const char *what;            /* for messages: the method as configured */
	bool has_exit_probes;        /* the probe sets exit_probes … */
	bool exit_probes;            /* … to this */
	bool opt_exit_probes;        /* --exit-probes: refuse rather than fall back */
	bool unsafe_uretprobe;       /* --unsafe-uretprobe */
	/* What to do instead when a native function's exits cannot be proven, in
	 * the caller's words (NULL: the config's: drop --exit-probes or set
	 * exit_probes: false). */
	const char *no_exits_advice;
	/* The command's code cache (code/codecache.h; required), so each file is
	 * read once for every probe and every step that asks. */
	struct code_cache *code;
};

/* The answer: exit probes (with their sites) or a uretprobe. */
struct exits_choice {
	bool exit_probes;
	/* with exit_probes: ART code that is a lone `ret`: one exit site, the
	 * entry itself, where the exit program runs alone (no entry program) */
	bool lone_ret;
	uint32_t n_exits;
	uint64_t *exit_offsets;      /* file offsets of the exit sites; the caller frees */
	char note[160];              /* what was chosen when worth saying; "" otherwise */
};

/* Decides for a resolved return probe.  0, or PLAN_REFUSED / another
 * negative errno with err set (out then holds nothing to free). */
int exits_choose(const struct exits_query *q, struct exits_choice *out, struct err *err);

/* The exit sites --exit-probes would use for the ELF function at path+offset
 * (code_size bytes, machine EM_*): proven (formats/exit_sites.h, and on arm64
 * plan/exits_tail.c through tail branches) and not the first instruction;
 * else a negative errno and err saying why (the reason exits_choose refuses
 * the probe with).  The sites count from *base: the function's offset, or 0
 * when tail branches added sites elsewhere (they are file offsets then).  The
 * analysis is the one exits_choose memoizes in the command's code cache c;
 * *sites points into c (valid until code_cache_free). */
int plan_native_exit_sites(struct code_cache *c, const char *path, uint64_t offset,
			   uint64_t code_size, uint16_t machine, const struct exit_sites **sites,
			   uint64_t *base, struct err *err);

#endif
