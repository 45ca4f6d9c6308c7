/* fuzz_legacy_str — the raw UTF-16 String header a legacy object writes
 * (probe/legacy_str.h) over arbitrary bytes: the conversion must stay inside
 * the bytes it is given and leave a NUL-terminated, valid UTF-8 string when it
 * converts; the raw form of the input, taken as UTF-8, must convert back.
 * Seeds: a few well-formed and broken headers. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "probe/legacy_str.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_utf8(const char *s, size_t cap)
{
	size_t len = strnlen(s, cap);

	if (len == cap)
		abort();
	for (size_t i = 0; i < len;) {
		size_t l = utf8_seq_len((const unsigned char *)s + i, len - i);
		if (!l)
			abort();
		i += l;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size ? size : 1), key[128], text[256];

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	if (legacy_str_fix(buf, size))
		check_utf8(buf, size);
	free(buf);
	if (size < sizeof(text)) {
		memcpy(text, data, size);
		text[size] = '\0';
		if (legacy_str_raw_form(text, key, sizeof(key))) {
			if (!legacy_str_fix(key, sizeof(key)))
				abort();
			check_utf8(key, sizeof(key));
		}
	}
	return 0;
}
