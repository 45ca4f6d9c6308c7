/* record_kinds.h — one descriptor per record kind: everything user space
 * knows about a record (bpf/records.h stays the source of its layout).
 *
 * A descriptor gives the record's size (envelope + payload), each field's
 * offset, storage, decoded type and name, and the statsd atom the record
 * becomes: the fields in atom order with their atom types.  Decoding to
 * events (record_decode, for the loop and so for the text, JSON and trace
 * sinks) and building atoms (probe/atoms.c) both read it.  A new kind is one
 * descriptor in record_kinds.c (and its layout in records.h). */
#ifndef UPROBESTATS_CATALOG_RECORD_KINDS_H
#define UPROBESTATS_CATALOG_RECORD_KINDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "catalog/fields.h"
#include "vocab/event.h"

/* The most fields a record decodes to (or an atom has). */
#define CATALOG_MAX_FIELDS 16

/* How a field is stored in the payload. */
enum rk_store {
	RK_U8,       /* a byte (Java boolean) */
	RK_U32,
	RK_S32,
	RK_U64,
	RK_S64,
	RK_CHARS,    /* char[size]: bounded, NUL-ended, cut before invalid UTF-8 */
};

struct rk_field {
	const char *name;           /* upstream's, in snake_case */
	uint16_t off;               /* in the payload */
	uint16_t size;              /* RK_CHARS: the array's size */
	uint8_t store;              /* enum rk_store */
	uint8_t type;               /* enum field_type it decodes to: the value is
				     * converted as C converts the stored integer
				     * (FIELD_BOOL: non-zero) */
};

/* How a record becomes a statsd atom. */
enum rk_atom_mode {
	RK_ATOM_NONE = 0,   /* upstream writes none */
	RK_ATOM_FIELDS,     /* the task's atom_id; atom_fields, in order */
	RK_ATOM_ARGS,       /* the task's atom_id; one field per configured argument
			     * position (call_detail, call_args: probe/atoms.c) */
	RK_ATOM_BINDER,     /* the matched method_config's atom (probe/atoms.c) */
};

/* An atom field's type, converted from the decoded field's value. */
enum rk_atom_type {
	RK_AT_INT32,
	RK_AT_INT64,
	RK_AT_BOOL,
	RK_AT_STRING,
	RK_AT_HASH,         /* Int64: atoms_string_hash of a string field */
};

struct rk_atom_field {
	uint8_t field;              /* index into the descriptor's fields */
	uint8_t type;               /* enum rk_atom_type */
	bool is_uid;                /* the atom's proto marks it is_uid */
	const char *name;           /* NULL: the field's name */
};

struct record_kind {
	uint32_t kind;              /* enum ups_record_kind */
	const char *name;           /* "call_detail" */
	size_t size;                /* envelope + payload: the exact record length */
	const struct rk_field *fields;
	size_t n_fields;
	/* Fields after those (call_args' strings, named by their Java position). */
	void (*decode_more)(const void *payload, struct fields_out *o);
	/* A uretprobe record (EVENT_RETURN): fields[duration_field] is its
	 * duration in ns. */
	bool is_return;
	uint8_t duration_field;
	/* A return record that carries the stack pointer at the call's entry
	 * (a u64 at entry_sp_off in the payload): not a decoded field (no output
	 * prints it), only the event's entry_sp, by which the call-tree writers
	 * tell nesting (sink/call_seq.h). */
	bool has_entry_sp;
	uint16_t entry_sp_off;
	uint8_t atom;               /* enum rk_atom_mode */
	const struct rk_atom_field *atom_fields;
	size_t n_atom_fields;
	/* RK_ATOM_FIELDS: whether this record writes an atom (NULL: always). */
	bool (*atom_when)(const void *payload);
	/* Variable-length kinds (size is then their minimum): the exact length
	 * the record at data states (avail bytes there), 0 when it states none
	 * within bounds.  NULL: every record is exactly size bytes. */
	size_t (*stated_size)(const void *data, size_t avail);
	/* A record wrapping another (UPS_REC_STACK: the record plus its call
	 * stack); the loop unwraps it and decodes the inner record instead. */
	bool wrapper;
	/* UPS_REC_CALL_UNWOUND: calls an exit probe found left without an exit,
	 * no fields, no atom (the loop makes one EVENT_UNWOUND of each). */
	bool unwound;
	/* RK_ATOM_FIELDS: an atom id fixed by upstream's handler, written whatever
	 * the task's logging config says (0: the task's atom_id). */
	int32_t fixed_atom_id;
};

/* The exact length a record of kind rk must have (data: avail bytes). */
size_t record_kind_size(const struct record_kind *rk, const void *data, size_t avail);

/* The descriptor of a kind, or NULL when the kind is unknown. */
const struct record_kind *record_kind_get(uint32_t kind);
size_t record_kind_count(void);
const struct record_kind *record_kind_at(size_t i);

/* Decode the payload (after the envelope; the caller has checked the
 * record's exact size) into at most max fields; returns the count.  String
 * fields point into the payload. */
size_t record_decode(const struct record_kind *rk, const void *payload, struct field *out,
		     size_t max);
/* Append the descriptor's fields decoded from payload to o. */
void record_decode_into(const struct record_kind *rk, const void *payload,
			struct fields_out *o);
/* The duration of a return record (is_return), else 0. */
uint64_t record_duration(const struct record_kind *rk, const void *payload);
/* The stack pointer at the entry of a return record's call (has_entry_sp),
 * else 0 (unknown). */
uint64_t record_entry_sp(const struct record_kind *rk, const void *payload);

#endif
