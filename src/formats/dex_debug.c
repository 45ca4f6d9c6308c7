/* dex_debug.c — dex line-number programs (see dex_debug.h).  Stub. */
#include "formats/dex_debug.h"

#include <errno.h>

int dex_method_positions(const struct dex_file *d, const struct dex_method *m,
			 struct dex_position **out, size_t *n, struct err *err)
{
	(void)d; (void)m;
	*out = NULL;
	*n = 0;
	return err_set(err, -ENOTSUP, "dex debug info: not implemented yet");
}

int dex_method_line(const struct dex_file *d, const struct dex_method *m, uint32_t dex_pc,
		    uint32_t *line, struct err *err)
{
	(void)d; (void)m; (void)dex_pc; (void)line;
	return err_set(err, -ENOTSUP, "dex debug info: not implemented yet");
}

const char *dex_class_source_file(const struct dex_file *d, uint32_t cdi)
{
	(void)d; (void)cdi;
	return NULL;
}
