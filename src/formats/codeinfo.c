#include "formats/codeinfo.h"

#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define STACKMAP_COLUMNS 8
#define MAX_COLUMNS 8
#define VARINT_SMALL 11

/* An LSB-first bit stream over buf; positions are absolute bit indexes in buf. */
struct bits {
	const uint8_t *b;
	uint64_t nbits;
	uint64_t pos;
	bool bad;                   /* a read ran past the end */
};

static uint32_t get_bits(struct bits *r, unsigned n)
{
	uint64_t v = 0;

	if (r->bad || n > 32 || r->pos > r->nbits || n > r->nbits - r->pos) {
		r->bad = true;
		return 0;
	}
	for (unsigned i = 0; i < n; i++, r->pos++)
		v |= (uint64_t)((r->b[r->pos >> 3] >> (r->pos & 7)) & 1) << i;
	return (uint32_t)v;
}

static uint32_t get_varint(struct bits *r)
{
	uint32_t v = get_bits(r, 4);
	return v > VARINT_SMALL ? get_bits(r, (v - VARINT_SMALL) * 8) : v;
}

static void get_interleaved(struct bits *r, uint32_t *v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		v[i] = get_bits(r, 4);
	for (unsigned i = 0; i < n; i++)
		if (v[i] > VARINT_SMALL)
			v[i] = get_bits(r, (v[i] - VARINT_SMALL) * 8);
}

/* A bit table's header and where its rows start. */
struct table {
	uint32_t rows;
	uint32_t width[MAX_COLUMNS];
	uint32_t row_bits;
	uint64_t data;              /* bit position of row 0 */
};

static int table_header(struct bits *r, bool interleaved, unsigned ncols, struct table *t,
			struct err *err)
{
	uint32_t h[1 + MAX_COLUMNS] = { 0 };

	if (interleaved) {
		get_interleaved(r, h, 1 + ncols);
	} else {
		h[0] = get_varint(r);
		for (unsigned i = 0; h[0] && i < ncols; i++)
			h[1 + i] = get_varint(r);
	}
	t->rows = h[0];
	t->row_bits = 0;
	for (unsigned i = 0; i < ncols; i++) {
		if (h[1 + i] > 32)
			return err_set(err, -EINVAL, "CodeInfo bit table column %u is %u bits wide "
				       "(at most 32)", i, h[1 + i]);
		t->width[i] = h[1 + i];
		t->row_bits += h[1 + i];
	}
	t->data = r->pos;
	if (r->bad || (uint64_t)t->rows * t->row_bits > r->nbits - r->pos)
		return err_set(err, -EINVAL, "CodeInfo bit table of %u rows x %u bits runs past "
			       "the data", t->rows, t->row_bits);
	return 0;
}

/* Follows a deduplicated table reference: a varint d read at `at`; the table
 * is d bits before `at` (so it may precede the CodeInfo, never buf). */
static int follow_dedup(struct bits *r, struct bits *t, struct err *err)
{
	uint64_t at = r->pos;
	uint32_t d = get_varint(r);

	if (r->bad || d == 0 || d > at)
		return err_set(err, -EINVAL, "CodeInfo deduplicated table reference %u at bit %llu "
			       "points outside the data", d, (unsigned long long)at);
	*t = *r;
	t->pos = at - d;
	return 0;
}

struct header {
	uint32_t flags, code_size, frame, core, fp, dex_regs, table_flags;
	bool has_code_size;
};

static int read_header(unsigned ver, struct bits *r, struct header *h, struct err *err)
{
	uint32_t v[7];

	memset(h, 0, sizeof(*h));
	if (ver == 170) {
		h->frame = get_varint(r), h->core = get_varint(r);
		h->fp = get_varint(r), h->dex_regs = get_varint(r);
	} else if (ver >= 173 && ver <= 190) {
		get_interleaved(r, v, 6);
		h->flags = v[0], h->frame = v[1], h->core = v[2], h->fp = v[3];
		h->dex_regs = v[4], h->table_flags = v[5];
	} else if (ver >= 191 && ver <= 265) {
		get_interleaved(r, v, 7);
		h->flags = v[0], h->code_size = v[1], h->frame = v[2], h->core = v[3];
		h->fp = v[4], h->dex_regs = v[5], h->table_flags = v[6];
		h->has_code_size = true;
	} else {
		return err_set(err, -ENOTSUP, "CodeInfo of oat version %u is not supported "
			       "(170, 173-265 are)", ver);
	}
	if (r->bad)
		return err_set(err, -EINVAL, "CodeInfo header runs past the data");
	if (h->frame > (1u << 24))
		return err_set(err, -EINVAL, "CodeInfo frame size %u x 16 is implausible",
			       h->frame);
	return 0;
}

/* Positions a reader on the StackMap table header; *present false when absent. */
static int find_stack_maps(unsigned ver, struct bits *r, const struct header *h,
			   struct bits *t, bool *present, struct err *err)
{
	*present = true;
	if (ver == 170) {
		bool deduped = get_bits(r, 1);
		if (r->bad)
			return err_set(err, -EINVAL, "CodeInfo ends before its first bit table");
		if (deduped)
			return follow_dedup(r, t, err);
		*t = *r;
		return 0;
	}
	if (!(h->table_flags & 1)) {
		*present = false;
		return 0;
	}
	if (h->table_flags & 0x100)
		return follow_dedup(r, t, err);
	*t = *r;
	return 0;
}

static uint32_t cell(struct bits *r, const struct table *t, uint32_t row, unsigned col)
{
	uint64_t off = 0;

	for (unsigned i = 0; i < col; i++)
		off += t->width[i];
	r->pos = t->data + (uint64_t)row * t->row_bits + off;
	return get_bits(r, t->width[col]) + 0xffffffffu;
}

static int read_rows(struct bits *r, const struct table *t, enum code_arch arch,
		     struct art_stack_map **rows, struct err *err)
{
	unsigned scale = arch == CODE_ARCH_ARM64 ? 4 : 1;

	*rows = calloc(t->rows ? t->rows : 1, sizeof(**rows));
	if (!*rows)
		return err_set(err, -ENOMEM, "out of memory for %u stack maps", t->rows);
	for (uint32_t i = 0; i < t->rows; i++) {
		(*rows)[i].kind = (int32_t)cell(r, t, i, 0);
		(*rows)[i].native_pc = cell(r, t, i, 1) * scale;
		(*rows)[i].dex_pc = cell(r, t, i, 2);
	}
	if (r->bad) {
		free(*rows);
		*rows = NULL;
		return err_set(err, -EINVAL, "CodeInfo stack-map rows run past the data");
	}
	return 0;
}

int codeinfo_decode(unsigned ver, enum code_arch arch, const uint8_t *buf, size_t len,
		    size_t ci_off, struct art_frame_info *out, struct art_stack_map **rows,
		    uint32_t *n_rows, struct err *err)
{
	struct bits r = { .b = buf, .nbits = (uint64_t)len * 8, .pos = (uint64_t)ci_off * 8 };
	struct bits t;
	struct header h;
	struct table tab = { 0 };
	bool present;
	int rc;

	memset(out, 0, sizeof(*out));
	if (rows)
		*rows = NULL, *n_rows = 0;
	if (ci_off >= len)
		return err_set(err, -EINVAL, "CodeInfo offset %zu is outside the %zu-byte data",
			       ci_off, len);
	if ((rc = read_header(ver, &r, &h, err)))
		return rc;
	/* Deduplicated references count back from where they are read, so they work
	 * on absolute positions in buf too (the target may precede ci_off). */
	if ((rc = find_stack_maps(ver, &r, &h, &t, &present, err)))
		return rc;
	if (present && (rc = table_header(&t, ver != 170, STACKMAP_COLUMNS, &tab, err)))
		return rc;
	/* Every stack map has a native pc, so a table with rows has a pc column. */
	if (present && tab.rows && !tab.width[1])
		return err_set(err, -EINVAL, "CodeInfo stack-map table has %u rows but no native "
			       "pc column", tab.rows);
	out->frame_size = h.frame * 16;
	out->core_spill_mask = h.core;
	out->fp_spill_mask = h.fp;
	out->num_stack_maps = present ? tab.rows : 0;
	out->frameless_leaf = out->frame_size == 0;
	out->flags = h.flags;
	out->has_code_size = h.has_code_size;
	out->code_size = h.code_size;
	out->num_dex_registers = h.dex_regs;
	if (rows && present && (rc = read_rows(&t, &tab, arch, rows, err)))
		return rc;
	if (rows)
		*n_rows = present ? tab.rows : 0;
	return 0;
}

int oat_code_arch(const struct oat_file *o, enum code_arch *arch, struct err *err)
{
	switch (oat_info(o)->e_machine) {
	case EM_AARCH64:
		*arch = CODE_ARCH_ARM64;
		return 0;
	case EM_X86_64:
		*arch = CODE_ARCH_X86_64;
		return 0;
	default:
		return err_set(err, -ENOTSUP, "%s: frame info and exit sites are only decoded for "
			       "arm64 and x86_64 code, not %s", oat_name(o), oat_info(o)->isa);
	}
}

int oat_code_frame_info(const struct oat_file *o, const struct oat_code *c,
			struct art_frame_info *out, struct art_stack_map **rows, uint32_t *n_rows,
			struct err *err)
{
	const struct oat_info *in = oat_info(o);
	enum code_arch arch;
	uint64_t len;
	const uint8_t *b = oat_region(o, &len);
	int rc;

	if ((rc = oat_code_arch(o, &arch, err)))
		return rc;
	if (!c->codeinfo_offset)
		return err_set(err, -ENOENT, "%s: the method header before code offset 0x%x names "
			       "no CodeInfo", oat_name(o), c->code_offset);
	/* CodeInfo (and the tables it shares) live between the oat header and the code. */
	if (len > in->executable_offset)
		len = in->executable_offset;
	rc = codeinfo_decode(in->version, arch, b, len, c->codeinfo_offset, out, rows, n_rows,
			     err);
	if (rc) {
		err_prefix(err, "%s+0x%llx", oat_name(o),
			   (unsigned long long)(in->oatdata_off + c->codeinfo_offset));
		return rc;
	}
	if (out->has_code_size && out->code_size != c->code_size)
		return err_set(err, -EINVAL, "%s+0x%llx: CodeInfo code size %u differs from the "
			       "method's %u", oat_name(o),
			       (unsigned long long)(in->oatdata_off + c->codeinfo_offset),
			       out->code_size, c->code_size);
	return 0;
}
