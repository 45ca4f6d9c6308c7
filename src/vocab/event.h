/* event.h — what the event loop hands to every sink.
 *
 * A decoded record becomes one struct event: who hit which probe when, and the
 * record's fields by name.  The statsd sink instead receives the struct atom
 * the record maps to (same fields, atom order and types).  Nothing here owns
 * memory: pointers are valid for the duration of the sink call only. */
#ifndef UPROBESTATS_VOCAB_EVENT_H
#define UPROBESTATS_VOCAB_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum field_type {
	FIELD_INT32,
	FIELD_INT64,
	FIELD_UINT64,   /* registers, addresses: printed as hex in text */
	FIELD_BOOL,
	FIELD_STRING,   /* UTF-8, not NUL-terminated: use str.len */
	FIELD_BYTES,
	FIELD_FLOAT,      /* IEEE-754 binary32 */
	FIELD_INT32_LIST, /* repeated int32 (statsd LIST); v.i32s */
	FIELD_INT64_LIST, /* repeated int64 (statsd LIST); v.i64s */
};

struct field {
	const char *name;
	enum field_type type;
	union {
		int32_t i32;
		int64_t i64;
		uint64_t u64;
		bool b;
		struct {
			const char *ptr;
			uint32_t len;
		} str;  /* FIELD_STRING and FIELD_BYTES */
		float f;
		struct {
			const int32_t *ptr;
			uint32_t n;
		} i32s; /* FIELD_INT32_LIST */
		struct {
			const int64_t *ptr;
			uint32_t n;
		} i64s; /* FIELD_INT64_LIST */
	} v;
};

/* How the trace sink pairs probes into slices (zero = a plain probe). */
enum probe_role {
	PROBE_PLAIN = 0, /* each hit is an instant event (EVENT_RETURN: a complete slice) */
	PROBE_ENTER,     /* a hit opens the slice `slice` on its thread */
	PROBE_EXIT,      /* a hit closes the innermost open slice `slice` on its thread */
};

/* How the text output shows a call on one line (sink/text_out.c): the
 * arguments asked for (trace --args, or the config's statsd positions),
 * each read from register `reg` of the record (call_detail's r0..r9) or,
 * a string, from its "argN" field (call_args). */
#define CALL_SHAPE_MAX_ARGS 10

enum call_arg_kind {
	CALL_ARG_I64 = 0,        /* signed decimal, the whole register */
	CALL_ARG_I32,            /* signed decimal, the low 32 bits (int, fd) */
	CALL_ARG_U64,            /* unsigned decimal (size_t) */
	CALL_ARG_HEX,            /* a pointer, flags, a Java reference */
	CALL_ARG_STR,            /* a String / char * the record copied */
	CALL_ARG_BOOL,
	CALL_ARG_CHAR,           /* a Java char (UTF-16 unit) */
};

struct call_arg {
	const char *name;        /* "fd", "arg0" */
	int8_t reg;              /* register index (-1: not recorded) */
	uint8_t pos;             /* argument position */
	uint8_t kind;            /* enum call_arg_kind */
};

struct call_shape {
	bool entry;              /* the record is a call's entry (its registers) */
	bool ret;                /* the record is a call's return (value, duration) */
	bool paired;             /* entry: a return record of the same call follows */
	uint8_t ret_kind;        /* enum call_arg_kind of the return value */
	bool ret_void;           /* a Java void method: no value to show */
	uint8_t n_args;
	struct call_arg args[CALL_SHAPE_MAX_ARGS];
};

/* The static description of one attached probe (one per probe_config x file).
 * Sinks keep pointers to it (open trace slices, summary rows): it must live as
 * long as the sink set. */
struct probe_desc {
	uint32_t task_index;     /* position in the config */
	int64_t task_id;         /* Task.task_id (0 when absent) */
	uint32_t probe_index;    /* position within the task */
	const char *program;     /* e.g. prog_GenericInstrumentation_uprobe_call_detail */
	const char *map;         /* e.g. map_GenericInstrumentation_call_detail_buf */
	const char *file;        /* path the uprobe is on */
	const char *method;      /* signature or symbol as configured */
	uint64_t offset;         /* file offset */
	enum probe_role role;    /* PROBE_ENTER/PROBE_EXIT pair by equal `slice` names */
	const char *slice;       /* slice name for pairs and trace labels; NULL: method */
	/* sections (enum section_op; 0: not a trace-marker
	 * function): the name is the record's first string field, the cookie or
	 * value the register section_value_reg (-1: none) of its r0..r9. */
	uint8_t section;
	int8_t section_value_reg;
	/* The method as a method trace's key names it (sink/art_trace_out.h):
	 * "class\tmethod\tsignature\tsource file" (Java: the dotted class, the
	 * dex signature, the class's source file or ""; native: the library, the
	 * demangled name, its parameter list or "()", ""), or NULL. */
	const char *method_key;
	const struct call_shape *call; /* a call's entry or return; NULL: other records */
};

/* What a probed trace-marker function does (config.h's enum trace_section
 * has the same values; plan.c asserts it). */
enum section_op {
	SECTION_OP_NONE = 0,
	SECTION_OP_BEGIN,
	SECTION_OP_END,
	SECTION_OP_ASYNC_BEGIN,
	SECTION_OP_ASYNC_END,
	SECTION_OP_COUNTER,      /* a 32-bit value */
	SECTION_OP_COUNTER64,
};

/* What a trace-marker call did, as the sink set's section tracker
 * (sink/sections.h) classified it once for every sink. */
enum section_verdict {
	SECTION_OK = 0,          /* a begin, an end that closes one, an async or counter */
	SECTION_MERGED,          /* the same call seen again one layer down (Java ->
				  * JNI -> libcutils): counted, not output again */
	SECTION_END_UNBEGUN,     /* an end whose begin came before the attach */
};

struct section_call {
	uint8_t op;              /* enum section_op */
	enum section_verdict verdict;
	const char *name;        /* the section or counter name (an END: the name of
				  * the section it ends, "" when unbegun) */
	uint32_t name_len;
	int64_t value;           /* cookie (async) or counter value */
	uint32_t depth;          /* BEGIN: depth after it; END: depth before it */
};

enum event_kind {
	EVENT_RECORD,      /* an entry record (call_detail, call_timestamp, …) */
	EVENT_RETURN,      /* a uretprobe record: return value and duration */
	EVENT_DROP,        /* the kernel could not reserve ring space: count in n_lost */
	EVENT_LOST,        /* the perf buffer lost samples: count in n_lost */
	EVENT_UNWOUND,     /* exit probes: a call left without an exit (an exception,
			    * a longjmp), found at boot_ns (the later hit of its probe
			    * on its thread that revealed it), entered duration_ns
			    * before; only sinks that take them get them (sink_ops.h) */
};

struct stack_trace;      /* vocab/frames.h */

struct event {
	enum event_kind kind;
	uint64_t boot_ns;        /* CLOCK_BOOTTIME of the hit (MONOTONIC + the offset of
				  * the loop's last clock reading) */
	uint64_t mono_ns;        /* CLOCK_MONOTONIC of the hit: the record's own clock
				  * (bpf_ktime_get_ns); 0 when unknown */
	int64_t wall_ns;         /* CLOCK_REALTIME of the hit (derived at decode time) */
	uint32_t pid, tid;       /* 0 when the record does not carry them */
	const char *comm;        /* thread name or NULL */
	const char *process;     /* process name (cmdline) or NULL */
	const struct probe_desc *probe;
	uint64_t duration_ns;    /* EVENT_RETURN: entry -> exit; EVENT_UNWOUND: entry -> found */
	uint64_t entry_sp;       /* EVENT_RETURN (call_return), EVENT_UNWOUND: the stack
				  * pointer at the call's entry (the stack grows down: a
				  * call made inside it has a lower one); 0: unknown */
	uint64_t n_lost;         /* EVENT_DROP / EVENT_LOST */
	const struct field *fields;
	size_t n_fields;
	const struct stack_trace *stack; /* --stack: the call stack of the hit, or NULL */
	const struct section_call *section; /* a trace-marker call (sections), or NULL */
};

/* A call still running when the run ended (exit probes: entered, no exit
 * seen; a call left by a longjmp or an exception that no later call of the
 * same probe on its thread revealed looks the same). */
/* Where the machine last suspended, on CLOCK_MONOTONIC (probe/suspend_watch.h
 * behind it): at() gives 1 and its place in (after, before], 0 when it watched
 * and there was none there (BOOTTIME - MONOTONIC moved for another reason: a
 * reading's own noise), -1 when it does not watch. */
struct suspend_source {
	int (*at)(const void *ctx, uint64_t after, uint64_t before, uint64_t *mono);
	const void *ctx;
};

struct running_call {
	uint32_t tid;
	/* the thread's process and names as /proc had them at exit (a thread
	 * blocked in a probed call all the run has no record that says them):
	 * pid 0 and "" when unknown (the thread was gone) */
	uint32_t pid;
	char comm[16];
	char process[128];
	const struct probe_desc *probe;
	uint64_t enter_boot_ns;  /* CLOCK_BOOTTIME of the entry */
	uint64_t enter_mono_ns;  /* its CLOCK_MONOTONIC (the probe's own clock); 0: unknown */
	uint64_t entry_sp;       /* the stack pointer at the entry; 0: unknown */
};

/* One value of a counter the run measures itself (aggregation intervals,
 * traffic bytes): a sink that draws counters puts it on the track `name`
 * of process pid (0: the tool's own), at mono_ns (CLOCK_MONOTONIC). */
struct counter_sample {
	const char *name;        /* NUL-terminated */
	uint32_t pid;
	const char *process;     /* its name, or NULL */
	int64_t value;
	uint64_t mono_ns;
};

/* One statsd atom: fields in wire order.  boot_ns is the event's timestamp. */
struct atom {
	int32_t atom_id;
	uint64_t boot_ns;
	const struct field *fields;
	size_t n_fields;
	/* Per field: add an IS_UID annotation (atoms whose proto marks is_uid). */
	const bool *is_uid;
	const struct probe_desc *probe; /* the probe whose record this is, or NULL */
};

#endif
