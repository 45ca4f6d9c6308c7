#include "sys/name_cache.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "sys/proc.h"

void name_cache_init(struct name_cache *c, const char *proc_dir)
{
	memset(c, 0, sizeof(*c));
	c->proc_dir = proc_dir ? proc_dir : "/proc";
}

/* comm, else the basename of the executable, else fallback. */
static bool name_without_cmdline(const char *proc_dir, pid_t pid, const char *fallback,
				 char *buf, size_t size)
{
	char path[256], exe[4096];
	ssize_t n;

	if (proc_comm(proc_dir, pid, buf, size) && *buf)
		return true;
	snprintf(path, sizeof(path), "%s/%d/exe", proc_dir, (int)pid);
	if ((n = readlink(path, exe, sizeof(exe) - 1)) > 0) {
		const char *base;
		exe[n] = 0;
		base = strrchr(exe, '/');
		snprintf(buf, size, "%s", base ? base + 1 : exe);
		return true;
	}
	if (!fallback || !*fallback)
		return false;
	snprintf(buf, size, "%s", fallback);
	return true;
}

/* name into a slot: a long path keeps its tail (the binary's name matters
 * most). */
static void keep_name(char out[NAME_CACHE_LEN], const char *name)
{
	size_t len = strlen(name);
	const char *base = len >= NAME_CACHE_LEN ? name + len - (NAME_CACHE_LEN - 1) : name;

	memcpy(out, base, strlen(base) + 1);
}

const char *name_cache_get(struct name_cache *c, pid_t pid, const char *fallback,
			   uint64_t now_ns)
{
	/* Direct-mapped: a collision just rereads /proc for the newer pid. */
	struct name_cache_slot *s = &c->slots[(uint32_t)pid % NAME_CACHE_SLOTS];
	char buf[4096];

	if (pid <= 0)
		return NULL;
	if (s->pid != pid) {
		s->pid = pid;
		s->read_ns = now_ns;
		s->name[0] = '\0';
		if (proc_argv0(c->proc_dir, pid, buf, sizeof(buf)) == 0 ||
		    name_without_cmdline(c->proc_dir, pid, fallback, buf, sizeof(buf)))
			keep_name(s->name, buf);
	} else if (now_ns && now_ns > s->read_ns + NAME_CACHE_RECHECK_NS) {
		s->read_ns = now_ns;
		/* only while it lives: argv[0] (a gone process keeps its name) */
		if (proc_argv0(c->proc_dir, pid, buf, sizeof(buf)) == 0)
			keep_name(s->name, buf);
	}
	return s->name[0] ? s->name : NULL;
}
