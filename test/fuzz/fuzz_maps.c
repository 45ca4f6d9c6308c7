/* fuzz_maps — the one /proc/PID/maps reader (sys/maps.h) over arbitrary bytes
 * (not NUL-terminated): every mapping it hands over has start < end, four
 * permission characters and a NUL-terminated path of the length it states.
 * Seeds: an Android app's maps (oat, JIT caches, anonymous code) and a
 * desktop process's. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sys/maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int check_mapping(void *ctx, const struct proc_mapping *m)
{
	size_t *n = ctx;

	if (m->start >= m->end || strlen(m->perms) != 4 || strlen(m->path) != m->path_len)
		abort();
	(*n)++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = 0;

	proc_maps_parse((const char *)data, size, check_mapping, &n);
	return 0;
}
