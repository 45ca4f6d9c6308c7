#include "sink/text_out.h"

#include <string.h>

#include "common/utf8.h"
#include "sink/json_out.h"
#include "sink/probe_label.h"
#include "sink/sections.h"
#include "sink/sink_ops.h"
#include "sink/stack_out.h"

#define W_BOOT 16
#define W_ID 7
#define W_COMM 16
#define W_PROBE 40

int text_open(struct text_out *t, FILE *f, struct err *e)
{
	int rc = outbuf_init(&t->o, f, 0, "text", e);

	if (rc < 0)
		return rc;
	outbuf_puts(&t->o, "#");
	outbuf_pad(&t->o, 1 + 6, W_BOOT);
	outbuf_puts(&t->o, "BOOT_S     PID     TID COMM             PROBE");
	outbuf_pad(&t->o, 5, W_PROBE);
	outbuf_puts(&t->o, " FIELDS\n");
	return 0;
}

static size_t escape(struct outbuf *o, const char *s, size_t n, bool pipe)
{
	size_t out = 0;

	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s;
	size_t i = 0;

	while (i < n) {
		unsigned char c = p[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && (c != '|' || !pipe)) {
			outbuf_putc(o, (char)c);
			i++;
			out++;
		} else if (c == '"' || c == '\\') {
			outbuf_putc(o, '\\');
			outbuf_putc(o, (char)c);
			i++;
			out += 2;
		} else if (c == '\n' || c == '\t') {
			outbuf_put(o, c == '\n' ? "\\n" : "\\t", 2);
			i++;
			out += 2;
		} else {
			size_t len = c >= 0x80 ? utf8_seq_len(p + i, n - i) : 0; /* '|': \x7c */
			if (len) {
				outbuf_put(o, p + i, len);
				i += len;
				out++; /* one column per character */
			} else {
				char x[4] = { '\\', 'x', hex[c >> 4], hex[c & 0xf] };
				outbuf_put(o, x, 4);
				i++;
				out += 4;
			}
		}
	}
	return out;
}

size_t text_escape(struct outbuf *o, const char *s, size_t n)
{
	return escape(o, s, n, false);
}

size_t text_escape_nopipe(struct outbuf *o, const char *s, size_t n)
{
	return escape(o, s, n, true);
}

void text_duration(struct outbuf *o, uint64_t ns)
{
	static const struct { uint64_t div; unsigned dec; const char *unit; } u[] = {
		{ 1000000000ull, 9, "s" }, { 1000000ull, 6, "ms" }, { 1000ull, 3, "us" },
	};

	for (size_t k = 0; k < sizeof(u) / sizeof(u[0]); k++) {
		if (ns >= u[k].div) {
			uint64_t frac = ns % u[k].div;
			char digits[9];
			outbuf_u64(o, ns / u[k].div);
			outbuf_putc(o, '.');
			for (int i = (int)u[k].dec - 1; i >= 0; i--) {
				digits[i] = (char)('0' + frac % 10);
				frac /= 10;
			}
			outbuf_put(o, digits, u[k].dec);
			outbuf_puts(o, u[k].unit);
			return;
		}
	}
	outbuf_u64(o, ns);
	outbuf_puts(o, "ns");
}

static void put_int_list32(struct outbuf *o, const int32_t *v, uint32_t n)
{
	outbuf_putc(o, '[');
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			outbuf_putc(o, ',');
		outbuf_i64(o, v[i]);
	}
	outbuf_putc(o, ']');
}

static void put_int_list64(struct outbuf *o, const int64_t *v, uint32_t n)
{
	outbuf_putc(o, '[');
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			outbuf_putc(o, ',');
		outbuf_i64(o, v[i]);
	}
	outbuf_putc(o, ']');
}

static void put_value(struct outbuf *o, const struct field *f, bool pipe)
{
	static const char hex[] = "0123456789abcdef";

	switch (f->type) {
	case FIELD_INT32: outbuf_i64(o, f->v.i32); break;
	case FIELD_INT64: outbuf_i64(o, f->v.i64); break;
	case FIELD_UINT64: outbuf_hex(o, f->v.u64); break;
	case FIELD_BOOL: outbuf_puts(o, f->v.b ? "true" : "false"); break;
	case FIELD_FLOAT: outbuf_printf(o, "%g", (double)f->v.f); break;
	case FIELD_STRING:
		outbuf_putc(o, '"');
		if (f->v.str.ptr)
			escape(o, f->v.str.ptr, f->v.str.len, pipe);
		outbuf_putc(o, '"');
		break;
	case FIELD_BYTES:
		for (uint32_t i = 0; f->v.str.ptr && i < f->v.str.len; i++) {
			unsigned char b = (unsigned char)f->v.str.ptr[i];
			char d[2] = { hex[b >> 4], hex[b & 0xf] };
			outbuf_put(o, d, 2);
		}
		break;
	case FIELD_INT32_LIST: put_int_list32(o, f->v.i32s.ptr, f->v.i32s.n); break;
	case FIELD_INT64_LIST: put_int_list64(o, f->v.i64s.ptr, f->v.i64s.n); break;
	default: outbuf_puts(o, "?"); break;
	}
}

void text_fields(struct outbuf *o, const struct field *f, size_t n, bool no_pipe)
{
	for (size_t i = 0; i < n; i++) {
		outbuf_putc(o, ' ');
		if (f[i].name)
			escape(o, f[i].name, strlen(f[i].name), no_pipe);
		outbuf_putc(o, '=');
		put_value(o, &f[i], no_pipe);
	}
}

static void put_id(struct outbuf *o, uint32_t id)
{
	char tmp[12];
	int n = id ? snprintf(tmp, sizeof(tmp), "%u", id) : snprintf(tmp, sizeof(tmp), "-");

	outbuf_pad(o, (size_t)n, W_ID);
	outbuf_put(o, tmp, (size_t)n);
}

/* Columns up to and including the probe label. */
static void put_prefix(struct outbuf *o, const struct event *ev, const char *tag)
{
	char boot[32];
	size_t n = fmt_seconds(boot, ev->boot_ns, 9);
	struct label l = probe_label(ev->probe);

	outbuf_pad(o, n, W_BOOT);
	outbuf_put(o, boot, n);
	outbuf_putc(o, ' ');
	put_id(o, ev->pid);
	outbuf_putc(o, ' ');
	put_id(o, ev->tid);
	outbuf_putc(o, ' ');
	size_t w = 1;
	if (ev->comm && ev->comm[0])
		w = text_escape(o, ev->comm, strlen(ev->comm));
	else
		outbuf_putc(o, '-');
	outbuf_pad(o, w, W_COMM);
	outbuf_putc(o, ' ');
	w = 0;
	if (tag) {
		outbuf_puts(o, tag);
		w = strlen(tag);
	}
	w += text_escape(o, l.s, l.n);
	outbuf_pad(o, w, W_PROBE);
}

/* A trace-marker call: what it did instead of its registers. */
static void section_text(struct outbuf *o, const struct section_call *c)
{
	outbuf_putc(o, ' ');
	outbuf_puts(o, section_op_name(c->op));
	if (c->name_len || c->op != SECTION_OP_END) {
		outbuf_puts(o, " \"");
		escape(o, c->name, c->name_len, false);
		outbuf_putc(o, '"');
	}
	if (c->op == SECTION_OP_BEGIN || c->op == SECTION_OP_END)
		outbuf_printf(o, " depth=%u", c->depth);
	else
		outbuf_printf(o, " %s=%lld", c->op >= SECTION_OP_COUNTER ? "value" : "cookie",
			      (long long)c->value);
	if (c->verdict == SECTION_END_UNBEGUN)
		outbuf_puts(o, " (no begin: begun before the attach)");
	outbuf_putc(o, '\n');
}

void text_event(struct text_out *t, const struct event *ev)
{
	struct outbuf *o = &t->o;

	if (ev->section && ev->kind == EVENT_RECORD) {
		put_prefix(o, ev, NULL);
		section_text(o, ev->section);
		return;
	}

	switch (ev->kind) {
	case EVENT_RETURN:
		put_prefix(o, ev, NULL);
		outbuf_puts(o, " <- dur=");
		text_duration(o, ev->duration_ns);
		break;
	case EVENT_DROP:
	case EVENT_LOST:
		put_prefix(o, ev, "DROP ");
		outbuf_puts(o, " lost=");
		outbuf_u64(o, ev->n_lost);
		outbuf_puts(o, ev->kind == EVENT_DROP ? " (kernel ring buffer full)"
						      : " (perf buffer lost samples)");
		break;
	default:
		put_prefix(o, ev, NULL);
		break;
	}
	text_fields(o, ev->fields, ev->n_fields, false);
	outbuf_putc(o, '\n');
	if (ev->stack)
		stack_text(o, ev->stack);
}

int text_flush(struct text_out *t)
{
	return outbuf_flush(&t->o);
}

void text_close(struct text_out *t)
{
	outbuf_flush(&t->o);
	outbuf_free(&t->o);
}

/* ---- the sink's row (sink_ops.h) ---- */

static bool text_wanted(const struct sinks_options *o)
{
	return o->text != NULL;
}

static int text_sink_open(void *st, const struct sinks_options *o, struct err *e)
{
	return text_open(st, o->text, e);
}

static void text_sink_event(void *st, const struct event *ev)
{
	text_event(st, ev);
}

static void text_sink_flush(void *st)
{
	text_flush(st);
}

static struct outbuf *text_output(void *st)
{
	return &((struct text_out *)st)->o;
}

static void text_sink_close(void *st)
{
	text_close(st);
}

const struct sink_ops text_sink = {
	.name = "text",
	.state_size = sizeof(struct text_out),
	.wanted = text_wanted,
	.open = text_sink_open,
	.event = text_sink_event,
	.flush = text_sink_flush,
	.output = text_output,
	.close = text_sink_close,
};
