#include "stack/kwalk.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "code/codecache.h"
#include "common/grow.h"

int kwalk_table_add(struct kwalk_table *t, uint32_t tgid, uint64_t start, uint64_t end,
		    uint32_t frame_size)
{
	if (end <= start || tgid == UPS_KWALK_NONE)
		return 0;
	if (grow_array(&t->v, &t->cap, t->n + 1, 256) < 0)
		return -ENOMEM;
	t->v[t->n++] = (struct ups_kwalk_ent){ .tgid = tgid, .frame_size = frame_size,
					       .start = start, .end = end };
	return 0;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct ups_kwalk_ent *x = a, *y = b;

	if (x->tgid != y->tgid)
		return x->tgid < y->tgid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

int kwalk_table_finish(struct kwalk_table *t, struct err *err)
{
	size_t w = 0, size;

	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), ent_cmp);
	for (size_t r = 0; r < t->n; r++) {
		const struct ups_kwalk_ent *e = &t->v[r];
		if (w && t->v[w - 1].tgid == e->tgid && e->start < t->v[w - 1].end)
			continue;
		t->v[w++] = *e;
	}
	t->n = w;
	for (t->bits = 0; ((size_t)1 << t->bits) < t->n; t->bits++)
		if (t->bits == UPS_KWALK_MAX_BITS)
			return err_set(err, -E2BIG, "--stack-mode kernel: %zu compiled methods in the "
				       "traced processes, more than the walk's table holds (%u)",
				       t->n, 1u << UPS_KWALK_MAX_BITS);
	size = kwalk_table_size(t);
	if (size > t->cap) {
		if (resize_array(&t->v, size) < 0)
			return err_set(err, -ENOMEM, "out of memory");
		t->cap = size;
	}
	for (size_t i = t->n; i < size; i++)
		t->v[i] = (struct ups_kwalk_ent){ .tgid = UPS_KWALK_NONE, .start = UINT64_MAX,
						  .end = UINT64_MAX };
	return 0;
}

struct add_ctx {
	struct kwalk_table *t;
	uint32_t tgid;
};

static int add_one(void *ctx, uint64_t start, uint64_t end, uint32_t frame_size)
{
	struct add_ctx *a = ctx;

	return kwalk_table_add(a->t, a->tgid, start, end, frame_size);
}

int kwalk_table_build(struct kwalk_table *t, struct code_cache *code, const pid_t *pids,
		      size_t n, struct err *err)
{
	int rc = 0;

	for (size_t i = 0; i < n && rc == 0; i++) {
		struct add_ctx a = { t, (uint32_t)pids[i] };
		rc = code_cache_java_ranges(code, (uint32_t)pids[i], add_one, &a);
	}
	if (rc < 0)
		return err_set(err, rc, "--stack-mode kernel: out of memory building the table");
	return kwalk_table_finish(t, err);
}

void kwalk_table_free(struct kwalk_table *t)
{
	free(t->v);
	*t = (struct kwalk_table){ 0 };
}
