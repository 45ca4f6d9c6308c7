/* fuzz_perf_mmap — the parser of the kernel's mapping records (sys/perf_mmap.h)
 * over arbitrary bytes: a record it accepts has a NUL-terminated path inside
 * the bytes when it is a mapping, a range that does not wrap, and any other
 * kind leaves the path NULL.  Seeds: an mmap2, an exec comm, a fork, an exit
 * and a lost record as the ring holds them. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sys/perf_mmap.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_mmap_rec r;

	if (perf_mmap_parse(data, size, &r) < 0) {
		if (r.kind != PERF_MMAP_OTHER || r.path)
			abort();
		return 0;
	}
	if (r.kind == PERF_MMAP_MAP) {
		const char *p = r.path;
		if (!p || p < (const char *)data || p >= (const char *)data + size ||
		    !memchr(p, '\0', (size_t)((const char *)data + size - p)) ||
		    r.start + r.len < r.start)
			abort();
	} else if (r.path) {
		abort();
	}
	return 0;
}
