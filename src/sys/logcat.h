/* logcat.h — writing to Android's log daemon without liblog.
 *
 * logd reads datagrams on /dev/socket/logdw (AF_UNIX, SOCK_DGRAM):
 *   header, packed, 11 bytes: log id (u8), thread id (u16), realtime
 *   seconds (u32), nanoseconds (u32), all little-endian;
 *   payload: priority (u8), tag, NUL, message, NUL; at most 4068 bytes.
 * The socket is non-blocking: when logd is busy a line is dropped and
 * counted, never waited for. */
#ifndef UPROBESTATS_SYS_LOGCAT_H
#define UPROBESTATS_SYS_LOGCAT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "common/err.h"

#define LOGCAT_DEFAULT_SOCKET "/dev/socket/logdw"
#define LOGCAT_HEADER_SIZE 11u
#define LOGCAT_MAX_PAYLOAD 4068u
#define LOGCAT_MAX_DATAGRAM (LOGCAT_HEADER_SIZE + LOGCAT_MAX_PAYLOAD)

enum logcat_buffer {
	LOGCAT_MAIN = 0,
	LOGCAT_SYSTEM = 3,
};

enum logcat_priority {
	LOGCAT_VERBOSE = 2,
	LOGCAT_DEBUG = 3,
	LOGCAT_INFO = 4,
	LOGCAT_WARN = 5,
	LOGCAT_ERROR = 6,
	LOGCAT_FATAL = 7,
};

/* One datagram into buf (LOGCAT_MAX_DATAGRAM bytes is always enough); the
 * message is cut so the payload fits.  Returns its length. */
size_t logcat_encode(uint8_t *buf, size_t size, enum logcat_buffer id, uint32_t tid,
		     const struct timespec *realtime, enum logcat_priority prio,
		     const char *tag, const char *msg);

struct logcat {
	int fd;                  /* -1 when closed */
	char path[108];          /* sun_path */
	uint64_t sent, dropped;  /* datagrams delivered / lost (logd busy or gone) */
};

/* Connects a non-blocking datagram socket to path.  -ENOENT when there is no
 * such socket (not Android, or logd not running). */
int logcat_open(struct logcat *lc, const char *path, struct err *err);

/* Sends one line to buffer main with the current time and thread.  On a
 * connection error it reconnects once (logd restarted) and retries.
 * Returns 0, or a negative errno (the line is counted as dropped). */
int logcat_write(struct logcat *lc, enum logcat_priority prio, const char *tag,
		 const char *msg);

void logcat_close(struct logcat *lc);

#endif
