#include "sys/name_cache.h"

#include <string.h>

#include "sys/proc.h"

void name_cache_init(struct name_cache *c, const char *proc_dir)
{
	memset(c, 0, sizeof(*c));
	c->proc_dir = proc_dir ? proc_dir : "/proc";
}

const char *name_cache_get(struct name_cache *c, pid_t pid)
{
	/* Direct-mapped: a collision just rereads /proc for the newer pid. */
	struct name_cache_slot *s = &c->slots[(uint32_t)pid % NAME_CACHE_SLOTS];
	char buf[4096];

	if (pid <= 0)
		return NULL;
	if (s->pid != pid) {
		s->pid = pid;
		s->name[0] = '\0';
		if (proc_argv0(c->proc_dir, pid, buf, sizeof(buf)) == 0) {
			const char *base = buf;
			size_t len = strlen(buf);
			/* Keep the tail of long paths: the binary's name matters most. */
			if (len >= NAME_CACHE_LEN)
				base = buf + len - (NAME_CACHE_LEN - 1);
			memcpy(s->name, base, strlen(base) + 1);
		}
	}
	return s->name[0] ? s->name : NULL;
}
