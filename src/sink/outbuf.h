/* outbuf.h — a large write buffer in front of a FILE*, with a sticky error.
 *
 * Every text-like sink (text, JSON lines, trace) formats into one of these, so
 * an event costs a few memcpys and no stdio call; the FILE* sees big fwrites
 * at flush time.  The first failed write is remembered (errno and the sink's
 * name) and reported once by the owner; later output is discarded rather
 * than half-written. */
#ifndef UPROBESTATS_SINK_OUTBUF_H
#define UPROBESTATS_SINK_OUTBUF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"

#define OUTBUF_DEFAULT_CAP (256u * 1024u)

struct outbuf {
	FILE *f;
	char *buf;
	size_t cap, len;
	uint64_t written;   /* bytes handed to the FILE* so far */
	int error;          /* first write error (negative errno), 0 if none */
	const char *name;   /* "text", "json", "trace": for messages */
};

/* Allocates the buffer once (cap 0: OUTBUF_DEFAULT_CAP). */
int outbuf_init(struct outbuf *o, FILE *f, size_t cap, const char *name, struct err *e);
void outbuf_free(struct outbuf *o);

void outbuf_put(struct outbuf *o, const void *p, size_t n);
/* Room for n bytes at the end of the buffer, draining it first when needed;
 * NULL when n is more than the whole buffer holds.  Write at most n bytes
 * there, then outbuf_commit(o, end) with the end of what was written. */
char *outbuf_reserve(struct outbuf *o, size_t n);
void outbuf_commit(struct outbuf *o, char *end);
void outbuf_putc(struct outbuf *o, char c);
void outbuf_puts(struct outbuf *o, const char *s);
void outbuf_printf(struct outbuf *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void outbuf_u64(struct outbuf *o, uint64_t v);
void outbuf_i64(struct outbuf *o, int64_t v);
/* v as 0x-prefixed lowercase hex. */
void outbuf_hex(struct outbuf *o, uint64_t v);
/* ns as seconds with `decimals` (3..9) digits: 12000000345 -> "12.000000345". */
void outbuf_seconds(struct outbuf *o, uint64_t ns, unsigned decimals);
/* The same into out[]; returns the length (no NUL). */
size_t fmt_seconds(char out[32], uint64_t ns, unsigned decimals);
/* Pad with spaces up to `width` when n < width. */
void outbuf_pad(struct outbuf *o, size_t n, size_t width);

/* Write the buffer out and fflush the FILE*.  Returns 0 or o->error. */
int outbuf_flush(struct outbuf *o);
/* Fill e with "<name> output: write failed: <strerror>" when o->error. */
int outbuf_check(const struct outbuf *o, struct err *e);

#endif
