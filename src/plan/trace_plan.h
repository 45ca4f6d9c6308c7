/* trace_plan.h — the plan source of `uprobestats trace`: matched methods
 * (from plan/pattern.h) and what to record for each become, in memory, the
 * same UprobestatsConfig model a config file would give (so --emit-config
 * writes it and `run` of that file builds the same plan) together with each
 * probe's location, which plan_build takes instead of resolving again
 * (plan_opts.located).
 *
 * Per method:
 *   entry only (default): GenericInstrumentation call_detail (upstream: the
 *     pc and argument registers), or Uprobestats call_args when an --args
 *     position is marked str (String / char * text, up to 127 bytes);
 *   --ret: Uprobestats call_return on exit probes (plain uprobes at the entry
 *     and every exit site; Java always, native too: a uretprobe breaks C++
 *     exception unwinding), plus the entry program above when --args names
 *     positions.
 * --args LIST: comma-separated argument positions (0 = first declared
 * argument; Java: `this` is not counted), each optionally followed by
 * ":str": "0,2", "1:str", "0,1:str".  The positions go to the task's
 * statsd_logging_config (atom_id: --atom, or TRACE_PLACEHOLDER_ATOM). */
#ifndef UPROBESTATS_PLAN_TRACE_PLAN_H
#define UPROBESTATS_PLAN_TRACE_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "config/config.h"
#include "plan/plan.h"

#define TRACE_MAX_ARGS 10
/* The atom id of the task's statsd_logging_config when --args is given
 * without --atom (statsd stays off for such a run). */
#define TRACE_PLACEHOLDER_ATOM 1

/* In-kernel aggregation instead of a record per call (plan/aggregation.h):
 * the probes run Uprobestats aggregate (or aggregate_return when the return
 * value or the latency is asked for) with these in their Aggregation. */
struct trace_agg {
	bool on;                           /* --count, --by, --sum or --hist given */
	int32_t by[7];                     /* enum agg_key, in the order given */
	size_t n_by;
	int32_t by_arg;
	int32_t sum, sum_arg;              /* enum agg_value (AGG_VALUE_NONE: none) */
	int32_t hist, hist_arg;
	uint32_t interval_s;               /* --interval (0: at exit only) */
	uint32_t max_keys;                 /* --agg-keys (0: the default) */
};

/* --by LIST: "pid", "tid", "uid", "comm", "process", "arg N" (or argN), "ret",
 * comma-separated. */
int trace_agg_parse_by(const char *s, struct trace_agg *agg, struct err *e);
/* --sum / --hist VALUE: "arg N" (argN), "ret", "latency" (what: the option). */
int trace_agg_parse_value(const char *s, const char *what, int32_t *value, int32_t *arg,
			  struct err *e);
/* Whether the aggregation needs the return (value or latency). */
bool trace_agg_needs_return(const struct trace_agg *agg);

struct trace_arg {
	int32_t pos;
	bool str;
};

struct trace_spec {
	bool ret;                          /* --ret: exit probes */
	struct trace_arg args[TRACE_MAX_ARGS];
	size_t n_args;
	int64_t atom_id;                   /* --atom; 0: none */
	const char *process_name;          /* -n NAME: the task's target_process_name */
	int32_t duration;                  /* --duration: duration_seconds (0: none) */
	bool native_uretprobe;             /* --unsafe-uretprobe: native --ret on a uretprobe */
	bool sections;                     /* `sections`: every method a trace-marker function
					    * (trace_method.section), on call_args */
	struct trace_agg agg;              /* --count, --by, --sum, --hist */
};

/* One matched method. */
struct trace_method {
	const char *path;
	uint64_t offset;                   /* file offset of the entry */
	uint64_t code_size;
	uint16_t machine;                  /* EM_* */
	bool java;
	bool is_static;                    /* Java */
	const char *signature;             /* Java: "void a.b.C.m(int)" (the config's
					    * method_signature) */
	const char *const *param_descs;    /* Java: "I", "Ljava/lang/String;", … */
	size_t n_params;
	const char *symbol;                /* native: the ELF symbol (mangled) */
	const char *display;               /* the signature, or the (demangled) symbol */
	const char *source_file;           /* Java: the class's source file, or NULL */
	/* sections: the probe's section, section_name_arg, section_value_arg
	 * (config.h; -1: none) */
	int32_t section;
	int32_t section_name_arg, section_value_arg;
};

/* The config model and the locations, parallel to the plan's probe ids. */
struct trace_source {
	struct uprobestats_config *cfg;
	struct plan_location *located;
	size_t n_located;
};

/* "0,2", "1:str": fills spec->args.  0, or -EINVAL with e naming the item. */
int trace_args_parse(const char *s, struct trace_spec *spec, struct err *e);

/* Whether position pos of m (Java: counting declared arguments) is a
 * String (Java) or a pointer the user says is a char * (native: any). */
int trace_check_args(const struct trace_spec *spec, const struct trace_method *m,
		     struct err *e);

/* Builds the model and locations for methods m[0..n) (n >= 1). */
int trace_source_build(const struct trace_spec *spec, const struct trace_method *m, size_t n,
		       struct trace_source *out, struct err *e);
void trace_source_free(struct trace_source *src);

#endif
