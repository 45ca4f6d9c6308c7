/* config.h — the UprobestatsConfig model and how to load it.
 *
 * One model holds every field any upstream era defined (see
 * ../shared/reference/uprobestats-upstream.md §1).  Parsers (textproto,
 * binary protobuf) fill it; validation and the guardrail read it.  All strings
 * and arrays live in the config's arena and are freed by config_free().
 * Optional scalars carry a has_ flag so "absent" and "0" differ. */
#ifndef UPROBESTATS_CONFIG_H
#define UPROBESTATS_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <errno.h>

#include "common/err.h"

/* Where a value came from, for error messages: line/col for text, byte offset
 * for binary (line == 0 then).  kind says which, so a zeroed loc is "unknown". */
enum src_loc_kind {
	SRC_LOC_NONE = 0,
	SRC_LOC_TEXT,
	SRC_LOC_BINARY,
};

struct src_loc {
	uint32_t line;
	uint32_t col;
	uint64_t offset;
	uint8_t kind;                     /* enum src_loc_kind */
};

/* Repeated scalars.  loc, when non-NULL, is parallel to v (one per element). */
struct str_list {
	char **v;
	size_t n;
	struct src_loc *loc;
};

struct i64_list {
	int64_t *v;
	size_t n;
	struct src_loc *loc;
};

struct i32_list {
	int32_t *v;
	size_t n;
	struct src_loc *loc;
};

enum atom_field_position {
	ATOM_FIELD_UNKNOWN = 0,
	ATOM_FIELD_CALLING_UID = 1,
	ATOM_FIELD_INTERFACE_NAME = 2,
	ATOM_FIELD_CODE = 3,
	ATOM_FIELD_KTIME_NS = 4,
};

struct binder_method_config {
	bool has_method_id;
	int64_t method_id;
	bool has_event_service_config;
	bool flush;                       /* EventServiceConfig.flush */
	bool has_atom_config;
	bool has_atom_id;
	int32_t atom_id;                  /* AtomConfig.atom_id */
	struct i32_list atom_field_positions; /* enum atom_field_position values */
	struct src_loc loc;
	struct src_loc method_id_loc;
	struct src_loc atom_id_loc;
};

struct binder_filter {
	char *interface_name;             /* NULL when absent */
	struct i64_list method_ids;       /* deprecated field 2 */
	struct binder_method_config *methods; /* field 3 */
	size_t n_methods;
	struct src_loc loc;
	struct src_loc interface_name_loc;
};

struct probe_config {
	char *bpf_name;                   /* e.g. prog_GenericInstrumentation_uprobe_call_detail */
	struct str_list file_paths;
	char *method_signature;           /* "void a.b.C.m(int, java.lang.String)" or a symbol */
	char *fully_qualified_class_name;
	char *method_name;
	struct str_list fully_qualified_parameters;
	bool has_fully_qualified_parameters; /* distinguishes "no params given" from "()" in text */
	char *bpf_map;                    /* era A/B ProbeConfig.bpf_map (field 4 then) */
	struct binder_filter *binder_filters;
	size_t n_binder_filters;
	/* Ours (field numbers >= 1000): how the trace sink shows this probe.  A
	 * TRACE_ROLE_ENTER probe opens the slice named trace_slice on its thread,
	 * the TRACE_ROLE_EXIT probe with the same name closes it. */
	char *trace_slice;
	bool has_trace_role;
	int32_t trace_role;               /* enum trace_role */
	/* Ours: record the call stack of each hit, up to this many frames
	 * (0: none; overrides --stack for this probe). */
	bool has_stack_frames;
	int32_t stack_frames;
	/* Ours: call_return/call_latency at the exit sites (plain uprobes)
	 * instead of a uretprobe; unset: Java methods yes, ELF functions only
	 * with --exit-probes.  false on a Java method needs --unsafe-uretprobe. */
	bool has_exit_probes;
	bool exit_probes;
	/* Ours: the probe is an android.os.Trace / ATrace / atrace_*_body
	 * function (`uprobestats sections`): what a call does (enum
	 * trace_section), the argument position of the section or counter name
	 * (a String, or a char * in native code) and of the cookie or counter
	 * value (-1 or unset: none).  Needs prog_Uprobestats_uprobe_call_args. */
	bool has_section;
	int32_t section;                  /* enum trace_section */
	bool has_section_name_arg;
	int32_t section_name_arg;
	bool has_section_value_arg;
	int32_t section_value_arg;
	/* Ours: the Aggregation message (field 1005, flattened here) of the
	 * aggregate programs: keys (enum agg_key), what is summed and what goes
	 * into the histogram (enum agg_value, with their argument positions),
	 * the flush interval and the map's key limit. */
	bool has_aggregation;
	struct i32_list agg_by;
	bool has_agg_by_arg;
	int32_t agg_by_arg;
	bool has_agg_sum;
	int32_t agg_sum;
	bool has_agg_sum_arg;
	int32_t agg_sum_arg;
	bool has_agg_hist;
	int32_t agg_hist;
	bool has_agg_hist_arg;
	int32_t agg_hist_arg;
	bool has_agg_interval;
	int32_t agg_interval_seconds;
	bool has_agg_max_keys;
	int32_t agg_max_keys;
	struct src_loc loc;
	/* Where each singular field was set (kind NONE when absent). */
	struct src_loc bpf_name_loc;
	struct src_loc method_signature_loc;
	struct src_loc fully_qualified_class_name_loc;
	struct src_loc method_name_loc;
	struct src_loc bpf_map_loc;
	struct src_loc trace_slice_loc;
	struct src_loc trace_role_loc;
	struct src_loc stack_frames_loc;
	struct src_loc exit_probes_loc;
	struct src_loc section_loc;
	struct src_loc section_name_arg_loc;
	struct src_loc section_value_arg_loc;
};

struct statsd_logging_config {
	bool has_atom_id;
	int64_t atom_id;
	struct i32_list primitive_argument_positions;
	struct src_loc loc;
	struct src_loc atom_id_loc;
};

enum agg_key {
	AGG_KEY_UNKNOWN = 0,
	AGG_KEY_PID = 1,
	AGG_KEY_TID = 2,
	AGG_KEY_UID = 3,
	AGG_KEY_ARG = 4,
	AGG_KEY_RET = 5,
	AGG_KEY_COMM = 6,     /* the calling thread's comm (16 bytes) */
	AGG_KEY_PROCESS = 7,  /* the process (keyed by pid), named at output */
};

enum agg_value {
	AGG_VALUE_NONE = 0,
	AGG_VALUE_ARG = 1,
	AGG_VALUE_RET = 2,
	AGG_VALUE_LATENCY = 3,
};

enum trace_role {
	TRACE_ROLE_PLAIN = 0,
	TRACE_ROLE_ENTER = 1,
	TRACE_ROLE_EXIT = 2,
};

/* What a probed trace-marker function does (sections). */
enum trace_section {
	TRACE_SECTION_NONE = 0,
	TRACE_SECTION_BEGIN = 1,        /* B|pid|name on the calling thread */
	TRACE_SECTION_END = 2,          /* E|pid: ends the thread's innermost section */
	TRACE_SECTION_ASYNC_BEGIN = 3,  /* S|pid|name|cookie (cookie: a 32-bit int) */
	TRACE_SECTION_ASYNC_END = 4,    /* F|pid|name|cookie */
	TRACE_SECTION_COUNTER = 5,      /* C|pid|name|value, value a 32-bit int */
	TRACE_SECTION_COUNTER64 = 6,    /* the same, value a 64-bit int */
};

enum target_process_selection {
	TPS_UNKNOWN = 0,
	TPS_SPECIFIC_PROCESS_NAME = 1,
	TPS_ANY_APP_PROCESS_ON_START = 2,
	TPS_SPECIFIC_APP_PROCESS_ON_START = 3,
};

struct task_config {
	struct probe_config *probes;
	size_t n_probes;
	struct str_list bpf_maps;         /* era C+: Task.bpf_maps */
	char *target_process_name;        /* NULL when absent */
	bool has_duration_seconds;
	int32_t duration_seconds;
	bool has_statsd_logging_config;
	struct statsd_logging_config statsd;
	bool has_target_process_selection;
	int32_t target_process_selection; /* enum target_process_selection (raw value kept) */
	bool has_task_id;
	int64_t task_id;
	struct src_loc loc;
	struct src_loc target_process_name_loc;
	struct src_loc duration_seconds_loc;
	struct src_loc target_process_selection_loc;
	struct src_loc task_id_loc;
};

enum config_format {
	CONFIG_FORMAT_AUTO = 0,
	CONFIG_FORMAT_TEXT,
	CONFIG_FORMAT_BINARY,
};

/* Field numbering eras (reference §1): B = target_process_name 2,
 * duration_seconds 3, ProbeConfig.bpf_map 4; C = current numbering. */
enum config_era {
	CONFIG_ERA_AUTO = 0,
	CONFIG_ERA_B,
	CONFIG_ERA_CURRENT,
};

struct arena;

struct uprobestats_config {
	struct task_config *tasks;
	size_t n_tasks;
	enum config_format format;        /* what was detected / forced */
	enum config_era era;              /* what was detected / forced */
	char *source_name;                /* file name used in messages */
	struct arena *arena;              /* owns every string and array above */
	const char *era_reason;           /* why this era: "forced", or the evidence seen */
	size_t n_unknown_fields;          /* binary fields skipped as unknown */
};

struct config_load_opts {
	enum config_format format;        /* AUTO = detect by content */
	enum config_era era;              /* AUTO = detect */
};

/* Error classes: on failure config_load_* return (and put in err->code) one
 * of these, or the errno of opening/reading the file (-ENOENT, -EACCES, ...). */
#define CONFIG_ESYNTAX  (-EINVAL)   /* text: bad token, bad escape, misplaced brace */
#define CONFIG_EFIELD   (-ENOMSG)   /* unknown field name, or a singular field set twice */
#define CONFIG_EVALUE   (-EDOM)     /* a value of the wrong type, unknown enum value */
#define CONFIG_ERANGE   (-ERANGE)   /* an integer outside its field's range */
#define CONFIG_EWIRE    (-EBADMSG)  /* binary: truncated or malformed wire data */
#define CONFIG_EERA     (-EPROTO)   /* binary: wire types that do not fit the era */
#define CONFIG_ELIMIT   (-E2BIG)    /* nesting or size beyond the parser's limits */

/* "syntax", "field", ... for an error code above; "io" for anything else. */
const char *config_err_class(int code);

/* Loading (config_load_file, config_load_buffer): config/load.h. */

void config_free(struct uprobestats_config *cfg);

/* For --config-format / --config-era: "auto", "text", "binary" and "auto",
 * "b" (or "B"), "current" (or "c").  0, or -EINVAL for anything else. */
int config_format_parse(const char *s, enum config_format *out);
int config_era_parse(const char *s, enum config_era *out);

const char *config_format_name(enum config_format f);
const char *config_era_name(enum config_era e);

/* "name:line:col", "name+0x1a" or "name" (loc unknown) into buf; returns buf. */
const char *config_loc_str(const struct uprobestats_config *cfg, const struct src_loc *loc,
			   char *buf, size_t size);

/* Compare two models field by field, ignoring locations, format and era.
 * Returns true when equal; otherwise writes the first difference to why. */
bool config_equal(const struct uprobestats_config *a, const struct uprobestats_config *b,
		  char *why, size_t why_size);

#endif
