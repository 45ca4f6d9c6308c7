#include "formats/oat_code.h"

#include <elf.h>
#include <errno.h>
#include <string.h>

#include "common/bytes.h"

#define OATCLASS_COUNT_VERSION 194  /* "Record number of methods in OatClass" */
#define CODEINFO_SIZE_VERSION 192   /* "Move code size from OatQuickMethodHeader to CodeInfo" */

static int damaged(const struct oat_file *o, struct err *err, uint64_t at, const char *what)
{
	return err_set(err, -EINVAL, "%s+0x%llx: %s", oat_name(o),
		       (unsigned long long)(oat_info(o)->oatdata_off + at), what);
}

static uint32_t popcount_bytes(const uint8_t *p, uint32_t nbytes)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < nbytes; i++)
		n += (uint32_t)__builtin_popcount(p[i]);
	return n;
}

int oat_class_get(const struct oat_file *o, uint32_t dex_i, uint32_t cdi, uint32_t n_methods,
		  struct oat_class *out, struct err *err)
{
	const struct oat_dex *d = oat_dex_at(o, dex_i);
	uint64_t size, p;
	const uint8_t *b = oat_region(o, &size);
	uint32_t off;

	memset(out, 0, sizeof(*out));
	if (!d)
		return err_set(err, -ENOENT, "%s: no dex file #%u", oat_name(o), dex_i);
	p = d->class_offsets_offset + 4ull * cdi;
	if (!rd32(b, size, p, &off) || !off)
		return damaged(o, err, p, "class offset table entry missing or zero");
	if (!rng_ok(size, off, 4))
		return damaged(o, err, p, "class offset points outside the oat data");
	out->offset = off;
	out->status = ld16(b + off);
	out->type = ld16(b + off + 2);
	if (out->status > 15 || out->type > OAT_CLASS_NONE_COMPILED)
		return damaged(o, err, off, "implausible OatClass (status > 15 or type > 2)");
	p = off + 4ull;
	out->num_methods = n_methods;
	if (out->type == OAT_CLASS_NONE_COMPILED)
		return 0;
	if (oat_info(o)->version >= OATCLASS_COUNT_VERSION) {
		if (!rd32(b, size, p, &out->num_methods))
			return damaged(o, err, p, "truncated OatClass");
		out->has_num_methods = true;
		p += 4;
		if (n_methods != OAT_UNKNOWN_COUNT && out->num_methods != n_methods)
			return err_set(err, -EINVAL,
				       "%s+0x%llx: OatClass of class_def %u counts %u methods but "
				       "the dex class_data has %u (oat/dex mismatch or unknown "
				       "layout)",
				       oat_name(o),
				       (unsigned long long)(oat_info(o)->oatdata_off + off), cdi,
				       out->num_methods, n_methods);
		if (out->type == OAT_CLASS_SOME_COMPILED)
			out->bitmap_bytes = ((out->num_methods + 31) / 32) * 4;
	} else if (out->type == OAT_CLASS_SOME_COMPILED) {
		if (!rd32(b, size, p, &out->bitmap_bytes))
			return damaged(o, err, p, "truncated OatClass bitmap size");
		p += 4;
	} else if (n_methods == OAT_UNKNOWN_COUNT) {
		return err_set(err, -ENOTSUP,
			       "%s: oat v%u OatClass records do not store their method count; "
			       "the dex file is needed", oat_name(o), oat_info(o)->version);
	}
	if (out->type == OAT_CLASS_SOME_COMPILED) {
		if (!rng_ok(size, p, out->bitmap_bytes))
			return damaged(o, err, p, "OatClass bitmap runs past the oat data");
		out->bitmap_at = p;
		out->n_offsets = popcount_bytes(b + p, out->bitmap_bytes);
		p += out->bitmap_bytes;
	} else {
		out->n_offsets = out->num_methods;
	}
	if (!rng_ok(size, p, 4ull * out->n_offsets))
		return damaged(o, err, p, "OatClass code offsets run past the oat data");
	out->methods_at = p;
	return 0;
}

/* Set bits of bm in bytes [0, byte): from the cursor when it has not passed
 * byte (then the cursor moves to byte), else from the start. */
static uint32_t slots_before_byte(const uint8_t *bm, uint32_t byte, struct oat_slot_cursor *cur)
{
	uint32_t n;

	if (!cur || cur->byte > byte)
		return popcount_bytes(bm, byte);
	n = cur->slots_before + popcount_bytes(bm + cur->byte, byte - cur->byte);
	cur->byte = byte;
	cur->slots_before = n;
	return n;
}

uint32_t oat_class_next_slotted(const struct oat_file *o, const struct oat_class *c,
				uint32_t from)
{
	uint64_t size, end = c->num_methods;
	const uint8_t *bm = oat_region(o, &size) + c->bitmap_at;

	if (c->type == OAT_CLASS_NONE_COMPILED)
		return c->num_methods;
	if (c->type != OAT_CLASS_SOME_COMPILED)
		return from < c->num_methods ? from : c->num_methods;
	if (end > (uint64_t)c->bitmap_bytes * 8)
		end = (uint64_t)c->bitmap_bytes * 8;
	for (uint64_t i = from; i < end;) {
		if (!bm[i / 8])
			i = (i / 8 + 1) * 8;
		else if (bm[i / 8] >> (i % 8) & 1)
			return (uint32_t)i;
		else
			i++;
	}
	return c->num_methods;
}

int oat_class_method(const struct oat_file *o, const struct oat_class *c, uint32_t idx,
		     struct oat_slot_cursor *cur, uint32_t *code_offset, enum oat_miss *why,
		     struct err *err)
{
	uint64_t size;
	const uint8_t *b = oat_region(o, &size);
	uint32_t slot = idx;

	*code_offset = 0;
	*why = OAT_COMPILED;
	if (c->type == OAT_CLASS_NONE_COMPILED) {
		*why = OAT_MISS_CLASS_NONE;
		return 0;
	}
	if (c->type == OAT_CLASS_SOME_COMPILED) {
		const uint8_t *bm = b + c->bitmap_at;
		if ((uint64_t)idx / 8 >= c->bitmap_bytes || !(bm[idx / 8] >> (idx % 8) & 1)) {
			*why = OAT_MISS_BITMAP;
			return 0;
		}
		/* The bitmap is u32 words, little-endian: bit i is byte i/8, bit i%8. */
		slot = slots_before_byte(bm, idx / 8, cur) + (uint32_t)__builtin_popcount(
			bm[idx / 8] & ((1u << (idx % 8)) - 1));
	}
	if (slot >= c->n_offsets)
		return err_set(err, -EINVAL,
			       "%s: method index %u is beyond the %u code offsets of OatClass "
			       "at 0x%x",
			       oat_name(o), idx, c->n_offsets, c->offset);
	*code_offset = ld32(b + c->methods_at + 4ull * slot);
	if (!*code_offset)
		*why = OAT_MISS_ZERO;
	return 0;
}

/* ---- method header and CodeInfo ---------------------------------------- */

static bool read_bits(const uint8_t *p, uint64_t len, uint64_t *pos, unsigned n, uint32_t *v)
{
	uint64_t r = 0;

	if (*pos + n > len * 8)
		return false;
	for (unsigned i = 0; i < n; i++, (*pos)++)
		r |= (uint64_t)((p[*pos >> 3] >> (*pos & 7)) & 1) << i;
	*v = (uint32_t)r;
	return true;
}

/* CodeInfo starts with 7 interleaved varints: 7 nibbles, then for each nibble
 * above 11 its real value in (nibble - 11) bytes.  The second is the size. */
bool oat_codeinfo_code_size(const uint8_t *ci, uint64_t len, uint32_t *size)
{
	uint32_t v[7];
	uint64_t pos = 0;

	for (int i = 0; i < 7; i++)
		if (!read_bits(ci, len, &pos, 4, &v[i]))
			return false;
	for (int i = 0; i < 7; i++)
		if (v[i] > 11 && !read_bits(ci, len, &pos, (v[i] - 11) * 8, &v[i]))
			return false;
	*size = v[1];
	return true;
}

enum hdr_kind { H_SIZE8, H_BIT30, H_BIT31, H_PLAIN, H_NKINDS };

static const char *const HDR_NAMES[H_NKINDS] = {
	"8-byte header with code size (v<=191)",
	"CodeInfo offset, bit 30 = is-code-info (v192-237)",
	"CodeInfo offset, bit 31 = is-code-info (v238)",
	"plain CodeInfo offset (v239+)",
};

/* Code size under one header interpretation; false when implausible. */
static bool try_header(const struct oat_file *o, enum hdr_kind k, uint32_t code, uint32_t *size,
		       uint32_t *ci_at)
{
	const struct oat_info *in = oat_info(o);
	uint64_t len;
	const uint8_t *b = oat_region(o, &len);
	uint32_t data = ld32(b + code - 4), ci;

	switch (k) {
	case H_SIZE8:
		*size = data & 0x7fffffffu;
		ci = ld32(b + code - 8);    /* vmap_table_offset: back from the code */
		*ci_at = ci && ci <= code - 8 && code - ci >= in->header_size ? code - ci : 0;
		return *size && (uint64_t)code + *size <= len;
	case H_BIT30:
		if (!(data & 0x40000000u))
			return false;
		ci = data & 0x3fffffffu;
		break;
	case H_BIT31:
		if (!(data & 0x80000000u))
			return false;
		ci = data & 0x7fffffffu;
		break;
	default:
		ci = data;
		break;
	}
	/* CodeInfo lives in .rodata: after the header, before the code. */
	if (!ci || ci > code || code - ci < in->header_size || code - ci >= in->executable_offset)
		return false;
	if (!oat_codeinfo_code_size(b + (code - ci), len - (code - ci), size))
		return false;
	*ci_at = code - ci;
	return *size && (uint64_t)code + *size <= len;
}

static void header_order(unsigned v, enum hdr_kind order[3], int *n)
{
	*n = 3;
	if (v < CODEINFO_SIZE_VERSION) {
		order[0] = H_SIZE8;
		*n = 1;
	} else if (v < 238) {
		order[0] = H_BIT30, order[1] = H_BIT31, order[2] = H_PLAIN;
	} else if (v == 238) {
		order[0] = H_BIT31, order[1] = H_PLAIN, order[2] = H_BIT30;
	} else {
		order[0] = H_PLAIN, order[1] = H_BIT31, order[2] = H_BIT30;
	}
}

int oat_code_at(const struct oat_file *o, uint32_t raw, struct oat_code *out, struct err *err)
{
	const struct oat_info *in = oat_info(o);
	enum hdr_kind order[3];
	int n;

	memset(out, 0, sizeof(*out));
	out->thumb = in->e_machine == EM_ARM && (raw & 1);
	out->code_offset = in->e_machine == EM_ARM ? raw & ~1u : raw;
	if (out->code_offset < in->executable_offset || out->code_offset >= in->oat_size ||
	    out->code_offset < 8)
		return err_set(err, -EINVAL,
			       "%s: code offset 0x%x lies outside .text [0x%x, 0x%llx) of the "
			       "oat data",
			       oat_name(o), raw, in->executable_offset,
			       (unsigned long long)in->oat_size);
	header_order(in->version, order, &n);
	for (int i = 0; i < n && !out->header_kind; i++)
		if (try_header(o, order[i], out->code_offset, &out->code_size,
			       &out->codeinfo_offset))
			out->header_kind = HDR_NAMES[order[i]];
	if (!out->header_kind)
		return err_set(err, -EINVAL,
			       "%s+0x%llx: the method header before code offset 0x%x decodes to no "
			       "plausible code size (tried %s)",
			       oat_name(o),
			       (unsigned long long)(in->oatdata_off + out->code_offset - 4),
			       out->code_offset, HDR_NAMES[order[0]]);
	out->vaddr = in->oatdata_vaddr + out->code_offset;
	if (elf_vaddr_to_offset(oat_elf(o), out->vaddr, &out->file_offset, &out->seg_flags) ||
	    !(out->seg_flags & PF_X))
		return err_set(err, -EINVAL,
			       "%s: code at vaddr 0x%llx is not in an executable PT_LOAD segment",
			       oat_name(o), (unsigned long long)out->vaddr);
	return 0;
}
