/* textdump.c — see textdump.h.  Driven by the schema tables. */
#include "config/textdump.h"

#include <inttypes.h>
#include <stdbool.h>

#include "config/schema.h"

static void indent(FILE *out, int depth)
{
	for (int i = 0; i < depth; i++)
		fputs("  ", out);
}

static void put_quoted(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", out);
		else if (*p == '\t')
			fputs("\\t", out);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\%03o", *p);   /* 3 digits: never eats a following digit */
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void put_int(FILE *out, const struct field_desc *f, int64_t v)
{
	const char *name = f->type == FT_ENUM ? schema_enum_name(f->enm, (int32_t)v) : NULL;

	if (name)
		fputs(name, out);
	else
		fprintf(out, "%" PRId64, v);
}

static void dump_list(FILE *out, const struct field_desc *f, const void *mem, size_t n)
{
	fputs(": [", out);
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", out);
		if (f->type == FT_STRING)
			put_quoted(out, ((const struct str_list *)mem)->v[i]);
		else
			put_int(out, f, schema_int_at(f, mem, i));
	}
	fputs("]\n", out);
}

static void dump_msg(FILE *out, const struct msg_desc *m, const void *obj, int depth);

static void dump_sub(FILE *out, const struct field_desc *f, const void *sub, int depth)
{
	indent(out, depth);
	fprintf(out, "%s {\n", f->name);
	dump_msg(out, f->msg, sub, depth + 1);
	indent(out, depth);
	fputs("}\n", out);
}

static void dump_field(FILE *out, const struct field_desc *f, const void *obj, int depth)
{
	const void *mem = schema_cmember(obj, f->off);

	if (f->type == FT_MESSAGE && f->repeated) {
		for (size_t i = 0; i < schema_count(f, obj); i++)
			dump_sub(out, f, schema_element(f, obj, i), depth);
		return;
	}
	if (f->repeated) {
		size_t n = schema_count(f, obj);
		bool has = f->has_off != FD_NONE && *(const bool *)schema_cmember(obj, f->has_off);
		if (n || has) {   /* keep an explicit empty list ("()" parameters) */
			indent(out, depth);
			fputs(f->name, out);
			dump_list(out, f, mem, n);
		}
		return;
	}
	if (!schema_field_present(f, obj))
		return;
	if (f->type == FT_MESSAGE) {
		dump_sub(out, f, mem, depth);
		return;
	}
	indent(out, depth);
	fprintf(out, "%s: ", f->name);
	if (f->type == FT_STRING)
		put_quoted(out, *(char *const *)mem);
	else if (f->type == FT_BOOL)
		fputs(*(const bool *)mem ? "true" : "false", out);
	else if (f->type == FT_INT64)
		put_int(out, f, *(const int64_t *)mem);
	else
		put_int(out, f, *(const int32_t *)mem);
	fputc('\n', out);
}

static void dump_msg(FILE *out, const struct msg_desc *m, const void *obj, int depth)
{
	if (depth > SCHEMA_MAX_DEPTH)
		return;
	for (size_t i = 0; i < m->n_fields; i++)
		dump_field(out, &m->fields[i], obj, depth);
}

int config_dump_text(const struct uprobestats_config *cfg, FILE *out)
{
	fputs("# proto-file: config.proto\n# proto-message: UprobestatsConfig\n\n", out);
	dump_msg(out, &schema_config, cfg, 0);
	fflush(out);
	return ferror(out) ? -EIO : 0;
}
