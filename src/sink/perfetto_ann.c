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
	uint64_t iid = pf_intern_stable(&a->cache, &a->names, a->defs, ID_ANN_NAMES, name, n);

	a->w = pe_open(a->w, TE_DEBUG, &at);
	a->w = iid ? pe_uint(a->w, DA_NAME_IID, iid) : pe_bytes(a->w, DA_NAME, name, n);
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
	return PF_ANN_FIXED + n;
}

void pf_ann_str(struct pf_ann *a, const char *name, const char *s, size_t n, bool interned)
{
	uint8_t *at = ann_open(a, name, strlen(name));
	uint64_t iid = interned ? pf_intern_stable(&a->cache, &a->strings, a->defs, ID_STRINGS, s, n) : 0;

	a->w = iid ? pe_uint(a->w, DA_STRING_IID, iid) : pe_bytes(a->w, DA_STRING, s, n);
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
		v += f->v.str.len;
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
	return PE_NEST_MAX + PE_NEST_MAX + *name_len + v;
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
			       ? pf_intern(&a->strings, a->defs, ID_STRINGS, f->v.str.ptr, f->v.str.len) : 0;
		w = iid ? pe_uint(w, DA_STRING_IID, iid)
			: pe_bytes(w, DA_STRING, f->v.str.ptr, f->v.str.len);
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
		n += 2 * PE_NEST_MAX + FRAME_LABEL_MAX + PE_FIELD_MAX +
		     (st->frames[i].file ? strlen(st->frames[i].file) : 0);
	return n;
}

/* The frame's iid (InternedData.frames): its label as the function name,
 * its file as the source path (as the inline frame's source_file was) and
 * its line, each interned; no mapping (trace processor keeps a frame
 * without one as its dummy mapping's).  0 when a table is full. */
static uint64_t frame_iid(struct pf_ann *a, const struct stack_frame *f, char *buf)
{
	size_t n = stack_frame_label(f, buf, FRAME_LABEL_MAX);
	uint64_t fn = pf_intern(&a->funcs, a->defs, ID_FUNCTION_NAMES, buf, n);
	uint64_t path = f->file ? pf_intern(&a->paths, a->defs, ID_SOURCE_PATHS, f->file,
					     strlen(f->file)) : 0;
	uint64_t line = f->line > 0 ? (uint64_t)f->line : 0;
	uint8_t key[3 * PE_VARINT_MAX], *k;
	bool fresh;

	if (!fn || (f->file && !path))
		return 0;
	k = pe_varint(pe_varint(pe_varint(key, fn), path), line);
	uint64_t iid = pf_intern_key(&a->frames, ID_FRAMES, key, (size_t)(k - key), &fresh);
	if (fresh) {
		size_t at = wire_open(a->defs, ID_FRAMES);
		wire_put_uint_field(a->defs, FR_IID, iid);
		wire_put_uint_field(a->defs, FR_FUNCTION_NAME, fn);
		if (path)
			wire_put_uint_field(a->defs, FR_SOURCE_PATH, path);
		if (line)
			wire_put_uint_field(a->defs, FR_LINE, line);
		wire_close(a->defs, at);
	}
	return iid;
}

/* The stack's iid (InternedData.callstacks, keyed by its frames' iids,
 * outermost first); 0 when a table is full. */
static uint64_t callstack_iid(struct pf_ann *a, const struct stack_trace *st)
{
	uint8_t key[UNWIND_MAX_FRAMES * PE_VARINT_MAX], *k = key;
	uint64_t ids[UNWIND_MAX_FRAMES];
	char buf[FRAME_LABEL_MAX];
	size_t n = st->n < UNWIND_MAX_FRAMES ? st->n : UNWIND_MAX_FRAMES;
	bool fresh;

	for (size_t i = 0; i < n; i++) {
		ids[i] = frame_iid(a, &st->frames[n - 1 - i], buf);
		if (!ids[i])
			return 0;
		k = pe_varint(k, ids[i]);
	}
	uint64_t iid = pf_intern_key(&a->stacks, ID_CALLSTACKS, key, (size_t)(k - key), &fresh);
	if (fresh) {
		size_t at = wire_open(a->defs, ID_CALLSTACKS);
		wire_put_uint_field(a->defs, CSK_IID, iid);
		for (size_t i = 0; i < n; i++)
			wire_put_uint_field(a->defs, CSK_FRAME_IDS, ids[i]);
		wire_close(a->defs, at);
	}
	return iid;
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
		w = pe_bytes(w, FRAME_FUNCTION, buf, n);
		if (f->file)
			w = pe_bytes(w, FRAME_SOURCE, f->file, strlen(f->file));
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
