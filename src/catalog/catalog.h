/* catalog.h — the embedded BPF program objects and what a config may name.
 *
 * Every upstream object (GenericInstrumentation, …) is embedded as ELF bytes
 * (from its bpftool skeleton).  A config names programs and maps the way the
 * Android loader pins them: prog_<Object>_uprobe_<name> and
 * map_<Object>_<map>.  Each program names the record kind it writes; the
 * kinds themselves are catalog/record_kinds.h. */
#ifndef UPROBESTATS_CATALOG_CATALOG_H
#define UPROBESTATS_CATALOG_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/record_kinds.h"
#include "common/err.h"

/* Names every embedded object shares (bpf/ups_bpf.h) or that one object's
 * programs use; the one place user space spells them (test_catalog.c checks
 * them against the objects). */
#define CATALOG_MAP_COUNTERS   "probe_counters" /* per probe: hits, drops (per CPU) */
#define CATALOG_MAP_PIDS       "target_pids"    /* the in-kernel tgid filter */
#define CATALOG_MAP_HISTOGRAM  "latency_hist"   /* Uprobestats: call_latency's slots */
#define CATALOG_MAP_STOP       "ups_stop"       /* 1: every program returns at once */
#define CATALOG_MAP_PENDING    "pending_calls"  /* Uprobestats: exit probes' calls in flight */
#define CATALOG_MAP_AGG_DATA   "agg_data"       /* Uprobestats: aggregated keys (records.h) */
#define CATALOG_MAP_AGG_GEN    "agg_gen"        /* Uprobestats: the generation programs count in */
#define CATALOG_MAP_AGG_ENTRIES "agg_entries"   /* Uprobestats: aggregate_return's calls in flight */
#define CATALOG_MAP_TRAFFIC_SOCKS "traffic_socks" /* Uprobestats: the sockets traffic knows */
#define CATALOG_MAP_TRAFFIC_DATA "traffic_data"  /* Uprobestats: bytes and calls per socket */
#define CATALOG_MAP_TRAFFIC_HOSTS "traffic_hosts" /* Uprobestats: address -> looked-up name */
#define CATALOG_MAP_BINDER_INTERFACES "interfaces" /* Binder: the interface filter */
/* An output X is a ring buffer X and a perf event array X CATALOG_PERF_SUFFIX
 * (UPS_OUTPUT in ups_bpf.h). */
#define CATALOG_PERF_SUFFIX    "_perf"
/* The internal map holding struct ups_prog_config ("<object>.rodata"). */
#define CATALOG_RODATA_SUFFIX  ".rodata"

/* Whether name ends with suffix. */
bool catalog_name_ends(const char *name, const char *suffix);

struct catalog_program {
	const char *name;         /* BPF function name and section suffix: "call_detail" */
	const char *map;          /* the output it writes ("call_detail_buf"), NULL if none */
	uint32_t record_kind;     /* 0 when it writes no records */
	bool is_return;           /* uretprobe */
	const char *entry;        /* uprobe attached at the same place first (uretprobe
				   * pairs: it stores the entry time), or NULL */
	bool histogram;           /* fills latency_hist instead of writing records */
	bool aggregate;           /* fills agg_data instead of writing records */
	bool traffic;             /* fills traffic_socks/traffic_data (uprobestats traffic) */
	/* The exit-probe form of a return program: exit_entry at the entry and
	 * exit at every exit site, all plain uprobes (NULL: none). */
	const char *exit_entry;
	const char *exit;
};

enum catalog_prepare {
	CATALOG_PREPARE_NONE = 0,
	CATALOG_PREPARE_BINDER_FILTER, /* `interfaces` from the config (probe/binder_filter.h) */
};

struct catalog_object {
	const char *name;         /* "GenericInstrumentation" */
	/* The BPF ELF object: bytes [elf_off, elf_off + elf_size) of the arch's
	 * objects, embedded as one xz stream (gen/<arch>/bpf_objects.z.h);
	 * catalog_object_elf() copies it out of the decoded stream. */
	size_t elf_off;
	size_t elf_size;
	/* The same programs built for kernels before 5.5 (-DUPS_LEGACY: no global
	 * data, 4.14's helpers, perf event array output), in the same stream;
	 * catalog_object_legacy_elf() copies it out. */
	size_t legacy_elf_off;
	size_t legacy_elf_size;
	const struct catalog_program *programs;
	size_t n_programs;
	const char *const *ring_maps; /* NULL-terminated */
	/* Maps the programs read that the session fills from the config in the
	 * primary instance (whose maps every instance shares), once per run after
	 * every instance has loaded, before any probe is attached. */
	enum catalog_prepare prepare;
};

/* The object's ELF bytes in a malloc'ed buffer (the caller frees it once libbpf is done
 * with the object).  The first call decodes every embedded object (one xz stream, kept
 * until exit).  0, -ENOMEM, or -EINVAL when the embedded stream does not decode to its
 * recorded size (a damaged binary). */
int catalog_object_elf(const struct catalog_object *o, void **bytes, size_t *size,
		       struct err *err);
/* The same for the object's legacy build. */
int catalog_object_legacy_elf(const struct catalog_object *o, void **bytes, size_t *size,
			      struct err *err);

/* Decodes an embedded objects stream z[0..z_size) that must decode to exactly size
 * bytes into a malloc'ed *out: 0, -ENOMEM, -EINVAL (damaged: the message says so). */
int catalog_decode_blob(const unsigned char *z, size_t z_size, size_t size, uint8_t **out,
			struct err *err);
/* The embedded stream, its size and its size decoded (for tests and `objects`). */
void catalog_embedded(const unsigned char **z, size_t *z_size, size_t *size);

size_t catalog_object_count(void);
const struct catalog_object *catalog_object_at(size_t i);

/* "prog_GenericInstrumentation_uprobe_call_detail" -> object + program. */
int catalog_find_program(const char *config_name, const struct catalog_object **obj,
			 const struct catalog_program **prog);
/* "map_GenericInstrumentation_call_detail_buf" -> object + map name. */
int catalog_find_map(const char *config_name, const struct catalog_object **obj,
		     const char **map);
bool catalog_has_program(const char *config_name, void *unused);
bool catalog_has_map(const char *config_name, void *unused);
/* Writes "prog_A_uprobe_x, prog_A_uprobe_y, …" into buf. */
void catalog_program_names(char *buf, size_t size);
void catalog_map_names(char *buf, size_t size);

#endif
