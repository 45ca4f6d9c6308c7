/* schema.h — the field tables of UprobestatsConfig, shared by every reader
 * and writer of the model (textproto parser, wire decoder, encoder, dumper,
 * config_equal).
 *
 * Each message is a struct msg_desc listing its fields; each field says its
 * name, its number in each era, its type, and where it lives in the model
 * struct (offsetof).  Adding a field is one table row in schema.c plus its
 * member(s) in config.h.  Our own extensions use field numbers >= 1000 in
 * both eras so they can never collide with an upstream field. */
#ifndef UPROBESTATS_CONFIG_SCHEMA_H
#define UPROBESTATS_CONFIG_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config/config.h"

enum schema_type {
	FT_STRING,   /* char *            | repeated: struct str_list */
	FT_BOOL,     /* bool              | (repeated bool unsupported) */
	FT_INT32,    /* int32_t           | repeated: struct i32_list */
	FT_INT64,    /* int64_t           | repeated: struct i64_list */
	FT_ENUM,     /* int32_t raw value | repeated: struct i32_list */
	FT_MESSAGE,  /* struct at off | repeated: array pointer at off, count at count_off */
};

/* How an integer is put on the wire (proto int32/int64, sint32/sint64, sfixed32/sfixed64). */
enum field_enc {
	ENC_VARINT = 0,
	ENC_ZIGZAG,
	ENC_FIXED,
};

#define FD_NONE UINT32_MAX   /* "no such member" for has_off/count_off/loc_off */

struct enum_value {
	const char *name;
	int32_t value;
};

struct enum_desc {
	const char *name;                 /* "TargetProcessSelection" */
	const struct enum_value *values;
	size_t n_values;
};

struct msg_desc;

struct field_desc {
	const char *name;                 /* the text-format name */
	uint32_t num_b;                   /* field number in era B, 0 = not in that era */
	uint32_t num_c;                   /* field number in the current era, 0 = not in it */
	uint8_t type;                     /* enum schema_type */
	uint8_t enc;                      /* enum field_enc, integers only */
	bool repeated;
	bool packed;                      /* encoder packs; the decoder accepts both forms */
	uint32_t off;                     /* value, list, or array pointer */
	uint32_t has_off;                 /* bool has_ flag, or FD_NONE */
	uint32_t count_off;               /* size_t count of a repeated message, or FD_NONE */
	uint32_t loc_off;                 /* struct src_loc of a singular field, or FD_NONE */
	const struct enum_desc *enm;      /* FT_ENUM */
	const struct msg_desc *msg;       /* FT_MESSAGE */
};

/* A message's fields are addressed relative to its struct.  A sub-message
 * that config.h flattens into its parent (EventServiceConfig, AtomConfig)
 * has off 0 and offsets relative to the parent struct. */
struct msg_desc {
	const char *name;                 /* "Task", "ProbeConfig", ... */
	size_t size;                      /* sizeof the struct (array element size) */
	uint32_t loc_off;                 /* struct src_loc of the message, or FD_NONE */
	const struct field_desc *fields;
	size_t n_fields;
};

extern const struct msg_desc schema_config;  /* UprobestatsConfig */
extern const struct msg_desc schema_task;
extern const struct msg_desc schema_probe;
extern const struct msg_desc schema_statsd;
extern const struct msg_desc schema_binder_filter;
extern const struct msg_desc schema_binder_method;
extern const struct enum_desc schema_enum_tps;
extern const struct enum_desc schema_enum_trace_role;
extern const struct enum_desc schema_enum_trace_section;
extern const struct enum_desc schema_enum_agg_key;
extern const struct enum_desc schema_enum_agg_value;
extern const struct enum_desc schema_enum_atom_field;

/* Deepest message nesting in the schema plus headroom; parsers refuse deeper input. */
#define SCHEMA_MAX_DEPTH 16

const struct field_desc *schema_field_by_name(const struct msg_desc *m, const char *name,
					      size_t len);
/* era must be CONFIG_ERA_B or CONFIG_ERA_CURRENT. */
const struct field_desc *schema_field_by_num(const struct msg_desc *m, enum config_era era,
					     uint32_t num);
uint32_t schema_field_num(const struct field_desc *f, enum config_era era);

/* The field name closest to name (edit distance), or NULL when nothing is close. */
const char *schema_closest_field(const struct msg_desc *m, const char *name, size_t len);

/* Enum value by name (NULL when unknown) and name by value (NULL when unknown). */
const struct enum_value *schema_enum_by_name(const struct enum_desc *e, const char *name,
					     size_t len);
const char *schema_enum_name(const struct enum_desc *e, int32_t value);
const char *schema_closest_enum(const struct enum_desc *e, const char *name, size_t len);

/* Raw member access. */
static inline void *schema_member(void *obj, uint32_t off)
{
	return (char *)obj + off;
}

static inline const void *schema_cmember(const void *obj, uint32_t off)
{
	return (const char *)obj + off;
}

/* Is a singular field present (has_ flag, non-NULL string, or for fields
 * without a flag a non-zero value)? */
bool schema_field_present(const struct field_desc *f, const void *obj);

/* Number of elements of a repeated field of obj (messages or scalars). */
size_t schema_count(const struct field_desc *f, const void *obj);

/* Element i of a repeated integer field's list (i32_list or i64_list by f->type). */
int64_t schema_int_at(const struct field_desc *f, const void *list, size_t i);

/* Element i of a repeated message field. */
const void *schema_element(const struct field_desc *f, const void *obj, size_t i);

#endif
