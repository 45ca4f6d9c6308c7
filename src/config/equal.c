/* equal.c — config_equal(): a field-by-field comparison of two models
 * through the schema tables (locations, format and era are not compared).
 * An empty repeated field and an absent one compare equal: the wire format
 * cannot tell them apart. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "config/config.h"
#include "config/schema.h"

struct eq {
	char *why;
	size_t why_size;
};

static bool differ(struct eq *e, const char *path, const char *field, const char *what)
{
	if (e->why && e->why_size)
		snprintf(e->why, e->why_size, "%s%s%s: %s", path, *path ? "." : "", field, what);
	return false;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && strcmp(a, b) == 0);
}

static bool eq_list(struct eq *e, const struct field_desc *f, const void *a, const void *b,
		    const char *path)
{
	char what[160];

	if (f->type == FT_STRING) {
		const struct str_list *x = a, *y = b;
		if (x->n != y->n)
			return differ(e, path, f->name, "different number of elements");
		for (size_t i = 0; i < x->n; i++)
			if (!str_eq(x->v[i], y->v[i])) {
				snprintf(what, sizeof(what), "[%zu] \"%s\" != \"%s\"", i, x->v[i],
					 y->v[i]);
				return differ(e, path, f->name, what);
			}
		return true;
	}
	size_t n = f->type == FT_INT64 ? ((const struct i64_list *)a)->n
				       : ((const struct i32_list *)a)->n;
	size_t m = f->type == FT_INT64 ? ((const struct i64_list *)b)->n
				       : ((const struct i32_list *)b)->n;
	if (n != m)
		return differ(e, path, f->name, "different number of elements");
	for (size_t i = 0; i < n; i++)
		if (schema_int_at(f, a, i) != schema_int_at(f, b, i))
			return differ(e, path, f->name, "element differs");
	return true;
}

static bool eq_msg(struct eq *e, const struct msg_desc *m, const void *a, const void *b,
		   const char *path, int depth);

static bool eq_field(struct eq *e, const struct field_desc *f, const void *a, const void *b,
		     const char *path, int depth)
{
	const void *ma = schema_cmember(a, f->off), *mb = schema_cmember(b, f->off);
	char sub[256];

	if (f->type == FT_MESSAGE && f->repeated) {
		size_t na = *(const size_t *)schema_cmember(a, f->count_off);
		size_t nb = *(const size_t *)schema_cmember(b, f->count_off);
		const char *ea = *(char *const *)ma, *eb = *(char *const *)mb;
		if (na != nb)
			return differ(e, path, f->name, "different number of messages");
		for (size_t i = 0; i < na; i++) {
			snprintf(sub, sizeof(sub), "%s%s%s[%zu]", path, *path ? "." : "", f->name,
				 i);
			if (!eq_msg(e, f->msg, ea + i * f->msg->size, eb + i * f->msg->size, sub,
				    depth + 1))
				return false;
		}
		return true;
	}
	if (f->repeated)
		return eq_list(e, f, ma, mb, path);
	if (schema_field_present(f, a) != schema_field_present(f, b))
		return differ(e, path, f->name, "set in one config only");
	if (f->type == FT_MESSAGE) {
		snprintf(sub, sizeof(sub), "%s%s%s", path, *path ? "." : "", f->name);
		return eq_msg(e, f->msg, ma, mb, sub, depth + 1);
	}
	switch (f->type) {
	case FT_STRING:
		if (!str_eq(*(char *const *)ma, *(char *const *)mb))
			return differ(e, path, f->name, "strings differ");
		return true;
	case FT_BOOL:
		return *(const bool *)ma == *(const bool *)mb ||
		       differ(e, path, f->name, "values differ");
	case FT_INT64:
		return *(const int64_t *)ma == *(const int64_t *)mb ||
		       differ(e, path, f->name, "values differ");
	default:
		return *(const int32_t *)ma == *(const int32_t *)mb ||
		       differ(e, path, f->name, "values differ");
	}
}

static bool eq_msg(struct eq *e, const struct msg_desc *m, const void *a, const void *b,
		   const char *path, int depth)
{
	if (depth > SCHEMA_MAX_DEPTH)
		return differ(e, path, m->name, "nested too deeply");
	for (size_t i = 0; i < m->n_fields; i++)
		if (!eq_field(e, &m->fields[i], a, b, path, depth))
			return false;
	return true;
}

bool config_equal(const struct uprobestats_config *a, const struct uprobestats_config *b,
		  char *why, size_t why_size)
{
	struct eq e = { why, why_size };

	if (why && why_size)
		why[0] = '\0';
	return eq_msg(&e, &schema_config, a, b, "", 0);
}
