#include "sys/propfile.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "common/bytes.h"

/* ---- property areas ---- */

#define TRIE_NODE_SIZE 20u          /* namelen, prop, left, right, children */
#define PROP_INFO_SIZE 96u          /* serial + value[92] */
#define DIRTY_BACKUP_OFF TRIE_NODE_SIZE
#define SERIAL_DIRTY 1u
#define SERIAL_LONG (1u << 16)
#define LONG_OFFSET_FIELD 60u       /* serial (4) + legacy message (56) */
#define READ_RETRIES 16

struct area {
	const uint8_t *d;   /* the data region, after the header */
	size_t len;
	const char *label;
	size_t steps;       /* trie nodes visited; bounds walks through cyclic offsets */
};

static int area_bad(const struct area *a, struct err *err, uint64_t off, const char *what)
{
	return err_set(err, -EBADMSG, "%s+0x%llx: corrupt property area: %s", a->label,
		       (unsigned long long)(off + PROP_AREA_HEADER_SIZE), what);
}

/* The trie node at data offset off, with its name bounds-checked. */
static int area_node(struct area *a, uint32_t off, uint32_t *namelen, struct err *err)
{
	/* A well-formed walk visits each node at most once; more steps than
	 * there is room for nodes means the offsets loop. */
	if (++a->steps > a->len / TRIE_NODE_SIZE + 1)
		return area_bad(a, err, off, "trie offsets form a cycle");
	if (off % 4 || !rng_ok(a->len, off, TRIE_NODE_SIZE))
		return area_bad(a, err, off, "trie node offset out of bounds or misaligned");
	*namelen = ld32(a->d + off);
	if (!rng_ok(a->len, (uint64_t)off + TRIE_NODE_SIZE, (uint64_t)*namelen + 1))
		return area_bad(a, err, off, "trie node name runs past the end");
	return 0;
}

static uint32_t node_field(const struct area *a, uint32_t node, unsigned idx)
{
	return ld32(a->d + node + 4u * idx);   /* 1 prop, 2 left, 3 right, 4 children */
}

enum { NODE_PROP = 1, NODE_LEFT, NODE_RIGHT, NODE_CHILDREN };

static int cmp_piece(const char *s, uint32_t n, const uint8_t *name, uint32_t namelen)
{
	if (n != namelen)
		return n < namelen ? -1 : 1;
	return memcmp(s, name, n);
}

/* Among the siblings rooted at off, the node named s[0..n). */
static int area_find_sibling(struct area *a, uint32_t off, const char *s, uint32_t n,
			     uint32_t *found, struct err *err)
{
	for (;;) {
		uint32_t namelen;
		int rc = area_node(a, off, &namelen, err), c;
		if (rc < 0)
			return rc;
		c = cmp_piece(s, n, a->d + off + TRIE_NODE_SIZE, namelen);
		if (c == 0) {
			*found = off;
			return 0;
		}
		off = node_field(a, off, c < 0 ? NODE_LEFT : NODE_RIGHT);
		if (off == 0)
			return -ENOENT;
	}
}

/* The prop_info offset for name, or -ENOENT. */
static int area_lookup(struct area *a, const char *name, uint32_t *info, struct err *err)
{
	uint32_t node = 0, namelen;
	const char *piece = name;
	int rc = area_node(a, 0, &namelen, err);

	if (rc < 0)
		return rc;
	for (;;) {
		const char *dot = strchr(piece, '.');
		size_t n = dot ? (size_t)(dot - piece) : strlen(piece);
		uint32_t children = node_field(a, node, NODE_CHILDREN);

		if (n == 0 || n > UINT32_MAX || children == 0)
			return -ENOENT;
		rc = area_find_sibling(a, children, piece, (uint32_t)n, &node, err);
		if (rc < 0)
			return rc;
		if (!dot)
			break;
		piece = dot + 1;
	}
	*info = node_field(a, node, NODE_PROP);
	return *info ? 0 : -ENOENT;
}

static uint32_t load_serial(const uint8_t *p)
{
	uint32_t v;

	/* init updates values in place; the serial is the seqlock word. */
	if (((uintptr_t)p & 3) == 0)
		return __atomic_load_n((const uint32_t *)(const void *)p, __ATOMIC_ACQUIRE);
	memcpy(&v, p, sizeof(v));
	return v;
}

static int copy_out(const uint8_t *src, size_t n, char *out, size_t size)
{
	if (n >= size)
		return -ERANGE;
	memcpy(out, src, n);
	out[n] = '\0';
	return 0;
}

static int read_long_value(const struct area *a, uint32_t info, char *out, size_t size,
			   struct err *err)
{
	uint64_t off = (uint64_t)info + ld32(a->d + info + LONG_OFFSET_FIELD);
	const uint8_t *nul;

	if (off >= a->len)
		return area_bad(a, err, info, "long value offset out of bounds");
	nul = memchr(a->d + off, '\0', a->len - off);
	if (!nul)
		return area_bad(a, err, off, "long value runs past the end");
	return copy_out(a->d + off, (size_t)(nul - (a->d + off)), out, size);
}

/* The short-value read protocol: value length lives in the serial; while the
 * dirty bit is set the old value is in the backup area; a serial that changed
 * during the copy means start again. */
static int read_short_value(const struct area *a, uint32_t info, char *out, size_t size,
			    struct err *err)
{
	char tmp[PROP_VALUE_MAX];

	if (!rng_ok(a->len, DIRTY_BACKUP_OFF, PROP_VALUE_MAX))
		return area_bad(a, err, DIRTY_BACKUP_OFF, "no room for the dirty backup area");
	for (int i = 0; i < READ_RETRIES; i++) {
		uint32_t serial = load_serial(a->d + info);
		uint32_t n = serial >> 24;
		const uint8_t *src = (serial & SERIAL_DIRTY) ? a->d + DIRTY_BACKUP_OFF
							     : a->d + info + 4;
		if (n >= PROP_VALUE_MAX)
			return area_bad(a, err, info, "value length in the serial exceeds 91");
		memcpy(tmp, src, n);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (serial == load_serial(a->d + info))
			return copy_out((const uint8_t *)tmp, n, out, size);
	}
	return err_set(err, -EAGAIN, "%s: property value kept changing while being read",
		       a->label);
}

static int area_read_info(const struct area *a, uint32_t info, const char *name, char *out,
			  size_t size, struct err *err)
{
	size_t n = strlen(name);

	if (info % 4 || !rng_ok(a->len, info, PROP_INFO_SIZE))
		return area_bad(a, err, info, "prop_info offset out of bounds or misaligned");
	/* The record repeats the full name: a cheap check that the trie led
	 * to the right place. */
	if (!rng_ok(a->len, (uint64_t)info + PROP_INFO_SIZE, n + 1) ||
	    memcmp(a->d + info + PROP_INFO_SIZE, name, n + 1) != 0)
		return area_bad(a, err, info,
				"prop_info does not carry the name it is filed under");
	if (load_serial(a->d + info) & SERIAL_LONG)
		return read_long_value(a, info, out, size, err);
	return read_short_value(a, info, out, size, err);
}

int prop_area_get(const uint8_t *buf, size_t len, const char *label, const char *name,
		  char *out, size_t size, struct err *err)
{
	struct area a = { .label = label };
	uint32_t info;
	int rc;

	if (len < PROP_AREA_HEADER_SIZE)
		return err_set(err, -EBADMSG, "%s: %zu bytes, too short for a property area "
			       "(header is %u)", label, len, PROP_AREA_HEADER_SIZE);
	if (ld32(buf + 8) != PROP_AREA_MAGIC || ld32(buf + 12) != PROP_AREA_VERSION)
		return err_set(err, -EBADMSG, "%s: not a property area: magic 0x%08x version "
			       "0x%08x, expected 0x%08x 0x%08x", label, ld32(buf + 8),
			       ld32(buf + 12), PROP_AREA_MAGIC, PROP_AREA_VERSION);
	a.d = buf + PROP_AREA_HEADER_SIZE;
	a.len = len - PROP_AREA_HEADER_SIZE;
	rc = area_lookup(&a, name, &info, err);
	if (rc < 0)
		return rc;
	return area_read_info(&a, info, name, out, size, err);
}

/* ---- property_info ---- */

#define PI_HEADER_SIZE 24u
#define PI_NODE_SIZE 28u
#define PI_ENTRY_SIZE 16u
#define NO_INDEX 0xffffffffu

struct pinfo {
	const uint8_t *b;
	size_t len;
	const char *label;
};

struct pi_node {
	uint32_t entry, n_children, children, n_prefixes, prefixes, n_exact, exact;
};

struct pi_entry {
	uint32_t name, namelen, context;
};

static int pi_bad(const struct pinfo *p, struct err *err, uint64_t off, const char *what)
{
	return err_set(err, -EBADMSG, "%s+0x%llx: corrupt property_info: %s", p->label,
		       (unsigned long long)off, what);
}

static int pi_string(const struct pinfo *p, uint32_t off, const char **s, struct err *err)
{
	if (off >= p->len || !memchr(p->b + off, '\0', p->len - off))
		return pi_bad(p, err, off, "string out of bounds or unterminated");
	*s = (const char *)p->b + off;
	return 0;
}

/* Element i of the u32 array at off holding n elements. */
static int pi_array(const struct pinfo *p, uint64_t off, uint32_t n, uint32_t i, uint32_t *v,
		    struct err *err)
{
	if (i >= n || !rng_ok(p->len, off, (uint64_t)n * 4))
		return pi_bad(p, err, off, "offset array out of bounds");
	*v = ld32(p->b + off + 4ull * i);
	return 0;
}

static int pi_read_node(const struct pinfo *p, uint32_t off, struct pi_node *n, struct err *err)
{
	if (!rng_ok(p->len, off, PI_NODE_SIZE))
		return pi_bad(p, err, off, "trie node out of bounds");
	n->entry = ld32(p->b + off);
	n->n_children = ld32(p->b + off + 4);
	n->children = ld32(p->b + off + 8);
	n->n_prefixes = ld32(p->b + off + 12);
	n->prefixes = ld32(p->b + off + 16);
	n->n_exact = ld32(p->b + off + 20);
	n->exact = ld32(p->b + off + 24);
	return 0;
}

static int pi_read_entry(const struct pinfo *p, uint32_t off, struct pi_entry *e,
			 struct err *err)
{
	if (!rng_ok(p->len, off, PI_ENTRY_SIZE))
		return pi_bad(p, err, off, "property entry out of bounds");
	e->name = ld32(p->b + off);
	e->namelen = ld32(p->b + off + 4);
	e->context = ld32(p->b + off + 8);
	return 0;
}

/* Entry i of a node's prefix or exact-match list. */
static int pi_list_entry(const struct pinfo *p, uint32_t arr, uint32_t n, uint32_t i,
			 struct pi_entry *e, struct err *err)
{
	uint32_t off;
	int rc = pi_array(p, arr, n, i, &off, err);

	return rc < 0 ? rc : pi_read_entry(p, off, e, err);
}

/* Prefixes are stored longest first: the first that starts rest wins. */
static int pi_match_prefix(const struct pinfo *p, const struct pi_node *node, const char *rest,
			   uint32_t *ctx, struct err *err)
{
	size_t restlen = strlen(rest);

	for (uint32_t i = 0; i < node->n_prefixes; i++) {
		struct pi_entry e;
		int rc = pi_list_entry(p, node->prefixes, node->n_prefixes, i, &e, err);
		if (rc < 0)
			return rc;
		if (e.namelen > restlen)
			continue;
		if (!rng_ok(p->len, e.name, e.namelen))
			return pi_bad(p, err, e.name, "prefix name out of bounds");
		if (memcmp(p->b + e.name, rest, e.namelen) == 0) {
			*ctx = e.context;
			return 0;
		}
	}
	return 0;
}

static int pi_match_exact(const struct pinfo *p, const struct pi_node *node, const char *rest,
			  uint32_t *ctx, bool *hit, struct err *err)
{
	*hit = false;
	for (uint32_t i = 0; i < node->n_exact; i++) {
		struct pi_entry e;
		const char *s;
		int rc = pi_list_entry(p, node->exact, node->n_exact, i, &e, err);
		if (rc < 0 || (rc = pi_string(p, e.name, &s, err)) < 0)
			return rc;
		if (strcmp(s, rest) == 0) {
			*ctx = e.context;
			*hit = true;
			return 0;
		}
	}
	return 0;
}

/* The child of node named piece[0..n), if any (*found stays 0 otherwise). */
static int pi_find_child(const struct pinfo *p, const struct pi_node *node, const char *piece,
			 size_t n, uint32_t *found, struct err *err)
{
	*found = 0;
	for (uint32_t i = 0; i < node->n_children; i++) {
		struct pi_node child;
		struct pi_entry e;
		uint32_t off;
		const char *s;
		int rc = pi_array(p, node->children, node->n_children, i, &off, err);
		if (rc < 0 || (rc = pi_read_node(p, off, &child, err)) < 0 ||
		    (rc = pi_read_entry(p, child.entry, &e, err)) < 0 ||
		    (rc = pi_string(p, e.name, &s, err)) < 0)
			return rc;
		if (strncmp(s, piece, n) == 0 && s[n] == '\0') {
			*found = off;
			return 0;
		}
	}
	return 0;
}

/* The bionic lookup: walk the trie one dot-separated piece at a time; the
 * deepest node context or prefix seen is the answer unless an exact match at
 * the last node overrides it.  Depth is bounded by the dots in name. */
static int pi_lookup(const struct pinfo *p, uint32_t root, const char *name, uint32_t *ctx,
		     struct err *err)
{
	const char *rest = name;
	uint32_t off = root;
	struct pi_node node;
	struct pi_entry e;
	bool hit;
	int rc;

	*ctx = NO_INDEX;
	for (;;) {
		const char *dot = strchr(rest, '.');
		if ((rc = pi_read_node(p, off, &node, err)) < 0 ||
		    (rc = pi_read_entry(p, node.entry, &e, err)) < 0)
			return rc;
		if (e.context != NO_INDEX)
			*ctx = e.context;
		if ((rc = pi_match_prefix(p, &node, rest, ctx, err)) < 0)
			return rc;
		if (!dot)
			break;
		if ((rc = pi_find_child(p, &node, rest, (size_t)(dot - rest), &off, err)) < 0)
			return rc;
		if (!off)
			break;
		rest = dot + 1;
	}
	if ((rc = pi_match_exact(p, &node, rest, ctx, &hit, err)) < 0 || hit)
		return rc;
	return pi_match_prefix(p, &node, rest, ctx, err);
}

static bool safe_file_name(const char *s)
{
	return s[0] && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

int prop_info_context(const uint8_t *buf, size_t len, const char *label, const char *name,
		      const char **ctx, struct err *err)
{
	struct pinfo p = { .b = buf, .len = len, .label = label };
	uint32_t min_version, size, contexts, root, n_contexts, idx, str;
	int rc;

	if (len < PI_HEADER_SIZE)
		return pi_bad(&p, err, 0, "shorter than its 24-byte header");
	min_version = ld32(buf + 4);
	size = ld32(buf + 8);
	contexts = ld32(buf + 12);
	root = ld32(buf + 20);
	if (min_version > 1)
		return err_set(err, -EBADMSG, "%s: property_info needs a reader of version %u "
			       "(this one reads version 1)", label, min_version);
	if (size != len)
		return pi_bad(&p, err, 8, "size field disagrees with the file size");
	if (!rd32(buf, len, contexts, &n_contexts))
		return pi_bad(&p, err, contexts, "context table out of bounds");
	rc = pi_lookup(&p, root, name, &idx, err);
	if (rc < 0)
		return rc;
	if (idx == NO_INDEX)
		return -ENOENT;
	if ((rc = pi_array(&p, (uint64_t)contexts + 4, n_contexts, idx, &str, err)) < 0 ||
	    (rc = pi_string(&p, str, ctx, err)) < 0)
		return rc;
	if (!safe_file_name(*ctx))
		return pi_bad(&p, err, str, "context is not a plain file name");
	return 0;
}
