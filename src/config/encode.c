/* encode.c — see encode.h.  Driven by the schema tables, whose rows are in
 * field-number order in both eras (a unit test checks that). */
#include "config/encode.h"

#include <stdlib.h>
#include <string.h>

#include "config/model.h"
#include "config/schema.h"
#include "common/wire.h"

struct enc {
	const struct uprobestats_config *cfg;
	enum config_era era;
	struct err *err;
};

static int encode_msg(struct enc *e, const struct msg_desc *m, const void *obj,
		      struct wire_buf *w, int depth);

static void put_int(struct wire_buf *w, const struct field_desc *f, int64_t v)
{
	if (f->enc == ENC_ZIGZAG)
		wire_put_varint(w, wire_zigzag(v));
	else if (f->enc == ENC_FIXED && f->type == FT_INT64)
		wire_put_fixed64(w, (uint64_t)v);
	else if (f->enc == ENC_FIXED)
		wire_put_fixed32(w, (uint32_t)(int32_t)v);
	else
		wire_put_varint(w, (uint64_t)v);   /* negative int32: 10 bytes, as protobuf */
}

static enum wire_type int_wire_type(const struct field_desc *f)
{
	if (f->enc != ENC_FIXED)
		return WT_VARINT;
	return f->type == FT_INT64 ? WT_I64 : WT_I32;
}

static void encode_int_list(const struct field_desc *f, uint32_t num, const void *obj,
			    struct wire_buf *w)
{
	const void *list = schema_cmember(obj, f->off);
	size_t n = schema_count(f, obj);

	if (!n)
		return;
	if (!f->packed) {
		for (size_t i = 0; i < n; i++) {
			wire_put_tag(w, num, int_wire_type(f));
			put_int(w, f, schema_int_at(f, list, i));
		}
		return;
	}
	struct wire_buf body = { 0 };
	for (size_t i = 0; i < n; i++)
		put_int(&body, f, schema_int_at(f, list, i));
	wire_put_tag(w, num, WT_LEN);
	wire_put_varint(w, body.len);
	wire_put_bytes(w, body.p, body.len);
	w->oom |= body.oom;
	wire_buf_free(&body);
}

static void put_string(struct wire_buf *w, uint32_t num, const char *s)
{
	size_t n = strlen(s);

	wire_put_tag(w, num, WT_LEN);
	wire_put_varint(w, n);
	wire_put_bytes(w, s, n);
}

static int put_message(struct enc *e, const struct msg_desc *m, uint32_t num, const void *obj,
		       struct wire_buf *w, int depth)
{
	struct wire_buf body = { 0 };
	int rc = encode_msg(e, m, obj, &body, depth + 1);

	if (!rc) {
		wire_put_tag(w, num, WT_LEN);
		wire_put_varint(w, body.len);
		wire_put_bytes(w, body.p, body.len);
		w->oom |= body.oom;
	}
	wire_buf_free(&body);
	return rc;
}

static bool field_used(const struct field_desc *f, const void *obj)
{
	return f->repeated ? schema_count(f, obj) != 0 : schema_field_present(f, obj);
}

static int encode_field(struct enc *e, const struct msg_desc *m, const struct field_desc *f,
			const void *obj, struct wire_buf *w, int depth)
{
	uint32_t num = schema_field_num(f, e->era);
	const void *mem = schema_cmember(obj, f->off);
	int rc = 0;

	if (!field_used(f, obj))
		return 0;
	if (!num)
		return err_set(e->err, CONFIG_EERA, "%s: %s.%s has no field number in the %s era",
			       e->cfg->source_name, m->name, f->name,
			       e->era == CONFIG_ERA_B ? "B" : "current");
	switch (f->type) {
	case FT_MESSAGE:
		if (!f->repeated)
			return put_message(e, f->msg, num, mem, w, depth);
		for (size_t i = 0; i < schema_count(f, obj) && !rc; i++)
			rc = put_message(e, f->msg, num, schema_element(f, obj, i), w, depth);
		return rc;
	case FT_STRING:
		if (!f->repeated) {
			put_string(w, num, *(char *const *)mem);
			return 0;
		}
		for (size_t i = 0; i < schema_count(f, obj); i++)
			put_string(w, num, ((const struct str_list *)mem)->v[i]);
		return 0;
	case FT_BOOL:
		wire_put_tag(w, num, WT_VARINT);
		wire_put_varint(w, *(const bool *)mem ? 1 : 0);
		return 0;
	default:
		if (f->repeated) {
			encode_int_list(f, num, obj, w);
			return 0;
		}
		wire_put_tag(w, num, int_wire_type(f));
		put_int(w, f, f->type == FT_INT64 ? *(const int64_t *)mem
						  : (int64_t) * (const int32_t *)mem);
		return 0;
	}
}

static int encode_msg(struct enc *e, const struct msg_desc *m, const void *obj,
		      struct wire_buf *w, int depth)
{
	if (depth > SCHEMA_MAX_DEPTH)
		return err_set(e->err, CONFIG_ELIMIT, "%s: messages nested too deeply",
			       e->cfg->source_name);
	for (size_t i = 0; i < m->n_fields; i++) {
		int rc = encode_field(e, m, &m->fields[i], obj, w, depth);
		if (rc)
			return rc;
	}
	return 0;
}

static int pick_era(const struct uprobestats_config *cfg, enum config_era era,
		    enum config_era *out, struct err *err)
{
	struct era_use u;

	model_era_use(cfg, &u);
	if (era != CONFIG_ERA_AUTO) {
		*out = era;
		return 0;
	}
	if (u.b_only && u.current_only)
		return err_set(err, CONFIG_EERA, "%s: cannot encode: the config mixes the era-B "
			       "field %s with the current-era field %s, and no single field "
			       "numbering holds both", cfg->source_name, u.b_only,
			       u.current_only);
	*out = u.b_only ? CONFIG_ERA_B : CONFIG_ERA_CURRENT;
	return 0;
}

static int finish(struct enc *e, int rc, struct wire_buf *w, uint8_t **out, size_t *out_len)
{
	if (!rc && w->oom)
		rc = err_set(e->err, -ENOMEM, "%s: out of memory while encoding",
			     e->cfg->source_name);
	if (rc) {
		wire_buf_free(w);
		return rc;
	}
	*out = w->p;
	*out_len = w->len;
	return 0;
}

int config_encode_message(const struct uprobestats_config *cfg, const struct msg_desc *m,
			  const void *obj, enum config_era era, uint8_t **out, size_t *out_len,
			  struct err *err)
{
	struct wire_buf w = { 0 };
	struct enc e = { cfg, era == CONFIG_ERA_B ? CONFIG_ERA_B : CONFIG_ERA_CURRENT, err };

	*out = NULL;
	*out_len = 0;
	return finish(&e, encode_msg(&e, m, obj, &w, 0), &w, out, out_len);
}

int config_encode_binary(const struct uprobestats_config *cfg, enum config_era era,
			 uint8_t **out, size_t *out_len, enum config_era *used_era,
			 struct err *err)
{
	struct wire_buf w = { 0 };
	struct enc e = { cfg, CONFIG_ERA_CURRENT, err };
	int rc = pick_era(cfg, era, &e.era, err);

	*out = NULL;
	*out_len = 0;
	if (rc)
		return rc;
	rc = finish(&e, encode_msg(&e, &schema_config, cfg, &w, 0), &w, out, out_len);
	if (!rc && used_era)
		*used_era = e.era;
	return rc;
}
