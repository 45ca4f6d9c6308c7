/* outbuf.h — a large write buffer in front of an output, with a sticky
 * error and an exact count of the events that reached the output.
 *
 * Every text-like sink (text, JSON lines, trace) formats into one of these, so
 * an event costs a few memcpys and no syscall; the output sees big writes at
 * flush time.
 *
 * The event loop must never block on an output (a reader that stops reading
 * would hold it, its signals and the attached uprobes).  So a pipe, socket,
 * terminal or device is written without blocking (pwritev2 RWF_NOWAIT, or
 * poll + at most PIPE_BUF bytes where the kernel lacks it) and the buffer is a
 * bounded queue: a small event that finds it full is dropped whole and
 * counted.  An event larger than half the buffer (an aggregation table, a
 * run's summary) grows the buffer to hold it, whatever is queued, and is
 * written whole like any other (up to OUTBUF_MAX_CAP; past that, or out of
 * memory, it is lost and counted); the buffer shrinks back once empty.
 * Regular files are written plainly (the disk does not stop reading).
 *
 * Events are bracketed (outbuf_event_begin/end, with a tag the owner counts
 * by).  An event is written when all of its bytes are; when the output fails,
 * every event not written is told to the `lost` callback, and a regular file
 * is truncated back to the end of the last whole event, so a full disk never
 * leaves half a JSON line.  After the first failure nothing more is written;
 * the owner reports the error once (outbuf_check). */
#ifndef UPROBESTATS_VOCAB_OUTBUF_H
#define UPROBESTATS_VOCAB_OUTBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/err.h"

#define OUTBUF_DEFAULT_CAP (256u * 1024u)
/* The most the buffer grows to for one large event (see outbuf_event_end). */
#define OUTBUF_MAX_CAP ((size_t)1 << 30)
/* Events queued at most (their ends, to count what was written). */
#define OUTBUF_MAX_MARKS 8192u
/* How long the final flush waits for a reader that does not read. */
#define OUTBUF_CLOSE_WAIT_MS 1000

struct outbuf_mark {
	uint64_t end;           /* stream position just past the event */
	const void *tag;
};

struct outbuf {
	FILE *f;
	int fd;                 /* -1: a stream without a descriptor, written by stdio */
	char *buf;
	size_t cap, head, len;  /* pending bytes: buf[head, len) */
	size_t first_cap;       /* cap as set up; a grown buffer returns to it when empty */
	uint64_t base;          /* stream position of buf[0] */
	uint64_t written;       /* bytes the output took so far */
	uint64_t safe;          /* stream position of the last whole event written */
	int error;              /* first write error (negative errno), 0 if none */
	const char *name;       /* "text", "json", "trace": for messages */
	bool blocking;          /* a regular file (or stdio stream): plain writes */
	bool regular;           /* truncate back to a whole event on a failed write */
	bool no_nowait;         /* RWF_NOWAIT unsupported: poll + PIPE_BUF-sized writes */
	bool drop_events;       /* a full queue drops an event (lines); else fails the output */
	bool at_exit;           /* written whole at exit (profile, folded stacks): a failure
				 * loses part of the file, not events */
	/* the event being formatted */
	bool in_event, overflow;
	size_t ev_start;        /* len at outbuf_event_begin */
	struct outbuf_mark *marks;  /* queued events, oldest first: marks[m_head, m_len) */
	size_t m_head, m_len;
	uint64_t events_written, events_lost;
	void (*lost)(void *ctx, const void *tag);
	void *lost_ctx;
};

/* Allocates the buffer once (cap 0: OUTBUF_DEFAULT_CAP); looks at what f's
 * descriptor is to choose how to write it, and refuses (with "<name> output:
 * cannot write: <strerror>") one that takes no writes: outbuf_writable. */
int outbuf_init(struct outbuf *o, FILE *f, size_t cap, const char *name, struct err *e);
/* 0 when fd is open and takes writes, else a negative errno: a write of no
 * bytes, which most files that refuse every write refuse too (/proc/version:
 * -EIO, /proc/self/status: -EINVAL, a closed descriptor: -EBADF), so an
 * output is refused before anything is attached rather than at its first
 * event.  -ENOSPC counts as writable: a full disk is a state of the moment,
 * met at the writes themselves (and /dev/full is how it is simulated). */
int outbuf_writable(int fd);
void outbuf_free(struct outbuf *o);
/* Told of every event lost at this output (tag as given to outbuf_event_end). */
void outbuf_on_lost(struct outbuf *o, void (*lost)(void *ctx, const void *tag), void *ctx);
/* drop: when the queue is full, drop the one event (outputs of whole lines);
 * otherwise the output fails with -EAGAIN (a trace cannot skip a part). */
void outbuf_set_drop_events(struct outbuf *o, bool drop);

/* An event's bytes go between these; end returns true when the event is
 * queued (or written), false when it was lost here (counted, told). */
void outbuf_event_begin(struct outbuf *o);
bool outbuf_event_end(struct outbuf *o, const void *tag);

void outbuf_put(struct outbuf *o, const void *p, size_t n);
/* Room for n bytes at the end of the buffer, writing it out first when needed;
 * NULL when there is no such room (more than the buffer holds, or the output
 * does not take more now).  Write at most n bytes there, then
 * outbuf_commit(o, end) with the end of what was written. */
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

/* The output does not keep up: less than a quarter of the buffer is free
 * even after writing what it takes now.  The loop then leaves records in the
 * kernel's buffer until it is not (backpressure instead of drops); so a full
 * queue never meets an event in practice (a quarter holds any line). */
bool outbuf_congested(struct outbuf *o);

/* Write out what the output takes now, without waiting.  Returns 0 or o->error. */
int outbuf_flush(struct outbuf *o);
/* At exit: write everything, waiting up to wait_ms for a reader that does not
 * read; what is left then is lost (-ETIMEDOUT).  Returns 0 or o->error. */
int outbuf_finish(struct outbuf *o, int wait_ms);
/* Events queued and not yet written (a count). */
size_t outbuf_pending_events(const struct outbuf *o);
/* Fill e with "<name> output: write failed: <strerror> (N events written, M
 * lost)" when o->error. */
int outbuf_check(const struct outbuf *o, struct err *e);

#endif
