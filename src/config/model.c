/* model.c — the config object: creating, freeing, names, locations, and
 * appending to repeated fields.  Loading (format detection and the choice of
 * parser) is config/load.c, so the parsers and the model do not import each
 * other. */
#include "config/model.h"

#include <stdio.h>
#include <string.h>

#include "common/arena.h"
#include "common/grow.h"

struct uprobestats_config *model_new(const char *source_name)
{
	struct arena *a = arena_new();
	struct uprobestats_config *cfg;

	if (!a)
		return NULL;
	cfg = arena_alloc(a, sizeof(*cfg));
	if (!cfg || !(cfg->source_name = arena_strdup(a, source_name ? source_name : "config"))) {
		arena_free(a);
		return NULL;
	}
	cfg->arena = a;
	return cfg;
}

void config_free(struct uprobestats_config *cfg)
{
	if (cfg)
		arena_free(cfg->arena);
}

/* Arrays grow when their count is 0 or a power of two, so the capacity is
 * always the next power of two and needs no extra member. */
static bool needs_growth(size_t n)
{
	return (n & (n - 1)) == 0;
}

static int grow(struct arena *a, void **v, size_t n, size_t elem, struct src_loc **loc)
{
	size_t cap;
	void *nv;

	if (!needs_growth(n))
		return 0;
	if (grow_cap(n, n + 1, 1, elem, &cap) < 0)
		return -ENOMEM;
	nv = arena_grow(a, *v, n, cap, elem);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	if (loc) {
		struct src_loc *nl = arena_grow(a, *loc, *loc ? n : 0, cap, sizeof(**loc));
		if (!nl)
			return -ENOMEM;
		*loc = nl;
	}
	return 0;
}

void *model_push_message(struct arena *a, void *obj, const struct field_desc *f)
{
	void **arr = schema_member(obj, f->off);
	size_t *n = schema_member(obj, f->count_off);
	void *el;

	if (grow(a, arr, *n, f->msg->size, NULL))
		return NULL;
	el = (char *)*arr + *n * f->msg->size;
	memset(el, 0, f->msg->size);
	(*n)++;
	return el;
}

#define PUSH_BODY(l, val, loc_)                                                 \
	do {                                                                    \
		void *v_ = (l)->v;                                              \
		if (grow(a, &v_, (l)->n, sizeof(*(l)->v), &(l)->loc))          \
			return -ENOMEM;                                         \
		(l)->v = v_;                                                    \
		(l)->v[(l)->n] = (val);                                         \
		(l)->loc[(l)->n] = (loc_) ? *(loc_) : (struct src_loc){ 0 };    \
		(l)->n++;                                                       \
		return 0;                                                       \
	} while (0)

int model_push_string(struct arena *a, struct str_list *l, char *s, const struct src_loc *loc)
{
	PUSH_BODY(l, s, loc);
}

int model_push_i32(struct arena *a, struct i32_list *l, int32_t v, const struct src_loc *loc)
{
	PUSH_BODY(l, v, loc);
}

int model_push_i64(struct arena *a, struct i64_list *l, int64_t v, const struct src_loc *loc)
{
	PUSH_BODY(l, v, loc);
}

static void set_presence(void *obj, const struct field_desc *f, const struct src_loc *loc)
{
	if (f->has_off != FD_NONE)
		*(bool *)schema_member(obj, f->has_off) = true;
	if (f->loc_off != FD_NONE && loc)
		*(struct src_loc *)schema_member(obj, f->loc_off) = *loc;
}

void model_set_string(void *obj, const struct field_desc *f, char *s, const struct src_loc *loc)
{
	*(char **)schema_member(obj, f->off) = s;
	set_presence(obj, f, loc);
}

void model_set_int(void *obj, const struct field_desc *f, int64_t v, const struct src_loc *loc)
{
	void *m = schema_member(obj, f->off);

	switch (f->type) {
	case FT_BOOL:
		*(bool *)m = v != 0;
		break;
	case FT_INT32:
	case FT_ENUM:
		*(int32_t *)m = (int32_t)v;
		break;
	default:
		*(int64_t *)m = v;
		break;
	}
	set_presence(obj, f, loc);
}

void *model_open_message(void *obj, const struct field_desc *f, const struct src_loc *loc)
{
	void *sub = schema_member(obj, f->off);

	set_presence(obj, f, NULL);
	if (f->msg->loc_off != FD_NONE && loc)
		*(struct src_loc *)schema_member(sub, f->msg->loc_off) = *loc;
	return sub;
}

/* Is field f of obj present (any element, for repeated fields)? */
static bool field_used(const struct field_desc *f, const void *obj)
{
	if (f->repeated)
		return schema_count(f, obj) != 0 ||
		       (f->has_off != FD_NONE && *(const bool *)schema_cmember(obj, f->has_off));
	return schema_field_present(f, obj);
}

static void era_use_msg(const struct msg_desc *m, const void *obj, struct era_use *u,
			int depth)
{
	for (size_t i = 0; i < m->n_fields && depth <= SCHEMA_MAX_DEPTH; i++) {
		const struct field_desc *f = &m->fields[i];
		if (!field_used(f, obj))
			continue;
		if (!f->num_b && !u->current_only)
			u->current_only = f->name;
		if (!f->num_c && !u->b_only)
			u->b_only = f->name;
		if (f->type != FT_MESSAGE)
			continue;
		if (!f->repeated) {
			era_use_msg(f->msg, schema_cmember(obj, f->off), u, depth + 1);
			continue;
		}
		for (size_t k = 0; k < schema_count(f, obj); k++)
			era_use_msg(f->msg, schema_element(f, obj, k), u, depth + 1);
	}
}

void model_era_use(const struct uprobestats_config *cfg, struct era_use *u)
{
	u->b_only = u->current_only = NULL;
	era_use_msg(&schema_config, cfg, u, 0);
}

int config_format_parse(const char *s, enum config_format *out)
{
	if (!strcmp(s, "auto"))
		*out = CONFIG_FORMAT_AUTO;
	else if (!strcmp(s, "text"))
		*out = CONFIG_FORMAT_TEXT;
	else if (!strcmp(s, "binary"))
		*out = CONFIG_FORMAT_BINARY;
	else
		return -EINVAL;
	return 0;
}

int config_era_parse(const char *s, enum config_era *out)
{
	if (!strcmp(s, "auto"))
		*out = CONFIG_ERA_AUTO;
	else if (!strcmp(s, "b") || !strcmp(s, "B"))
		*out = CONFIG_ERA_B;
	else if (!strcmp(s, "current") || !strcmp(s, "c") || !strcmp(s, "C"))
		*out = CONFIG_ERA_CURRENT;
	else
		return -EINVAL;
	return 0;
}

const char *config_format_name(enum config_format f)
{
	switch (f) {
	case CONFIG_FORMAT_TEXT:
		return "text";
	case CONFIG_FORMAT_BINARY:
		return "binary";
	default:
		return "auto";
	}
}

const char *config_era_name(enum config_era e)
{
	switch (e) {
	case CONFIG_ERA_B:
		return "B (probe-level bpf_map; target_process_name=2, duration_seconds=3)";
	case CONFIG_ERA_CURRENT:
		return "current (task-level bpf_maps; target_process_name=3, duration_seconds=4)";
	default:
		return "auto";
	}
}

const char *config_err_class(int code)
{
	switch (code) {
	case CONFIG_ESYNTAX:
		return "syntax";
	case CONFIG_EFIELD:
		return "field";
	case CONFIG_EVALUE:
		return "value";
	case CONFIG_ERANGE:
		return "range";
	case CONFIG_EWIRE:
		return "wire";
	case CONFIG_EERA:
		return "era";
	case CONFIG_ELIMIT:
		return "limit";
	default:
		return "io";
	}
}

const char *config_loc_str(const struct uprobestats_config *cfg, const struct src_loc *loc,
			   char *buf, size_t size)
{
	const char *name = cfg && cfg->source_name ? cfg->source_name : "config";

	if (loc && loc->kind == SRC_LOC_TEXT)
		snprintf(buf, size, "%s:%u:%u", name, loc->line, loc->col);
	else if (loc && loc->kind == SRC_LOC_BINARY)
		snprintf(buf, size, "%s+0x%llx", name, (unsigned long long)loc->offset);
	else
		snprintf(buf, size, "%s", name);
	return buf;
}
