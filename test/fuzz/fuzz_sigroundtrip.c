/* fuzz_sigroundtrip — print, parse, compare: arbitrary bytes pick a method whose
 * class, name, return type and parameters are made of dex SimpleName characters
 * (ASCII letters, digits, '$', '-', '_', non-ASCII letters, dex 040's spaces
 * and U+00A0/U+2000/U+202F, a supplementary character as dex stores it); it is
 * printed as `methods` prints it (dex_pretty_descriptor, PrettyMethod order) and
 * read back by java_sig_parse and, as parts, by java_sig_from_parts.  Every
 * descriptor must come back byte for byte; any mismatch aborts.
 * Spaces go inside names (never first or last) of the class, the method and the
 * parameter types; a text whose parameters hold spaces is read back as the
 * resolver's second reading does (java_sig_parse_whole_params).  A return type
 * with a space must be a descriptor, so return types get none. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "formats/dex.h"
#include "resolve/java_sig.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* SimpleName characters as dex stores them (MUTF-8); [0] is the space. */
static const char *const CHARS[] = {
	" ", "a", "Z", "q", "0", "7", "$", "-", "_", "\xc3\xa9", "\xe4\xb8\xad", "\xc2\xa0",
	"\xe2\x80\x80", "\xe2\x80\xaf", "\xed\xa0\xbd\xed\xb8\x80", "\xe2\x80\x90",
};
#define N_CHARS (sizeof(CHARS) / sizeof(CHARS[0]))

struct src {
	const uint8_t *p;
	size_t n;
};

static unsigned take(struct src *s)
{
	if (!s->n)
		return 0;
	s->n--;
	return *s->p++;
}

/* A name of 1..8 characters; spaces only when allowed, never first or last. */
static void name(struct src *s, bool spaces, char *out, size_t size)
{
	size_t len = 1 + take(s) % 8, n = 0;

	for (size_t i = 0; i < len; i++) {
		unsigned c = take(s) % N_CHARS;
		if (c == 0 && (!spaces || i == 0 || i + 1 == len))
			c = 1;
		n += (size_t)snprintf(out + n, size - n, "%s", CHARS[c]);
	}
}

/* A type descriptor: a primitive or a class of 1..3 names, with 0..2 dimensions. */
static void type_desc(struct src *s, bool spaces, bool is_return, char *out, size_t size)
{
	unsigned b = take(s), dims = (b >> 4) % 3;
	size_t n = 0;

	for (unsigned i = 0; i < dims; i++)
		out[n++] = '[';
	if (b % 4 == 0) {
		out[n++] = is_return && !dims ? "VIJZ"[(b >> 6) % 4] : "IJZBSCFD"[(b >> 6) % 8];
		out[n] = 0;
		return;
	}
	out[n++] = 'L';
	for (unsigned k = 0, segs = 1 + (b >> 2) % 3; k < segs; k++) {
		if (k)
			out[n++] = '/';
		name(s, spaces, out + n, size - n - 2);
		n += strlen(out + n);
	}
	out[n++] = ';';
	out[n] = 0;
}

static void must(bool ok, const char *what, const char *text)
{
	if (!ok) {
		fprintf(stderr, "round trip broken (%s): %s\n", what, text);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct src s = { data, size };
	char cls[256], meth[128], ret[256], params[4][256], pretty[4][256];
	char text[4096], pcls[256], pret[256];
	const char *pv[4];
	unsigned np = take(&s) % 5;
	size_t n;

	type_desc(&s, true, false, cls, sizeof(cls));
	if (cls[0] != 'L')      /* the class must be a class */
		snprintf(cls, sizeof(cls), "La/B;");
	name(&s, true, meth, sizeof(meth));
	if (take(&s) % 8 == 0)
		snprintf(meth, sizeof(meth), "<init>");
	type_desc(&s, false, true, ret, sizeof(ret));
	dex_pretty_descriptor(cls, pcls, sizeof(pcls));
	dex_pretty_descriptor(ret, pret, sizeof(pret));
	n = (size_t)snprintf(text, sizeof(text), "%s %s.%s(", pret, pcls, meth);
	bool spaced = false;
	for (unsigned i = 0; i < np; i++) {
		type_desc(&s, true, false, params[i], sizeof(params[i]));
		spaced |= strchr(params[i], ' ') != NULL;
		dex_pretty_descriptor(params[i], pretty[i], sizeof(pretty[i]));
		pv[i] = pretty[i];
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s", i ? ", " : "", pretty[i]);
	}
	snprintf(text + n, sizeof(text) - n, ")");

	struct arena *a = arena_new();
	struct java_sig js;
	struct err err = { 0 };
	if (!a)
		return 0;
	if (spaced)
		must(java_sig_parse_whole_params(text, a, &js, &err) == 0, err.msg, text);
	else
		must(java_sig_parse(text, a, &js, &err) == 0, err.msg, text);
	must(!strcmp(js.class_desc, cls), "class", text);
	must(!strcmp(js.name, meth), "method", text);
	must(!strcmp(js.ret_desc, ret), "return", text);
	must(js.n_params == np, "parameter count", text);
	for (unsigned i = 0; i < np; i++)
		must(!strcmp(js.params[i], params[i]), "parameter", text);
	must(java_sig_from_parts(pcls, meth, pv, np, true, a, &js, &err) == 0, err.msg, text);
	must(!strcmp(js.class_desc, cls) && !strcmp(js.name, meth), "parts", text);
	for (unsigned i = 0; i < np; i++)
		must(!strcmp(js.params[i], params[i]), "parts parameter", text);
	arena_free(a);
	return 0;
}
