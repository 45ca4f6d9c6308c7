/* log.h — the tool's diagnostic log: one call writes a line to stderr and,
 * on Android when logd is there, to logcat (tag "uprobestats"), so a run
 * started by init (no terminal) still says what happened.
 *
 * The state lives in a struct logger the caller owns (main.c keeps one) and
 * passes around; nothing here is global. */
#ifndef UPROBESTATS_SYS_LOG_H
#define UPROBESTATS_SYS_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "sys/logcat.h"

enum log_level {
	LOG_LVL_DEBUG = 0,
	LOG_LVL_INFO,
	LOG_LVL_WARN,
	LOG_LVL_ERROR,
};

struct log_opts {
	FILE *stream;              /* NULL: stderr */
	enum log_level min_level;  /* lines below are dropped (0 = debug: everything) */
	const char *logd_socket;   /* NULL: /dev/socket/logdw; "": no logcat */
	const char *tag;           /* NULL: "uprobestats" */
	bool no_stream;            /* logcat only (e.g. an init service) */
};

struct logger {
	FILE *stream;              /* NULL when no_stream */
	enum log_level min_level;
	char tag[32];
	struct logcat logcat;      /* fd -1 when logcat is off */
	char logcat_status[160];   /* "on (/dev/socket/logdw)" or why it is off */
};

/* Never fails: without logd the logger writes to the stream only. */
void log_init(struct logger *lg, const struct log_opts *opts);

void log_msg(struct logger *lg, enum log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void log_vmsg(struct logger *lg, enum log_level level, const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

bool log_to_logcat(const struct logger *lg);
void log_close(struct logger *lg);

#endif
