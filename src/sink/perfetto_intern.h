/* perfetto_intern.h — the Perfetto trace's interned strings: per table
 * (event names, annotation names, annotation string values, function names,
 * mapping paths; and, keyed by their bytes, mappings, frames and callstacks)
 * each one's
 * iid, a new one defined (InternedData entry { iid, name }) in the buffer of
 * the packet that first uses it; and a cache of the iids of strings that
 * live as long as the sink (probe labels, field names, literals) by their
 * address, so those are not hashed per event. */
#ifndef UPROBESTATS_SINK_PERFETTO_INTERN_H
#define UPROBESTATS_SINK_PERFETTO_INTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"

/* Names interned at most per table, and in all the tables of every
 * sequence together (each sequence interns its own: the total keeps the
 * memory of many sequences to what one sequence's tables could hold);
 * past either, names are written inline. */
#define PF_MAX_INTERNED 65536u
#define PF_MAX_INTERNED_TOTAL (8 * (size_t)PF_MAX_INTERNED)

struct pf_istr;

struct pf_intern {
	struct pf_istr *tab;
	size_t cap, used;
	size_t *total;           /* entries of every table sharing the budget (NULL: none) */
};

#define PF_PTR_CACHE 256
struct pf_ptr_iid {
	const void *ptr;
	size_t n;
	uint32_t table;
	uint64_t iid;
};

struct pf_ptr_cache {
	struct pf_ptr_iid e[PF_PTR_CACHE];
};

/* The iid of s[0, n) in t; a new one is defined in defs under InternedData
 * field `table`.  0 when the table is full (or memory ran out): write the
 * string inline. */
uint64_t pf_intern(struct pf_intern *t, struct wire_buf *defs, uint32_t table, const char *s,
		   size_t n);
/* The iid of key[0, n) in t (table seeds the hash); *fresh when it is new
 * (the caller defines it).  0 when the table is full or memory ran out. */
uint64_t pf_intern_key(struct pf_intern *t, uint32_t table, const void *key, size_t n,
		       bool *fresh);
/* pf_intern() for a string that never changes at its address. */
uint64_t pf_intern_stable(struct pf_ptr_cache *c, struct pf_intern *t, struct wire_buf *defs,
			  uint32_t table, const char *s, size_t n);
void pf_intern_free(struct pf_intern *t);

/* Every table of one packet sequence: trace processor keeps interned data
 * per sequence (trusted_packet_sequence_id), so each sequence defines its
 * own iids. */
struct pf_tables {
	struct pf_ptr_cache cache;        /* iids by address (every table's) */
	struct pf_intern events;          /* event names */
	struct pf_intern names, strings;  /* annotation names, string values */
	struct pf_intern funcs, paths;    /* frames' function names, mapping paths */
	struct pf_intern maps;            /* mappings (by path) */
	struct pf_intern frames, stacks;  /* frames, callstacks (keyed by their iids) */
};

/* Every table of t sharing the budget *total. */
void pf_tables_init(struct pf_tables *t, size_t *total);
void pf_tables_free(struct pf_tables *t);

#endif
