/* pattern_dedup.c — one probe per call: the matches of every pattern and
 * every symbol table are indexed by the file they resolve to (device and
 * inode, so two paths of one file are one file) and the code offset.  A
 * second listing of the same name there (the symbol in .dynsym and .symtab,
 * or a method two patterns match) is dropped; a second name there (an alias,
 * a method sharing code) is kept but left out as the same code. */
#include "common/grow.h"
#include "common/zip_path.h"
#include "plan/pattern.h"
#include "plan/pattern_impl.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Open addressing over match indexes (idx + 1; 0: empty), keyed by a hash of
 * (file, offset) or (file, offset, name); equality is checked on the matches. */
struct idx_table {
	size_t *slot;
	size_t cap, n;
};

struct pattern_index {
	struct idx_table by_code;   /* OK matches by (file, offset) */
	struct idx_table by_name;   /* every match by (file, offset, name) */
};

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static const char *name_of(const struct pattern_match *x)
{
	return x->raw_name ? x->raw_name : x->name ? x->name : "";
}

static uint64_t code_hash(const struct pattern_match *x)
{
	return mix(mix(mix(1, x->dev), x->ino), x->file_offset);
}

static uint64_t name_hash(const struct pattern_match *x)
{
	uint64_t h = code_hash(x);

	for (const unsigned char *s = (const unsigned char *)name_of(x); *s; s++)
		h = (h ^ *s) * 0x100000001b3ull;
	return h;
}

static bool same_code(const struct pattern_match *a, const struct pattern_match *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->file_offset == b->file_offset;
}

static bool same_name(const struct pattern_match *a, const struct pattern_match *b)
{
	return same_code(a, b) && !strcmp(name_of(a), name_of(b));
}

static long table_find(const struct idx_table *t, const struct pattern_matches *m,
		       const struct pattern_match *x, uint64_t h,
		       bool (*eq)(const struct pattern_match *, const struct pattern_match *))
{
	if (!t->cap)
		return -1;
	for (size_t i = h & (t->cap - 1);; i = (i + 1) & (t->cap - 1)) {
		if (!t->slot[i])
			return -1;
		if (eq(&m->v[t->slot[i] - 1], x))
			return (long)(t->slot[i] - 1);
	}
}

static int table_add(struct idx_table *t, const struct pattern_matches *m, size_t idx,
		     uint64_t (*hash)(const struct pattern_match *))
{
	if (2 * (t->n + 1) > t->cap) {
		size_t cap, *s;
		if (grow_cap(t->cap, t->cap + 1, 256, sizeof(*s), &cap) < 0 ||
		    !(s = calloc(cap, sizeof(*s))))
			return -ENOMEM;
		for (size_t i = 0; i < t->cap; i++) {
			if (!t->slot[i])
				continue;
			size_t j = hash(&m->v[t->slot[i] - 1]) & (cap - 1);
			while (s[j])
				j = (j + 1) & (cap - 1);
			s[j] = t->slot[i];
		}
		free(t->slot);
		t->slot = s;
		t->cap = cap;
	}
	size_t j = hash(&m->v[idx]) & (t->cap - 1);
	while (t->slot[j])
		j = (j + 1) & (t->cap - 1);
	t->slot[j] = idx + 1;
	t->n++;
	return 0;
}

static uint64_t str_hash(uint64_t h, const char *s)
{
	for (const unsigned char *c = (const unsigned char *)s; *c; c++)
		h = (h ^ *c) * 0x100000001b3ull;
	return h;
}

void pattern_identify(struct pattern_match *x)
{
	char container[PATH_MAX];
	const char *entry;
	size_t clen;
	struct stat st;

	/* an APK's library: the archive's identity and the entry's name (two
	 * libraries of one APK count their offsets each from its own start) */
	if (x->path && zip_path_split(x->path, &clen, &entry, NULL) > 0 &&
	    clen < sizeof(container)) {
		memcpy(container, x->path, clen);
		container[clen] = '\0';
		if (stat(container, &st) == 0) {
			x->dev = (uint64_t)st.st_dev;
			x->ino = str_hash((uint64_t)st.st_ino * 0x9e3779b97f4a7c15ull, entry);
			return;
		}
	}
	if (x->path && stat(x->path, &st) == 0) {
		x->dev = (uint64_t)st.st_dev;
		x->ino = (uint64_t)st.st_ino;
		return;
	}
	x->dev = 0;   /* not stat-able: the path is its identity */
	x->ino = 0;
	for (const unsigned char *s = (const unsigned char *)(x->path ? x->path : ""); *s; s++)
		x->ino = (x->ino ^ *s) * 0x100000001b3ull;
}

int pattern_dedup_check(struct pattern_matches *m, struct pattern_match *x)
{
	struct pattern_index *ix = m->index;
	char d[700];
	long prev;

	if (!ix && !(ix = m->index = calloc(1, sizeof(*ix))))
		return -ENOMEM;
	if (table_find(&ix->by_name, m, x, name_hash(x), same_name) >= 0)
		return 1;
	if (x->left_out != MATCH_OK || (!x->file_offset && x->is_java))
		return 0;
	if ((prev = table_find(&ix->by_code, m, x, code_hash(x), same_code)) < 0)
		return 0;
	if (x->is_java)
		snprintf(d, sizeof(d), "same code as %s", m->v[prev].name);
	else
		snprintf(d, sizeof(d), "alias of %s (same address)", name_of(&m->v[prev]));
	free(x->left_out_detail);
	x->left_out = MATCH_SAME_CODE;
	return (x->left_out_detail = strdup(d)) ? 0 : -ENOMEM;
}

int pattern_dedup_add(struct pattern_matches *m, size_t idx)
{
	struct pattern_index *ix = m->index;
	const struct pattern_match *x = &m->v[idx];

	if (table_add(&ix->by_name, m, idx, name_hash))
		return -ENOMEM;
	if (x->left_out == MATCH_OK && table_add(&ix->by_code, m, idx, code_hash))
		return -ENOMEM;
	return 0;
}

void pattern_dedup_free(struct pattern_matches *m)
{
	if (!m->index)
		return;
	free(m->index->by_code.slot);
	free(m->index->by_name.slot);
	free(m->index);
	m->index = NULL;
}
