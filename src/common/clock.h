/* clock.h — a clock's time in nanoseconds, as one signed 64-bit count (enough
 * for 292 years). */
#ifndef UPROBESTATS_COMMON_CLOCK_H
#define UPROBESTATS_COMMON_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

#endif
