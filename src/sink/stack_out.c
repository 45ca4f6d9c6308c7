#include "sink/stack_out.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "vocab/fmt_fast.h"

size_t stack_frame_label(const struct stack_frame *f, char *buf, size_t size)
{
	const char *file = f->file && f->file[0] ? f->file : "anonymous memory";
	int n;

	if (!size)
		return 0;
	if (f->symbol && f->symbol[0])
		n = snprintf(buf, size, "%s", f->symbol);
	else if (f->kind == FRAME_INTERPRETED)
		n = snprintf(buf, size, "[interpreted]");
	else if (f->kind == FRAME_JIT)
		n = snprintf(buf, size, "[jit]");
	else if (f->kind == FRAME_UNKNOWN)
		n = snprintf(buf, size, "[unknown in %s]", file);
	else
		n = snprintf(buf, size, "%s+0x%" PRIx64, file, f->offset);
	if (n < 0)
		n = 0;
	return (size_t)n < size ? (size_t)n : size - 1;
}

static void frame_json(struct json_out *j, const struct stack_frame *f)
{
	char label[600];

	json_object_begin(j);
	json_key(j, "pc");
	json_hex(j, f->pc);
	json_key(j, "kind");
	json_cstring(j, frame_kind_name(f->kind));
	json_key(j, "file");
	json_cstring(j, f->file && f->file[0] ? f->file : NULL);
	json_key(j, "offset");
	json_hex(j, f->offset);
	json_key(j, "symbol");
	stack_frame_label(f, label, sizeof(label));
	json_cstring(j, label);
	if (f->symbol && f->symbol[0] && (f->kind == FRAME_NATIVE || f->kind == FRAME_JIT)) {
		json_key(j, "symbol_offset");
		json_hex(j, f->symbol_off);
	}
	if (f->dex_pc != UINT32_MAX) {
		json_key(j, "dex_pc");
		json_u64(j, f->dex_pc);
	}
	if (f->line > 0) {
		json_key(j, "line");
		json_u64(j, (uint64_t)f->line);
	}
	if (f->note) {
		json_key(j, "note");
		json_cstring(j, f->note);
	}
	json_object_end(j);
}

#define LABEL_MAX 600

/* The label's bytes: the symbol itself when there is one (no copy). */
static const char *label_of(const struct stack_frame *f, char *buf, size_t *n)
{
	if (f->symbol && f->symbol[0]) {
		*n = strlen(f->symbol);
		return f->symbol;
	}
	*n = stack_frame_label(f, buf, LABEL_MAX);
	return buf;
}

size_t stack_json_bound(const struct stack_trace *st)
{
	size_t b = 64 + (st->end ? JSON_ESCAPE_MAX(strlen(st->end)) : 32);

	for (size_t i = 0; i < st->n; i++) {
		const struct stack_frame *f = &st->frames[i];
		size_t sym = f->symbol && f->symbol[0] ? strlen(f->symbol) : LABEL_MAX;
		b += 200 + 3 * FMT_HEX_MAX + 2 * FMT_U64_MAX + JSON_ESCAPE_MAX(sym) +
		     (f->file ? JSON_ESCAPE_MAX(strlen(f->file)) : 4) +
		     (f->note ? JSON_ESCAPE_MAX(strlen(f->note)) : 0);
	}
	return b;
}

static char *put_str(char *p, const char *s, size_t n)
{
	*p++ = '"';
	p = json_escape_into(p, s, n);
	*p++ = '"';
	return p;
}

static char *put_hex(char *p, uint64_t v)
{
	*p++ = '"';
	p = fmt_hex(p, v);
	*p++ = '"';
	return p;
}

static char *frame_put(char *p, const struct stack_frame *f)
{
	char buf[LABEL_MAX];
	const char *kind = frame_kind_name(f->kind), *label;
	size_t n;

	p = FMT_LIT(p, "{\"pc\":");
	p = put_hex(p, f->pc);
	p = FMT_LIT(p, ",\"kind\":");
	p = put_str(p, kind, strlen(kind));
	p = FMT_LIT(p, ",\"file\":");
	if (f->file && f->file[0])
		p = put_str(p, f->file, strlen(f->file));
	else
		p = FMT_LIT(p, "null");
	p = FMT_LIT(p, ",\"offset\":");
	p = put_hex(p, f->offset);
	p = FMT_LIT(p, ",\"symbol\":");
	label = label_of(f, buf, &n);
	p = put_str(p, label, n);
	if (f->symbol && f->symbol[0] && (f->kind == FRAME_NATIVE || f->kind == FRAME_JIT)) {
		p = FMT_LIT(p, ",\"symbol_offset\":");
		p = put_hex(p, f->symbol_off);
	}
	if (f->dex_pc != UINT32_MAX) {
		p = FMT_LIT(p, ",\"dex_pc\":");
		p = fmt_u64(p, f->dex_pc);
	}
	if (f->line > 0) {
		p = FMT_LIT(p, ",\"line\":");
		p = fmt_u64(p, (uint64_t)f->line);
	}
	if (f->note) {
		p = FMT_LIT(p, ",\"note\":");
		p = put_str(p, f->note, strlen(f->note));
	}
	return FMT_LIT(p, "}");
}

char *stack_json_put(char *p, const struct stack_trace *st)
{
	const char *end = st->end ? st->end : "outermost frame";

	p = FMT_LIT(p, ",\"stack\":[");
	for (size_t i = 0; i < st->n; i++) {
		if (i)
			*p++ = ',';
		p = frame_put(p, &st->frames[i]);
	}
	p = FMT_LIT(p, "],\"stack_end\":");
	return put_str(p, end, strlen(end));
}

void stack_json_members(struct json_out *j, const struct stack_trace *st)
{
	json_key(j, "stack");
	json_array_begin(j);
	for (size_t i = 0; i < st->n; i++)
		frame_json(j, &st->frames[i]);
	json_array_end(j);
	json_key(j, "stack_end");
	json_cstring(j, st->end ? st->end : "outermost frame");
}

void stack_trace_args(struct json_out *j, const struct stack_trace *st)
{
	char label[600], line[900];

	json_key(j, "stack");
	json_array_begin(j);
	for (size_t i = 0; i < st->n; i++) {
		const struct stack_frame *f = &st->frames[i];
		const char *file = f->file ? strrchr(f->file, '/') : NULL;
		int n;

		stack_frame_label(f, label, sizeof(label));
		file = file ? file + 1 : (f->file && f->file[0] ? f->file : "?");
		n = snprintf(line, sizeof(line), "%s (%s+0x%" PRIx64 ") [%s]", label, file,
			     f->offset, frame_kind_name(f->kind));
		json_string(j, line, n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n
									 : sizeof(line) - 1);
	}
	json_array_end(j);
	json_key(j, "stack_end");
	json_cstring(j, st->end ? st->end : "outermost frame");
}

void stack_text(struct outbuf *o, const struct stack_trace *st)
{
	char label[600];

	for (size_t i = 0; i < st->n; i++) {
		const struct stack_frame *f = &st->frames[i];

		stack_frame_label(f, label, sizeof(label));
		outbuf_printf(o, "    #%-2zu 0x%016" PRIx64 " %s", i, f->pc, label);
		if (f->symbol && f->symbol[0] && f->kind == FRAME_NATIVE)
			outbuf_printf(o, "+0x%" PRIx64, f->symbol_off);
		if (f->file && f->file[0])
			outbuf_printf(o, " (%s+0x%" PRIx64 ")", f->file, f->offset);
		outbuf_printf(o, " [%s]", frame_kind_name(f->kind));
		if (f->dex_pc != UINT32_MAX)
			outbuf_printf(o, " dex_pc=%" PRIu32, f->dex_pc);
		if (f->line > 0)
			outbuf_printf(o, " line=%" PRId32, f->line);
		if (f->note)
			outbuf_printf(o, " <%s>", f->note);
		outbuf_putc(o, '\n');
	}
	if (st->end && strcmp(st->end, "outermost frame"))
		outbuf_printf(o, "    (stack ends: %s)\n", st->end);
}
