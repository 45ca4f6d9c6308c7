/* err.h — the one error value every stage fills and only the command handlers
 * (src/cli/) print.
 *
 * Functions return 0 on success or a negative errno-style code, and on failure
 * fill a caller-owned struct err with one human-readable line that already
 * names the place (file:line:col, file+offset, probe name…), what was expected
 * and what was found.  The message never ends with a newline. */
#ifndef UPROBESTATS_COMMON_ERR_H
#define UPROBESTATS_COMMON_ERR_H

#include <stddef.h>

#define ERR_MSG_MAX 1024

struct err {
	int code;               /* negative errno-style code, 0 when unset */
	char msg[ERR_MSG_MAX];  /* one line, no trailing newline */
};

/* Fill *e (if non-NULL) and return code (which must be negative). */
int err_set(struct err *e, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefix the existing message with "prefix: " (for adding context on the way up). */
int err_prefix(struct err *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

void err_clear(struct err *e);

#endif
