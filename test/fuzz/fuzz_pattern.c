/* fuzz_pattern — the trace-pattern parser and the glob engine over arbitrary
 * text: pattern_parse (Java and native forms, parameter lists, sets, escapes),
 * then the first half of the input as a glob against the second half as a
 * name, in both Java and native modes.  Seeds: patterns from the docs. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "plan/pattern.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 2);
	struct trace_pattern *p;
	struct err e = { 0 };

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (pattern_parse(s, &p, &e) == 0) {
		pattern_is_java(p);
		pattern_file(p);
		pattern_free(p);
	}
	size_t half = size / 2;
	memmove(s + half + 1, s + half, size - half + 1);
	s[half] = '\0';
	pattern_glob_match(s, s + half + 1, true);
	pattern_glob_match(s, s + half + 1, false);
	free(s);
	return 0;
}
