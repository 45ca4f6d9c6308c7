#include "sink/probe_label.h"

#include <string.h>

static struct label java_short(const char *m)
{
	const char *end = strchr(m, '(');
	const char *start = m;

	if (!end)
		return (struct label){ m, strlen(m) };
	/* drop the return type: the last space before the parameters */
	for (const char *p = m; p < end; p++)
		if (*p == ' ')
			start = p + 1;
	/* keep the simple class name: start after the second-to-last dot */
	const char *last = NULL, *prev = NULL;
	for (const char *p = start; p < end; p++) {
		if (*p == '.') {
			prev = last;
			last = p;
		}
	}
	if (prev)
		start = prev + 1;
	return (struct label){ start, (size_t)(end - start) };
}

struct label probe_label(const struct probe_desc *p)
{
	if (p && p->slice && p->slice[0])
		return (struct label){ p->slice, strlen(p->slice) };
	if (p && p->method && p->method[0])
		return java_short(p->method);
	if (p && p->program)
		return (struct label){ p->program, strlen(p->program) };
	return (struct label){ "?", 1 };
}
