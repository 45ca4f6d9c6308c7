/* parse_u32.c — see parse_u32.h. */
#include "common/parse_u32.h"

#include <errno.h>

static int digit(char c, unsigned base)
{
	int d = c >= '0' && c <= '9' ? c - '0'
		: c >= 'a' && c <= 'f' ? c - 'a' + 10
		: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;

	return d >= 0 && (unsigned)d < base ? d : -1;
}

int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	unsigned base = 10;
	uint64_t v = 0;
	int d;

	if (!s)
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		if ((d = digit(*s, base)) < 0)
			return -EINVAL;
		v = v * base + (unsigned)d;
		if (v > UINT32_MAX)
			return -EINVAL;
	}
	if (v < lo || v > hi)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int parse_u32_arg(const char *s, uint32_t lo, uint32_t hi, const char *opt, const char *what,
		  uint32_t *out, struct err *e)
{
	if (parse_u32(s, lo, hi, out) == 0)
		return 0;
	return err_set(e, -EINVAL, "%s takes %s from %u to %u, not '%s'", opt, what, lo, hi,
		       s ? s : "");
}
