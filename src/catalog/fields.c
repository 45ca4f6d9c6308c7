#include "catalog/fields.h"

#include <string.h>

size_t fields_str_len(const char *buf, size_t size)
{
	const unsigned char *s = (const unsigned char *)buf;
	size_t end = 0;

	while (end < size && s[end])
		end++;
	return end;
}

static struct field *next(struct fields_out *o)
{
	if (o->n >= o->max)
		return NULL;
	if (o->is_uid)
		o->is_uid[o->n] = false;
	return &o->f[o->n++];
}

void fields_i32(struct fields_out *o, const char *name, int32_t v)
{
	struct field *f = next(o);
	if (f)
		*f = (struct field){ .name = name, .type = FIELD_INT32, .v.i32 = v };
}

void fields_i64(struct fields_out *o, const char *name, int64_t v)
{
	struct field *f = next(o);
	if (f)
		*f = (struct field){ .name = name, .type = FIELD_INT64, .v.i64 = v };
}

void fields_u64(struct fields_out *o, const char *name, uint64_t v)
{
	struct field *f = next(o);
	if (f)
		*f = (struct field){ .name = name, .type = FIELD_UINT64, .v.u64 = v };
}

void fields_bool(struct fields_out *o, const char *name, bool v)
{
	struct field *f = next(o);
	if (f)
		*f = (struct field){ .name = name, .type = FIELD_BOOL, .v.b = v };
}

void fields_str(struct fields_out *o, const char *name, const char *buf, size_t size)
{
	struct field *f = next(o);
	if (f)
		*f = (struct field){ .name = name, .type = FIELD_STRING,
				     .v.str = { buf, (uint32_t)fields_str_len(buf, size) } };
}

void fields_uid(struct fields_out *o, const char *name, int32_t v)
{
	size_t before = o->n;

	fields_i32(o, name, v);
	if (o->is_uid && o->n > before)
		o->is_uid[o->n - 1] = true;
}
