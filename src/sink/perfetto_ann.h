/* perfetto_ann.h — a track event's debug annotations and call stack,
 * written at the event's end (w, room made by the caller: each function's
 * *_room says how much) with their names and string values interned
 * (annotation names, string values; new ones defined in defs, the packet's
 * InternedData).  Ints as int_value, registers and addresses as
 * pointer_value, strings as string_value (interned up to 128 bytes), bytes
 * as hex, lists as arrays; the stack as a callstack_iid, its Callstack
 * (frame ids outermost first), Frames (function name, mapping: the file,
 * rel_pc: the offset in it, line), Mappings and their strings interned as Perfetto's profilers do (one iid per
 * distinct stack), or as an InlineCallstack, outermost frame first, when
 * a table is full. */
#ifndef UPROBESTATS_SINK_PERFETTO_ANN_H
#define UPROBESTATS_SINK_PERFETTO_ANN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/wire.h"
#include "sink/perfetto_enc.h"
#include "sink/perfetto_intern.h"
#include "vocab/event.h"
#include "vocab/frames.h"

/* Room for an annotation whose name is a literal of the writer (up to 32
 * bytes) and whose value is a varint. */
#define PF_ANN_FIXED (PE_NEST_MAX + PE_NEST_MAX + 32 + PE_FIELD_MAX)

struct pf_ann {
	uint8_t *w;                       /* the track event's end, written on */
	struct wire_buf *defs;            /* the packet's new InternedData */
	struct pf_tables *t;              /* the interned data of the packet's sequence */
};

void pf_ann_uint(struct pf_ann *a, const char *name, uint64_t v);
void pf_ann_bool(struct pf_ann *a, const char *name, bool v);
/* A string annotation (interned: s never changes at its address). */
size_t pf_ann_str_room(size_t n);
void pf_ann_str(struct pf_ann *a, const char *name, const char *s, size_t n, bool interned);
/* A record's field (its name's length from pf_field_room). */
size_t pf_field_room(const struct field *f, size_t *name_len);
void pf_ann_field(struct pf_ann *a, const struct field *f, size_t name_len);
/* The event's callstack. */
size_t pf_callstack_room(const struct stack_trace *st);
void pf_callstack(struct pf_ann *a, const struct stack_trace *st);

#endif
