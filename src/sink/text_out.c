#include "sink/text_out.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

#include "common/utf8.h"
#include "sink/probe_label.h"
#include "sink/sections.h"
#include "sink/sink_ops.h"
#include "sink/stack_out.h"
#include "vocab/json_out.h"

#define W_BOOT 16
#define W_ID 7
#define W_COMM 16
#define W_PROBE 40

int text_open(struct text_out *t, FILE *f, bool raw, struct err *e)
{
	int rc = outbuf_init(&t->o, f, 0, "text", e);

	if (rc < 0)
		return rc;
	t->raw = raw;
	t->batch = NULL;
	t->open = NULL;
	t->active = NULL;
	t->n_batch = t->cap_batch = t->n_open = t->cap_open = t->n_active = t->cap_active = 0;
	t->seq = 0;
	outbuf_puts(&t->o, "#");
	outbuf_pad(&t->o, 1 + 6, W_BOOT);
	if (!raw) {
		outbuf_puts(&t->o, "BOOT_S     PID     TID COMM             CALL\n");
		return 0;
	}
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

/* The time, pid, tid and thread name columns, and the space after them. */
static void put_who(struct outbuf *o, uint64_t boot_ns, uint32_t pid, uint32_t tid,
		    const char *comm)
{
	char boot[32];
	size_t n = fmt_seconds(boot, boot_ns, 9);

	outbuf_pad(o, n, W_BOOT);
	outbuf_put(o, boot, n);
	outbuf_putc(o, ' ');
	put_id(o, pid);
	outbuf_putc(o, ' ');
	put_id(o, tid);
	outbuf_putc(o, ' ');
	size_t w = 1;
	if (comm && comm[0])
		w = text_escape(o, comm, strnlen(comm, W_COMM));
	else
		outbuf_putc(o, '-');
	outbuf_pad(o, w, W_COMM);
	outbuf_putc(o, ' ');
}

/* Columns up to and including the probe label. */
static void put_prefix(struct outbuf *o, const struct event *ev, const char *tag)
{
	struct label l = probe_label(ev->probe);
	size_t w = 0;

	put_who(o, ev->boot_ns, ev->pid, ev->tid, ev->comm);
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

/* ---- one line per call ---- */

/* Appends to buf (NUL-terminated, size bytes) at *len, clipped. */
static void bput(char *buf, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void bput(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= size - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, size - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < size ? *len + (size_t)n : size - 1;
}

/* A string quoted with C escapes (printable ASCII and UTF-8 kept). */
static void bput_str(char *buf, size_t size, size_t *len, const char *s, size_t n)
{
	const unsigned char *p = (const unsigned char *)s;

	bput(buf, size, len, "\"");
	for (size_t i = 0; i < n && *len + 8 < size;) {
		unsigned char c = p[i];
		size_t k = c >= 0x80 ? utf8_seq_len(p + i, n - i) : 0;
		if (k) {
			memcpy(buf + *len, p + i, k);
			*len += k;
			buf[*len] = '\0';
			i += k;
			continue;
		}
		if (c == '"' || c == '\\')
			bput(buf, size, len, "\\%c", c);
		else if (c == '\n')
			bput(buf, size, len, "\\n");
		else if (c == '\t')
			bput(buf, size, len, "\\t");
		else if (c >= 0x20 && c < 0x7f)
			bput(buf, size, len, "%c", c);
		else
			bput(buf, size, len, "\\x%02x", c);
		i++;
	}
	bput(buf, size, len, "\"");
}

static const struct field *field_named(const struct event *ev, const char *name)
{
	for (size_t i = 0; i < ev->n_fields; i++)
		if (ev->fields[i].name && !strcmp(ev->fields[i].name, name))
			return &ev->fields[i];
	return NULL;
}

/* "fd=1, buf=0x7ffd…, count=3": the shape's arguments from the entry
 * record's registers (r0..r9) and strings (argN). */
static void call_args_text(const struct call_shape *sh, const struct event *ev, char *buf,
			   size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	if (!sh->n_args) {
		bput(buf, size, &len, "...");
		return;
	}
	for (uint8_t i = 0; i < sh->n_args; i++) {
		const struct call_arg *a = &sh->args[i];
		char reg[8];
		bput(buf, size, &len, "%s%s=", i ? ", " : "", a->name);
		if (a->kind == CALL_ARG_STR) {
			char nm[8];
			snprintf(nm, sizeof(nm), "arg%u", a->pos);
			const struct field *f = field_named(ev, nm);
			if (f && f->type == FIELD_STRING && f->v.str.ptr) {
				bput_str(buf, size, &len, f->v.str.ptr, f->v.str.len);
				continue;
			}
		}
		snprintf(reg, sizeof(reg), "r%d", a->reg);
		const struct field *f = a->reg >= 0 ? field_named(ev, reg) : NULL;
		if (!f || f->type != FIELD_UINT64) {
			bput(buf, size, &len, "?");
			continue;
		}
		uint64_t v = f->v.u64;
		switch (a->kind) {
		case CALL_ARG_I32: bput(buf, size, &len, "%d", (int32_t)(uint32_t)v); break;
		case CALL_ARG_U64: bput(buf, size, &len, "%llu", (unsigned long long)v); break;
		case CALL_ARG_HEX:
		case CALL_ARG_STR: bput(buf, size, &len, "0x%llx", (unsigned long long)v); break;
		case CALL_ARG_BOOL: bput(buf, size, &len, "%s", (v & 0xff) ? "true" : "false"); break;
		case CALL_ARG_CHAR:
			if ((v & 0xffff) >= 0x20 && (v & 0xffff) < 0x7f)
				bput(buf, size, &len, "'%c'", (char)(v & 0xff));
			else
				bput(buf, size, &len, "'\\u%04x'", (unsigned)(v & 0xffff));
			break;
		default: bput(buf, size, &len, "%lld", (long long)v); break;
		}
	}
}

/* "<185.9µs>": four significant digits at most, in the unit that fits. */
static void put_call_duration(struct outbuf *o, uint64_t ns)
{
	if (ns < 1000)
		outbuf_printf(o, "<%lluns>", (unsigned long long)ns);
	else if (ns < 1000000)
		outbuf_printf(o, "<%.1f\xc2\xb5s>", ns / 1e3);
	else if (ns < 1000000000)
		outbuf_printf(o, "<%.2fms>", ns / 1e6);
	else
		outbuf_printf(o, "<%.3fs>", ns / 1e9);
}

static void put_indent(struct outbuf *o, uint32_t depth)
{
	for (uint32_t i = 0; i < depth; i++)
		outbuf_puts(o, "  ");
}

static void put_name(struct outbuf *o, const struct probe_desc *p)
{
	struct label l = probe_label(p);

	text_escape(o, l.s, l.n);
}

/* ---- the batch: entries and returns come from separate buffers, so a
 * call's two records are paired, and the calls ordered, once per batch ---- */

enum text_what {
	TEXT_ENTRY,      /* an entry no return follows (entry-only): `f(args)` */
	TEXT_OPEN,       /* an entry whose return is not here yet: `f(args) ...` */
	TEXT_CALL,       /* an entry and its return: `f(args) = ret  <dur>` */
	TEXT_RETURN,     /* a return whose entry is not recorded: `f(...) = ret  <dur>` */
	TEXT_RESUMED,    /* the return of a call shown open: `<... f resumed> = ret  <dur>` */
	TEXT_DONE,       /* merged into its entry */
};

/* An entry record's start and its return's within this much are one call
 * (two programs on one hit, their clocks read microseconds apart). */
#define TEXT_PAIR_NS 10000000ull

static uint64_t diff_ns(uint64_t a, uint64_t b)
{
	return a > b ? a - b : b - a;
}

static bool same_call(const struct probe_desc *a, const struct probe_desc *b)
{
	return a == b || (a->offset == b->offset && a->file && b->file && !strcmp(a->file, b->file));
}

/* The return r's entry among the batch's (nearest start), or NULL. */
static struct text_item *entry_of(struct text_out *t, const struct text_item *r)
{
	struct text_item *best = NULL;

	for (size_t i = 0; i < t->n_batch; i++) {
		struct text_item *e = &t->batch[i];
		if (e->what != TEXT_OPEN || e->tid != r->tid || !same_call(e->probe, r->probe) ||
		    diff_ns(e->start_ns, r->start_ns) > TEXT_PAIR_NS)
			continue;
		if (!best || diff_ns(e->start_ns, r->start_ns) < diff_ns(best->start_ns, r->start_ns))
			best = e;
	}
	return best;
}

/* The call shown open in an earlier batch that return r ends, or -1. */
static long open_of(const struct text_out *t, const struct text_item *r)
{
	long best = -1;

	for (size_t i = 0; i < t->n_open; i++) {
		const struct text_open_call *c = &t->open[i];
		if (c->tid != r->tid || !same_call(c->probe, r->probe))
			continue;
		if (best < 0 || diff_ns(c->start_ns, r->start_ns) <
				diff_ns(t->open[best].start_ns, r->start_ns))
			best = (long)i;
	}
	return best;
}

static int cmp_items(const void *a, const void *b)
{
	const struct text_item *x = a, *y = b;

	if (x->key_ns != y->key_ns)
		return x->key_ns < y->key_ns ? -1 : 1;
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* How deep item it is on its thread: the calls around it (shown open, or
 * ended after it started); those that ended before it leave the list. */
static uint32_t depth_of(struct text_out *t, const struct text_item *it)
{
	uint32_t depth = 0;
	size_t k = 0;

	for (size_t i = 0; i < t->n_active; i++) {
		struct text_active a = t->active[i];
		if (a.tid == it->tid && a.end_ns <= it->key_ns && a.end_ns != UINT64_MAX)
			continue;
		depth += a.tid == it->tid;
		t->active[k++] = a;
	}
	t->n_active = k;
	return depth;
}

static void push_active(struct text_out *t, uint32_t tid, uint64_t end_ns)
{
	if (grow_array(&t->active, &t->cap_active, t->n_active + 1, 16) == 0)
		t->active[t->n_active++] = (struct text_active){ tid, end_ns };
}

static void drop_active_open(struct text_out *t, uint32_t tid)
{
	for (size_t i = t->n_active; i-- > 0;)
		if (t->active[i].tid == tid && t->active[i].end_ns == UINT64_MAX) {
			t->active[i] = t->active[--t->n_active];
			return;
		}
}

static void put_return_value(struct outbuf *o, const struct text_item *it, uint8_t kind)
{
	if (!it->has_ret)
		outbuf_putc(o, '?');
	else if (kind == CALL_ARG_HEX)
		outbuf_printf(o, "0x%llx", (unsigned long long)it->ret);
	else if (kind == CALL_ARG_BOOL)
		outbuf_puts(o, (it->ret & 0xff) ? "true" : "false");
	else if (kind == CALL_ARG_I32)
		outbuf_i64(o, (int32_t)(uint32_t)it->ret);
	else
		outbuf_i64(o, it->ret);
}

static void put_item(struct text_out *t, const struct text_item *it)
{
	struct outbuf *o = &t->o;
	uint32_t depth;

	if (it->what == TEXT_RESUMED)
		drop_active_open(t, it->tid);
	depth = depth_of(t, it);
	outbuf_event_begin(o);
	put_who(o, it->what == TEXT_RESUMED ? it->end_ns : it->start_ns, it->pid, it->tid,
		it->comm);
	put_indent(o, depth);
	if (it->what == TEXT_RESUMED) {
		outbuf_puts(o, "<... ");
		put_name(o, it->probe);
		outbuf_puts(o, " resumed>");
	} else {
		put_name(o, it->probe);
		outbuf_printf(o, "(%s)", it->what == TEXT_RETURN ? "..." : it->args);
	}
	if (it->what == TEXT_OPEN)
		outbuf_puts(o, " ...");
	if (it->what == TEXT_CALL || it->what == TEXT_RETURN || it->what == TEXT_RESUMED) {
		const struct call_shape *sh = it->ret_shape;
		if (!sh || !sh->ret_void) {
			outbuf_puts(o, " = ");
			put_return_value(o, it, sh ? sh->ret_kind : CALL_ARG_I64);
		}
		outbuf_puts(o, "  ");
		put_call_duration(o, it->dur_ns);
	}
	outbuf_putc(o, '\n');
	outbuf_event_end(o, it->probe);
	if (it->what == TEXT_CALL || it->what == TEXT_RETURN)
		push_active(t, it->tid, it->end_ns);
	if (it->what == TEXT_OPEN) {
		push_active(t, it->tid, UINT64_MAX);
		if (grow_array(&t->open, &t->cap_open, t->n_open + 1, 16) == 0)
			t->open[t->n_open++] = (struct text_open_call){ it->probe, it->start_ns,
									it->tid };
	}
}

/* The batch paired, ordered and printed. */
static void text_batch(struct text_out *t)
{
	if (!t->n_batch)
		return;
	for (size_t i = 0; i < t->n_batch; i++) {
		struct text_item *r = &t->batch[i], *e;
		long k;
		if (r->what != TEXT_RETURN)
			continue;
		if ((e = entry_of(t, r))) {
			e->what = TEXT_CALL;
			e->end_ns = r->end_ns;
			e->dur_ns = r->dur_ns;
			e->ret = r->ret;
			e->has_ret = r->has_ret;
			e->ret_shape = r->ret_shape;
			r->what = TEXT_DONE;
		} else if ((k = open_of(t, r)) >= 0) {
			r->what = TEXT_RESUMED;
			r->key_ns = r->end_ns;
			t->open[k] = t->open[--t->n_open];
		}
	}
	qsort(t->batch, t->n_batch, sizeof(*t->batch), cmp_items);
	for (size_t i = 0; i < t->n_batch; i++)
		if (t->batch[i].what != TEXT_DONE)
			put_item(t, &t->batch[i]);
	t->n_batch = 0;
}

static void call_event(struct text_out *t, const struct event *ev)
{
	const struct call_shape *sh = ev->probe->call;
	bool ret = sh->ret || ev->kind == EVENT_RETURN;
	struct text_item *it;

	if (t->n_batch == TEXT_BATCH_MAX)
		text_batch(t);
	if (grow_array(&t->batch, &t->cap_batch, t->n_batch + 1, 64) < 0) {
		text_batch(t);   /* out of memory: what is here is printed */
		if (!t->cap_batch)
			return;
	}
	it = &t->batch[t->n_batch++];
	*it = (struct text_item){ .probe = ev->probe, .pid = ev->pid, .tid = ev->tid,
				  .seq = t->seq++ };
	snprintf(it->comm, sizeof(it->comm), "%s", ev->comm ? ev->comm : "");
	if (ret) {
		const struct field *f = field_named(ev, "return_value");
		it->what = TEXT_RETURN;
		it->ret_shape = sh;
		it->end_ns = ev->boot_ns;
		it->dur_ns = ev->duration_ns;
		it->start_ns = ev->boot_ns - (ev->duration_ns < ev->boot_ns ? ev->duration_ns : 0);
		it->has_ret = f && f->type == FIELD_INT64;
		it->ret = it->has_ret ? f->v.i64 : 0;
	} else {
		it->what = sh->paired ? TEXT_OPEN : TEXT_ENTRY;
		it->start_ns = it->end_ns = ev->boot_ns;
		call_args_text(sh, ev, it->args, sizeof(it->args));
	}
	it->key_ns = it->start_ns;
	if (ev->stack) {   /* a stack is printed under its call's line, now */
		text_batch(t);
		stack_text(&t->o, ev->stack);
	}
}

void text_event(struct text_out *t, const struct event *ev)
{
	struct outbuf *o = &t->o;

	if (!t->raw && ev->probe && ev->probe->call && !ev->section &&
	    (ev->kind == EVENT_RECORD || ev->kind == EVENT_RETURN)) {
		call_event(t, ev);
		return;
	}
	if (t->n_batch)   /* the calls before it come first */
		text_batch(t);
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
	text_batch(t);
	return outbuf_flush(&t->o);
}

void text_close(struct text_out *t)
{
	text_batch(t);
	outbuf_flush(&t->o);
	outbuf_free(&t->o);
	free(t->batch);
	free(t->open);
	free(t->active);
	t->batch = NULL;
	t->open = NULL;
	t->active = NULL;
}

/* ---- the sink's row (sink_ops.h) ---- */

static bool text_wanted(const struct sinks_options *o)
{
	return o->text != NULL;
}

static int text_sink_open(void *st, const struct sinks_options *o, struct err *e)
{
	return text_open(st, o->text, o->text_raw, e);
}

static void text_sink_event(void *st, const struct event *ev)
{
	text_event(st, ev);
}

/* Before the summary: the last batch's calls. */
static void text_sink_finish(void *st)
{
	text_batch(st);
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
	.finish = text_sink_finish,
	.output = text_output,
	.close = text_sink_close,
};
