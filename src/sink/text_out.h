/* text_out.h — the human-readable sink: one aligned line per event.
 *
 *   #        BOOT_S     PID     TID COMM             PROBE                                    …
 *   1234.567890123    1234    1240 system_server    OomAdjuster.setUidTempAllowlistStateLSP  …
 *   1234.567990000    1234    1240 system_server    Foo.bar                                  …
 *   1235.000000000       -       - -                DROP call_detail                         …
 * and then the FIELDS column, e.g. (one per line above):
 *   uid=10001 onAllowlist=true
 *   <- dur=1.234ms ret=0x0
 *   lost=12 (kernel ring buffer full)
 *
 * Columns are fixed width (longer values push the rest right by one space).
 * Strings are quoted with C-style escapes; invalid UTF-8 and control bytes
 * become \xNN; u64 values are hex.  Output goes through an outbuf. */
#ifndef UPROBESTATS_SINK_TEXT_OUT_H
#define UPROBESTATS_SINK_TEXT_OUT_H

#include <stdbool.h>
#include <stdio.h>

#include "common/err.h"
#include "vocab/event.h"
#include "vocab/outbuf.h"

struct text_out {
	struct outbuf o;
};

/* Writes the column header line. */
int text_open(struct text_out *t, FILE *f, struct err *e);
void text_event(struct text_out *t, const struct event *ev);
/* Human duration: "850ns", "12.345us", "1.234567ms", "2.000000001s". */
void text_duration(struct outbuf *o, uint64_t ns);
/* Escaped string body (no quotes); returns the columns it takes. */
size_t text_escape(struct outbuf *o, const char *s, size_t n);
/* " name=value ..." as in a text line; no_pipe also escapes '|' (\x7c) for
 * systrace mark names. */
void text_fields(struct outbuf *o, const struct field *f, size_t n, bool no_pipe);
/* Escaped like text_escape, '|' as \x7c too. */
size_t text_escape_nopipe(struct outbuf *o, const char *s, size_t n);
int text_flush(struct text_out *t);
void text_close(struct text_out *t);

/* The sink's row in sinks.c's table (sink/sink_ops.h). */
struct sink_ops;
extern const struct sink_ops text_sink;

#endif
