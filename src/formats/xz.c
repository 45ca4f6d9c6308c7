/* xz.c — .xz container + LZMA2 decoder (see xz.h), written from the format
 * descriptions (the .xz file format 1.2.x, LZMA2 chunk headers, the LZMA
 * range-coded symbols).
 *
 * The whole output is one growing buffer, which is also the LZMA dictionary:
 * a match copies from earlier output, so no circular window is needed, and a
 * distance is valid when it reaches no further back than the last dictionary
 * reset. */
#include "formats/xz.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/grow.h"

#define LIT_PROBS 0x300
#define POS_STATES_MAX 16
#define N_STATES 12
#define END_POS_MODEL 14
#define FULL_DIST 128
#define ALIGN_BITS 4

struct len_dec {
	uint16_t choice, choice2;
	uint16_t low[POS_STATES_MAX][8], mid[POS_STATES_MAX][8], high[256];
};

struct lzma {
	uint16_t is_match[N_STATES][POS_STATES_MAX], is_rep[N_STATES], is_rep_g0[N_STATES];
	uint16_t is_rep_g1[N_STATES], is_rep_g2[N_STATES], is_rep0_long[N_STATES][POS_STATES_MAX];
	uint16_t pos_slot[4][64], spec_pos[FULL_DIST - END_POS_MODEL], align[1 << ALIGN_BITS];
	struct len_dec len, rep_len;
	uint16_t lit[LIT_PROBS << 4];
	unsigned lc, lp, pb, state;
	uint32_t rep[4];
};

struct rc {
	const uint8_t *p;
	size_t pos, end;
	uint32_t range, code;
	bool bad;
};

struct xz {
	const char *name;
	const uint8_t *in;
	size_t len, pos;
	uint8_t *out;
	size_t out_len, out_cap, max_out;
	size_t dict_start;          /* output offset of the last dictionary reset */
	uint32_t crc32_tab[256];
	uint64_t crc64_tab[256];
	struct lzma lz;
	struct rc rc;
	struct err *err;
};

static void crc_tables(struct xz *x)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		uint64_t d = i;
		for (int k = 0; k < 8; k++) {
			c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1)));
			d = (d >> 1) ^ (0xC96C5795D7870F42ull & (0ull - (d & 1)));
		}
		x->crc32_tab[i] = c;
		x->crc64_tab[i] = d;
	}
}

static uint32_t crc32_of(const struct xz *x, const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;

	while (n--)
		c = x->crc32_tab[(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}

static uint64_t crc64_of(const struct xz *x, const uint8_t *p, size_t n)
{
	uint64_t c = ~0ull;

	while (n--)
		c = x->crc64_tab[(c ^ *p++) & 0xff] ^ (c >> 8);
	return ~c;
}

static int bad(struct xz *x, size_t at, const char *what)
{
	return err_set(x->err, -EINVAL, "%s: xz+0x%zx: %s", x->name, at, what);
}

/* A variable-length integer of the container (at most 9 bytes). */
static int rd_vli(struct xz *x, size_t end, uint64_t *v)
{
	size_t at = x->pos;

	*v = 0;
	for (unsigned i = 0; i < 9; i++) {
		if (x->pos >= end)
			return bad(x, at, "truncated integer");
		uint8_t b = x->in[x->pos++];
		*v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			return b == 0 && i ? bad(x, at, "integer not minimally encoded") : 0;
	}
	return bad(x, at, "integer longer than 9 bytes");
}

/* --- range decoder -------------------------------------------------------------- */

static void rc_norm(struct rc *r)
{
	if (r->range < (1u << 24)) {
		if (r->pos >= r->end) {
			r->bad = true;
			return;
		}
		r->range <<= 8;
		r->code = (r->code << 8) | r->p[r->pos++];
	}
}

static unsigned rc_bit(struct rc *r, uint16_t *prob)
{
	uint32_t bound;

	rc_norm(r);
	bound = (r->range >> 11) * *prob;
	if (r->code < bound) {
		r->range = bound;
		*prob = (uint16_t)(*prob + ((2048 - *prob) >> 5));
		return 0;
	}
	r->range -= bound;
	r->code -= bound;
	*prob = (uint16_t)(*prob - (*prob >> 5));
	return 1;
}

static uint32_t rc_tree(struct rc *r, uint16_t *probs, unsigned bits)
{
	uint32_t m = 1;

	for (unsigned i = 0; i < bits; i++)
		m = (m << 1) | rc_bit(r, &probs[m]);
	return m - (1u << bits);
}

static uint32_t rc_rtree(struct rc *r, uint16_t *probs, unsigned bits)
{
	uint32_t m = 1, v = 0;

	for (unsigned i = 0; i < bits; i++) {
		unsigned b = rc_bit(r, &probs[m]);
		m = (m << 1) | b;
		v |= b << i;
	}
	return v;
}

static uint32_t rc_direct(struct rc *r, unsigned bits)
{
	uint32_t v = 0;

	while (bits--) {
		rc_norm(r);
		r->range >>= 1;
		uint32_t b = r->code >= r->range;
		if (b)
			r->code -= r->range;
		v = (v << 1) | b;
	}
	return v;
}

/* --- LZMA ------------------------------------------------------------------------- */

static void lz_reset(struct lzma *l)
{
	uint16_t *p = (uint16_t *)l;
	size_t n = offsetof(struct lzma, lc) / sizeof(uint16_t);

	for (size_t i = 0; i < n; i++)
		p[i] = 1024;
	l->state = 0;
	memset(l->rep, 0, sizeof(l->rep));
}

static int out_room(struct xz *x, size_t n)
{
	if (n > x->max_out - x->out_len)
		return err_set(x->err, -EFBIG, "%s: xz: output larger than the %zu-byte limit",
			       x->name, x->max_out);
	if (x->out_len + n <= x->out_cap)
		return 0;
	size_t cap;
	/* doubling, but never past the limit (which out_len + n is within) */
	if (grow_cap(x->out_cap, x->out_len + n, 4096, 1, &cap) < 0 || cap > x->max_out)
		cap = x->max_out;
	if (resize_array(&x->out, cap) < 0)
		return err_set(x->err, -ENOMEM, "%s: xz: out of memory", x->name);
	x->out_cap = cap;
	return 0;
}

static uint32_t lz_len(struct rc *r, struct len_dec *d, unsigned ps)
{
	if (!rc_bit(r, &d->choice))
		return rc_tree(r, d->low[ps], 3);
	if (!rc_bit(r, &d->choice2))
		return 8 + rc_tree(r, d->mid[ps], 3);
	return 16 + rc_tree(r, d->high, 8);
}

static uint32_t lz_dist(struct rc *r, struct lzma *l, uint32_t len)
{
	uint32_t slot = rc_tree(r, l->pos_slot[len < 3 ? len : 3], 6), nb, d;

	if (slot < 4)
		return slot;
	nb = (slot >> 1) - 1;
	d = (2 | (slot & 1)) << nb;
	if (slot < END_POS_MODEL)
		return d + rc_rtree(r, l->spec_pos + d - slot - 1, nb);
	d += rc_direct(r, nb - ALIGN_BITS) << ALIGN_BITS;
	return d + rc_rtree(r, l->align, ALIGN_BITS);
}

static void lz_literal(struct xz *x, struct lzma *l, size_t dpos)
{
	uint8_t prev = x->out_len > x->dict_start ? x->out[x->out_len - 1] : 0;
	uint32_t idx = (uint32_t)(((dpos & ((1u << l->lp) - 1)) << l->lc) + (prev >> (8 - l->lc)));
	uint16_t *p = l->lit + LIT_PROBS * idx;
	uint32_t sym = 1;

	if (l->state >= 7) {
		uint32_t mb = x->out[x->out_len - l->rep[0] - 1], offs = 0x100;
		while (sym < 0x100) {
			mb <<= 1;
			uint32_t match_bit = mb & offs;
			uint32_t b = rc_bit(&x->rc, &p[offs + match_bit + sym]);
			sym = (sym << 1) | b;
			offs &= b ? match_bit : ~match_bit;
		}
	} else {
		while (sym < 0x100)
			sym = (sym << 1) | rc_bit(&x->rc, &p[sym]);
	}
	x->out[x->out_len++] = (uint8_t)sym;
	l->state = l->state < 4 ? 0 : l->state < 10 ? l->state - 3 : l->state - 6;
}

/* A match or rep: sets *len (bytes to copy) and rep[0]; false for a bad distance. */
static bool lz_match(struct xz *x, struct lzma *l, unsigned ps, uint32_t *len)
{
	struct rc *r = &x->rc;
	unsigned s = l->state;

	if (!rc_bit(r, &l->is_rep[s])) {
		l->rep[3] = l->rep[2], l->rep[2] = l->rep[1], l->rep[1] = l->rep[0];
		*len = lz_len(r, &l->len, ps);
		l->state = s < 7 ? 7 : 10;
		l->rep[0] = lz_dist(r, l, *len);
	} else if (!rc_bit(r, &l->is_rep_g0[s])) {
		if (!rc_bit(r, &l->is_rep0_long[s][ps])) {
			l->state = s < 7 ? 9 : 11;
			*len = 1;
			return true;
		}
		*len = lz_len(r, &l->rep_len, ps);
		l->state = s < 7 ? 8 : 11;
	} else {
		uint32_t d;
		if (!rc_bit(r, &l->is_rep_g1[s])) {
			d = l->rep[1];
		} else if (!rc_bit(r, &l->is_rep_g2[s])) {
			d = l->rep[2];
			l->rep[2] = l->rep[1];
		} else {
			d = l->rep[3];
			l->rep[3] = l->rep[2], l->rep[2] = l->rep[1];
		}
		l->rep[1] = l->rep[0];
		l->rep[0] = d;
		*len = lz_len(r, &l->rep_len, ps);
		l->state = s < 7 ? 8 : 11;
	}
	*len += 2;
	return true;
}

/* Decodes one LZMA chunk producing exactly usize bytes from in[pos, pos+csize). */
static int lz_chunk(struct xz *x, size_t usize, size_t csize)
{
	struct lzma *l = &x->lz;
	struct rc *r = &x->rc;
	size_t at = x->pos, goal = x->out_len + usize;
	int rc;

	if (csize < 5 || x->in[x->pos] != 0)
		return bad(x, at, "LZMA chunk does not start a range coder");
	*r = (struct rc){ .p = x->in, .pos = x->pos + 1, .end = x->pos + csize,
			  .range = 0xffffffffu };
	for (int i = 0; i < 4; i++)
		r->code = (r->code << 8) | x->in[r->pos++];
	if ((rc = out_room(x, usize)))
		return rc;
	while (x->out_len < goal && !r->bad) {
		size_t dpos = x->out_len - x->dict_start;
		unsigned ps = (unsigned)(dpos & ((1u << l->pb) - 1));
		uint32_t len;
		if (!rc_bit(r, &l->is_match[l->state][ps])) {
			if (l->state >= 7 && l->rep[0] >= dpos)
				return bad(x, r->pos, "LZMA literal refers before the dictionary");
			lz_literal(x, l, dpos);
			continue;
		}
		lz_match(x, l, ps, &len);
		if (r->bad)
			break;
		if (l->rep[0] >= dpos)
			return bad(x, r->pos, "LZMA match distance before the dictionary start");
		if (len > goal - x->out_len)
			return bad(x, r->pos, "LZMA match runs past the chunk's size");
		for (uint32_t i = 0; i < len; i++, x->out_len++)
			x->out[x->out_len] = x->out[x->out_len - l->rep[0] - 1];
	}
	rc_norm(r);
	if (r->bad)
		return bad(x, at, "LZMA chunk data runs past its compressed size");
	if (r->pos != at + csize || r->code != 0)
		return bad(x, at, "LZMA chunk does not end where its header says");
	x->pos += csize;
	return 0;
}

static int lz_props(struct xz *x, uint8_t b)
{
	struct lzma *l = &x->lz;

	if (b >= 9 * 5 * 5)
		return bad(x, x->pos - 1, "bad LZMA properties byte");
	l->lc = b % 9;
	l->lp = (b / 9) % 5;
	l->pb = b / 45;
	if (l->lc + l->lp > 4)
		return bad(x, x->pos - 1, "LZMA2 requires lc + lp <= 4");
	return 0;
}

/* Decodes LZMA2 chunks up to the end marker; in[] bounded by end. */
static int lzma2(struct xz *x, size_t end)
{
	bool need_dict = true, need_props = true;
	int rc;

	for (;;) {
		size_t at = x->pos;
		if (x->pos >= end)
			return bad(x, at, "LZMA2 data ends without an end marker");
		uint8_t ctl = x->in[x->pos++];
		if (ctl == 0)
			return 0;
		if (ctl == 1 || ctl >= 0xe0) {
			x->dict_start = x->out_len;
			need_dict = false;
		} else if (need_dict) {
			return bad(x, at, "first LZMA2 chunk does not reset the dictionary");
		}
		if (ctl < 0x80) {
			if (ctl > 2 || end - x->pos < 2)
				return bad(x, at, "bad LZMA2 control byte");
			size_t n = ((size_t)x->in[x->pos] << 8 | x->in[x->pos + 1]) + 1;
			x->pos += 2;
			if (n > end - x->pos)
				return bad(x, at, "uncompressed LZMA2 chunk runs past the block");
			if ((rc = out_room(x, n)))
				return rc;
			memcpy(x->out + x->out_len, x->in + x->pos, n);
			x->out_len += n, x->pos += n;
			continue;
		}
		if (end - x->pos < 4)
			return bad(x, at, "truncated LZMA2 chunk header");
		size_t us = ((size_t)(ctl & 0x1f) << 16 | (size_t)x->in[x->pos] << 8 |
			     x->in[x->pos + 1]) + 1;
		size_t cs = ((size_t)x->in[x->pos + 2] << 8 | x->in[x->pos + 3]) + 1;
		x->pos += 4;
		if (ctl >= 0xc0) {
			if (x->pos >= end || (rc = lz_props(x, x->in[x->pos++])))
				return rc ? rc : bad(x, at, "truncated LZMA2 chunk header");
			need_props = false;
		} else if (need_props) {
			return bad(x, at, "LZMA chunk without properties");
		}
		if (ctl >= 0xa0)
			lz_reset(&x->lz);
		if (cs > end - x->pos)
			return bad(x, at, "LZMA2 chunk runs past the block");
		if ((rc = lz_chunk(x, us, cs)))
			return rc;
	}
}

/* --- container -------------------------------------------------------------------- */

static size_t check_size(unsigned t)
{
	return t == 0 ? 0 : 4u << ((t - 1) / 3);
}

/* Parses a block header at x->pos (size byte != 0); leaves x->pos after it. */
static int block_header(struct xz *x, uint64_t *csize, uint64_t *usize)
{
	size_t at = x->pos, hs = ((size_t)x->in[at] + 1) * 4;
	uint64_t id, psz;
	int rc;

	if (hs > x->len - at)
		return bad(x, at, "block header runs past the input");
	if (crc32_of(x, x->in + at, hs - 4) != ld32(x->in + at + hs - 4))
		return bad(x, at, "block header CRC32 mismatch");
	uint8_t fl = x->in[at + 1];
	size_t end = at + hs - 4;
	x->pos = at + 2;
	if (fl & 0x3c)
		return err_set(x->err, -ENOTSUP, "%s: xz+0x%zx: reserved block flags set", x->name,
			       at);
	*csize = *usize = ~0ull;
	if ((fl & 0x40) && (rc = rd_vli(x, end, csize)))
		return rc;
	if ((fl & 0x80) && (rc = rd_vli(x, end, usize)))
		return rc;
	if ((fl & 3) != 0 || (rc = rd_vli(x, end, &id)))
		return (fl & 3) ? err_set(x->err, -ENOTSUP, "%s: xz+0x%zx: %u filters in a chain "
					  "(a BCJ/delta filter before LZMA2 is not supported)",
					  x->name, at, (fl & 3) + 1) : rc;
	if (id != 0x21)
		return err_set(x->err, -ENOTSUP, "%s: xz+0x%zx: filter 0x%llx is not LZMA2 (0x21)",
			       x->name, at, (unsigned long long)id);
	if ((rc = rd_vli(x, end, &psz)))
		return rc;
	if (psz != 1 || x->pos >= end || x->in[x->pos] > 40)
		return bad(x, at, "bad LZMA2 filter properties");
	for (x->pos++; x->pos < end; x->pos++)
		if (x->in[x->pos])
			return bad(x, x->pos, "non-zero block header padding");
	x->pos = end + 4;
	return 0;
}

static int verify_check(struct xz *x, unsigned ctype, size_t ustart)
{
	size_t n = check_size(ctype), un = x->out_len - ustart;
	const uint8_t *u = un ? x->out + ustart : (const uint8_t *)"";

	if (n > x->len - x->pos)
		return bad(x, x->pos, "truncated block check");
	if (ctype == 1 && crc32_of(x, u, un) != ld32(x->in + x->pos))
		return bad(x, x->pos, "CRC32 of the decoded block does not match");
	if (ctype == 4 && crc64_of(x, u, un) != ld64(x->in + x->pos))
		return bad(x, x->pos, "CRC64 of the decoded block does not match");
	x->pos += n;
	return 0;
}

struct idx_rec {
	uint64_t unpadded, usize;
};

/* One block: header, LZMA2 data, padding, check.  Records its sizes. */
static int block(struct xz *x, unsigned ctype, struct idx_rec *rec)
{
	size_t start = x->pos, ustart = x->out_len, dstart;
	uint64_t cs, us;
	int rc;

	if ((rc = block_header(x, &cs, &us)))
		return rc;
	dstart = x->pos;
	if ((rc = lzma2(x, cs != ~0ull && cs <= x->len - dstart ? dstart + cs : x->len)))
		return rc;
	if ((cs != ~0ull && cs != x->pos - dstart) || (us != ~0ull && us != x->out_len - ustart))
		return bad(x, start, "block sizes differ from its header");
	rec->unpadded = (x->pos - start) + check_size(ctype);
	rec->usize = x->out_len - ustart;
	while (x->pos & 3) {
		if (x->pos >= x->len || x->in[x->pos++])
			return bad(x, x->pos - 1, "bad block padding");
	}
	return verify_check(x, ctype, ustart);
}

/* The index: must list exactly the blocks decoded.  Leaves x->pos after it. */
static int index_check(struct xz *x, const struct idx_rec *recs, size_t n)
{
	size_t at = x->pos;
	uint64_t count, a, b;
	int rc;

	x->pos++;
	if ((rc = rd_vli(x, x->len, &count)))
		return rc;
	if (count != n)
		return bad(x, at, "index record count differs from the blocks decoded");
	for (size_t i = 0; i < n; i++) {
		if ((rc = rd_vli(x, x->len, &a)) || (rc = rd_vli(x, x->len, &b)))
			return rc;
		if (a != recs[i].unpadded || b != recs[i].usize)
			return bad(x, at, "index record differs from its block");
	}
	while (x->pos & 3) {
		if (x->pos >= x->len || x->in[x->pos++])
			return bad(x, at, "bad index padding");
	}
	if (x->len - x->pos < 4 || crc32_of(x, x->in + at, x->pos - at) != ld32(x->in + x->pos))
		return bad(x, at, "index CRC32 mismatch");
	x->pos += 4;
	return 0;
}

static int stream_header(struct xz *x, unsigned *ctype)
{
	static const uint8_t magic[6] = { 0xfd, '7', 'z', 'X', 'Z', 0 };
	size_t at = x->pos;

	if (x->len - at < 12 || memcmp(x->in + at, magic, 6))
		return bad(x, at, "not an xz stream (bad magic)");
	if (crc32_of(x, x->in + at + 6, 2) != ld32(x->in + at + 8))
		return bad(x, at, "stream header CRC32 mismatch");
	if (x->in[at + 6] || x->in[at + 7] > 15)
		return err_set(x->err, -ENOTSUP, "%s: xz+0x%zx: unsupported stream flags", x->name,
			       at);
	*ctype = x->in[at + 7];
	if (*ctype != 0 && *ctype != 1 && *ctype != 4)
		return err_set(x->err, -ENOTSUP, "%s: xz+0x%zx: check type %u is not supported "
			       "(only none, CRC32, CRC64)", x->name, at, *ctype);
	x->pos += 12;
	return 0;
}

static int stream(struct xz *x)
{
	struct idx_rec *recs = NULL;
	size_t n = 0, cap = 0, idx_at;
	unsigned ctype;
	int rc;

	if ((rc = stream_header(x, &ctype)))
		return rc;
	for (;;) {
		if (x->pos >= x->len) {
			rc = bad(x, x->pos, "stream ends before its index");
			break;
		}
		if (x->in[x->pos] == 0) {
			idx_at = x->pos;
			rc = index_check(x, recs, n);
			break;
		}
		if (grow_array(&recs, &cap, n + 1, 8) < 0) {
			rc = err_set(x->err, -ENOMEM, "%s: xz: out of memory", x->name);
			break;
		}
		if ((rc = block(x, ctype, &recs[n++])))
			break;
	}
	free(recs);
	if (rc)
		return rc;
	/* Footer: CRC32, backward size, flags (equal to the header's), "YZ". */
	size_t at = x->pos;
	if (x->len - at < 12 || x->in[at + 10] != 'Y' || x->in[at + 11] != 'Z')
		return bad(x, at, "bad stream footer");
	if (crc32_of(x, x->in + at + 4, 6) != ld32(x->in + at))
		return bad(x, at, "stream footer CRC32 mismatch");
	if (((uint64_t)ld32(x->in + at + 4) + 1) * 4 != at - idx_at || x->in[at + 8] != 0 ||
	    x->in[at + 9] != ctype)
		return bad(x, at, "stream footer differs from the header or index");
	x->pos += 12;
	return 0;
}

int xz_decode(const char *name, const uint8_t *in, size_t in_len, size_t max_out, uint8_t **out,
	      size_t *out_len, struct err *err)
{
	struct xz *x = calloc(1, sizeof(*x));
	int rc = 0;

	*out = NULL;
	*out_len = 0;
	if (!x)
		return err_set(err, -ENOMEM, "%s: xz: out of memory", name);
	*x = (struct xz){ .name = name, .in = in, .len = in_len, .max_out = max_out, .err = err };
	crc_tables(x);
	do {
		if ((rc = stream(x)))
			break;
		while (x->pos < x->len && x->len - x->pos >= 4 && !ld32(x->in + x->pos))
			x->pos += 4;    /* stream padding */
	} while (x->pos < x->len);
	if (!rc) {
		*out = x->out ? x->out : malloc(1);
		*out_len = x->out_len;
		if (!*out)
			rc = err_set(err, -ENOMEM, "%s: xz: out of memory", name);
	} else {
		free(x->out);
	}
	free(x);
	return rc;
}
