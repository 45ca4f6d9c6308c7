/* protobuf.c — the wire-format decoder, driven by the schema tables.
 *
 * Recursion follows the schema's message nesting only (capped at
 * SCHEMA_MAX_DEPTH); unknown groups are skipped iteratively. */
#include "config/protobuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/arena.h"
#include "config/era.h"
#include "config/model.h"
#include "common/wire.h"

struct pb {
	struct uprobestats_config *cfg;
	const uint8_t *buf;
	enum config_era era;
	struct err *err;
};

static int pb_error(struct pb *d, int code, size_t off, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int pb_error(struct pb *d, int code, size_t off, const char *fmt, ...)
{
	char msg[ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return err_set(d->err, code, "%s+0x%zx: %s", d->cfg->source_name, off, msg);
}

static int wire_error(struct pb *d, int wrc, size_t off, const char *what)
{
	if (wrc == WIRE_OVERLONG)
		return pb_error(d, CONFIG_EWIRE, off, "%s: varint longer than 10 bytes", what);
	return pb_error(d, CONFIG_EWIRE, off, "%s runs past the end of its message "
			"(truncated input?)", what);
}

static struct src_loc bin_loc(size_t off)
{
	return (struct src_loc){ .offset = off, .kind = SRC_LOC_BINARY };
}

/* Skip a start-group through its matching end-group, iteratively. */
static int skip_group(struct pb *d, uint32_t num, size_t *pos, size_t end, size_t at)
{
	uint32_t stack_num = num;
	unsigned depth = 1;

	while (depth) {
		size_t here = *pos;
		uint64_t tag;
		int rc = wire_read_varint(d->buf, end, pos, &tag);
		if (rc)
			return wire_error(d, rc, at, "group");
		switch (tag & 7) {
		case WT_VARINT:
		case WT_I64:
		case WT_LEN:
		case WT_I32:
			rc = wire_skip_value(d->buf, end, pos, (unsigned)(tag & 7), NULL, NULL);
			break;
		case WT_SGROUP:
			if (++depth > SCHEMA_MAX_DEPTH * 4)
				return pb_error(d, CONFIG_ELIMIT, here, "groups nested too deeply");
			break;
		case WT_EGROUP:
			/* Only the outermost end must match; inner ones are not tracked. */
			if (--depth == 0 && (tag >> 3) != stack_num)
				return pb_error(d, CONFIG_EWIRE, here, "end-group for field %llu "
						"closes the group of field %u",
						(unsigned long long)(tag >> 3), stack_num);
			break;
		default:
			return pb_error(d, CONFIG_EWIRE, here, "invalid wire type %u",
					(unsigned)(tag & 7));
		}
		if (rc)
			return wire_error(d, rc, here, "field in a group");
	}
	return 0;
}

static int skip_field(struct pb *d, unsigned wt, uint32_t num, size_t *pos, size_t end,
		      size_t at)
{
	int rc;

	switch (wt) {
	case WT_VARINT:
	case WT_I64:
	case WT_LEN:
	case WT_I32:
		rc = wire_skip_value(d->buf, end, pos, wt, NULL, NULL);
		break;
	case WT_SGROUP:
		rc = skip_group(d, num, pos, end, at);
		if (!rc)
			d->cfg->n_unknown_fields++;
		return rc;
	default:
		return pb_error(d, CONFIG_EWIRE, at, "invalid wire type %u (field %u)", wt, num);
	}
	if (rc)
		return wire_error(d, rc, at, "unknown field");
	d->cfg->n_unknown_fields++;
	return 0;
}

/* The wire type a scalar of f uses when not packed. */
static unsigned scalar_wire_type(const struct field_desc *f)
{
	if (f->type == FT_STRING || f->type == FT_MESSAGE)
		return WT_LEN;
	if (f->enc != ENC_FIXED)
		return WT_VARINT;
	return f->type == FT_INT64 ? WT_I64 : WT_I32;
}

static int wrong_wire_type(struct pb *d, const struct msg_desc *m, const struct field_desc *f,
			   unsigned wt, size_t at)
{
	const char *era = d->era == CONFIG_ERA_B ? "B" : "current";

	return pb_error(d, CONFIG_EERA, at, "%s field %u (%s in the %s era) has wire type %s, "
			"expected %s; read with the %s-era numbering (%s), --config-era selects "
			"the other", m->name, schema_field_num(f, d->era), f->name, era,
			wire_type_name(wt), wire_type_name(scalar_wire_type(f)), era,
			d->cfg->era_reason ? d->cfg->era_reason : "as asked");
}

/* One integer of f's encoding at *pos. */
static int read_int(struct pb *d, const struct field_desc *f, size_t *pos, size_t end,
		    int64_t *out)
{
	uint64_t v = 0;
	uint32_t v32;
	size_t at = *pos;
	int rc;

	if (f->enc == ENC_FIXED && f->type != FT_INT64) {
		rc = wire_read_fixed32(d->buf, end, pos, &v32);
		v = (uint64_t)(int64_t)(int32_t)v32;
	} else if (f->enc == ENC_FIXED) {
		rc = wire_read_fixed64(d->buf, end, pos, &v);
	} else {
		rc = wire_read_varint(d->buf, end, pos, &v);
	}
	if (rc)
		return wire_error(d, rc, at, f->name);
	if (f->enc == ENC_ZIGZAG)
		v = (uint64_t)wire_unzigzag(v);
	/* int32 and enums keep the low 32 bits, as protobuf does. */
	if (f->type == FT_INT32 || f->type == FT_ENUM)
		v = (uint64_t)(int64_t)(int32_t)(uint32_t)v;
	*out = (int64_t)v;
	return 0;
}

static int store_int(struct pb *d, void *obj, const struct field_desc *f, int64_t v, size_t at)
{
	struct src_loc loc = bin_loc(at);
	int rc = 0;

	if (!f->repeated)
		model_set_int(obj, f, v, &loc);
	else if (f->type == FT_INT64)
		rc = model_push_i64(d->cfg->arena, schema_member(obj, f->off), v, &loc);
	else
		rc = model_push_i32(d->cfg->arena, schema_member(obj, f->off), (int32_t)v, &loc);
	if (rc)
		return err_set(d->err, rc, "%s: out of memory", d->cfg->source_name);
	return 0;
}

static int decode_ints(struct pb *d, const struct msg_desc *m, void *obj,
		       const struct field_desc *f, unsigned wt, size_t at, size_t *pos, size_t end)
{
	int64_t v;
	int rc;

	if (wt == WT_LEN && f->repeated) {
		/* Packed: a run of values inside one length-delimited field. */
		size_t s, n, p;
		if ((rc = wire_read_len(d->buf, end, pos, &s, &n)))
			return wire_error(d, rc, at, f->name);
		for (p = s; p < s + n;) {
			size_t el = p;
			if ((rc = read_int(d, f, &p, s + n, &v)) ||
			    (rc = store_int(d, obj, f, v, el)))
				return rc;
		}
		return 0;
	}
	if (wt != scalar_wire_type(f))
		return wrong_wire_type(d, m, f, wt, at);
	if ((rc = read_int(d, f, pos, end, &v)))
		return rc;
	return store_int(d, obj, f, v, at);
}

static int decode_string(struct pb *d, void *obj, const struct field_desc *f, size_t at,
			 size_t *pos, size_t end)
{
	struct src_loc loc = bin_loc(at);
	size_t s, n;
	char *str;
	int rc = wire_read_len(d->buf, end, pos, &s, &n);

	if (rc)
		return wire_error(d, rc, at, f->name);
	if (memchr(d->buf + s, '\0', n))
		return pb_error(d, CONFIG_EVALUE, at, "%s holds a NUL byte, which no name or path "
				"can hold", f->name);
	str = arena_strndup(d->cfg->arena, (const char *)d->buf + s, n);
	if (!str)
		return err_set(d->err, -ENOMEM, "%s: out of memory", d->cfg->source_name);
	if (!f->repeated) {
		model_set_string(obj, f, str, &loc);
		return 0;
	}
	if (model_push_string(d->cfg->arena, schema_member(obj, f->off), str, &loc))
		return err_set(d->err, -ENOMEM, "%s: out of memory", d->cfg->source_name);
	return 0;
}

static int decode_range(struct pb *d, const struct msg_desc *m, void *obj, size_t pos,
			size_t end, int depth);

static int decode_submessage(struct pb *d, void *obj, const struct field_desc *f, size_t at,
			     size_t *pos, size_t end, int depth)
{
	struct src_loc loc = bin_loc(at);
	size_t s, n;
	void *sub;
	int rc = wire_read_len(d->buf, end, pos, &s, &n);

	if (rc)
		return wire_error(d, rc, at, f->name);
	if (depth + 1 > SCHEMA_MAX_DEPTH)
		return pb_error(d, CONFIG_ELIMIT, at, "messages nested deeper than %d levels",
				SCHEMA_MAX_DEPTH);
	if (f->repeated) {
		sub = model_push_message(d->cfg->arena, obj, f);
		if (!sub)
			return err_set(d->err, -ENOMEM, "%s: out of memory", d->cfg->source_name);
		if (f->msg->loc_off != FD_NONE)
			*(struct src_loc *)schema_member(sub, f->msg->loc_off) = loc;
	} else {
		/* A singular message seen twice merges, as protobuf does. */
		sub = model_open_message(obj, f, &loc);
	}
	return decode_range(d, f->msg, sub, s, s + n, depth + 1);
}

static int decode_range(struct pb *d, const struct msg_desc *m, void *obj, size_t pos,
			size_t end, int depth)
{
	while (pos < end) {
		size_t at = pos;
		uint64_t tag;
		unsigned wt;
		uint32_t num;
		const struct field_desc *f;
		int rc = wire_read_varint(d->buf, end, &pos, &tag);

		if (rc)
			return wire_error(d, rc, at, "field tag");
		if ((tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
			return pb_error(d, CONFIG_EWIRE, at, "invalid field number %llu in %s",
					(unsigned long long)(tag >> 3), m->name);
		num = (uint32_t)(tag >> 3);
		wt = (unsigned)(tag & 7);
		if (wt > WT_I32)
			return pb_error(d, CONFIG_EWIRE, at, "invalid wire type %u (field %u)", wt,
					num);
		if (wt == WT_EGROUP)
			return pb_error(d, CONFIG_EWIRE, at, "end-group (field %u) without a start",
					num);
		f = schema_field_by_num(m, d->era, num);
		if (!f)
			rc = skip_field(d, wt, num, &pos, end, at);
		else if (f->type != FT_STRING && f->type != FT_MESSAGE)
			rc = decode_ints(d, m, obj, f, wt, at, &pos, end);
		else if (wt != WT_LEN)
			rc = wrong_wire_type(d, m, f, wt, at);
		else if (f->type == FT_STRING)
			rc = decode_string(d, obj, f, at, &pos, end);
		else
			rc = decode_submessage(d, obj, f, at, &pos, end, depth);
		if (rc)
			return rc;
	}
	return 0;
}

int protobuf_decode_message(struct uprobestats_config *cfg, const struct msg_desc *m,
			    void *obj, const uint8_t *buf, size_t len, enum config_era era,
			    struct err *err)
{
	struct pb d = { cfg, buf, era == CONFIG_ERA_B ? CONFIG_ERA_B : CONFIG_ERA_CURRENT, err };

	return decode_range(&d, m, obj, 0, len, 0);
}

int protobuf_decode(struct uprobestats_config *cfg, const uint8_t *buf, size_t len,
		    enum config_era era, struct err *err)
{
	char reason[200];

	if (era == CONFIG_ERA_AUTO) {
		era = protobuf_detect_era(buf, len, reason, sizeof(reason));
		cfg->era_reason = arena_strdup(cfg->arena, reason);
	} else {
		cfg->era_reason = "era forced by the caller (--config-era)";
	}
	cfg->era = era;
	cfg->format = CONFIG_FORMAT_BINARY;
	return protobuf_decode_message(cfg, &schema_config, cfg, buf, len, era, err);
}
