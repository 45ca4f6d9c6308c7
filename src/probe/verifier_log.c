#include "probe/verifier_log.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static bool is_stats(const char *s, size_t len)
{
	static const char *const prefixes[] = { "processed ", "verification time ",
						"stack depth ", "mark_read " };

	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		size_t l = strlen(prefixes[i]);
		if (len >= l && memcmp(s, prefixes[i], l) == 0)
			return true;
	}
	return false;
}

void verifier_log_reason(const char *log, size_t size, char *out, size_t cap)
{
	size_t end = 0;

	if (!cap)
		return;
	out[0] = '\0';
	while (end < size && log[end])
		end++;
	while (end > 0) {
		size_t start = end, len;

		while (start > 0 && log[start - 1] != '\n')
			start--;
		len = end - start;
		while (len && (log[start + len - 1] == '\n' || log[start + len - 1] == ' '))
			len--;
		if (len && !is_stats(log + start, len)) {
			snprintf(out, cap, "%.*s", (int)len, log + start);
			return;
		}
		end = start ? start - 1 : 0;
	}
}
