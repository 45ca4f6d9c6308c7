/* cmd_run.h — the run command's options and its last stage, shared with the
 * commands that build their plan another way (`trace`: cmd_trace.c): the
 * option rows (run's own, sink/sink_args.h's output and stack/stack_args.h's
 * stack options) parsed with a command's own, and running a built plan
 * through the session, loop and sinks. */
#ifndef UPROBESTATS_CLI_CMD_RUN_H
#define UPROBESTATS_CLI_CMD_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/cli.h"
#include "config/config.h"
#include "config/guardrail.h"
#include "plan/plan.h"
#include "probe/session.h"
#include "sink/sink_args.h"
#include "stack/stack_args.h"

#define MAX_PIDS 256

struct held_cmd;

struct run_opts {
	const char *config;
	const char *command;         /* -c 'CMD ARGS': started held (cli/held_cmd.h) */
	struct held_cmd *held;       /* that command, once started; NULL: none */
	const char *process_name;    /* run -n NAME: overrides target_process_name */
	struct sink_args sinks;      /* --format, --output, --trace, --statsd, … */
	struct stack_args stacks;    /* --stack, --stack-mode, --stack-bytes, --stacks */
	int32_t duration;            /* --duration in whole seconds (rounded up) */
	uint64_t duration_ms;        /* --duration as given, in ms (0: none) */
	pid_t pids[MAX_PIDS];
	size_t n_pids;
	unsigned dup_pid_said;
	bool unsafe_any_symbol;      /* native symbols: no function/boundary proof */
	bool forced_ringbuf;         /* --force-ringbuf (refused with --force-perfbuf) */
	bool all_matches;
	uint32_t ringbuf_size;
	uint32_t flush_ms;
	bool bpf_pid_filter;
	bool quiet;
	enum output_mode output_mode;
	bool force_tracefs;
	bool force_pmu;
	unsigned target_kernel;      /* KVER of --target-kernel; 0: this kernel */
	bool on_android;
	uint32_t polled_atom;        /* atom id of the per-map "polled" summary; 0: none */
	uint32_t attached_atom;      /* atom id of the per-probe "attached" atom; 0: none */
	uint32_t error_atom;         /* atom id of the "internal error" atom; 0: none */
	bool atom_int32_args;        /* --atom-mapping cpp */
	bool exit_probes;            /* --exit-probes */
	bool unsafe_uretprobe;       /* --unsafe-uretprobe */
	uint32_t agg_interval;       /* --interval S: aggregations' flush (0: the config's) */
	bool has_traffic_uid;        /* traffic --uid U: only U's sockets */
	uint32_t traffic_uid;
	int32_t traffic_atom;        /* traffic --atom ID: each row an atom (0: none) */
	struct config_load_opts load;
	struct guardrail_opts guardrail;
	/* The run's code cache (code/codecache.h): made by the command before
	 * planning, read through by the plan and the session, freed after
	 * run_plan; NULL: each makes its own. */
	struct code_cache *code;
};

/* The option tables of every command that runs probes, in parse order (the
 * output rows, the stack rows, run's rows, -v, -h): run_opts_parse_cmd parses
 * with these and cmd_misc.c's command_rows lists them, which --help is
 * checked against, so the two cannot differ. */
#define RUN_TABLES &sink_args_rows, &stack_args_rows, &run_rows, &cli_verbose_rows, &cli_help_rows

/* A command taking every run option (RUN_TABLES) plus its own rows (own with
 * ctx; NULL: none), the short letters in shorts ("pnvh": -p is run's --pid);
 * then run_opts_check.  EXIT_OK with optind at the first operand, -1 after
 * --help (printed), or an exit code (the error printed). */
int run_opts_parse_cmd(int argc, char **argv, const struct opt_rows *own, void *ctx,
		       const char *shorts, struct run_opts *o);
/* What run_opts_parse_cmd parses with: each of RUN_TABLES with its part of
 * o (-v, -h: none), then own (NULL: no rows) with ctx; how many (at most
 * CLI_MAX_TABLES). */
size_t run_opts_uses(struct run_opts *o, const struct opt_rows *own, void *ctx,
		     struct opt_use uses[CLI_MAX_TABLES]);

/* -c: the command started held (held_cmd.h) into h, and o->held, pids and
 * n_pids set to it; -p or -n (name: the command's -n, or NULL) with it are
 * refused.  EXIT_OK (also without -c: nothing done) or an exit code. */
int run_start_command(struct run_opts *o, const char *name, struct held_cmd *h);

/* After the last option: contradictions refused (printed), EXIT_OK or EXIT_USAGE. */
int run_opts_check(struct run_opts *o);
/* The call-stack options (--stack, --stack-mode, --stack-bytes) into the plan's. */
void run_opts_plan_stacks(const struct stack_args *a, struct plan_opts *po);

/* A warning per probe (10 at most) on a file no target process maps now:
 * it fires only if one loads the file later (plan_probe.unmapped). */
void run_warn_unmapped(const struct plan *plan);

/* Refuses (EXIT_PRIVILEGE, printed) when BPF is not allowed here. */
struct android_info;
int run_check_privileges(const struct android_info *android);
/* Session, sinks, loop and summary for a built plan; an exit code.  The
 * shipped (non-glibc) builds exit with it instead of returning: a caller
 * has nothing left to do but free memory (run_exec.c). */
int run_plan(const struct plan *plan, const struct run_opts *o);

/* The plan sources' last steps (cmd_trace.c; `trace` and `sections`):
 * --emit-config writing the model (textproto, or binary for .pb or
 * CONFIG_FORMAT_BINARY), and the plan built from the located probes (through
 * run->code), the privilege check and run_plan.  Exit codes, errors printed. */
struct trace_source;
int trace_emit_config(const struct uprobestats_config *cfg, const char *path,
		      enum config_format format);
int trace_build_and_run(struct run_opts *run, const struct trace_source *src,
			struct android_info *android);

#endif
