/* minidebug.c — .gnu_debugdata (see minidebug.h).  Stub: filled in next. */
#include "formats/minidebug.h"

#include <errno.h>
#include <string.h>

int minidebug_open(const struct elf_file *outer, struct minidebug *out, struct err *err)
{
	memset(out, 0, sizeof(*out));
	return err_set(err, -ENOTSUP, "%s: .gnu_debugdata: not implemented yet", elf_name(outer));
}

void minidebug_close(struct minidebug *m) { (void)m; }
