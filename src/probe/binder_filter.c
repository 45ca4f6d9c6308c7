#include "probe/binder_filter.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "probe/legacy_str.h"
#include "records.h"
#include "plan/plan.h"

/* The key is NUL-terminated in BPF: 127 bytes of name at most. */
#define BINDER_NAME_MAX (UPS_STR_LEN - 1)

struct entry {
	struct binder_interface_key key;
	struct binder_codes codes;
	size_t n;
};

static int add_code(struct entry *e, int64_t code, const struct plan_probe *p, struct err *err)
{
	if (code <= 0 || code > INT32_MAX)
		return err_set(err, -EINVAL, "probe %s: binder method_id %lld for %s is not a "
			       "transaction code (1..%d; 0 cannot be filtered)", p->program_name,
			       (long long)code, e->key.interface_descriptor, INT32_MAX);
	for (size_t i = 0; i < e->n; i++)
		if (e->codes.codes[i] == (uint64_t)code)
			return 0;
	if (e->n == UPS_BINDER_MAX_CODES)
		return err_set(err, -E2BIG, "probe %s: more than %d transaction codes for %s "
			       "(the BPF filter holds %d)", p->program_name, UPS_BINDER_MAX_CODES,
			       e->key.interface_descriptor, UPS_BINDER_MAX_CODES);
	e->codes.codes[e->n++] = (uint64_t)code;
	return 0;
}

static struct entry *entry_for(struct entry *v, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(v[i].key.interface_descriptor, name) == 0)
			return &v[i];
	memset(&v[*n], 0, sizeof(v[*n]));
	memcpy(v[*n].key.interface_descriptor, name, strlen(name));
	return &v[(*n)++];
}

static int add_filter(struct entry *v, size_t *n, const struct binder_filter *f,
		      const struct plan_probe *p, struct err *err)
{
	const char *name = f->interface_name;
	struct entry *e;
	int rc = 0;

	if (!name || !*name)
		return err_set(err, -EINVAL, "probe %s: a binder_transaction_filters entry has no "
			       "interface_name", p->program_name);
	if (strlen(name) > BINDER_NAME_MAX)
		return err_set(err, -ENAMETOOLONG, "probe %s: interface_name %s is %zu bytes; the "
			       "BPF filter key holds %d", p->program_name, name, strlen(name),
			       BINDER_NAME_MAX);
	e = entry_for(v, n, name);
	for (size_t m = 0; m < f->n_methods && rc == 0; m++)
		rc = add_code(e, f->methods[m].has_method_id ? f->methods[m].method_id : 0, p, err);
	for (size_t m = 0; m < f->method_ids.n && rc == 0; m++)
		rc = add_code(e, f->method_ids.v[m], p, err);
	if (rc == 0 && e->n == 0)
		return err_set(err, -EINVAL, "probe %s: the filter for %s lists no transaction "
			       "codes", p->program_name, name);
	return rc;
}

static bool is_binder_probe(const struct plan_probe *p)
{
	return strcmp(p->obj->name, "Binder") == 0;
}

static int collect(const struct plan *plan, struct entry **out, size_t *n_out, struct err *err)
{
	size_t cap = 0, n = 0;
	struct entry *v;
	int rc = 0;

	for (size_t i = 0; i < plan->n_probes; i++)
		if (is_binder_probe(plan->probe_by_id[i]))
			cap += plan->probe_by_id[i]->cfg->n_binder_filters;
	v = calloc(cap ? cap : 1, sizeof(*v));
	if (!v)
		return err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < plan->n_probes && rc == 0; i++) {
		const struct plan_probe *p = plan->probe_by_id[i];
		if (!is_binder_probe(p))
			continue;
		if (!p->cfg->n_binder_filters)
			rc = err_set(err, -EINVAL, "probe %s: needs binder_transaction_filters "
				     "(the interfaces and codes to report)", p->program_name);
		for (size_t f = 0; f < p->cfg->n_binder_filters && rc == 0; f++)
			rc = add_filter(v, &n, &p->cfg->binder_filters[f], p, err);
	}
	if (rc < 0) {
		free(v);
		return rc;
	}
	*out = v;
	*n_out = n;
	return 0;
}

int binder_filter_prepare(struct bpf_object *primary, const struct plan *plan, struct err *err)
{
	struct bpf_map *map = bpf_object__find_map_by_name(primary, CATALOG_MAP_BINDER_INTERFACES);
	struct entry *v;
	size_t n;
	int rc;

	if (!map)
		return err_set(err, -ENOENT, "Binder object has no interfaces map");
	rc = collect(plan, &v, &n, err);
	if (rc < 0)
		return rc;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct binder_interface_key raw;

		if (bpf_map_update_elem(bpf_map__fd(map), &v[i].key, &v[i].codes, BPF_ANY) < 0)
			rc = err_set(err, -errno, "filling map_Binder_interfaces with %s: %s",
				     v[i].key.interface_descriptor, strerror(errno));
		/* A legacy object's key for a UTF-16 descriptor is its raw form
		 * (probe/legacy_str.h); it never equals a UTF-8 key. */
		if (rc == 0 && legacy_str_raw_form(v[i].key.interface_descriptor,
						   raw.interface_descriptor,
						   sizeof(raw.interface_descriptor)) &&
		    bpf_map_update_elem(bpf_map__fd(map), &raw, &v[i].codes, BPF_ANY) < 0)
			rc = err_set(err, -errno, "filling map_Binder_interfaces with %s (legacy "
				     "form): %s", v[i].key.interface_descriptor, strerror(errno));
	}
	free(v);
	return rc;
}

const struct binder_method_config *binder_filter_method(const struct probe_config *pc,
							 const char *iface, size_t iface_len,
							 uint64_t code)
{
	for (size_t f = 0; f < pc->n_binder_filters; f++) {
		const struct binder_filter *bf = &pc->binder_filters[f];
		if (!bf->interface_name || strlen(bf->interface_name) != iface_len ||
		    memcmp(bf->interface_name, iface, iface_len) != 0)
			continue;
		for (size_t m = 0; m < bf->n_methods; m++) {
			const struct binder_method_config *mc = &bf->methods[m];
			if (mc->has_method_id && (uint64_t)mc->method_id == code)
				return mc;
		}
	}
	return NULL;
}
