/* dex_debug.c — dex line-number programs (see dex_debug.h).
 *
 * Where a method's debug_info_item lives:
 *   standard dex: code_item+8 holds debug_info_off (from the data base);
 *   compact dex:  the header's debug-info offset table (cdex+0x74 pos,
 *                 +0x78 table offset, +0x7c base), indexed by method_idx:
 *                 table[idx / 16] points at a block starting with a 16-bit
 *                 big-endian presence mask, followed by one uleb128 delta per
 *                 present method; the offset is base + the deltas up to and
 *                 including this method's.  Offsets are from the data base. */
#include "formats/dex_debug.h"

#include <errno.h>
#include <stdlib.h>

#include "common/bytes.h"
#include "common/grow.h"

#define MAX_POSITIONS (1u << 20)

static int bad(const struct dex_file *d, struct err *err, uint64_t at, const char *what)
{
	return err_set(err, -EINVAL, "%s+0x%llx: debug info: %s", dex_name(d),
		       (unsigned long long)at, what);
}

static bool rd_u32leb(const struct dex_raw *r, uint64_t *pos, uint32_t *v)
{
	return rd_uleb(r->b, r->lim, pos, v);
}

static bool rd_s32leb(const struct dex_raw *r, uint64_t *pos, int32_t *v)
{
	uint32_t res = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*pos >= r->lim || shift > 28)
			return false;
		b = r->b[(*pos)++];
		res |= (uint32_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 32 && (b & 0x40))
		res |= ~0u << shift;
	*v = (int32_t)res;
	return true;
}

/* The compact dex debug-info offset of method_idx (0: none). */
static int cdex_debug_off(const struct dex_file *d, const struct dex_raw *r, uint32_t midx,
			  uint64_t *off, struct err *err)
{
	const uint8_t *h = r->b + r->hdr;
	uint64_t pos = ld32(h + 0x74), tab = ld32(h + 0x78), base = ld32(h + 0x7c);
	uint64_t block, at = r->data_base + pos + tab + 4ull * (midx / 16);
	uint32_t blk_off;
	uint16_t mask;

	*off = 0;
	if (!rd32(r->b, r->lim, at, &blk_off))
		return bad(d, err, at, "debug-info offset table lies outside the file");
	block = r->data_base + pos + blk_off;
	if (!rng_ok(r->lim, block, 2))
		return bad(d, err, block, "debug-info offset block lies outside the file");
	mask = (uint16_t)(r->b[block] << 8 | r->b[block + 1]);
	block += 2;
	if (!(mask & (1u << (midx % 16))))
		return 0;
	unsigned count = (unsigned)__builtin_popcount(mask & ((2u << (midx % 16)) - 1));
	uint64_t cur = base;
	while (count--) {
		uint32_t delta;
		if (!rd_u32leb(r, &block, &delta))
			return bad(d, err, block, "truncated debug-info offset block");
		cur += delta;
	}
	*off = cur;
	return 0;
}

/* Absolute position of m's debug_info_item; -ENOENT when it has none. */
static int debug_info_at(const struct dex_file *d, const struct dex_method *m, uint64_t *at,
			 struct err *err)
{
	struct dex_raw r;
	uint64_t off = 0;
	uint32_t v;
	int rc;

	dex_raw(d, &r);
	if (!m->code_off)
		return err_set(err, -ENOENT, "%s: method %u has no code", dex_name(d),
			       m->method_idx);
	if (r.compact) {
		if ((rc = cdex_debug_off(d, &r, m->method_idx, &off, err)))
			return rc;
	} else {
		uint64_t ci = r.data_base + m->code_off;
		if (!rd32(r.b, r.lim, ci + 8, &v))
			return bad(d, err, ci, "code_item lies outside the file");
		off = v;
	}
	if (!off)
		return err_set(err, -ENOENT, "%s: method %u has no debug info", dex_name(d),
			       m->method_idx);
	*at = r.data_base + off;
	if (*at >= r.lim)
		return bad(d, err, *at, "debug_info_item lies outside the file");
	return 0;
}

static int push(struct dex_position **v, size_t *n, size_t *cap, uint32_t pc, uint32_t line)
{
	if (grow_array(v, cap, *n + 1, 16) < 0)
		return -ENOMEM;
	(*v)[(*n)++] = (struct dex_position){ .dex_pc = pc, .line = line };
	return 0;
}

/* Skips one opcode's operands (opcodes 0x03..0x09 other than advances). */
static bool skip_operands(const struct dex_raw *r, uint64_t *pos, uint8_t op)
{
	static const uint8_t n_ops[10] = { 0, 0, 0, 3, 4, 1, 1, 0, 0, 1 };
	uint32_t v;

	for (unsigned i = 0; i < n_ops[op]; i++)
		if (!rd_u32leb(r, pos, &v))
			return false;
	return true;
}

/* Runs the state machine from pos; appends a position per special opcode. */
static int run_program(const struct dex_file *d, const struct dex_raw *r, uint64_t pos,
		       struct dex_position **out, size_t *n, struct err *err)
{
	uint32_t line, nparams, v, addr = 0;
	size_t cap = 0;
	int32_t dl;

	if (!rd_u32leb(r, &pos, &line) || !rd_u32leb(r, &pos, &nparams))
		return bad(d, err, pos, "truncated header");
	for (uint32_t i = 0; i < nparams; i++)
		if (!rd_u32leb(r, &pos, &v))
			return bad(d, err, pos, "truncated parameter names");
	for (;;) {
		if (pos >= r->lim)
			return bad(d, err, pos, "line program runs past the file");
		uint8_t op = r->b[pos++];
		if (op == 0x00)
			return 0;
		if (op == 0x01) {
			if (!rd_u32leb(r, &pos, &v))
				return bad(d, err, pos, "truncated DBG_ADVANCE_PC");
			addr += v;
		} else if (op == 0x02) {
			if (!rd_s32leb(r, &pos, &dl))
				return bad(d, err, pos, "truncated DBG_ADVANCE_LINE");
			line += (uint32_t)dl;
		} else if (op < 0x0a) {
			if (!skip_operands(r, &pos, op))
				return bad(d, err, pos, "truncated operand");
		} else {
			unsigned adj = op - 0x0a;
			line += (uint32_t)(-4 + (int)(adj % 15));
			addr += adj / 15;
			if (*n >= MAX_POSITIONS)
				return bad(d, err, pos, "more than 2^20 position entries");
			if (push(out, n, &cap, addr, line))
				return err_set(err, -ENOMEM, "out of memory");
		}
	}
}

int dex_method_positions(const struct dex_file *d, const struct dex_method *m,
			 struct dex_position **out, size_t *n, struct err *err)
{
	struct dex_raw r;
	uint64_t at;
	int rc;

	*out = NULL;
	*n = 0;
	if ((rc = debug_info_at(d, m, &at, err)))
		return rc;
	dex_raw(d, &r);
	if ((rc = run_program(d, &r, at, out, n, err))) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

int dex_method_line(const struct dex_file *d, const struct dex_method *m, uint32_t dex_pc,
		    uint32_t *line, struct err *err)
{
	struct dex_position *v;
	size_t n;
	int rc = dex_method_positions(d, m, &v, &n, err), found = 0;

	if (rc)
		return rc;
	for (size_t i = 0; i < n && v[i].dex_pc <= dex_pc; i++) {
		*line = v[i].line;
		found = 1;
	}
	free(v);
	if (!found)
		return err_set(err, -ENOENT, "%s: method %u: no line for dex pc 0x%x", dex_name(d),
			       m->method_idx, dex_pc);
	return 0;
}

const char *dex_class_source_file(const struct dex_file *d, uint32_t cdi)
{
	struct dex_class_def cd;

	if (dex_class_def_at(d, cdi, &cd) || cd.source_file_idx == DEX_NO_INDEX)
		return NULL;
	return dex_string(d, cd.source_file_idx);
}
