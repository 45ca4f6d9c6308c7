/* plan.h — the config turned into concrete probes: for every probe the
 * embedded program, the ring buffer, the file and offset, and the processes.
 * Building the plan attaches nothing; it fails with every problem it can
 * name before anything touches the kernel. */
#ifndef UPROBESTATS_PLAN_PLAN_H
#define UPROBESTATS_PLAN_PLAN_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "catalog/catalog.h"
#include "common/err.h"
#include "config/config.h"
#include "vocab/event.h"

/* plan_build's code for an argument position (an aggregation's key or value,
 * a section's name or value) that is no register, and for every other bad
 * value a config or trace's options gave: exit 2 from trace's --by/--sum/
 * --hist/--args, 3 from a config; not a resolution failure. */
#define PLAN_BAD_POSITION (-EDOM)

struct code_cache;

/* How argument positions map to registers (call_detail's regs[]). */
enum arg_abi {
	ARG_ABI_NATIVE = 0,   /* C ABI: position p is argument register p */
	ARG_ABI_ART_INSTANCE, /* ART: x0/rdi = ArtMethod*, then this, then args */
	ARG_ABI_ART_STATIC,   /* ART: x0/rdi = ArtMethod*, then args */
};

enum resolve_how {
	RESOLVED_ELF_SYMBOL = 0,
	RESOLVED_OAT_BUILTIN,
	RESOLVED_OATDUMP,
};

struct plan_probe {
	uint32_t id;                      /* run-wide probe id (BPF counters index) */
	const struct task_config *task_cfg;
	const struct probe_config *cfg;
	const struct catalog_object *obj;
	const struct catalog_program *prog;
	char path[PATH_MAX];
	uint64_t offset;
	/* A library in an APK (path "APK!/ENTRY", common/zip_path.h): the file
	 * the uprobes go on (the archive, owned; NULL: path itself) and the
	 * entry's data offset there, which every offset here (offset,
	 * exit_offsets) counts from; see plan_probe_uprobe_*. */
	char *uprobe_file;
	uint64_t file_base;
	uint16_t machine;                 /* EM_* of the probed file */
	enum resolve_how how;
	enum arg_abi abi;
	char note[512];                   /* how it was resolved, warnings (dedup) */
	bool unmapped;                    /* no target process maps path now (the note says) */
	bool atom_int32_args;             /* call_detail atoms as the C++ era: Int32 */
	/* call_args: registers holding java.lang.String arguments (0xff: none)
	 * and their Java positions, for the program's .rodata. */
	uint8_t string_reg[4];
	uint8_t string_pos[4];
	uint8_t string_native;            /* bit k: slot k is a native char *, not a String */
	/* --stack / stack_frames: enum ups_stack_mode (0: off), the frames to
	 * keep and the user-stack bytes each hit copies. */
	uint32_t stack_mode;
	uint32_t stack_frames;
	bool stack_art_frames;            /* show libart's own frames (stack/stacks.h) */
	uint32_t stack_bytes;
	/* Return programs (call_return, call_latency): plain uprobes at the
	 * entry and at every exit site instead of a uretprobe (plan/exits.h). */
	bool java;                        /* a Java method (ART code) */
	uint64_t code_size;               /* bytes of code at offset (0: unknown) */
	bool exit_probes;
	bool lone_ret;                    /* a lone `ret`: the exit program alone at the
					   * entry, the one exit site (plan/exits.h) */
	uint32_t n_exits;
	uint64_t *exit_offsets;           /* file offsets of the exit sites; owned */
	/* The aggregate programs (plan/aggregation.h): what a hit is keyed by,
	 * summed and histogrammed (records.h: enum ups_agg_by/ups_agg_val), the
	 * argument registers (ups_prog_config.agg_regs) and positions. */
	uint32_t agg_by, agg_sum, agg_hist, agg_regs;
	int32_t agg_by_arg, agg_sum_arg, agg_hist_arg;
	uint32_t traffic_op;              /* the traffic program: enum ups_traffic_op */
	char program_name[160];           /* as configured: prog_<Obj>_uprobe_<name> */
	char map_name[160];               /* map_<Obj>_<map> */
	char *method_key;                 /* desc.method_key (plan/method_key.h); owned */
	/* How the text output shows its calls (plan_call_shape.c); desc.call
	 * points here for call entries and returns. */
	struct call_shape shape;
	char arg_names[CALL_SHAPE_MAX_ARGS][16];
	struct probe_desc desc;           /* points into this struct */
};

/* The run-wide id of the probe a probe_desc (from an event or an atom)
 * belongs to: every probe_desc the run hands out is a plan_probe's desc. */
static inline uint32_t plan_probe_id(const struct probe_desc *d)
{
	const char *p = (const char *)d - offsetof(struct plan_probe, desc);

	return ((const struct plan_probe *)p)->id;
}

/* Where the kernel puts probe p's uprobes: this file, at this offset for
 * offset off of p (p->offset or one of p->exit_offsets). */
static inline const char *plan_probe_uprobe_file(const struct plan_probe *p)
{
	return p->uprobe_file ? p->uprobe_file : p->path;
}

static inline uint64_t plan_probe_uprobe_offset(const struct plan_probe *p, uint64_t off)
{
	return p->file_base + off;
}

struct plan_task {
	uint32_t index;
	const struct task_config *cfg;
	struct plan_probe *probes;
	size_t n_probes;
	pid_t *pids;                      /* empty with all_processes or wait_for_start */
	size_t n_pids;
	bool all_processes;
	/* target_process_selection *_ON_START: attach to the first matching
	 * process that starts during the run (wait_name NULL: any app). */
	bool wait_for_start;
	const char *wait_name;
	int32_t duration_seconds;         /* <= 0: until interrupted */
	uint64_t duration_ms;             /* the same in ms (0: until interrupted) */
};

struct plan {
	struct plan_task *tasks;
	size_t n_tasks;
	size_t n_probes;                  /* over all tasks */
	struct plan_probe **probe_by_id;  /* n_probes entries */
	bool held;                        /* plan_opts.held: the pids have not exec'd yet */
};

/* Where a probe is, as a plan source that found it already knows it
 * (plan/trace_plan.h): plan_build then resolves nothing for that probe. */
struct plan_location {
	const char *path;
	uint64_t offset;
	uint64_t code_size;
	uint16_t machine;
	bool java;
	enum arg_abi abi;
	uint8_t string_reg[4];            /* as plan_probe (0xff: none) */
	uint8_t string_pos[4];
	uint8_t string_native;
	const char *display;              /* the method's full name for sinks; NULL: as configured */
	const char *source_file;          /* Java: the class's source file, or NULL */
	const char *note;
};

struct plan_opts {
	const char *proc_dir;             /* "/proc" unless testing */
	const pid_t *pids;                /* --pid overrides target_process_name */
	size_t n_pids;
	bool all_matches;                 /* every process whose cmdline matches */
	bool held;                        /* the pids are held before exec (-c): their
					   * files are not mapped yet, and no warning says so */
	const char *root;                 /* -c 'chroot ROOT …': file_paths under ROOT */
	int32_t duration_override;        /* > 0 replaces duration_seconds */
	uint64_t duration_override_ms;    /* > 0: the same in ms (--duration 500ms) */
	bool no_resolve;                  /* check --no-resolve: fill what is known */
	/* Java methods: --resolver, --oatdump, the search's cache and roots. */
	int java_mode;                    /* enum java_resolver_mode */
	const char *oatdump_path;
	const char *cache_dir;
	bool no_cache;
	const char *const *search_roots;  /* NULL: the defaults for the ISA */
	size_t n_search_roots;
	const char *isa;                  /* for the search: "arm64", "x86_64"; NULL: any */
	bool atom_int32_args;             /* --atom-mapping cpp */
	bool unsafe_any_symbol;           /* --unsafe-any-symbol: NATIVE_UNSAFE_ANY_SYMBOL */
	/* --stack[=FRAMES] (0: off unless a probe's stack_frames asks),
	 * --stack-mode, --stack-bytes (0: the defaults). */
	uint32_t stack_frames;
	bool stack_art_frames;            /* --show-art-frames: libart's own frames shown */
	uint32_t stack_mode;
	uint32_t stack_bytes;
	bool exit_probes;                 /* --exit-probes: native return programs too */
	bool unsafe_uretprobe;            /* --unsafe-uretprobe: allow uretprobes on ART code */
	/* What to do instead when a native function's exits cannot be proven, in
	 * the caller's words (NULL: the config's: drop --exit-probes or set
	 * exit_probes: false). */
	const char *no_exits_advice;
	/* The command's code cache (code/codecache.h; required): every file
	 * resolution and exit sites read, parsed once for the plan and the
	 * session. */
	struct code_cache *code;
	/* Per probe id, where each probe is (NULL: resolve from the config). */
	const struct plan_location *located;
	size_t n_located;
	/* When set, every per-probe problem is reported here and building goes
	 * on, so `check` can list them all; the build still fails at the end. */
	void (*problem)(void *ctx, const char *msg);
	void *problem_ctx;
};

int plan_build(const struct uprobestats_config *cfg, const struct plan_opts *opts,
	       struct plan **out, struct err *err);
void plan_free(struct plan *plan);

/* For a resolved probe of a return program (call_return, call_latency):
 * a uretprobe or exit probes (p->exit_probes, p->exit_offsets, a note), as
 * plan/exits.h decides.  Nothing to do for programs without a return half.
 * 0, or PLAN_REFUSED / another negative errno with err set. */
int plan_choose_exits(struct plan_probe *p, const struct plan_opts *opts, struct err *err);

/* Register index (in call_detail's regs[]) of Java or C argument position
 * pos under abi, or -1 when it is not among the ten recorded registers. */
int plan_arg_register(enum arg_abi abi, int32_t pos);

const char *resolve_how_name(enum resolve_how how);
const char *arg_abi_name(enum arg_abi abi);

/* plan_call_shape.c: how the text output's line per call shows each probe
 * (vocab/event.h: struct call_shape).  plan_call_shape fills p->shape (and
 * p->desc.call) once p is resolved; plan_call_pairs marks each entry probe
 * that a return probe of the same function (file, offset) follows: 0, or -1
 * when out of memory. */
void plan_call_shape(struct plan_probe *p);
int plan_call_pairs(struct plan *plan);

/* plan_aggregation.c: fills p->agg_* from its Aggregation field (plan/
 * aggregation.h); an aggregation on a program that does not aggregate, a
 * return-only value on the entry program, or an argument outside the
 * registers is an error naming the probe. */
int plan_aggregation(struct plan_probe *p, struct err *err);

#endif
