/* statsd_testutil.h — byte-comparison helpers shared by the statsd tests. */
#ifndef UPROBESTATS_TEST_STATSD_TESTUTIL_H
#define UPROBESTATS_TEST_STATSD_TESTUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Parse hex digits (spaces and '|' ignored) into out; returns the length or
 * -1 on a bad digit or when out is too small. */
long st_hex(const char *hex, uint8_t *out, size_t cap);

/* True when p[0..n) equals the hex string.  Positions listed in `skip` (a
 * bitmask over the first 64 bytes) are not compared: header timestamps and
 * tid.  On a mismatch it reports the first differing offset via ut_fail. */
bool st_bytes_eq_skip(const uint8_t *p, size_t n, const char *hex, uint64_t skip,
		      const char *file, int line);
#define st_bytes_eq(p, n, hex) st_bytes_eq_skip((p), (n), (hex), 0, __FILE__, __LINE__)
/* Skip the android_log_header_t's tid and realtime (bytes 1..10). */
#define ST_SKIP_HEADER 0x7feull

/* A statsd stand-in: an AF_UNIX datagram socket bound at path (unlinked
 * first).  Returns the fd or -1. */
int st_receiver(const char *path);
/* Non-blocking receive of one datagram; returns its length or -1 if none. */
long st_recv(int fd, uint8_t *buf, size_t cap);
/* Receive and discard everything queued; returns the number of datagrams. */
int st_drain(int fd);

#endif
