/* fuzz_procstatus — the /proc/<pid>/status reader of the privilege check
 * (Uid and CapEff lines) over arbitrary bytes, not NUL-terminated.
 * Seeds: a root shell's status and a truncated one. */
#include <stddef.h>
#include <stdint.h>

#include "sys/privilege.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	long euid = 0;
	uint64_t caps = 0;

	priv_parse_status((const char *)data, size, &euid, &caps);
	return 0;
}
