#include "plan/method_key.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "resolve/demangle.h"
#include "resolve/java_sig.h"

/* A field of the key line: control characters (tabs, line breaks) as spaces. */
static void put_field(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++)
		fputc((unsigned char)s[i] < 0x20 ? ' ' : s[i], f);
}

static char *joined(const char *const *fields, const size_t *lens, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (i)
			fputc('\t', f);
		put_field(f, fields[i], lens[i]);
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

char *method_key_java(const char *pretty_signature, const char *source_file)
{
	struct arena *a = arena_new();
	struct java_sig s;
	struct err e = { 0 };
	char *sig = NULL, *key = NULL;
	size_t len = 0;
	FILE *f;

	if (!a || !pretty_signature || java_sig_parse(pretty_signature, a, &s, &e) < 0 ||
	    !(f = open_memstream(&sig, &len))) {
		arena_free(a);
		return NULL;
	}
	fputc('(', f);
	for (size_t i = 0; i < s.n_params; i++)
		fputs(s.params[i], f);
	fputc(')', f);
	if (s.ret_desc)
		fputs(s.ret_desc, f);
	if (fclose(f) == 0) {
		const char *src = source_file ? source_file : "";
		const char *fields[] = { s.class_name, s.name, sig, src };
		const size_t lens[] = { strlen(s.class_name), strlen(s.name), strlen(sig),
					strlen(src) };
		key = joined(fields, lens, 4);
	}
	free(sig);
	arena_free(a);
	return key;
}

char *method_key_native(const char *path, const char *symbol)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	const char *lib = slash ? slash + 1 : path ? path : "";
	char out[DEMANGLE_MAX_IN];
	size_t start = 0, end = 0;

	if (!symbol)
		return NULL;
	if (!strncmp(symbol, "_Z", 2) &&
	    demangle(symbol, out, sizeof(out), &start, &end) == 0 && end > start) {
		/* "void A::f<int>(int) const": the name, then what follows it */
		const char *rest = out + end;
		const char *fields[] = { lib, out + start, *rest == '(' ? rest : "()", "" };
		const size_t lens[] = { strlen(lib), end - start, strlen(fields[2]), 0 };
		return joined(fields, lens, 4);
	}
	const char *fields[] = { lib, symbol, "()", "" };
	const size_t lens[] = { strlen(lib), strlen(symbol), 2, 0 };
	return joined(fields, lens, 4);
}
