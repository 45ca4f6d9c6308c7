/* perfetto_ann.c — see perfetto_ann.h. */
#include "sink/perfetto_ann.h"

#include <string.h>

#include "sink/perfetto_enc.h"
#include "sink/perfetto_proto.h"
#include "sink/stack_out.h"

/* String fields up to this long are interned (names, paths, method names
 * repeat); longer ones are written inline. */
#define PF_INTERN_STRING_MAX 128

/* Opens a DebugAnnotation with its (interned) name; the caller writes one
 * value and closes it (pe_close). */
static uint8_t *ann_open(struct pf_ann *a, const char *name, size_t n)
{
	uint8_t *at;
	uint64_t iid = pf_intern_stable(&a->t->cache, &a->t->names, a->defs, ID_ANN_NAMES, name, n);

	a->w = pe_open(a->w, TE_DEBUG, &at);
	a->w = iid ? pe_uint(a->w, DA_NAME_IID, iid) : pe_str(a->w, DA_NAME, name, n);
	return at;
}

void pf_ann_uint(struct pf_ann *a, const char *name, uint64_t v)
{
	uint8_t *at = ann_open(a, name, strlen(name));
	a->w = pe_close(at, pe_uint(a->w, DA_UINT, v));
}

void pf_ann_bool(struct pf_ann *a, const char *name, bool v)
{
	uint8_t *at = ann_open(a, name, strlen(name));
	a->w = pe_close(at, pe_uint(a->w, DA_BOOL, v));
}

size_t pf_ann_str_room(size_t n)
{
	return PF_ANN_FIXED + PE_STR_ROOM(n);
}

void pf_ann_str(struct pf_ann *a, const char *name, const char *s, size_t n, bool interned)
{
	uint8_t *at = ann_open(a, name, strlen(name));
	uint64_t iid = interned ? pf_intern_stable(&a->t->cache, &a->t->strings, a->defs,
						   ID_STRINGS, s, n) : 0;

	a->w = iid ? pe_uint(a->w, DA_STRING_IID, iid) : pe_str(a->w, DA_STRING, s, n);
	a->w = pe_close(at, a->w);
}

static uint8_t *put_hex(uint8_t *w, const char *s, size_t n)
{
	static const char digits[] = "0123456789abcdef";

	w = pe_varint(pe_tag(w, DA_STRING, WT_LEN), n * 2);
	for (size_t i = 0; i < n; i++) {
		*w++ = (uint8_t)digits[(unsigned char)s[i] >> 4];
		*w++ = (uint8_t)digits[(unsigned char)s[i] & 15];
	}
	return w;
}

size_t pf_field_room(const struct field *f, size_t *name_len)
{
	size_t v = PE_FIELD_MAX;

	*name_len = f->name ? strlen(f->name) : 1;
	switch (f->type) {
	case FIELD_STRING:
		v += PE_STR_ROOM(f->v.str.len);
		break;
	case FIELD_BYTES:
		v += 2 * (size_t)f->v.str.len;
		break;
	case FIELD_INT32_LIST:
		v += (size_t)f->v.i32s.n * (PE_NEST_MAX + PE_FIELD_MAX);
		break;
	case FIELD_INT64_LIST:
		v += (size_t)f->v.i64s.n * (PE_NEST_MAX + PE_FIELD_MAX);
		break;
	default:
		break;
	}
	return PE_NEST_MAX + PE_NEST_MAX + PE_STR_ROOM(*name_len) + v;
}

void pf_ann_field(struct pf_ann *a, const struct field *f, size_t name_len)
{
	uint8_t *at = ann_open(a, f->name ? f->name : "?", name_len);
	uint8_t *w = a->w;

	switch (f->type) {
	case FIELD_INT32:
		w = pe_uint(w, DA_INT, (uint64_t)(int64_t)f->v.i32);
		break;
	case FIELD_INT64:
		w = pe_uint(w, DA_INT, (uint64_t)f->v.i64);
		break;
	case FIELD_UINT64:
		w = pe_uint(w, DA_POINTER, f->v.u64);
		break;
	case FIELD_BOOL:
		w = pe_uint(w, DA_BOOL, f->v.b);
		break;
	case FIELD_STRING: {
		uint64_t iid = f->v.str.len <= PF_INTERN_STRING_MAX
			       ? pf_intern(&a->t->strings, a->defs, ID_STRINGS, f->v.str.ptr,
					   f->v.str.len) : 0;
		w = iid ? pe_uint(w, DA_STRING_IID, iid)
			: pe_str(w, DA_STRING, f->v.str.ptr, f->v.str.len);
		break;
	}
	case FIELD_BYTES:
		w = put_hex(w, f->v.str.ptr, f->v.str.len);
		break;
	case FIELD_FLOAT: {
		double d = f->v.f;
		uint64_t bits;
		memcpy(&bits, &d, sizeof(bits));
		w = pe_fixed64(w, DA_DOUBLE, bits);
		break;
	}
	case FIELD_INT32_LIST:
	case FIELD_INT64_LIST: {
		uint32_t n = f->type == FIELD_INT32_LIST ? f->v.i32s.n : f->v.i64s.n;
		for (uint32_t i = 0; i < n; i++) {
			uint8_t *e;
			int64_t v = f->type == FIELD_INT32_LIST ? f->v.i32s.ptr[i]
								: f->v.i64s.ptr[i];
			w = pe_open(w, DA_ARRAY, &e);
			w = pe_close(e, pe_uint(w, DA_INT, (uint64_t)v));
		}
		break;
	}
	}
	a->w = pe_close(at, w);
}

#define FRAME_LABEL_MAX 512

size_t pf_callstack_room(const struct stack_trace *st)
{
	size_t n = PE_NEST_MAX;

	for (size_t i = 0; i < st->n; i++)
		n += 2 * PE_NEST_MAX + PE_STR_ROOM(FRAME_LABEL_MAX) + PE_FIELD_MAX +
		     PE_STR_ROOM(st->frames[i].file ? strlen(st->frames[i].file) : 0);
	return n;
}

/* An interned message defined: its iid, then the fields f[1, n) (each
 * field's number in num, with num[n - 1] repeated for the rest); zero
 * values are unset and left out (iids start at 1), but a frame's rel_pc. */
static void put_def(struct wire_buf *d, uint32_t table, const uint32_t *num, size_t nums,
		    const uint64_t *f, size_t n)
{
	size_t at = wire_open(d, table);

	for (size_t i = 0; i < n; i++) {
		uint32_t k = num[i < nums ? i : nums - 1];
		if (f[i] || k == FR_REL_PC)
			wire_put_uint_field(d, k, f[i]);
	}
	wire_close(d, at);
}

/* The iid of the mapping of the frame's file (InternedData.mappings: its
 * path, interned in mapping_paths; none: a mapping without a path); 0 when
 * a table is full. */
static uint64_t mapping_iid(struct pf_ann *a, const char *file)
{
	static const uint32_t num[] = { MAP_IID, MAP_PATHS };
	size_t n = file ? strlen(file) : 0;
	uint64_t f[2] = { 0, n ? pf_intern(&a->t->paths, a->defs, ID_MAPPING_PATHS, file, n) : 0 };
	bool fresh;

	if (n && !f[1])
		return 0;
	f[0] = pf_intern_key(&a->t->maps, ID_MAPPINGS, file ? file : "", n, &fresh);
	if (fresh)
		put_def(a->defs, ID_MAPPINGS, num, 2, f, 2);
	return f[0];
}

/* The frame's iid (InternedData.frames): its label as the function name,
 * its file as its mapping with the offset in the file as rel_pc (trace
 * processor drops a frame without a mapping), its line; each interned.  0
 * when a table is full. */
static uint64_t frame_iid(struct pf_ann *a, const struct stack_frame *f, char *buf)
{
	static const uint32_t num[] = { FR_IID, FR_FUNCTION_NAME, FR_MAPPING, FR_REL_PC, FR_LINE };
	size_t n = stack_frame_label(f, buf, FRAME_LABEL_MAX);
	uint64_t v[5] = { 0, pf_intern(&a->t->funcs, a->defs, ID_FUNCTION_NAMES, buf, n),
			  mapping_iid(a, f->file), f->offset, f->line > 0 ? (uint64_t)f->line : 0 };
	bool fresh;

	if (!v[1] || !v[2])
		return 0;
	v[0] = pf_intern_key(&a->t->frames, ID_FRAMES, &v[1], sizeof(v) - sizeof(v[0]), &fresh);
	if (fresh)
		put_def(a->defs, ID_FRAMES, num, 5, v, 5);
	return v[0];
}

/* The stack's iid (InternedData.callstacks, keyed by its frames' iids,
 * outermost first); 0 when a table is full. */
static uint64_t callstack_iid(struct pf_ann *a, const struct stack_trace *st)
{
	static const uint32_t num[] = { CSK_IID, CSK_FRAME_IDS };
	uint64_t ids[1 + UNWIND_MAX_FRAMES];
	char buf[FRAME_LABEL_MAX];
	size_t n = st->n < UNWIND_MAX_FRAMES ? st->n : UNWIND_MAX_FRAMES;
	bool fresh;

	for (size_t i = 0; i < n; i++)
		if (!(ids[1 + i] = frame_iid(a, &st->frames[n - 1 - i], buf)))
			return 0;
	ids[0] = pf_intern_key(&a->t->stacks, ID_CALLSTACKS, &ids[1], n * sizeof(ids[0]), &fresh);
	if (fresh)
		put_def(a->defs, ID_CALLSTACKS, num, 2, ids, 1 + n);
	return ids[0];
}

/* The stack inline (InlineCallstack), when it could not be interned. */
static void inline_callstack(struct pf_ann *a, const struct stack_trace *st)

{
	uint8_t *at, *w = pe_open(a->w, TE_CALLSTACK, &at);
	char buf[FRAME_LABEL_MAX];

	/* outermost first, as InlineCallstack orders them */
	for (size_t i = st->n; i-- > 0;) {
		const struct stack_frame *f = &st->frames[i];
		uint8_t *fr;
		size_t n = stack_frame_label(f, buf, sizeof(buf));
		w = pe_open(w, CALLSTACK_FRAMES, &fr);
		w = pe_str(w, FRAME_FUNCTION, buf, n);
		if (f->file)
			w = pe_str(w, FRAME_SOURCE, f->file, strlen(f->file));
		if (f->line > 0)
			w = pe_uint(w, FRAME_LINE, (uint64_t)f->line);
		w = pe_close(fr, w);
	}
	a->w = pe_close(at, w);
}


void pf_callstack(struct pf_ann *a, const struct stack_trace *st)
{
	uint64_t iid = callstack_iid(a, st);

	if (iid)
		a->w = pe_uint(a->w, TE_CALLSTACK_IID, iid);
	else
		inline_callstack(a, st);
}
