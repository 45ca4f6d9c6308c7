#include "probe/reorder.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

static int before(const struct reorder_item *a, const struct reorder_item *b)
{
	return a->ktime < b->ktime || (a->ktime == b->ktime && a->seq < b->seq);
}

static void swap(struct reorder_item *a, struct reorder_item *b)
{
	struct reorder_item t = *a;

	*a = *b;
	*b = t;
}

int reorder_push(struct reorder *r, const void *data, uint32_t size)
{
	struct reorder_item it = { .seq = r->next_seq, .size = size };
	size_t i;

	if (grow_array(&r->heap, &r->cap, r->n + 1, 256) < 0)
		return -ENOMEM;
	it.data = malloc(size ? size : 1);
	if (!it.data)
		return -ENOMEM;
	memcpy(it.data, data, size);
	if (size >= sizeof(it.ktime))
		memcpy(&it.ktime, data, sizeof(it.ktime));
	r->next_seq++;
	r->bytes += size;
	i = r->n++;
	r->heap[i] = it;
	while (i && before(&r->heap[i], &r->heap[(i - 1) / 2])) {
		swap(&r->heap[i], &r->heap[(i - 1) / 2]);
		i = (i - 1) / 2;
	}
	return 0;
}

const struct reorder_item *reorder_peek(const struct reorder *r, uint64_t watermark)
{
	return r->n && r->heap[0].ktime < watermark ? &r->heap[0] : NULL;
}

void reorder_pop(struct reorder *r)
{
	size_t i = 0;

	if (!r->n)
		return;
	r->bytes -= r->heap[0].size;
	free(r->heap[0].data);
	r->heap[0] = r->heap[--r->n];
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		if (l < r->n && before(&r->heap[l], &r->heap[m]))
			m = l;
		if (l + 1 < r->n && before(&r->heap[l + 1], &r->heap[m]))
			m = l + 1;
		if (m == i)
			break;
		swap(&r->heap[i], &r->heap[m]);
		i = m;
	}
}

void reorder_free(struct reorder *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->heap[i].data);
	free(r->heap);
	memset(r, 0, sizeof(*r));
}
