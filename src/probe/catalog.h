/* catalog.h — the embedded BPF program objects and what a config may name.
 *
 * Every upstream object (GenericInstrumentation, …) is embedded as ELF bytes
 * (from its bpftool skeleton).  A config names programs and maps the way the
 * Android loader pins them: prog_<Object>_uprobe_<name> and
 * map_<Object>_<map>.  For each record kind the catalog knows its size and how
 * to decode it into named fields. */
#ifndef UPROBESTATS_PROBE_CATALOG_H
#define UPROBESTATS_PROBE_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "sink/event.h"

#define CATALOG_MAX_FIELDS 16

struct bpf_object;
struct plan;

struct catalog_record {
	uint32_t kind;            /* enum ups_record_kind */
	const char *name;         /* "call_detail" */
	size_t size;              /* envelope + payload */
	/* Decode the payload (after the envelope) into fields; returns the count. */
	size_t (*decode)(const void *payload, struct field *out, size_t max);
};

struct catalog_program {
	const char *name;         /* BPF function name and section suffix: "call_detail" */
	const char *map;          /* the output it writes ("call_detail_buf"), NULL if none */
	uint32_t record_kind;     /* 0 when it writes no records */
	bool is_return;           /* uretprobe */
	const char *entry;        /* uprobe attached at the same place first (uretprobe
				   * pairs: it stores the entry time), or NULL */
	bool histogram;           /* fills latency_hist instead of writing records */
	/* The exit-probe form of a return program: exit_entry at the entry and
	 * exit at every exit site, all plain uprobes (NULL: none). */
	const char *exit_entry;
	const char *exit;
};

struct catalog_object {
	const char *name;         /* "GenericInstrumentation" */
	/* The BPF ELF object, gzip-compressed at build time (gen/<arch>/<name>.bpf.z.h);
	 * catalog_object_elf() inflates it. */
	const unsigned char *elf_z;
	size_t elf_z_size;
	size_t elf_size;          /* inflated */
	/* The same programs built for kernels before 5.5 (-DUPS_LEGACY: no global
	 * data, 4.14's helpers, perf event array output), compressed the same way;
	 * catalog_object_legacy_elf() inflates it. */
	const unsigned char *legacy_elf_z;
	size_t legacy_elf_z_size;
	size_t legacy_elf_size;
	const struct catalog_program *programs;
	size_t n_programs;
	const char *const *ring_maps; /* NULL-terminated */
	/* Optional: fills maps the programs read (Binder's interface filter, from
	 * the config) in the primary instance, whose maps every instance shares.
	 * Called once per run after every instance has loaded, before any probe
	 * is attached. */
	int (*prepare)(struct bpf_object *primary, const struct plan *plan, struct err *err);
};

/* The object's ELF bytes, inflated into a malloc'ed buffer (the caller frees it once
 * libbpf is done with the object): 0, -ENOMEM, or -EINVAL when the embedded copy does
 * not inflate to its recorded size. */
int catalog_object_elf(const struct catalog_object *o, void **bytes, size_t *size,
		       struct err *err);
/* The same for the object's legacy build. */
int catalog_object_legacy_elf(const struct catalog_object *o, void **bytes, size_t *size,
			      struct err *err);

size_t catalog_object_count(void);
const struct catalog_object *catalog_object_at(size_t i);
const struct catalog_record *catalog_record(uint32_t kind);

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
