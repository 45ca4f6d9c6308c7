/* grow.c — see grow.h.  The only realloc of the tree. */
#include "common/grow.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int grow_cap(size_t cap, size_t need, size_t first, size_t elem, size_t *out)
{
	size_t c = cap ? cap : (first ? first : 1);

	while (c < need) {
		if (c > SIZE_MAX / 2)
			return -EOVERFLOW;
		c *= 2;
	}
	if (elem && c > SIZE_MAX / elem)
		return -EOVERFLOW;
	*out = c;
	return 0;
}

int resize_array_bytes(void **p, size_t n, size_t elem)
{
	void *np;

	if (elem && n > SIZE_MAX / elem)
		return -EOVERFLOW;
	np = realloc(*p, n * elem ? n * elem : 1);
	if (!np)
		return -ENOMEM;
	*p = np;
	return 0;
}

int grow_array_bytes(void **p, size_t *cap, size_t need, size_t first, size_t elem)
{
	size_t c;
	int rc;

	if (need <= *cap && *p)
		return 0;
	rc = grow_cap(*cap, need, first, elem, &c);
	if (rc == 0)
		rc = resize_array_bytes(p, c, elem);
	if (rc == 0)
		*cap = c;
	return rc;
}

int grow_hash_table_bytes(void **tab, size_t *cap, size_t first, size_t elem,
			  bool (*slot_hash)(const void *slot, uint64_t *hash))
{
	const unsigned char *old = *tab;
	unsigned char *nt;
	size_t c;
	int rc = grow_cap(*cap, *cap + 1, first, elem, &c);

	if (rc < 0)
		return rc;
	if (!(nt = calloc(c, elem ? elem : 1)))
		return -ENOMEM;
	for (size_t i = 0; i < *cap; i++) {
		const unsigned char *s = old + i * elem;
		uint64_t h, other;
		if (!slot_hash(s, &h))
			continue;
		size_t j = (size_t)h & (c - 1);
		while (slot_hash(nt + j * elem, &other))
			j = (j + 1) & (c - 1);
		memcpy(nt + j * elem, s, elem);
	}
	free(*tab);
	*tab = nt;
	*cap = c;
	return 0;
}
