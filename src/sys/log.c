#include "sys/log.h"

#include <errno.h>
#include <string.h>

#define LOG_LINE_MAX 4096

void log_init(struct logger *lg, const struct log_opts *opts)
{
	struct log_opts o = { 0 };
	struct err e = { 0 };
	const char *sock;

	if (opts)
		o = *opts;
	memset(lg, 0, sizeof(*lg));
	lg->stream = o.no_stream ? NULL : (o.stream ? o.stream : stderr);
	lg->min_level = o.min_level;
	snprintf(lg->tag, sizeof(lg->tag), "%s", o.tag ? o.tag : "uprobestats");
	lg->logcat.fd = -1;
	sock = o.logd_socket ? o.logd_socket : LOGCAT_DEFAULT_SOCKET;
	if (!sock[0]) {
		snprintf(lg->logcat_status, sizeof(lg->logcat_status), "off (disabled)");
		return;
	}
	if (logcat_open(&lg->logcat, sock, &e) < 0)
		snprintf(lg->logcat_status, sizeof(lg->logcat_status), "off (%s)", e.msg);
	else
		snprintf(lg->logcat_status, sizeof(lg->logcat_status), "on (%s)", sock);
}

static const char *stream_label(enum log_level l)
{
	switch (l) {
	case LOG_LVL_DEBUG: return "debug: ";
	case LOG_LVL_WARN: return "warning: ";
	case LOG_LVL_ERROR: return "error: ";
	default: return "";
	}
}

static enum logcat_priority logcat_prio(enum log_level l)
{
	switch (l) {
	case LOG_LVL_DEBUG: return LOGCAT_DEBUG;
	case LOG_LVL_WARN: return LOGCAT_WARN;
	case LOG_LVL_ERROR: return LOGCAT_ERROR;
	default: return LOGCAT_INFO;
	}
}

void log_vmsg(struct logger *lg, enum log_level level, const char *fmt, va_list ap)
{
	char line[LOG_LINE_MAX];

	if (level < lg->min_level)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	if (lg->stream) {
		fprintf(lg->stream, "%s: %s%s\n", lg->tag, stream_label(level), line);
		fflush(lg->stream);
	}
	if (lg->logcat.fd >= 0)
		logcat_write(&lg->logcat, logcat_prio(level), lg->tag, line);
}

void log_msg(struct logger *lg, enum log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_vmsg(lg, level, fmt, ap);
	va_end(ap);
}

bool log_to_logcat(const struct logger *lg)
{
	return lg->logcat.fd >= 0;
}

void log_close(struct logger *lg)
{
	logcat_close(&lg->logcat);
}
