#include "formats/exit_sites.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int exit_sites_find(enum code_arch arch, enum code_kind kind, const uint8_t *code, size_t size,
		    struct exit_sites *out, struct err *err)
{
	(void)arch, (void)kind, (void)code, (void)size;
	memset(out, 0, sizeof(*out));
	return err_set(err, -ENOTSUP, "exit sites not implemented yet");
}

void exit_sites_free(struct exit_sites *s)
{
	if (!s)
		return;
	free(s->offsets);
	s->offsets = NULL;
	s->count = 0;
}
