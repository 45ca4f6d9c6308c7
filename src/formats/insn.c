#include "formats/insn.h"

#include <errno.h>
#include <string.h>

unsigned insn_x86_64_decode(const uint8_t *p, size_t avail, struct insn_x86_64 *info)
{
	(void)p, (void)avail;
	if (info)
		memset(info, 0, sizeof(*info));
	return 0;
}

int insn_boundary_check(enum code_arch arch, const uint8_t *func, size_t size, size_t off,
			struct err *err)
{
	(void)arch, (void)func, (void)size, (void)off;
	return err_set(err, -ENOTSUP, "instruction boundary check not implemented yet");
}
