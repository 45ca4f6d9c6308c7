#include "formats/dex.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"

#define STD_HEADER 0x70
#define V41_HEADER 0x78
#define CDEX_HEADER 0x88
#define ENDIAN_TAG 0x12345678u

struct table {
	uint32_t size;
	uint64_t off;           /* absolute offset in base */
};

struct dex_file {
	char *name;
	const uint8_t *b;
	size_t lim;             /* reads must stay below this */
	uint64_t hdr;
	uint64_t data_base;     /* base of data offsets (see dex.h) */
	bool compact;
	char magic[8];
	uint32_t checksum, file_size;
	struct table strings, types, protos, methods, classes;
};

static bool in(const struct dex_file *d, uint64_t off, uint64_t n)
{
	return rng_ok(d->lim, off, n);
}

static int bad(const struct dex_file *d, struct err *err, const char *what, uint64_t off)
{
	return err_set(err, -EINVAL, "%s+0x%llx: %s", d->name, (unsigned long long)off, what);
}

static int check_magic(struct dex_file *d, struct err *err, uint64_t *hsize)
{
	const uint8_t *p = d->b + d->hdr;

	if (!rng_ok(d->lim, d->hdr, STD_HEADER))
		return err_set(err, -EINVAL, "%s: truncated dex header (0x70 bytes needed)",
			       d->name);
	if (memcmp(p, "dex\n", 4) == 0 && p[4] == '0' && p[5] >= '0' && p[5] <= '9' &&
	    p[6] >= '0' && p[6] <= '9' && p[7] == 0) {
		*hsize = (p[5] == '4' && p[6] >= '1') ? V41_HEADER : STD_HEADER;
	} else if (memcmp(p, "cdex001", 8) == 0) {
		d->compact = true;
		*hsize = CDEX_HEADER;
	} else {
		return err_set(err, -EINVAL,
			       "%s: no dex magic at offset 0x%llx (found %02x %02x %02x %02x)",
			       d->name, (unsigned long long)d->hdr, p[0], p[1], p[2], p[3]);
	}
	memcpy(d->magic, p, 7);
	if (!rng_ok(d->lim, d->hdr, *hsize))
		return err_set(err, -EINVAL, "%s: truncated dex header", d->name);
	if (ld32(p + 0x28) != ENDIAN_TAG)
		return bad(d, err, "dex endian tag is not 0x12345678", d->hdr + 0x28);
	return 0;
}

/* Sets the bases and the read limit for the three layouts. */
static int set_bases(struct dex_file *d, uint64_t hsize, uint64_t *ids_base, struct err *err)
{
	const uint8_t *p = d->b + d->hdr;

	d->checksum = ld32(p + 8);
	d->file_size = ld32(p + 0x20);
	*ids_base = d->hdr;
	d->data_base = d->hdr;
	if (d->compact) {
		uint32_t data_size = ld32(p + 0x68), data_off = ld32(p + 0x6c);
		if (!rng_ok(d->lim, d->hdr + data_off, data_size))
			return bad(d, err, "compact dex data section lies outside the file",
				   d->hdr + 0x6c);
		d->data_base = d->hdr + data_off;
		return 0;
	}
	if (hsize == V41_HEADER) {
		uint32_t csize = ld32(p + 0x70), hoff = ld32(p + 0x74);
		if (hoff > d->hdr || !rng_ok(d->lim, d->hdr - hoff, csize))
			return bad(d, err, "dex container size/offset lie outside the file",
				   d->hdr + 0x70);
		*ids_base = d->data_base = d->hdr - hoff;
		d->lim = d->hdr - hoff + csize;
		return 0;
	}
	if (!rng_ok(d->lim, d->hdr, d->file_size) || d->file_size < hsize)
		return err_set(err, -EINVAL,
			       "%s: dex file_size 0x%x exceeds the 0x%llx bytes available", d->name,
			       d->file_size, (unsigned long long)(d->lim - d->hdr));
	d->lim = d->hdr + d->file_size;
	return 0;
}

static int load_table(struct dex_file *d, uint64_t ids_base, uint32_t field, uint32_t esize,
		      struct table *t, struct err *err)
{
	const uint8_t *p = d->b + d->hdr;

	t->size = ld32(p + field);
	t->off = ids_base + ld32(p + field + 4);
	if (t->size && !in(d, t->off, (uint64_t)t->size * esize))
		return bad(d, err, "id table lies outside the dex file", d->hdr + field);
	return 0;
}

int dex_open(const char *name, const uint8_t *base, size_t base_len, uint64_t hdr_off,
	     struct dex_file **out, struct err *err)
{
	struct dex_file *d = calloc(1, sizeof(*d));
	uint64_t hsize, ids;
	int rc;

	*out = NULL;
	if (!d || !(d->name = strdup(name ? name : "(dex)"))) {
		free(d);
		return err_set(err, -ENOMEM, "out of memory");
	}
	d->b = base;
	d->lim = base_len;
	d->hdr = hdr_off;
	if ((rc = check_magic(d, err, &hsize)) || (rc = set_bases(d, hsize, &ids, err)) ||
	    (rc = load_table(d, ids, 0x38, 4, &d->strings, err)) ||
	    (rc = load_table(d, ids, 0x40, 4, &d->types, err)) ||
	    (rc = load_table(d, ids, 0x48, 12, &d->protos, err)) ||
	    (rc = load_table(d, ids, 0x58, 8, &d->methods, err)) ||
	    (rc = load_table(d, ids, 0x60, 32, &d->classes, err))) {
		dex_close(d);
		return rc;
	}
	*out = d;
	return 0;
}

void dex_close(struct dex_file *d)
{
	if (!d)
		return;
	free(d->name);
	free(d);
}

const char *dex_name(const struct dex_file *d) { return d->name; }
bool dex_is_compact(const struct dex_file *d) { return d->compact; }

void dex_raw(const struct dex_file *d, struct dex_raw *out)
{
	*out = (struct dex_raw){ .b = d->b, .lim = d->lim, .hdr = d->hdr,
				 .data_base = d->data_base, .compact = d->compact };
}
const char *dex_magic(const struct dex_file *d) { return d->magic; }
uint32_t dex_checksum(const struct dex_file *d) { return d->checksum; }
uint32_t dex_file_size(const struct dex_file *d) { return d->file_size; }
uint32_t dex_class_def_count(const struct dex_file *d) { return d->classes.size; }
uint32_t dex_method_id_count(const struct dex_file *d) { return d->methods.size; }

const char *dex_string(const struct dex_file *d, uint32_t idx)
{
	uint64_t pos;
	uint32_t utf16_len;

	if (idx >= d->strings.size)
		return NULL;
	pos = d->data_base + ld32(d->b + d->strings.off + 4ull * idx);
	if (pos >= d->lim || !rd_uleb(d->b, d->lim, &pos, &utf16_len))
		return NULL;
	if (str_at(d->b, d->lim, pos) < 0)
		return NULL;
	return (const char *)d->b + pos;
}

const char *dex_type_descriptor(const struct dex_file *d, uint32_t type_idx)
{
	if (type_idx >= d->types.size)
		return NULL;
	return dex_string(d, ld32(d->b + d->types.off + 4ull * type_idx));
}

/* Next UTF-16 code unit of a (M)UTF-8 string; a 4-byte UTF-8 sequence yields
 * its surrogate pair over two calls (*pending holds the low half). */
static uint32_t next_unit(const unsigned char **s, uint32_t *pending)
{
	const unsigned char *p = *s;
	uint32_t c;

	if (*pending) {
		c = *pending;
		*pending = 0;
		return c;
	}
	if (p[0] < 0x80) {
		*s = p + 1;
		return p[0];
	}
	if ((p[0] & 0xe0) == 0xc0 && p[1]) {
		*s = p + 2;
		return ((p[0] & 0x1fu) << 6) | (p[1] & 0x3fu);
	}
	if ((p[0] & 0xf0) == 0xe0 && p[1] && p[2]) {
		*s = p + 3;
		return ((p[0] & 0x0fu) << 12) | ((p[1] & 0x3fu) << 6) | (p[2] & 0x3fu);
	}
	if ((p[0] & 0xf8) == 0xf0 && p[1] && p[2] && p[3]) {
		c = ((p[0] & 0x07u) << 18) | ((p[1] & 0x3fu) << 12) | ((p[2] & 0x3fu) << 6) |
		    (p[3] & 0x3fu);
		*s = p + 4;
		c -= 0x10000;
		*pending = 0xdc00 | (c & 0x3ff);
		return 0xd800 | (c >> 10);
	}
	*s = p + 1;     /* invalid byte: compare it as itself */
	return p[0];
}

/* Compare as UTF-16 code-unit sequences: the order dex string ids are sorted in. */
static int cmp_utf16(const char *a, const char *b)
{
	const unsigned char *x = (const unsigned char *)a, *y = (const unsigned char *)b;
	uint32_t px = 0, py = 0;

	for (;;) {
		if ((!*x && !px) || (!*y && !py))
			return (*x || px) ? 1 : (*y || py) ? -1 : 0;
		uint32_t cx = next_unit(&x, &px), cy = next_unit(&y, &py);
		if (cx != cy)
			return cx < cy ? -1 : 1;
	}
}

int dex_find_string(const struct dex_file *d, const char *s, uint32_t *idx)
{
	uint32_t lo = 0, hi = d->strings.size;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const char *m = dex_string(d, mid);
		int c;
		if (!m)
			return -ENOENT;
		c = cmp_utf16(m, s);
		if (!c) {
			*idx = mid;
			return 0;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -ENOENT;
}

int dex_find_type(const struct dex_file *d, const char *descriptor, uint32_t *type_idx)
{
	uint32_t sidx, lo = 0, hi = d->types.size;

	if (dex_find_string(d, descriptor, &sidx))
		return -ENOENT;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint32_t v = ld32(d->b + d->types.off + 4ull * mid);
		if (v == sidx) {
			*type_idx = mid;
			return 0;
		}
		if (v < sidx)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -ENOENT;
}

int dex_find_class_def(const struct dex_file *d, const char *descriptor, uint32_t *cdi)
{
	uint32_t t;

	if (dex_find_type(d, descriptor, &t))
		return -ENOENT;
	/* class_defs are not sorted by type: a linear scan of u16 compares. */
	for (uint32_t i = 0; i < d->classes.size; i++) {
		if (ld16(d->b + d->classes.off + 32ull * i) == t) {
			*cdi = i;
			return 0;
		}
	}
	return -ENOENT;
}

int dex_class_def_at(const struct dex_file *d, uint32_t i, struct dex_class_def *out)
{
	const uint8_t *p;

	if (i >= d->classes.size)
		return -ENOENT;
	p = d->b + d->classes.off + 32ull * i;
	out->class_idx = ld16(p);
	out->access_flags = ld32(p + 4);
	out->superclass_idx = ld16(p + 8);
	if (out->superclass_idx == 0xffff)
		out->superclass_idx = DEX_NO_INDEX;
	out->class_data_off = ld32(p + 24);
	out->source_file_idx = ld32(p + 16);
	return 0;
}

int dex_method_id_at(const struct dex_file *d, uint32_t idx, struct dex_method_id *out)
{
	const uint8_t *p;

	if (idx >= d->methods.size)
		return -ENOENT;
	p = d->b + d->methods.off + 8ull * idx;
	out->class_idx = ld16(p);
	out->proto_idx = ld16(p + 2);
	out->name_idx = ld32(p + 4);
	return 0;
}

int dex_proto_at(const struct dex_file *d, uint32_t idx, struct dex_proto *out)
{
	const uint8_t *p;
	uint32_t poff;

	if (idx >= d->protos.size)
		return -ENOENT;
	p = d->b + d->protos.off + 12ull * idx;
	out->shorty_idx = ld32(p);
	out->return_type_idx = ld16(p + 4);
	poff = ld32(p + 8);
	out->n_params = 0;
	out->params_at = 0;
	if (poff) {
		uint64_t at = d->data_base + poff;
		uint32_t n;
		if (!rd32(d->b, d->lim, at, &n) || !in(d, at + 4, 2ull * n))
			return -EINVAL;
		out->n_params = n;
		out->params_at = at + 4;
	}
	return 0;
}

uint32_t dex_proto_param(const struct dex_file *d, const struct dex_proto *p, uint32_t i)
{
	if (i >= p->n_params)
		return DEX_NO_INDEX;
	return ld16(d->b + p->params_at + 2ull * i);
}

int dex_class_iter_init(const struct dex_file *d, uint32_t cdi, struct dex_class_iter *it,
			struct err *err)
{
	struct dex_class_def cd;
	uint32_t nsf, nif;

	memset(it, 0, sizeof(*it));
	it->d = d;
	if (dex_class_def_at(d, cdi, &cd))
		return err_set(err, -ENOENT, "%s: no class_def %u", d->name, cdi);
	if (!cd.class_data_off)
		return 0;
	it->pos = d->data_base + cd.class_data_off;
	if (!rd_uleb(d->b, d->lim, &it->pos, &nsf) || !rd_uleb(d->b, d->lim, &it->pos, &nif) ||
	    !rd_uleb(d->b, d->lim, &it->pos, &it->n_direct) ||
	    !rd_uleb(d->b, d->lim, &it->pos, &it->n_virtual))
		return bad(d, err, "truncated class_data header", d->data_base + cd.class_data_off);
	for (uint64_t k = 0; k < 2ull * ((uint64_t)nsf + nif); k++) {
		uint32_t skip;
		if (!rd_uleb(d->b, d->lim, &it->pos, &skip))
			return bad(d, err, "truncated class_data fields", it->pos);
	}
	return 0;
}

int dex_class_iter_next(struct dex_class_iter *it, struct dex_method *m, struct err *err)
{
	const struct dex_file *d = it->d;
	uint32_t diff;

	if ((uint64_t)it->i >= (uint64_t)it->n_direct + it->n_virtual)
		return 0;
	if (it->i == it->n_direct)
		it->midx = 0;   /* the virtual list restarts its index deltas */
	if (!rd_uleb(d->b, d->lim, &it->pos, &diff) ||
	    !rd_uleb(d->b, d->lim, &it->pos, &m->access_flags) ||
	    !rd_uleb(d->b, d->lim, &it->pos, &m->code_off))
		return bad(d, err, "truncated class_data method list", it->pos);
	it->midx += diff;
	if (it->midx >= d->methods.size)
		return bad(d, err, "class_data method index out of range", it->pos);
	m->method_idx = it->midx;
	m->index_in_class = it->i;
	m->is_direct = it->i < it->n_direct;
	it->i++;
	return 1;
}

bool dex_method_matches(const struct dex_file *d, uint32_t method_idx, const char *name,
			const char *ret, const char *const *params, size_t n)
{
	struct dex_method_id mid;
	struct dex_proto pr;
	const char *s;

	if (dex_method_id_at(d, method_idx, &mid) || !(s = dex_string(d, mid.name_idx)) ||
	    strcmp(s, name) != 0 || dex_proto_at(d, mid.proto_idx, &pr) || pr.n_params != n)
		return false;
	if (ret && (!(s = dex_type_descriptor(d, pr.return_type_idx)) || strcmp(s, ret) != 0))
		return false;
	for (uint32_t i = 0; i < n; i++) {
		s = dex_type_descriptor(d, dex_proto_param(d, &pr, i));
		if (!s || strcmp(s, params[i]) != 0)
			return false;
	}
	return true;
}

int dex_find_method(const struct dex_file *d, uint32_t cdi, const char *name, const char *ret,
		    const char *const *params, size_t n, struct dex_method *out)
{
	struct dex_class_iter it;
	struct err e;
	int rc;

	if (dex_class_iter_init(d, cdi, &it, &e))
		return -EINVAL;
	while ((rc = dex_class_iter_next(&it, out, &e)) > 0)
		if (dex_method_matches(d, out->method_idx, name, ret, params, n))
			return 0;
	return rc < 0 ? -EINVAL : -ENOENT;
}

static const char *primitive_name(char c)
{
	switch (c) {
	case 'V': return "void";
	case 'Z': return "boolean";
	case 'B': return "byte";
	case 'S': return "short";
	case 'C': return "char";
	case 'I': return "int";
	case 'J': return "long";
	case 'F': return "float";
	case 'D': return "double";
	default: return NULL;
	}
}

int dex_pretty_descriptor(const char *desc, char *buf, size_t size)
{
	size_t dims = 0, len = 0;
	const char *p = desc, *prim;
	int n;

	while (*p == '[')
		p++, dims++;
	if (*p == 'L') {
		const char *end = strchr(p, ';');
		size_t k = end ? (size_t)(end - p - 1) : strlen(p + 1);
		for (size_t i = 0; i < k; i++, len++)
			if (len + 1 < size)
				buf[len] = p[1 + i] == '/' ? '.' : p[1 + i];
		if (size)
			buf[len < size ? len : size - 1] = 0;
	} else if ((prim = primitive_name(*p)) && !p[1]) {
		n = snprintf(buf, size, "%s", prim);
		len = (size_t)n;
	} else {
		n = snprintf(buf, size, "%s", desc);   /* not a descriptor: show it raw */
		len = (size_t)n;
		dims = 0;
	}
	for (size_t i = 0; i < dims; i++, len += 2)
		if (len + 2 < size)
			memcpy(buf + len, "[]", 3);
	return (int)len;
}

/* Appends with snprintf semantics: *len counts what would have been written. */
static void put(char *buf, size_t size, size_t *len, const char *s, bool pretty)
{
	size_t room = *len < size ? size - *len : 0;
	char *at = room ? buf + *len : NULL;
	int n = pretty ? dex_pretty_descriptor(s, at, room) : snprintf(at, room, "%s", s);
	*len += (size_t)n;
}

int dex_pretty_method(const struct dex_file *d, uint32_t method_idx, char *buf, size_t size)
{
	struct dex_method_id mid;
	struct dex_proto pr;
	const char *ret, *cls, *name;
	size_t len = 0;

	if (dex_method_id_at(d, method_idx, &mid) || dex_proto_at(d, mid.proto_idx, &pr) ||
	    !(ret = dex_type_descriptor(d, pr.return_type_idx)) ||
	    !(cls = dex_type_descriptor(d, mid.class_idx)) || !(name = dex_string(d, mid.name_idx)))
		return -EINVAL;
	if (size)
		buf[0] = 0;
	put(buf, size, &len, ret, true);
	put(buf, size, &len, " ", false);
	put(buf, size, &len, cls, true);
	put(buf, size, &len, ".", false);
	put(buf, size, &len, name, false);
	put(buf, size, &len, "(", false);
	for (uint32_t i = 0; i < pr.n_params; i++) {
		const char *t = dex_type_descriptor(d, dex_proto_param(d, &pr, i));
		if (!t)
			return -EINVAL;
		if (i)
			put(buf, size, &len, ", ", false);
		put(buf, size, &len, t, true);
	}
	put(buf, size, &len, ")", false);
	return (int)len;
}
