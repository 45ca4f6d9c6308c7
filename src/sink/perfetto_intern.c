/* perfetto_intern.c — see perfetto_intern.h. */
#include "sink/perfetto_intern.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "sink/perfetto_proto.h"

struct pf_istr {
	uint64_t hash;
	uint64_t iid;            /* 0: empty slot */
	char *s;
	size_t n;
};

static bool istr_hash(const void *slot, uint64_t *hash)
{
	const struct pf_istr *e = slot;

	*hash = e->hash;
	return e->iid != 0;
}

void pf_intern_free(struct pf_intern *t)
{
	if (t->total)
		*t->total -= t->used;
	for (size_t i = 0; i < t->cap; i++)
		free(t->tab[i].s);
	free(t->tab);
	memset(t, 0, sizeof(*t));
}

uint64_t pf_intern_key(struct pf_intern *t, uint32_t table, const void *key, size_t n,
		       bool *fresh)
{
	uint64_t h = pf_hash_bytes(key, n, table);
	size_t i;

	*fresh = false;
	if (t->cap) {
		for (i = (size_t)h & (t->cap - 1); t->tab[i].iid; i = (i + 1) & (t->cap - 1))
			if (t->tab[i].hash == h && t->tab[i].n == n && !memcmp(t->tab[i].s, key, n))
				return t->tab[i].iid;
	}
	if (t->used >= PF_MAX_INTERNED || (t->total && *t->total >= PF_MAX_INTERNED_TOTAL) ||
	    ((t->used + 1) * 2 > t->cap && grow_hash_table(&t->tab, &t->cap, 256, istr_hash) < 0))
		return 0;
	char *copy = malloc(n ? n : 1);
	if (!copy)
		return 0;
	memcpy(copy, key, n);
	for (i = (size_t)h & (t->cap - 1); t->tab[i].iid; i = (i + 1) & (t->cap - 1))
		;
	t->tab[i] = (struct pf_istr){ .hash = h, .iid = ++t->used, .s = copy, .n = n };
	if (t->total)
		++*t->total;
	*fresh = true;
	return t->tab[i].iid;
}

uint64_t pf_intern(struct pf_intern *t, struct wire_buf *defs, uint32_t table, const char *s,
		   size_t n)
{
	bool fresh;
	uint64_t iid = pf_intern_key(t, table, s, n, &fresh);

	if (fresh) {
		size_t at = wire_open(defs, table);
		wire_put_uint_field(defs, IS_IID, iid);
		wire_put_str_field(defs, IS_NAME, s, n);
		wire_close(defs, at);
	}
	return iid;
}

uint64_t pf_intern_stable(struct pf_ptr_cache *c, struct pf_intern *t, struct wire_buf *defs,
			  uint32_t table, const char *s, size_t n)
{
	struct pf_ptr_iid *e = &c->e[((uintptr_t)s >> 3) % PF_PTR_CACHE];

	if (e->ptr == s && e->n == n && e->table == table)
		return e->iid;
	uint64_t iid = pf_intern(t, defs, table, s, n);
	if (iid)
		*e = (struct pf_ptr_iid){ .ptr = s, .n = n, .table = table, .iid = iid };
	return iid;
}

/* Every table of t, in the order of struct pf_tables. */
#define PF_TABLES(t) { &(t)->events, &(t)->names, &(t)->strings, &(t)->funcs, &(t)->paths, \
		       &(t)->maps, &(t)->frames, &(t)->stacks }

void pf_tables_init(struct pf_tables *t, size_t *total)
{
	struct pf_intern *all[] = PF_TABLES(t);

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		all[i]->total = total;
}

void pf_tables_free(struct pf_tables *t)
{
	struct pf_intern *all[] = PF_TABLES(t);

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		size_t *total = all[i]->total;
		pf_intern_free(all[i]);
		all[i]->total = total;  /* the table stays usable on the budget */
	}
	memset(&t->cache, 0, sizeof(t->cache));
}
