#include "common/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};

struct arena {
	struct arena_block *head;
};

struct arena *arena_new(void)
{
	return calloc(1, sizeof(struct arena));
}

void arena_free(struct arena *a)
{
	if (!a)
		return;
	for (struct arena_block *b = a->head, *n; b; b = n) {
		n = b->next;
		free(b);
	}
	free(a);
}

void *arena_alloc(struct arena *a, size_t size)
{
	struct arena_block *b = a->head;
	size_t need = (size + 15) & ~(size_t)15;

	if (need < size)
		return NULL;
	if (!b || b->cap - b->used < need) {
		size_t cap = need > 16384 ? need : 16384;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->used = 0;
		b->cap = cap;
		b->next = a->head;
		a->head = b;
	}
	void *p = b->data + b->used;
	b->used += need;
	memset(p, 0, size);
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *p = arena_alloc(a, n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

char *arena_strdup(struct arena *a, const char *s)
{
	return arena_strndup(a, s, strlen(s));
}

void *arena_grow(struct arena *a, void *old, size_t old_n, size_t new_n, size_t elem)
{
	if (new_n && elem > SIZE_MAX / new_n)
		return NULL;
	void *p = arena_alloc(a, new_n * elem);
	if (p && old && old_n)
		memcpy(p, old, (old_n < new_n ? old_n : new_n) * elem);
	return p;
}
