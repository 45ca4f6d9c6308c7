#include "formats/oat_methods.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/grow.h"
#include "formats/dex.h"

static int push(struct oat_method_list *l, size_t *cap, const struct oat_method *m)
{
	if (grow_array(&l->v, cap, l->n + 1, 256) < 0)
		return -ENOMEM;
	l->v[l->n++] = *m;
	return 0;
}

static void note(struct oat_method_list *l, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(struct oat_method_list *l, const char *fmt, ...)
{
	size_t used = strlen(l->notes);
	va_list ap;

	if (used + 2 >= sizeof(l->notes))
		return;
	if (used)
		l->notes[used++] = '\n';
	va_start(ap, fmt);
	vsnprintf(l->notes + used, sizeof(l->notes) - used, fmt, ap);
	va_end(ap);
}

/* A real oat file holds at most one code slot per 4 bytes; a listing longer
 * than that means OatClass records (or dex class_data) are shared by many
 * class_defs, which dex2oat never writes.  Refusing it bounds time and memory
 * on crafted files. */
static int check_listing_size(const struct oat_file *o, const struct oat_method_list *l,
			      struct err *err)
{
	uint64_t most = oat_info(o)->oat_size / 4 + 1;

	if (l->n < most)
		return 0;
	return err_set(err, -EINVAL,
		       "%s: more than %llu compiled methods listed from %llu bytes of oat data: "
		       "class records are shared between classes (damaged or crafted file)",
		       oat_name(o), (unsigned long long)most,
		       (unsigned long long)oat_info(o)->oat_size);
}

/* Adds one method slot of an OatClass if it has code. */
static int add_slot(const struct oat_file *o, const struct oat_class *c,
		    struct oat_slot_cursor *cur, struct oat_method *m, struct oat_method_list *l,
		    size_t *cap, struct err *err)
{
	enum oat_miss why;
	int rc;

	if ((rc = oat_class_method(o, c, m->index_in_class, cur, &m->raw_code_offset, &why, err)))
		return rc;
	if (!m->raw_code_offset)
		return 0;
	if ((rc = oat_code_at(o, m->raw_code_offset, &m->code, err)) ||
	    (rc = check_listing_size(o, l, err)))
		return rc;
	if (push(l, cap, m))
		return err_set(err, -ENOMEM, "out of memory");
	return 0;
}

static int list_class_with_dex(const struct oat_file *o, const struct dex_file *d, uint32_t di,
			       uint32_t cdi, struct oat_method_list *l, size_t *cap,
			       struct err *err)
{
	struct dex_class_iter it;
	struct oat_class c;
	struct dex_method dm;
	struct oat_slot_cursor cur = { 0 };
	int rc;

	if ((rc = dex_class_iter_init(d, cdi, &it, err)))
		return rc;
	if ((rc = oat_class_get(o, di, cdi, it.n_direct + it.n_virtual, &c, err)))
		return rc;
	if (c.type == OAT_CLASS_NONE_COMPILED)
		return 0;
	while ((rc = dex_class_iter_next(&it, &dm, err)) > 0) {
		struct oat_method m = { .dex_i = di, .cdi = cdi,
					.index_in_class = dm.index_in_class, .has_dex = true,
					.method_idx = dm.method_idx,
					.access_flags = dm.access_flags };
		if ((rc = add_slot(o, &c, &cur, &m, l, cap, err)))
			return rc;
	}
	return rc;
}

struct record_user {
	uint32_t record;            /* OatClass offset */
	uint32_t cdi;
};

static int by_record_then_cdi(const void *a, const void *b)
{
	const struct record_user *x = a, *y = b;
	if (x->record != y->record)
		return x->record < y->record ? -1 : 1;
	return x->cdi < y->cdi ? -1 : x->cdi > y->cdi;
}

/* The class_defs of dex di whose OatClass record no earlier class_def points
 * at: want[cdi] is set for those.  A real file never shares one; a crafted one
 * that does would be listed once per class_def otherwise. */
static int first_users_of_records(const struct oat_file *o, uint32_t di, uint32_t n,
				  bool *want)
{
	uint64_t size;
	const uint8_t *b = oat_region(o, &size);
	uint64_t table = oat_dex_at(o, di)->class_offsets_offset;
	struct record_user *u = malloc((n ? n : 1) * sizeof(*u));

	if (!u)
		return -ENOMEM;
	/* oat_guess_class_count only counts entries inside the oat data */
	for (uint32_t i = 0; i < n; i++)
		u[i] = (struct record_user){ ld32(b + table + 4ull * i), i };
	qsort(u, n, sizeof(*u), by_record_then_cdi);
	for (uint32_t i = 0; i < n; i++)
		want[u[i].cdi] = i == 0 || u[i - 1].record != u[i].record;
	free(u);
	return 0;
}

/* v194+ without the dex: by class_def and class method index, from the
 * method counts OatClass records store. */
static int list_dex_without_signatures(const struct oat_file *o, uint32_t di,
				       struct oat_method_list *l, size_t *cap, struct err *err)
{
	uint32_t n = oat_guess_class_count(o, di), shared = 0;
	bool *want = malloc((n ? n : 1) * sizeof(*want));
	int rc = 0;

	if (!want || first_users_of_records(o, di, n, want)) {
		free(want);
		return err_set(err, -ENOMEM, "out of memory");
	}
	for (uint32_t cdi = 0; cdi < n && !rc; cdi++) {
		struct oat_class c;
		struct oat_slot_cursor cur = { 0 };
		if (!want[cdi]) {
			shared++;
			continue;
		}
		if ((rc = oat_class_get(o, di, cdi, OAT_UNKNOWN_COUNT, &c, err)))
			break;
		for (uint32_t k = oat_class_next_slotted(o, &c, 0); k < c.num_methods && !rc;
		     k = oat_class_next_slotted(o, &c, k + 1)) {
			struct oat_method m = { .dex_i = di, .cdi = cdi, .index_in_class = k,
						.method_idx = DEX_NO_INDEX };
			rc = add_slot(o, &c, &cur, &m, l, cap, err);
		}
	}
	free(want);
	if (shared)
		note(l, "dex #%u: %u class_defs point at an OatClass record another class_def "
		     "uses; each record was listed once", di, shared);
	return rc;
}

static int list_dex(const struct oat_file *o, struct oat_dexset *ds, uint32_t di,
		    struct oat_method_list *l, size_t *cap, struct err *err)
{
	const struct dex_file *d;
	struct err de = { 0 };
	uint32_t n;
	int rc;

	if (oat_dexset_get(ds, di, &d, &de) == 0) {
		n = dex_class_def_count(d);
		for (uint32_t cdi = 0; cdi < n; cdi++)
			if ((rc = list_class_with_dex(o, d, di, cdi, l, cap, err)))
				return rc;
		return 0;
	}
	if (oat_info(o)->version < 194) {
		note(l, "dex #%u skipped: %s (oat v%u needs the dex to count methods)", di, de.msg,
		     oat_info(o)->version);
		if (!l->dex_skipped++)
			snprintf(l->first_skip, sizeof(l->first_skip), "%s", de.msg);
		return 0;
	}
	note(l, "dex #%u listed without signatures: %s", di, de.msg);
	return list_dex_without_signatures(o, di, l, cap, err);
}

struct code_key {
	uint32_t code_offset;
	size_t index;
};

static int by_code(const void *a, const void *b)
{
	const struct code_key *x = a, *y = b;
	if (x->code_offset != y->code_offset)
		return x->code_offset < y->code_offset ? -1 : 1;
	return x->index < y->index ? -1 : 1;
}

/* Groups methods with the same code offset; the first in list order leads. */
static int group_duplicates(struct oat_method_list *l)
{
	struct code_key *k = malloc((l->n ? l->n : 1) * sizeof(*k));

	if (!k)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++)
		k[i] = (struct code_key){ l->v[i].code.code_offset, i };
	qsort(k, l->n, sizeof(*k), by_code);
	for (size_t i = 0; i < l->n;) {
		size_t j = i;
		while (j < l->n && k[j].code_offset == k[i].code_offset)
			j++;
		for (size_t q = i; q < j; q++) {
			l->v[k[q].index].dedup_first = k[i].index;
			l->v[k[q].index].dedup_n = (uint32_t)(j - i);
		}
		i = j;
	}
	free(k);
	return 0;
}

int oat_list_methods(const struct oat_file *o, struct oat_dexset *ds, struct oat_method_list *out,
		     struct err *err)
{
	size_t cap = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	for (uint32_t di = 0; di < oat_dex_count(o); di++) {
		if ((rc = list_dex(o, ds, di, out, &cap, err))) {
			oat_method_list_free(out);
			return rc;
		}
	}
	if (group_duplicates(out)) {
		oat_method_list_free(out);
		return err_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

void oat_method_list_free(struct oat_method_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* The class method index of code slot `slot` in c (inverse of the bitmap). */
static uint32_t slot_to_index(const struct oat_file *o, const struct oat_class *c, uint32_t slot)
{
	uint64_t size;
	const uint8_t *bm = oat_region(o, &size) + c->bitmap_at;

	if (c->type != OAT_CLASS_SOME_COMPILED)
		return slot;
	for (uint32_t i = 0; i < c->bitmap_bytes * 8u; i++)
		if ((bm[i / 8] >> (i % 8) & 1) && slot-- == 0)
			return i;
	return UINT32_MAX;
}

static int scan_class(const struct oat_file *o, uint32_t di, uint32_t cdi, uint32_t n_methods,
		      uint32_t code_offset, oat_sharer_fn fn, void *ctx, struct err *err)
{
	struct oat_class c;
	uint64_t size;
	const uint8_t *b = oat_region(o, &size);
	uint32_t mask = oat_info(o)->e_machine == EM_ARM ? ~1u : ~0u;
	int rc;

	if ((rc = oat_class_get(o, di, cdi, n_methods, &c, err)))
		return rc;
	if (c.type == OAT_CLASS_NONE_COMPILED)
		return 0;
	for (uint32_t s = 0; s < c.n_offsets; s++) {
		uint32_t v = ld32(b + c.methods_at + 4ull * s);
		if (v && (v & mask) == code_offset &&
		    (rc = fn(ctx, di, cdi, slot_to_index(o, &c, s))))
			return rc;
	}
	return 0;
}

int oat_for_each_code_user(const struct oat_file *o, struct oat_dexset *ds, uint32_t code_offset,
			   oat_sharer_fn fn, void *ctx, struct err *err)
{
	int rc;

	for (uint32_t di = 0; di < oat_dex_count(o); di++) {
		const struct dex_file *d = NULL;
		struct err de;
		uint32_t n;
		bool have = oat_dexset_get(ds, di, &d, &de) == 0;
		if (!have && oat_info(o)->version < 194)
			continue;
		n = have ? dex_class_def_count(d) : oat_guess_class_count(o, di);
		for (uint32_t cdi = 0; cdi < n; cdi++) {
			uint32_t nm = OAT_UNKNOWN_COUNT;
			if (have) {
				struct dex_class_iter it;
				if ((rc = dex_class_iter_init(d, cdi, &it, err)))
					return rc;
				nm = it.n_direct + it.n_virtual;
			}
			if ((rc = scan_class(o, di, cdi, nm, code_offset, fn, ctx, err)))
				return rc;
		}
	}
	return 0;
}

int oat_method_signature(struct oat_dexset *ds, const struct oat_method *m, char *buf,
			 size_t size)
{
	const struct dex_file *d;
	struct err e;
	int n;

	if (ds && m->has_dex && !oat_dexset_get(ds, m->dex_i, &d, &e) &&
	    (n = dex_pretty_method(d, m->method_idx, buf, size)) >= 0)
		return n;
	snprintf(buf, size, "<dex #%u class_def %u method %u>", m->dex_i, m->cdi,
		 m->index_in_class);
	return -1;
}
