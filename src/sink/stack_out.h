/* stack_out.h — how every sink writes an event's call stack (--stack):
 * the JSON "stack" array (docs/json-schema.md), the indented text frames,
 * and the one-line label of a frame that folded stacks and traces use.
 * Owns nothing; the frames belong to the event. */
#ifndef UPROBESTATS_SINK_STACK_OUT_H
#define UPROBESTATS_SINK_STACK_OUT_H

#include <stddef.h>

#include "vocab/frames.h"
#include "vocab/json_out.h"
#include "vocab/outbuf.h"

/* "stack":[{"pc":"0x…","kind":"java","file":…,"offset":"0x…","symbol":…,
 * "dex_pc":N,"line":N,"note":…},…],"stack_end":"…" (members of the event). */
void stack_json_members(struct json_out *j, const struct stack_trace *st);

/* "stack":["stk_b5 (libstk_b.so+0x1110)", …] (innermost first) and
 * "stack_end": the args of a trace event, which Perfetto UI lists with the
 * slice or instant. */
void stack_trace_args(struct json_out *j, const struct stack_trace *st);

/* The same bytes as stack_json_members (with the leading comma), written
 * with the fmt_fast functions into room for stack_json_bound() bytes;
 * returns the end.  The JSON Lines sink's per-event writer uses it. */
size_t stack_json_bound(const struct stack_trace *st);
char *stack_json_put(char *p, const struct stack_trace *st);

/* One line per frame, "    #N 0xPC symbol+0xOFF (file+0xOFF) [kind] note". */
void stack_text(struct outbuf *o, const struct stack_trace *st);

/* The frame's name: its symbol, else "[interpreted]", "[jit]",
 * "[unknown in FILE]" or "FILE+0xOFF".  Writes at most size bytes with a NUL;
 * returns the length written. */
size_t stack_frame_label(const struct stack_frame *f, char *buf, size_t size);

#endif
