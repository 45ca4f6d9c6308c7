#include "resolve/oatdump.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "resolve/subproc.h"

#define MAX_OUTPUT ((size_t)1 << 30)
#define DEFAULT_TIMEOUT_MS 60000
#define JSON_VERSION 241        /* --dump-method-and-offset-as-json appeared */
#define ELF_RELATIVE_VERSION 247

struct parser {
	struct oatdump_output *out;
	size_t cap;
};

static int start(struct oatdump_output *out, bool json, struct err *err)
{
	memset(out, 0, sizeof(*out));
	out->json = json;
	out->a = arena_new();
	return out->a ? 0 : err_set(err, -ENOMEM, "out of memory");
}

void oatdump_output_free(struct oatdump_output *o)
{
	arena_free(o->a);
	memset(o, 0, sizeof(*o));
}

static struct oatdump_method *add(struct parser *p)
{
	struct oatdump_output *o = p->out;

	if (o->n == p->cap) {
		size_t nc;
		if (grow_cap(p->cap, o->n + 1, 64, sizeof(*o->v), &nc) < 0)
			return NULL;
		void *nv = arena_grow(o->a, o->v, o->n, nc, sizeof(*o->v));
		if (!nv)
			return NULL;
		o->v = nv;
		p->cap = nc;
	}
	memset(&o->v[o->n], 0, sizeof(o->v[0]));
	o->v[o->n].dex_method_idx = -1;
	return &o->v[o->n++];
}

/* ---- JSON lines ---------------------------------------------------------- */

/* The JSON string value of "key" in [s, end); unescaped into the arena. */
static char *json_str(struct arena *a, const char *s, const char *end, const char *key)
{
	char pat[32];
	const char *p;
	size_t klen = (size_t)snprintf(pat, sizeof(pat), "\"%s\"", key);

	for (p = s; p + klen <= end; p++) {
		if (memcmp(p, pat, klen) != 0)
			continue;
		const char *q = p + klen;
		while (q < end && (isspace((unsigned char)*q) || *q == ':'))
			q++;
		if (q >= end || *q != '"')
			return NULL;
		char *v = arena_alloc(a, (size_t)(end - q));
		size_t n = 0;
		for (q++; q < end && *q != '"'; q++) {
			if (*q == '\\' && q + 1 < end) {
				q++;
				if (*q == 'u' && end - q > 4) {   /* \u00XX: keep ASCII only */
					unsigned c = (unsigned)strtoul(
						(char[]){ q[1], q[2], q[3], q[4], 0 }, NULL, 16);
					v[n++] = c < 0x80 ? (char)c : '?';
					q += 4;
					continue;
				}
				v[n++] = *q == 'n' ? '\n' : *q == 't' ? '\t' : *q;
			} else {
				v[n++] = *q;
			}
		}
		if (q >= end)
			return NULL;
		v[n] = 0;
		return v;
	}
	return NULL;
}

static int parse_json(const char *buf, size_t len, struct oatdump_output *out, struct err *err)
{
	struct parser p = { out, 0 };
	const char *s = buf, *end = buf + len;
	size_t line = 0;
	int rc;

	if ((rc = start(out, true, err)))
		return rc;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *e = nl ? nl : end;
		line++;
		if (e > s && *s == '{') {
			char *m = json_str(out->a, s, e, "method"),
			     *off = json_str(out->a, s, e, "offset");
			struct oatdump_method *x;
			char *endp;
			if (!m || !off)
				return err_set(err, -EINVAL,
					       "oatdump JSON line %zu: no \"method\" and "
					       "\"offset\" strings",
					       line);
			unsigned long v = strtoul(off, &endp, 16);
			if (*endp || !*off || v > 0xffffffffUL)
				return err_set(err, -EINVAL,
					       "oatdump JSON line %zu: bad offset \"%s\"", line,
					       off);
			if (!(x = add(&p)))
				return err_set(err, -ENOMEM, "out of memory");
			x->signature = m;
			x->code_offset = (uint32_t)v;
		}
		s = e + 1;
	}
	return 0;
}

/* ---- text ---------------------------------------------------------------- */

static size_t indent(const char *s, const char *e)
{
	size_t n = 0;
	while (s + n < e && s[n] == ' ')
		n++;
	return n;
}

/* "  N: <sig> (dex_method_idx=N)" at exactly two spaces. */
static int method_line(struct parser *p, const char *s, const char *e)
{
	static const char tag[] = " (dex_method_idx=";
	const char *t = NULL, *colon;
	struct oatdump_method *m;

	if (indent(s, e) != 2 || !isdigit((unsigned char)s[2]) || e[-1] != ')')
		return 0;
	for (const char *q = s; q + sizeof(tag) - 1 <= e; q++)   /* the LAST tag */
		if (!memcmp(q, tag, sizeof(tag) - 1))
			t = q;
	colon = memchr(s, ':', (size_t)(e - s));
	if (!t || !colon || colon + 2 > t || colon[1] != ' ')
		return 0;   /* also refuses "N: (dex_method_idx=…)": no signature */
	if (!(m = add(p)))
		return -ENOMEM;
	m->signature = arena_strndup(p->out->a, colon + 2, (size_t)(t - colon - 2));
	m->dex_method_idx = strtoll(t + sizeof(tag) - 1, NULL, 10);
	return 1;
}

/* "    CODE: [0x… ](code_offset=0x… [size_offset=0x… ]size=N)…" */
static void code_line(struct parser *p, const char *s, const char *e)
{
	char tmp[256];
	const char *co, *sz;
	struct oatdump_method *m = p->out->n ? &p->out->v[p->out->n - 1] : NULL;

	if (!m || indent(s, e) != 4 || e - s < 10 || memcmp(s + 4, "CODE: ", 6) != 0)
		return;
	snprintf(tmp, sizeof(tmp), "%.*s", (int)(e - s), s);
	co = strstr(tmp, "(code_offset=0x");
	sz = strstr(tmp, " size=");
	if (!co)
		return;
	m->code_offset = (uint32_t)strtoul(co + 15, NULL, 16);
	if (sz) {
		m->code_size = (uint32_t)strtoul(sz + 6, NULL, 10);
		m->has_size = true;
	}
}

/* "      code_offset: 0x…" (6 spaces) for outputs without CODE lines. */
static void offset_line(struct parser *p, const char *s, const char *e)
{
	struct oatdump_method *m = p->out->n ? &p->out->v[p->out->n - 1] : NULL;

	if (m && indent(s, e) == 6 && e - s > 21 && !memcmp(s + 6, "code_offset: 0x", 15)) {
		char hex[24];  /* bounded copy: the line is not NUL-terminated */
		snprintf(hex, sizeof(hex), "%.*s", (int)(e - s - 21), s + 21);
		m->code_offset = (uint32_t)strtoul(hex, NULL, 16);
	}
}

/* Does the line [s, e) start with label?  (Lines are not NUL-terminated.) */
static bool line_starts(const char *s, const char *e, const char *label)
{
	size_t n = strlen(label);
	return s && (size_t)(e - s) >= n && !memcmp(s, label, n);
}

/* Header blocks: a "LABEL:" line followed by its value line(s).  The value
 * is parsed from a bounded copy: strtoul must not run past the line. */
static void header_line(struct oatdump_output *o, const char *prev, const char *prev_e,
			const char *prev2, const char *prev2_e, const char *s, const char *e)
{
	char val[32];
	size_t n = (size_t)(e - s) < sizeof(val) - 1 ? (size_t)(e - s) : sizeof(val) - 1;

	memcpy(val, s, n);
	val[n] = '\0';
	if (line_starts(prev2, prev2_e, "MAGIC:") && e - s >= 3 && isdigit((unsigned char)*s))
		o->version = (unsigned)strtoul(val, NULL, 10);
	if (line_starts(prev, prev_e, "EXECUTABLE OFFSET:") && e - s > 2 && s[0] == '0') {
		o->exec_offset = (uint32_t)strtoul(val, NULL, 16);
		o->has_exec_offset = true;
	}
}

static int parse_text(const char *buf, size_t len, struct oatdump_output *out, struct err *err)
{
	struct parser p = { out, 0 };
	const char *s = buf, *end = buf + len, *prev = NULL, *prev2 = NULL;
	const char *prev_e = NULL, *prev2_e = NULL;
	bool any = false;
	int rc;

	if ((rc = start(out, false, err)))
		return rc;
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s)), *e = nl ? nl : end;
		const char *te = e;
		while (te > s && (te[-1] == '\r' || te[-1] == ' '))
			te--;   /* "code_offset: 0x%08x " has a trailing space */
		if (!any)
			header_line(out, prev, prev_e, prev2, prev2_e, s, te);
		if (te - s >= 11 && !memcmp(s, "OatDexFile:", 11))
			any = true;
		if (any) {
			if ((rc = method_line(&p, s, te)) < 0)
				return err_set(err, rc, "out of memory");
			code_line(&p, s, te);
			offset_line(&p, s, te);
		}
		prev2 = prev;
		prev2_e = prev_e;
		prev = s;
		prev_e = te;
		s = e + 1;
	}
	if (!any)
		return err_set(err, -EINVAL, "oatdump output has no \"OatDexFile:\" section "
			       "(not oatdump text output?)");
	return 0;
}

int oatdump_parse_json(const char *buf, size_t len, struct oatdump_output *out, struct err *err)
{
	int rc = parse_json(buf, len, out, err);
	if (rc)
		oatdump_output_free(out);
	return rc;
}

int oatdump_parse_text(const char *buf, size_t len, struct oatdump_output *out, struct err *err)
{
	int rc = parse_text(buf, len, out, err);
	if (rc)
		oatdump_output_free(out);
	return rc;
}

/* ---- lookup and offsets -------------------------------------------------- */

/* Compares ignoring blanks (the only spacing freedom in PrettyMethod text). */
static bool same_sig(const char *a, const char *b)
{
	for (;;) {
		while (*a == ' ')
			a++;
		while (*b == ' ')
			b++;
		if (*a != *b)
			return false;
		if (!*a)
			return true;
		a++, b++;
	}
}

const struct oatdump_method *oatdump_find(const struct oatdump_output *o, const char *sig)
{
	for (size_t i = 0; i < o->n; i++)
		if (same_sig(o->v[i].signature, sig))
			return &o->v[i];
	return NULL;
}

uint64_t oatdump_file_offset(unsigned oat_version, uint64_t oatdata_off, uint32_t printed)
{
	uint64_t off = printed & ~1u;
	return oat_version >= ELF_RELATIVE_VERSION ? off : oatdata_off + off;
}

/* ---- running it ---------------------------------------------------------- */

static int run_once(const struct oatdump_run_opts *o, bool json, struct oatdump_output *out,
		    struct err *err)
{
	char a_oat[4200], a_dex[4200], a_cls[1100], a_meth[600];
	char *argv[12];
	int n = 0, rc;
	struct subproc_result r;
	const char *bin = o->oatdump ? o->oatdump : "oatdump";

	argv[n++] = (char *)bin;
	snprintf(a_oat, sizeof(a_oat), "--oat-file=%s", o->oat_path);
	argv[n++] = a_oat;
	if (o->dex_file) {
		snprintf(a_dex, sizeof(a_dex), "--dex-file=%s", o->dex_file);
		argv[n++] = a_dex;
	}
	if (json) {
		argv[n++] = (char *)"--dump-method-and-offset-as-json";
	} else {
		argv[n++] = (char *)"--no-disassemble";
		argv[n++] = (char *)"--no-dump:vmap";
		if (o->class_filter) {
			snprintf(a_cls, sizeof(a_cls), "--class-filter=%s", o->class_filter);
			argv[n++] = a_cls;
		}
		if (o->method_filter) {
			snprintf(a_meth, sizeof(a_meth), "--method-filter=%s", o->method_filter);
			argv[n++] = a_meth;
		}
	}
	argv[n] = NULL;
	rc = subproc_run(argv, o->timeout_ms ? o->timeout_ms : DEFAULT_TIMEOUT_MS, MAX_OUTPUT, &r,
			 err);
	if (!rc && (r.signaled || r.exit_code))
		rc = r.signaled
			     ? err_set(err, -EIO, "%s %s: killed by signal %d", bin, a_oat,
				       r.signal)
			     : err_set(err, -EIO, "%s %s: exit status %d", bin, a_oat, r.exit_code);
	if (!rc)
		rc = json ? oatdump_parse_json(r.out ? r.out : "", r.out_len, out, err)
			  : oatdump_parse_text(r.out ? r.out : "", r.out_len, out, err);
	if (rc && r.err_tail[0]) {
		char *t = r.err_tail;
		for (char *q = t; *q; q++)
			if (*q == '\n' || *q == '\r')
				*q = ' ';
		size_t l = strlen(err->msg);
		snprintf(err->msg + l, sizeof(err->msg) - l, "; oatdump stderr: %s", t);
	}
	subproc_result_free(&r);
	return rc;
}

int oatdump_run(const struct oatdump_run_opts *opts, struct oatdump_output *out, struct err *err)
{
	struct err first = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	if (opts->oat_version && opts->oat_version < JSON_VERSION)
		return run_once(opts, false, out, err);
	rc = run_once(opts, true, out, &first);
	if (!rc || rc == -ETIMEDOUT || rc == -ENOENT) {
		if (rc)
			*err = first;
		return rc;
	}
	oatdump_output_free(out);
	/* An older oatdump rejects the JSON flag: the text form works everywhere. */
	if ((rc = run_once(opts, false, out, err)))
		err_prefix(err, "JSON mode failed (%s); text mode", first.msg);
	return rc;
}
