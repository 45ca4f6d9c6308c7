/* fuzz_mounts — the /proc/mounts reader doctor uses to find tracefs and bpffs,
 * over arbitrary bytes (not NUL-terminated), into a roomy and a tiny buffer.
 * Seeds: an Android and a desktop mount table. */
#include <stddef.h>
#include <stdint.h>

#include "sys/sysroot.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char mnt[256], tiny[4];

	sys_find_mount((const char *)data, size, "tracefs", mnt, sizeof(mnt));
	sys_find_mount((const char *)data, size, "bpf", tiny, sizeof(tiny));
	return 0;
}
