/* atoms.h — which statsd atom a record becomes, field by field, as upstream's
 * newest handlers write it (uprobestats-upstream.md §4.4; docs/programs.md
 * lists where we differ and why). */
#ifndef UPROBESTATS_PROBE_ATOMS_H
#define UPROBESTATS_PROBE_ATOMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/catalog.h"
#include "plan/plan.h"
#include "vocab/event.h"

/* One record, as the loop has it after checking its size. */
struct atom_src {
	const struct plan_probe *probe;
	uint32_t kind;            /* enum ups_record_kind */
	const void *payload;      /* the bytes after the envelope */
};

/* The atom: id, then fields in wire order; string fields point into the
 * payload. */
struct atom_buf {
	int32_t atom_id;
	size_t n_fields;
	struct field fields[CATALOG_MAX_FIELDS];
	bool is_uid[CATALOG_MAX_FIELDS];
};

/* Fills out and returns 1 when the record becomes an atom; returns 0 when it
 * does not (no logging config for it, or a record upstream writes no atom for). */
int atoms_from_record(const struct atom_src *src, struct atom_buf *out);

/* Upstream ArtTest's string_to_i64_hash: Rust's DefaultHasher
 * (SipHash-1-3, zero keys) over the string's bytes and a 0xff terminator. */
int64_t atoms_string_hash(const char *s, size_t len);

#endif
