/* The catalog against the embedded BPF objects it names (the skeleton bytes
 * the tool loads), opened with libbpf (no kernel needed): every catalog
 * program, its entry program, section, output map and record kind exists,
 * every shared map name the tool spells exists, and the reverse: every
 * program and output of an object is in the catalog.  Also the record kind
 * descriptors against the layouts they describe. */
#include <bpf/libbpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/record_kinds.h"
#include "catalog/catalog.h"
#include "records.h"
#include "ut.h"

/* The inflated bytes (*bytes, freed by the caller after closing the object:
 * libbpf reads them while it is open). */
static struct bpf_object *open_object(const struct catalog_object *o, void **bytes)
{
	size_t size = 0;
	struct err e = { 0 };
	LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = o->name);

	*bytes = NULL;
	if (catalog_object_elf(o, bytes, &size, &e))
		return NULL;
	return bpf_object__open_mem(*bytes, size, &opts);
}

static bool has_program(struct bpf_object *obj, const char *name, bool ret)
{
	char sec[160];
	struct bpf_program *p = bpf_object__find_program_by_name(obj, name);

	snprintf(sec, sizeof(sec), "%s/%s", ret ? "uretprobe" : "uprobe", name);
	return p && strcmp(bpf_program__section_name(p), sec) == 0;
}

static bool has_map(struct bpf_object *obj, const char *name, enum bpf_map_type type)
{
	struct bpf_map *m = bpf_object__find_map_by_name(obj, name);

	return m && bpf_map__type(m) == type;
}

static bool is_ring_map(const struct catalog_object *o, const char *name)
{
	for (size_t i = 0; o->ring_maps[i]; i++)
		if (strcmp(o->ring_maps[i], name) == 0)
			return true;
	return false;
}

/* Catalog -> object. */
static int check_forward(const struct catalog_object *o, struct bpf_object *obj)
{
	for (size_t i = 0; i < o->n_programs; i++) {
		const struct catalog_program *p = &o->programs[i];
		/* every return program has an exit form: ART code never needs its
		 * uretprobe (plan/exits.h) */
		if (!has_program(obj, p->name, p->is_return) ||
		    (p->entry && !has_program(obj, p->entry, false)) ||
		    (p->is_return && !p->exit) || (!p->exit != !p->exit_entry) ||
		    (p->exit && (!has_program(obj, p->exit, false) ||
				 !has_program(obj, p->exit_entry, false))) ||
		    (p->map && (!is_ring_map(o, p->map) || !record_kind_get(p->record_kind))) ||
		    (!p->map && !p->histogram && !p->aggregate && !p->traffic) ||
		    (p->aggregate && (!has_map(obj, CATALOG_MAP_AGG_DATA, BPF_MAP_TYPE_HASH) ||
				      !bpf_object__find_map_by_name(obj, CATALOG_MAP_AGG_GEN))) ||
		    (p->traffic && (!bpf_object__find_map_by_name(obj, CATALOG_MAP_TRAFFIC_SOCKS) ||
				    !bpf_object__find_map_by_name(obj, CATALOG_MAP_TRAFFIC_DATA) ||
				    !bpf_object__find_map_by_name(obj, CATALOG_MAP_TRAFFIC_HOSTS)))) {
			ut_fail(__FILE__, __LINE__, "%s: program %s", o->name, p->name);
			return -1;
		}
	}
	for (size_t i = 0; o->ring_maps[i]; i++) {
		char perf[160];
		snprintf(perf, sizeof(perf), "%s%s", o->ring_maps[i], CATALOG_PERF_SUFFIX);
		if (!has_map(obj, o->ring_maps[i], BPF_MAP_TYPE_RINGBUF) ||
		    !has_map(obj, perf, BPF_MAP_TYPE_PERF_EVENT_ARRAY)) {
			ut_fail(__FILE__, __LINE__, "%s: output %s", o->name, o->ring_maps[i]);
			return -1;
		}
	}
	return 0;
}

static bool in_catalog(const struct catalog_object *o, const char *prog)
{
	for (size_t i = 0; i < o->n_programs; i++)
		if (!strcmp(o->programs[i].name, prog) ||
		    (o->programs[i].entry && !strcmp(o->programs[i].entry, prog)) ||
		    (o->programs[i].exit && !strcmp(o->programs[i].exit, prog)) ||
		    (o->programs[i].exit_entry && !strcmp(o->programs[i].exit_entry, prog)))
			return true;
	return false;
}

/* Object -> catalog: programs, and every output (a ring buffer, or a perf
 * event array named after one). */
static int check_reverse(const struct catalog_object *o, struct bpf_object *obj)
{
	struct bpf_program *prog;
	struct bpf_map *map;

	bpf_object__for_each_program(prog, obj) {
		if (!in_catalog(o, bpf_program__name(prog))) {
			ut_fail(__FILE__, __LINE__, "%s: program %s is not in the catalog", o->name,
				bpf_program__name(prog));
			return -1;
		}
	}
	bpf_object__for_each_map(map, obj) {
		char base[160];
		const char *name = bpf_map__name(map);
		snprintf(base, sizeof(base), "%s", name);
		if (bpf_map__type(map) == BPF_MAP_TYPE_PERF_EVENT_ARRAY &&
		    catalog_name_ends(name, CATALOG_PERF_SUFFIX))
			base[strlen(name) - strlen(CATALOG_PERF_SUFFIX)] = '\0';
		else if (bpf_map__type(map) != BPF_MAP_TYPE_RINGBUF)
			continue;
		if (!is_ring_map(o, base)) {
			ut_fail(__FILE__, __LINE__, "%s: output %s is not in the catalog", o->name,
				name);
			return -1;
		}
	}
	return 0;
}

static bool has_rodata(struct bpf_object *obj)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj)
		if (bpf_map__is_internal(map) &&
		    catalog_name_ends(bpf_map__name(map), CATALOG_RODATA_SUFFIX))
			return true;
	return false;
}

static bool uses_histogram(const struct catalog_object *o)
{
	for (size_t i = 0; i < o->n_programs; i++)
		if (o->programs[i].histogram)
			return true;
	return false;
}

static bool uses_exit_probes(const struct catalog_object *o)
{
	for (size_t i = 0; i < o->n_programs; i++)
		if (o->programs[i].exit)
			return true;
	return false;
}

UT_TEST(catalog_matches_the_embedded_objects)
{
	UT_ASSERT(catalog_object_count() >= 8);
	for (size_t i = 0; i < catalog_object_count(); i++) {
		const struct catalog_object *o = catalog_object_at(i);
		void *bytes;
		struct bpf_object *obj = open_object(o, &bytes);
		bool ok;

		UT_ASSERT(obj != NULL);
		ok = check_forward(o, obj) == 0 && check_reverse(o, obj) == 0 && has_rodata(obj) &&
		     bpf_object__find_map_by_name(obj, CATALOG_MAP_COUNTERS) &&
		     bpf_object__find_map_by_name(obj, CATALOG_MAP_PIDS) &&
		     (!uses_histogram(o) ||
		      bpf_object__find_map_by_name(obj, CATALOG_MAP_HISTOGRAM)) &&
		     (!uses_exit_probes(o) ||
		      bpf_object__find_map_by_name(obj, CATALOG_MAP_PENDING)) &&
		     (o->prepare != CATALOG_PREPARE_BINDER_FILTER ||
		      bpf_object__find_map_by_name(obj, CATALOG_MAP_BINDER_INTERFACES));
		bpf_object__close(obj);
		free(bytes);
		if (!ok)
			ut_fail(__FILE__, __LINE__, "object %s", o->name);
		UT_ASSERT(ok);
	}
}

static size_t store_size(uint8_t store)
{
	switch (store) {
	case RK_U8: return 1;
	case RK_U32: case RK_S32: return 4;
	case RK_U64: case RK_S64: return 8;
	default: return 0;
	}
}

/* Each field inside the payload, stored as wide as its member; each atom
 * field names a field, strings only from strings. */
UT_TEST(record_kinds_describe_their_layouts)
{
	UT_ASSERT(record_kind_count() >= 16);
	for (size_t i = 0; i < record_kind_count(); i++) {
		const struct record_kind *rk = record_kind_at(i);
		size_t payload = rk->size - sizeof(struct ups_envelope);

		UT_ASSERT(rk->size > sizeof(struct ups_envelope));
		UT_ASSERT(rk->n_fields <= CATALOG_MAX_FIELDS);
		UT_ASSERT(record_kind_get(rk->kind) == rk);
		for (size_t f = 0; f < rk->n_fields; f++) {
			const struct rk_field *x = &rk->fields[f];
			UT_ASSERT(x->off + x->size <= payload);
			UT_ASSERT(x->store == RK_CHARS ? x->type == FIELD_STRING
				  : store_size(x->store) == x->size && x->type != FIELD_STRING);
		}
		UT_ASSERT(!rk->is_return || rk->duration_field < rk->n_fields);
		UT_ASSERT(rk->atom == RK_ATOM_FIELDS || rk->n_atom_fields == 0);
		for (size_t a = 0; a < rk->n_atom_fields; a++) {
			const struct rk_atom_field *af = &rk->atom_fields[a];
			bool str = af->type == RK_AT_STRING || af->type == RK_AT_HASH;
			UT_ASSERT(af->field < rk->n_fields);
			UT_ASSERT(str == (rk->fields[af->field].type == FIELD_STRING));
		}
	}
}

/* The legacy build of every object (kernels before 5.5): every program the
 * catalog names, entry and exit halves included, in its section; every
 * output as a perf event array and no ring buffer; no global data; the maps
 * the tool fills by name. */
static int check_legacy(const struct catalog_object *o, struct bpf_object *obj)
{
	struct bpf_map *map;

	for (size_t i = 0; i < o->n_programs; i++) {
		const struct catalog_program *p = &o->programs[i];
		if (!has_program(obj, p->name, p->is_return) ||
		    (p->entry && !has_program(obj, p->entry, false)) ||
		    (p->exit_entry && !has_program(obj, p->exit_entry, false)) ||
		    (p->exit && !has_program(obj, p->exit, false))) {
			ut_fail(__FILE__, __LINE__, "%s: legacy program %s", o->name, p->name);
			return -1;
		}
	}
	for (size_t i = 0; o->ring_maps[i]; i++) {
		char perf[160];
		snprintf(perf, sizeof(perf), "%s%s", o->ring_maps[i], CATALOG_PERF_SUFFIX);
		if (!has_map(obj, perf, BPF_MAP_TYPE_PERF_EVENT_ARRAY)) {
			ut_fail(__FILE__, __LINE__, "%s: legacy output %s", o->name, perf);
			return -1;
		}
	}
	bpf_object__for_each_map(map, obj) {
		if (bpf_map__is_internal(map) || bpf_map__type(map) == BPF_MAP_TYPE_RINGBUF) {
			ut_fail(__FILE__, __LINE__, "%s: legacy map %s", o->name,
				bpf_map__name(map));
			return -1;
		}
	}
	return 0;
}

UT_TEST(catalog_every_program_has_a_legacy_form)
{
	for (size_t i = 0; i < catalog_object_count(); i++) {
		const struct catalog_object *o = catalog_object_at(i);
		LIBBPF_OPTS(bpf_object_open_opts, opts, .object_name = o->name);
		struct err e = { 0 };
		void *bytes = NULL;
		size_t size = 0;
		struct bpf_object *obj;
		bool ok;

		UT_EQ_INT(catalog_object_legacy_elf(o, &bytes, &size, &e), 0);
		obj = bpf_object__open_mem(bytes, size, &opts);
		UT_ASSERT(obj != NULL);
		ok = check_legacy(o, obj) == 0 && check_reverse(o, obj) == 0 &&
		     bpf_object__find_map_by_name(obj, CATALOG_MAP_COUNTERS) &&
		     bpf_object__find_map_by_name(obj, CATALOG_MAP_PIDS);
		bpf_object__close(obj);
		free(bytes);
		if (!ok)
			ut_fail(__FILE__, __LINE__, "legacy object %s", o->name);
	}
}
