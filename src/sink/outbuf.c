#include "sink/outbuf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int outbuf_init(struct outbuf *o, FILE *f, size_t cap, const char *name, struct err *e)
{
	memset(o, 0, sizeof(*o));
	o->f = f;
	o->name = name;
	o->cap = cap ? cap : OUTBUF_DEFAULT_CAP;
	o->buf = malloc(o->cap);
	if (!o->buf)
		return err_set(e, -ENOMEM, "%s output: cannot allocate a %zu-byte buffer", name,
			       o->cap);
	return 0;
}

void outbuf_free(struct outbuf *o)
{
	free(o->buf);
	o->buf = NULL;
	o->len = o->cap = 0;
}

static void drain(struct outbuf *o)
{
	if (o->len && !o->error) {
		errno = 0;
		size_t w = fwrite(o->buf, 1, o->len, o->f);
		o->written += w;
		if (w != o->len)
			o->error = errno ? -errno : -EIO;
	}
	o->len = 0;
}

void outbuf_put(struct outbuf *o, const void *p, size_t n)
{
	if (n > o->cap - o->len) {
		drain(o);
		if (n > o->cap) { /* larger than the whole buffer: write through */
			errno = 0;
			if (!o->error && fwrite(p, 1, n, o->f) != n)
				o->error = errno ? -errno : -EIO;
			else if (!o->error)
				o->written += n;
			return;
		}
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
}

char *outbuf_reserve(struct outbuf *o, size_t n)
{
	if (n > o->cap)
		return NULL;
	if (n > o->cap - o->len)
		drain(o);
	return o->buf + o->len;
}

void outbuf_commit(struct outbuf *o, char *end)
{
	o->len = (size_t)(end - o->buf);
}

void outbuf_putc(struct outbuf *o, char c)
{
	if (o->len == o->cap)
		drain(o);
	o->buf[o->len++] = c;
}

void outbuf_puts(struct outbuf *o, const char *s)
{
	outbuf_put(o, s, strlen(s));
}

void outbuf_printf(struct outbuf *o, const char *fmt, ...)
{
	char tmp[1024];
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
	/* Longer than any line we format: let stdio write it in place. */
	drain(o);
	if (o->error)
		return;
	errno = 0;
	va_start(ap, fmt);
	n = vfprintf(o->f, fmt, ap);
	va_end(ap);
	if (n < 0)
		o->error = errno ? -errno : -EIO;
	else
		o->written += (uint64_t)n;
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
	drain(o);
	errno = 0;
	if (!o->error && fflush(o->f) != 0)
		o->error = errno ? -errno : -EIO;
	return o->error;
}

int outbuf_check(const struct outbuf *o, struct err *e)
{
	if (!o->error)
		return 0;
	return err_set(e, o->error, "%s output: write failed: %s", o->name, strerror(-o->error));
}
