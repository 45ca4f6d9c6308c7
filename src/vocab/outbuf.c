#include "vocab/outbuf.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "common/grow.h"

#ifndef RWF_NOWAIT
#define RWF_NOWAIT 0x00000008
#endif

/* The tag of a mark that only records where non-event bytes (a header) end. */
static const char boundary_tag;

int outbuf_init(struct outbuf *o, FILE *f, size_t cap, const char *name, struct err *e)
{
	struct stat st;
	int rc;

	memset(o, 0, sizeof(*o));
	o->f = f;
	o->name = name;
	o->cap = cap ? cap : OUTBUF_DEFAULT_CAP;
	o->first_cap = o->cap;
	o->drop_events = true;
	o->buf = malloc(o->cap);
	o->marks = malloc(OUTBUF_MAX_MARKS * sizeof(*o->marks));
	if (!o->buf || !o->marks) {
		outbuf_free(o);
		return err_set(e, -ENOMEM, "%s output: cannot allocate a %zu-byte buffer", name,
			       o->cap);
	}
	o->fd = f ? fileno(f) : -1;
	if (o->fd < 0) {             /* a memory stream (tests): stdio writes it */
		o->blocking = true;
		return 0;
	}
	rc = outbuf_writable(o->fd);
	if (rc < 0 || fstat(o->fd, &st) < 0) {
		rc = rc < 0 ? rc : -errno;
		outbuf_free(o);
		if (o->fd == STDOUT_FILENO && rc == -EBADF)
			return err_set(e, rc, "%s output: cannot write: stdout is closed (1>&-) "
				       "or read-only; give --output FILE", name);
		return err_set(e, rc, "%s output: cannot write: %s", name, strerror(-rc));
	}
	o->regular = S_ISREG(st.st_mode);
	o->blocking = o->regular || S_ISBLK(st.st_mode);
	return 0;
}

int outbuf_writable(int fd)
{
	if (write(fd, "", 0) < 0 && errno != ENOSPC && errno != EAGAIN && errno != EINTR)
		return -errno;
	return 0;
}

void outbuf_free(struct outbuf *o)
{
	free(o->buf);
	free(o->marks);
	o->buf = NULL;
	o->marks = NULL;
	o->len = o->cap = o->head = 0;
	o->m_head = o->m_len = 0;
}

void outbuf_on_lost(struct outbuf *o, void (*lost)(void *ctx, const void *tag), void *ctx)
{
	o->lost = lost;
	o->lost_ctx = ctx;
}

void outbuf_set_drop_events(struct outbuf *o, bool drop)
{
	o->drop_events = drop;
}

static void lose(struct outbuf *o, const void *tag)
{
	if (tag == &boundary_tag)
		return;
	o->events_lost++;
	if (o->lost && tag)
		o->lost(o->lost_ctx, tag);
}

/* Events whose every byte the output took. */
static void retire_marks(struct outbuf *o)
{
	while (o->m_head < o->m_len && o->marks[o->m_head].end <= o->written) {
		if (o->marks[o->m_head].tag != &boundary_tag)
			o->events_written++;
		o->safe = o->marks[o->m_head].end;
		o->m_head++;
	}
	if (o->m_head == o->m_len)
		o->m_head = o->m_len = 0;
}

/* The output failed: nothing more goes there.  A regular file is cut back
 * to the end of its last whole event; every event not wholly written is lost. */
static void fail(struct outbuf *o, int error)
{
	if (o->error)
		return;
	o->error = error;
	if (o->regular && o->fd >= 0 && o->written > o->safe) {
		off_t cur = lseek(o->fd, 0, SEEK_CUR);
		uint64_t cut = o->written - o->safe;
		if (cur >= 0 && (uint64_t)cur >= cut && ftruncate(o->fd, cur - (off_t)cut) == 0)
			o->written = o->safe;
	}
	for (size_t i = o->m_head; i < o->m_len; i++)
		lose(o, o->marks[i].tag);
	o->m_head = o->m_len = 0;
	o->base += o->len;
	o->head = o->len = o->ev_start = 0;
}

/* Some of p[0, n) without waiting: RWF_NOWAIT where the kernel honours it for
 * this file (pipes 5.x+, sockets), else poll and at most PIPE_BUF bytes, which
 * a writable pipe takes at once. */
static ssize_t write_nowait(struct outbuf *o, const char *p, size_t n)
{
	struct iovec iov = { .iov_base = (void *)p, .iov_len = n };
	struct pollfd pf = { .fd = o->fd, .events = POLLOUT };
	int r;

	if (!o->no_nowait) {
		ssize_t w = syscall(SYS_pwritev2, o->fd, &iov, 1, -1L, -1L, RWF_NOWAIT);
		if (w >= 0 || (errno != EOPNOTSUPP && errno != EINVAL && errno != ENOSYS))
			return w;
		o->no_nowait = true;
	}
	r = poll(&pf, 1, 0);
	if (r <= 0) {
		if (r == 0 || errno == EINTR)
			errno = EAGAIN;
		return -1;
	}
	return write(o->fd, p, n < PIPE_BUF ? n : PIPE_BUF);
}

/* Write buf[head, limit) as far as the output takes it now. */
static void write_out(struct outbuf *o, size_t limit)
{
	while (o->head < limit && !o->error) {
		size_t n = limit - o->head;
		ssize_t w;

		errno = 0;
		if (o->fd < 0) {
			w = (ssize_t)fwrite(o->buf + o->head, 1, n, o->f);
			if ((size_t)w != n && !errno)
				errno = EIO;
		} else {
			w = o->blocking ? write(o->fd, o->buf + o->head, n)
					: write_nowait(o, o->buf + o->head, n);
		}
		if (w > 0) {
			o->head += (size_t)w;
			o->written += (uint64_t)w;
		}
		if (w > 0 && (size_t)w == n)
			continue;
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (w <= 0 || o->fd < 0) {
			retire_marks(o);
			fail(o, errno ? -errno : -EIO);
			return;
		}
	}
	retire_marks(o);
}

/* Back to the first size once a grown buffer is empty (one big event
 * does not keep its memory, nor raise the congestion threshold, for the
 * rest of the run).  A failed allocation keeps the big buffer. */
static void shrink_when_empty(struct outbuf *o)
{
	char *small;

	if (o->len || o->in_event || o->cap <= o->first_cap)
		return;
	small = malloc(o->first_cap);
	if (!small)
		return;
	free(o->buf);
	o->buf = small;
	o->cap = o->first_cap;
}

/* Move the pending bytes to the front of the buffer. */
static void compact(struct outbuf *o)
{
	if (!o->head) {
		shrink_when_empty(o);
		return;
	}
	memmove(o->buf, o->buf + o->head, o->len - o->head);
	o->base += o->head;
	o->len -= o->head;
	if (o->in_event)
		o->ev_start -= o->head;
	o->head = 0;
	shrink_when_empty(o);
}

/* The buffer made to hold n more bytes: an event (or a piece outside one)
 * that is itself large, whatever the queue before it, so that an output of
 * any size — a table of 20,000 keys, the summary of 5,000 probes — is
 * written whole.  0, or a negative errno (out of memory, OUTBUF_MAX_CAP). */
static int grow_for(struct outbuf *o, size_t n)
{
	size_t need = o->len + n;

	if (need < o->len || need > OUTBUF_MAX_CAP)
		return -EOVERFLOW;
	return grow_array(&o->buf, &o->cap, need, o->first_cap);
}

/* Large enough to grow the buffer for: more than half of its first size.
 * A small event that finds the queue full of others is dropped instead
 * (a reader that does not keep up), so the queue stays bounded. */
static bool large_piece(const struct outbuf *o, size_t n)
{
	size_t piece = (o->in_event ? o->len - o->ev_start : 0) + n;

	return piece > o->first_cap / 2;
}

/* n more bytes fit, after writing out what may be (never the event being
 * formatted: it may still be dropped), growing the buffer for a large event.
 * false: the event overflows. */
static bool make_room(struct outbuf *o, size_t n)
{
	if (o->error || o->overflow)
		return false;
	if (o->cap - o->len >= n)
		return true;
	write_out(o, o->in_event ? o->ev_start : o->len);
	if (o->error)
		return false;
	compact(o);
	if (o->cap - o->len >= n)
		return true;
	/* outside an event nothing can be dropped (a header, a profile written
	 * at exit): it grows too, rather than failing the output */
	if ((!o->in_event || large_piece(o, n)) && grow_for(o, n) == 0)
		return true;
	o->overflow = true;
	return false;
}

void outbuf_event_begin(struct outbuf *o)
{
	uint64_t here = o->base + o->len;

	if (o->in_event)
		return;
	/* header bytes since the last event end: remember where they end */
	if (!o->error && o->m_len < OUTBUF_MAX_MARKS && here > o->safe &&
	    (o->m_len == o->m_head || o->marks[o->m_len - 1].end < here))
		o->marks[o->m_len++] = (struct outbuf_mark){ .end = here, .tag = &boundary_tag };
	o->in_event = true;
	o->overflow = false;
	o->ev_start = o->len;
}

static bool room_for_mark(struct outbuf *o)
{
	if (o->m_len < OUTBUF_MAX_MARKS)
		return true;
	write_out(o, o->ev_start);
	if (o->m_head) {
		memmove(o->marks, o->marks + o->m_head, (o->m_len - o->m_head) * sizeof(*o->marks));
		o->m_len -= o->m_head;
		o->m_head = 0;
	}
	return o->m_len < OUTBUF_MAX_MARKS;
}

bool outbuf_event_end(struct outbuf *o, const void *tag)
{
	bool fits;

	if (!o->in_event)
		return !o->error;
	fits = !o->error && !o->overflow && room_for_mark(o) && !o->error;
	o->in_event = false;
	if (!fits) {
		bool stalled = !o->error && !o->drop_events;
		o->len = o->ev_start;
		o->overflow = false;
		if (stalled)
			fail(o, -EAGAIN);  /* a trace cannot skip a part of itself */
		lose(o, tag);
		return false;
	}
	o->marks[o->m_len++] = (struct outbuf_mark){ .end = o->base + o->len, .tag = tag };
	return true;
}

void outbuf_put(struct outbuf *o, const void *p, size_t n)
{
	if (!make_room(o, n)) {
		/* larger than the whole buffer, outside an event, to a file: through */
		if (o->overflow && !o->in_event && o->blocking && !o->error && n > o->cap) {
			o->overflow = false;
			write_out(o, o->len);
			compact(o);
			for (size_t k = 0; k < n && !o->error; k += o->cap) {
				size_t c = n - k < o->cap ? n - k : o->cap;
				memcpy(o->buf + o->len, (const char *)p + k, c);
				o->len += c;
				write_out(o, o->len);
				compact(o);
			}
		} else if (o->overflow && !o->in_event) {
			o->overflow = false;
			fail(o, -EAGAIN);
		}
		return;
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

char *outbuf_reserve(struct outbuf *o, size_t n)
{
	if (o->error || o->overflow)
		return NULL;
	if (!make_room(o, n)) {
		if (!o->in_event) {  /* outside an event nothing can be dropped */
			o->overflow = false;
			fail(o, -EAGAIN);
		}
		return NULL;
	}
	return o->buf + o->len;
}

void outbuf_commit(struct outbuf *o, char *end)
{
	o->len = (size_t)(end - o->buf);
}

void outbuf_putc(struct outbuf *o, char c)
{
	outbuf_put(o, &c, 1);
}

void outbuf_puts(struct outbuf *o, const char *s)
{
	outbuf_put(o, s, strlen(s));
}

void outbuf_printf(struct outbuf *o, const char *fmt, ...)
{
	char tmp[1024], *big;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof(tmp)) {
		outbuf_put(o, tmp, (size_t)n);
		return;
	}
	/* Longer than any line we format. */
	big = malloc((size_t)n + 1);
	if (!big) {
		fail(o, -ENOMEM);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(big, (size_t)n + 1, fmt, ap);
	va_end(ap);
	outbuf_put(o, big, (size_t)n);
	free(big);
}

void outbuf_u64(struct outbuf *o, uint64_t v)
{
	char tmp[20];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	outbuf_put(o, tmp + i, sizeof(tmp) - i);
}

void outbuf_i64(struct outbuf *o, int64_t v)
{
	if (v < 0) {
		outbuf_putc(o, '-');
		outbuf_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		outbuf_u64(o, (uint64_t)v);
	}
}

void outbuf_hex(struct outbuf *o, uint64_t v)
{
	static const char digits[] = "0123456789abcdef";
	char tmp[18];
	size_t i = sizeof(tmp);

	do {
		tmp[--i] = digits[v & 0xf];
		v >>= 4;
	} while (v);
	tmp[--i] = 'x';
	tmp[--i] = '0';
	outbuf_put(o, tmp + i, sizeof(tmp) - i);
}

size_t fmt_seconds(char out[32], uint64_t ns, unsigned decimals)
{
	char tmp[32];
	uint64_t sec = ns / 1000000000ull, rem = ns % 1000000000ull;
	size_t i = 20, n = 0;

	if (decimals < 3)
		decimals = 3;
	if (decimals > 9)
		decimals = 9;
	do {
		tmp[--i] = (char)('0' + sec % 10);
		sec /= 10;
	} while (sec);
	memcpy(out, tmp + i, 20 - i);
	n = 20 - i;
	out[n++] = '.';
	for (int k = 8; k >= 0; k--) {
		tmp[k] = (char)('0' + rem % 10);
		rem /= 10;
	}
	memcpy(out + n, tmp, decimals);
	return n + decimals;
}

void outbuf_seconds(struct outbuf *o, uint64_t ns, unsigned decimals)
{
	char tmp[32];

	outbuf_put(o, tmp, fmt_seconds(tmp, ns, decimals));
}

void outbuf_pad(struct outbuf *o, size_t n, size_t width)
{
	static const char spaces[] = "                                ";

	while (n < width) {
		size_t k = width - n < sizeof(spaces) - 1 ? width - n : sizeof(spaces) - 1;
		outbuf_put(o, spaces, k);
		n += k;
	}
}

int outbuf_flush(struct outbuf *o)
{
	if (!o->buf)
		return o->error;
	write_out(o, o->in_event ? o->ev_start : o->len);
	compact(o);
	errno = 0;
	if (!o->error && o->fd < 0 && fflush(o->f) != 0)
		fail(o, errno ? -errno : -EIO);
	return o->error;
}

bool outbuf_congested(struct outbuf *o)
{
	size_t limit = o->cap - o->cap / 4;

	if (o->error || o->blocking || !o->buf || o->len - o->head <= limit)
		return false;
	outbuf_flush(o);
	return !o->error && o->len - o->head > limit;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int outbuf_finish(struct outbuf *o, int wait_ms)
{
	int64_t deadline = now_ms() + wait_ms;

	while (o->buf && outbuf_flush(o) == 0 && o->head < o->len) {
		struct pollfd pf = { .fd = o->fd, .events = POLLOUT };
		int64_t left = deadline - now_ms();
		if (left <= 0 || o->fd < 0) {
			fail(o, -ETIMEDOUT);
			break;
		}
		if (poll(&pf, 1, (int)left) < 0 && errno != EINTR) {
			fail(o, -errno);
			break;
		}
	}
	return o->error;
}

size_t outbuf_pending_events(const struct outbuf *o)
{
	size_t n = 0;

	for (size_t i = o->m_head; i < o->m_len; i++)
		n += o->marks[i].tag != &boundary_tag;
	return n;
}

int outbuf_check(const struct outbuf *o, struct err *e)
{
	const char *why;

	if (!o->error)
		return 0;
	if (o->error == -ETIMEDOUT)
		why = "its reader took nothing for a second at exit";
	else if (o->error == -EAGAIN)
		why = "its reader did not keep up, so the rest was not written";
	else if (o->error == -EPIPE)
		why = "its reader has gone (EPIPE)";
	else
		why = strerror(-o->error);
	if (o->at_exit)
		return err_set(e, o->error, "%s output: write failed: %s (written at exit: %llu "
			       "bytes of it before the failure, so it is incomplete)", o->name, why,
			       (unsigned long long)o->written);
	return err_set(e, o->error, "%s output: write failed: %s (%llu events written, %llu "
		       "lost)", o->name, why, (unsigned long long)o->events_written,
		       (unsigned long long)o->events_lost);
}
