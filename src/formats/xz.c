/* xz.c — .xz/LZMA2 decoder (see xz.h).  Stub: filled in next. */
#include "formats/xz.h"

#include <errno.h>

int xz_decode(const char *name, const uint8_t *in, size_t in_len, size_t max_out, uint8_t **out,
	      size_t *out_len, struct err *err)
{
	(void)in; (void)in_len; (void)max_out;
	*out = NULL;
	*out_len = 0;
	return err_set(err, -ENOTSUP, "%s: xz: not implemented yet", name);
}
