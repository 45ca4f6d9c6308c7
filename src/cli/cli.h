/* cli.h — what the subcommand handlers share: exit codes, error printing,
 * number parsing, config loading with the common --config-* options.
 * main.c dispatches to the cmd_* handlers declared here. */
#ifndef UPROBESTATS_CLI_CLI_H
#define UPROBESTATS_CLI_CLI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/optrows.h"
#include "config/config.h"

/* Exit codes (docs/exit-codes.md and --help list the same). */
enum exit_code {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,    /* kernel refused a load/attach, I/O failed mid-run */
	EXIT_USAGE = 2,      /* bad command line */
	EXIT_CONFIG = 3,     /* config unreadable, malformed, invalid or refused by guardrail */
	EXIT_RESOLVE = 4,    /* a probe's file, symbol or method could not be resolved */
	EXIT_PRIVILEGE = 5,  /* not allowed to use BPF/perf events */
	EXIT_NO_TARGET = 6,  /* target process not found */
};

#define ANDROID_CONFIG_DIR "/data/misc/uprobestats-configs/"

struct logger;

/* cli_hints.c.  The bare form's word (`uprobestats WORD`) when it is no
 * config (neither ./WORD nor the Android directory's) but close to one of
 * names (NULL-ended): "unknown command 'trac' (did you mean trace?)" said,
 * EXIT_USAGE; else EXIT_OK (a config name: run reads it). */
int cli_unknown_command(const char *word, const char *const *names);
/* A config load that failed with code: a bare name found nowhere gets one
 * line naming every path tried (true, said); false: say e.msg. */
bool cli_config_missing(const char *arg, int code);

/* The process-wide CLI state, set once before a subcommand runs: -v, and
 * the logger (stderr, plus logcat on Android) that p_* write to.  It lives
 * in cli.c, the one module with mutable globals (CONTRIBUTING). */
void cli_set_verbose(bool v);
bool cli_verbose(void);

/* Route p_* through this logger (stderr + logcat on Android); NULL: stderr. */
void cli_set_logger(struct logger *lg);

void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void p_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Every command's options are rows (common/optrows.h).  Rows most commands
 * have: -v/--verbose and -h/--help; and no rows. */
extern const struct opt_rows cli_verbose_rows, cli_help_rows, cli_no_rows;

/* opt_rows_parse over uses: EXIT_OK with optind at the first operand, -1
 * after --help (printed), or EXIT_USAGE with the error printed. */
int cli_parse_rows(int argc, char **argv, const struct opt_use *uses, size_t n,
		   const char *shorts);

/* Each command's own rows (run's: cmd_run.h adds the output and stack rows). */
extern const struct opt_rows run_rows, run_only_rows, trace_rows, sections_rows, traffic_rows, check_rows,
	oat_rows, doctor_rows, check_objects_rows;

/* The short letters each command takes (its rows' short_name where listed):
 * the command passes them to its parse, and its help prints them. */
#define CLI_SHORTS_RUN "pnvhc"
#define CLI_SHORTS_PROCS "pnvhc"     /* trace, sections, traffic */
#define CLI_SHORTS_CHECK "vh"
#define CLI_SHORTS_OAT "vh"          /* methods, resolve */
#define CLI_SHORTS_DOCTOR "jh"
#define CLI_SHORTS_OBJECTS "h"

/* A command's help (cmd_misc.c): `CMD --help`, `help CMD` and the man page
 * (docs/uprobestats.1, `uprobestats __man`) print it, the options from the
 * rows of the tables it parses with (test_help.c checks both ways). */
#define CLI_MAX_TABLES 6
struct cli_command_rows {
	const char *command;
	const char *shorts;          /* CLI_SHORTS_* */
	const char *summary;         /* one line in the command list */
	const char *usage;           /* after "usage: uprobestats ", lines split by \n */
	const char *about;           /* its operands and what it does, or NULL */
	const char *examples;        /* "# what it shows\nuprobestats CMD ...\n", one or more */
	const struct opt_rows *tables[CLI_MAX_TABLES];
};
const struct cli_command_rows *cli_command_rows(size_t *n);
/* The command called name (NULL: none); the help printers. */
const struct cli_command_rows *cli_command_find(const char *name);
void cli_print_command_help(FILE *f, const struct cli_command_rows *c);
void cli_print_help(FILE *f);
void cli_print_man(FILE *f);

/* A bare name (no '/') that is not a file here is read from
 * /data/misc/uprobestats-configs/NAME, as the Android service does. */
const char *cli_config_path(const char *arg, char *buf, size_t size);

/* --config-format=text|binary and --config-era=b|current|auto. */
int cli_parse_config_format(const char *s, enum config_format *out);
int cli_parse_config_era(const char *s, enum config_era *out);

/* Loads the config; prints the error and returns EXIT_CONFIG on failure. */
int cli_load_config(const char *arg, const struct config_load_opts *lo,
		    struct uprobestats_config **cfg);

/* Android properties and the guardrail options they imply (on_android,
 * ro.build.type); off Android both stay unset. */
struct android_info;
struct guardrail_opts;
void cli_android_guardrail(struct android_info *info, struct guardrail_opts *g);

/* Validation and the guardrail, with every problem printed.  Returns
 * EXIT_OK, or EXIT_CONFIG when there are errors (warnings still print). */
int cli_validate(const struct uprobestats_config *cfg, const struct guardrail_opts *g,
		 bool pid_given);

/* The command's code cache (code/codecache.h), the one every command that
 * reads code makes once, before matching or planning, and hands down to
 * pattern matching, the plan, exit sites and the session (which require it
 * and make none of their own: test-layers checks that only src/cli/ calls
 * code_cache_new), so each file is opened and parsed once per run.  NULL
 * (printed) when out of memory. */
struct code_cache;
struct code_cache *cli_code_cache_new(void);
/* Says with -v what it did (files opened, oat tables built, exit analyses:
 * one per method for the run), once per cache: run_plan says it before a
 * shipped build exits without freeing.  Then frees it. */
void cli_code_cache_report(const struct code_cache *c);
void cli_code_cache_free(struct code_cache *c);

/* SIGINT and SIGTERM stop a run wherever they land, whatever this process
 * inherited.  A command started with `&` from a script (a shell without job
 * control) inherits SIGINT ignored, and an ignored signal that is not
 * blocked is thrown away by the kernel: one sent before the run blocks the
 * stop signals for its signalfd was lost, and the run went on attaching
 * and ran until its duration (forever without one), while one sent a moment
 * later (blocked, so queued) stopped it.  main calls this first: each stop
 * signal inherited ignored gets its default back, so one that lands before
 * the signalfd ends the process (nothing is attached yet) and one after
 * ends the run.  (One that lands before main itself is still lost.) */
void cli_take_stop_signals(void);
/* The dispositions cli_take_stop_signals changed, as they were inherited:
 * for the -c command (held_cmd), in its child before the exec. */
void cli_restore_inherited_signals(void);

int cmd_run(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_sections(int argc, char **argv);
int cmd_traffic(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_methods(int argc, char **argv);
int cmd_resolve(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_check_objects(int argc, char **argv);
int cmd_help(int argc, char **argv);
int cmd_version(int argc, char **argv);

/* Not a user command: the detached closer of a run's probes, which the run
 * execs as `uprobestats __closer …` (probe/closer.h, CLOSER_COMMAND). */
#define CLI_CLOSER_COMMAND "__closer"
int cmd_closer(int argc, char **argv);
/* Not a user command: prints the man page (make man writes docs/uprobestats.1). */
#define CLI_MAN_COMMAND "__man"
int cmd_man(int argc, char **argv);

#endif
