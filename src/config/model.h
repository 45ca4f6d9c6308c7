/* model.h — building the config model (used by the parsers): creating the
 * config and its arena, and appending to repeated fields, generically
 * through the schema tables. */
#ifndef UPROBESTATS_CONFIG_MODEL_H
#define UPROBESTATS_CONFIG_MODEL_H

#include "config/config.h"
#include "config/schema.h"

/* A fresh empty config with its arena; NULL when out of memory. */
struct uprobestats_config *model_new(const char *source_name);

/* Append a zeroed element to the repeated message field f of obj (whose
 * array and count are at f->off / f->count_off); NULL when out of memory. */
void *model_push_message(struct arena *a, void *obj, const struct field_desc *f);

/* Append one value to a repeated scalar field (str_list / i32_list / i64_list
 * chosen by f->type), recording its location.  Returns 0 or -ENOMEM. */
int model_push_string(struct arena *a, struct str_list *l, char *s, const struct src_loc *loc);
int model_push_i32(struct arena *a, struct i32_list *l, int32_t v, const struct src_loc *loc);
int model_push_i64(struct arena *a, struct i64_list *l, int64_t v, const struct src_loc *loc);

/* Set a singular scalar of obj (value, has_ flag, location). */
void model_set_string(void *obj, const struct field_desc *f, char *s, const struct src_loc *loc);
void model_set_int(void *obj, const struct field_desc *f, int64_t v, const struct src_loc *loc);

/* Mark the singular message field f of obj present and return the struct its
 * fields are relative to (obj + f->off). */
void *model_open_message(void *obj, const struct field_desc *f, const struct src_loc *loc);

/* Which era-specific fields a model uses: the first present field that only
 * era B has (e.g. "ProbeConfig.bpf_map") and the first that only the
 * current era has (e.g. "Task.bpf_maps"); NULL when none. */
struct era_use {
	const char *b_only;
	const char *current_only;
};

void model_era_use(const struct uprobestats_config *cfg, struct era_use *u);

#endif
