/* arena.h — a bump allocator whose blocks are all freed at once.
 * Parsers allocate every string and array of one result from one arena. */
#ifndef UPROBESTATS_COMMON_ARENA_H
#define UPROBESTATS_COMMON_ARENA_H

#include <stddef.h>

struct arena;

struct arena *arena_new(void);
void arena_free(struct arena *a);
/* Zeroed, 16-byte aligned; NULL only when out of memory. */
void *arena_alloc(struct arena *a, size_t size);
char *arena_strndup(struct arena *a, const char *s, size_t n);
char *arena_strdup(struct arena *a, const char *s);
/* Grow an array: returns a new block holding the old n*elem bytes. */
void *arena_grow(struct arena *a, void *old, size_t old_n, size_t new_n, size_t elem);

#endif
