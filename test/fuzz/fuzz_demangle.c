/* fuzz_demangle — the Itanium demangler over arbitrary text (with "_Z" put in
 * front half the time), into a large and a tiny output buffer.  Seeds:
 * mangled names of libstdc++ (nested names, templates, substitutions, local
 * names, lambdas, function pointers, clones) and of libc++ and g++/clang
 * templates (argument packs, decltype, expressions, construction vtables). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "resolve/demangle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 3), out[4096], tiny[8];
	size_t a, b;

	if (!s)
		return 0;
	memcpy(s, "_Z", 2);
	memcpy(s + 2, data, size);
	s[size + 2] = '\0';
	demangle(s, out, sizeof(out), &a, &b);
	demangle(s, tiny, sizeof(tiny), NULL, NULL);
	demangle(s + 2, out, sizeof(out), &a, &b);
	free(s);
	return 0;
}
