#include "probe/atoms.h"

#include <string.h>

#include "probe/binder_filter.h"
#include "catalog/fields.h"
#include "catalog/record_kinds.h"
#include "records.h"

/* ---- SipHash-1-3 as Rust's DefaultHasher::new() computes it ---- */

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

static void sip_round(uint64_t v[4])
{
	v[0] += v[1]; v[1] = ROTL(v[1], 13); v[1] ^= v[0]; v[0] = ROTL(v[0], 32);
	v[2] += v[3]; v[3] = ROTL(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = ROTL(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = ROTL(v[1], 17); v[1] ^= v[2]; v[2] = ROTL(v[2], 32);
}

static void sip_block(uint64_t v[4], uint64_t m)
{
	v[3] ^= m;
	sip_round(v);
	v[0] ^= m;
}

int64_t atoms_string_hash(const char *s, size_t len)
{
	uint64_t v[4] = { 0x736f6d6570736575ULL, 0x646f72616e646f6dULL,
			  0x6c7967656e657261ULL, 0x7465646279746573ULL };
	size_t total = len + 1;   /* str's Hash appends one 0xff byte */
	uint64_t m = 0;
	size_t i;

	for (i = 0; i < total; i++) {
		uint8_t b = i < len ? (uint8_t)s[i] : 0xff;
		m |= (uint64_t)b << (8 * (i % 8));
		if (i % 8 == 7) {
			sip_block(v, m);
			m = 0;
		}
	}
	sip_block(v, m | (uint64_t)(total & 0xff) << 56);
	v[2] ^= 0xff;
	sip_round(v);
	sip_round(v);
	sip_round(v);
	return (int64_t)(v[0] ^ v[1] ^ v[2] ^ v[3]);
}

/* ---- per record kind ---- */

/* call_detail: one Int64 per configured position, in the configured order
 * (the newest upstream handler writes the raw 64-bit register). */
static void call_detail_atom(const struct plan_probe *p, const void *payload,
			     struct fields_out *o)
{
	const struct i32_list *pos = &p->task_cfg->statsd.primitive_argument_positions;
	struct call_result r;

	memcpy(&r, payload, sizeof(r));
	for (size_t i = 0; i < pos->n; i++) {
		int reg = plan_arg_register(p->abi, pos->v[i]);
		uint64_t v = reg >= 0 ? r.regs[reg] : 0;
		/* The C++ handlers wrote (int)regs[p]; the newest Rust one the raw
		 * register as Int64 (the default). */
		if (p->atom_int32_args)
			fields_i32(o, "arg", (int32_t)(uint32_t)v);
		else
			fields_i64(o, "arg", (int64_t)v);
	}
}

/* call_args (ours): as call_detail, but a String position becomes a String
 * field with its text. */
static void call_args_atom(const struct plan_probe *p, const void *payload,
			   struct fields_out *o)
{
	const struct i32_list *pos = &p->task_cfg->statsd.primitive_argument_positions;
	const struct call_args *a = payload;

	for (size_t i = 0; i < pos->n; i++) {
		int reg = plan_arg_register(p->abi, pos->v[i]);
		size_t k = UPS_ARG_STRINGS;
		for (size_t j = 0; j < UPS_ARG_STRINGS; j++)
			if (a->string_pos[j] == pos->v[i])
				k = j;
		if (k < UPS_ARG_STRINGS)
			fields_str(o, "arg", a->strings[k], UPS_ARG_STRING_LEN);
		else
			fields_i64(o, "arg", reg >= 0 ? (int64_t)a->r.regs[reg] : 0);
	}
}

/* ---- from the descriptor (catalog/record_kinds.h) ---- */

static int64_t field_value(const struct field *f)
{
	switch (f->type) {
	case FIELD_INT32: return f->v.i32;
	case FIELD_UINT64: return (int64_t)f->v.u64;
	case FIELD_BOOL: return f->v.b;
	default: return f->v.i64;
	}
}

/* One atom field from the decoded field f, converted to its atom type. */
static void atom_field(struct fields_out *o, const struct rk_atom_field *af,
		       const struct field *f)
{
	const char *name = af->name ? af->name : f->name;
	int64_t v = field_value(f);

	switch (af->type) {
	case RK_AT_INT32:
		if (af->is_uid)
			fields_uid(o, name, (int32_t)v);
		else
			fields_i32(o, name, (int32_t)v);
		break;
	case RK_AT_INT64: fields_i64(o, name, v); break;
	case RK_AT_BOOL: fields_bool(o, name, v != 0); break;
	case RK_AT_STRING: fields_str(o, name, f->v.str.ptr, f->v.str.len); break;
	case RK_AT_HASH:
		fields_i64(o, name, atoms_string_hash(f->v.str.ptr, f->v.str.len));
		break;
	}
}

/* RK_ATOM_FIELDS: the record's fields, decoded, in the descriptor's atom
 * order and types; none when its atom_when says so. */
static int fields_atom(const struct record_kind *rk, const void *payload,
		       struct fields_out *o)
{
	struct field dec[CATALOG_MAX_FIELDS];
	size_t n;

	if (rk->atom_when && !rk->atom_when(payload))
		return 0;
	n = record_decode(rk, payload, dec, CATALOG_MAX_FIELDS);
	for (size_t i = 0; i < rk->n_atom_fields; i++)
		if (rk->atom_fields[i].field < n)
			atom_field(o, &rk->atom_fields[i], &dec[rk->atom_fields[i].field]);
	return 1;
}

/* Binder: the matched method_config's atom_config, fields in the order of
 * atom_field_positions. */
static int binder_atom(const struct atom_src *src, struct atom_buf *out, struct fields_out *o)
{
	const char *iface = (const char *)src->payload;
	size_t len = fields_str_len(iface, UPS_STR_LEN);
	const struct binder_method_config *mc;
	struct binder_transaction r;

	memcpy(&r, src->payload, sizeof(r));
	mc = binder_filter_method(src->probe->cfg, iface, len, r.code);
	if (!mc || !mc->has_atom_config || !mc->has_atom_id || mc->atom_id <= 0)
		return 0;
	out->atom_id = mc->atom_id;
	for (size_t i = 0; i < mc->atom_field_positions.n; i++) {
		switch (mc->atom_field_positions.v[i]) {
		case ATOM_FIELD_CALLING_UID: fields_uid(o, "calling_uid", r.calling_uid); break;
		case ATOM_FIELD_INTERFACE_NAME:
			fields_str(o, "interface_name", iface, UPS_STR_LEN);
			break;
		case ATOM_FIELD_CODE: fields_i32(o, "code", (int32_t)r.code); break;
		case ATOM_FIELD_KTIME_NS: fields_i64(o, "ktime_ns", (int64_t)r.timestamp_ns); break;
		default: return 0;   /* UNKNOWN: upstream errors, no atom */
		}
	}
	return 1;
}

/* Kinds whose atom id is the task's statsd_logging_config.atom_id. */
static int task_atom(const struct atom_src *src, const struct record_kind *rk,
		     struct fields_out *o)
{
	switch (rk->atom) {
	case RK_ATOM_FIELDS: return fields_atom(rk, src->payload, o);
	case RK_ATOM_ARGS:
		if (src->kind == UPS_REC_CALL_ARGS)
			call_args_atom(src->probe, src->payload, o);
		else
			call_detail_atom(src->probe, src->payload, o);
		return 1;
	default: return 0;   /* process_change, accessibility, malware_signal: no atom
			      * (docs/programs.md) */
	}
}

int atoms_from_record(const struct atom_src *src, struct atom_buf *out)
{
	const struct task_config *t = src->probe->task_cfg;
	struct fields_out o = { .f = out->fields, .is_uid = out->is_uid,
				.max = CATALOG_MAX_FIELDS };
	const struct record_kind *rk = record_kind_get(src->kind);
	int rc;

	out->atom_id = 0;
	out->n_fields = 0;
	if (rk && rk->atom == RK_ATOM_BINDER) {
		rc = binder_atom(src, out, &o);
	} else if (rk && rk->fixed_atom_id) {
		out->atom_id = rk->fixed_atom_id;     /* whatever the task's logging config */
		rc = task_atom(src, rk, &o);
	} else {
		if (!t->has_statsd_logging_config || !t->statsd.has_atom_id)
			return 0;
		out->atom_id = (int32_t)t->statsd.atom_id;
		rc = rk ? task_atom(src, rk, &o) : 0;
	}
	out->n_fields = o.n;
	return rc;
}
