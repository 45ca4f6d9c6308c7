#include "sink/folded_out.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "sink/stack_out.h"
#include "vocab/outbuf.h"

#define FOLDED_MAX_LINE 16384

struct folded_entry {
	char *key;
	uint32_t hash;
	uint64_t count;
};

struct folded_out {
	bool open;                  /* the outbuf is set up */
	bool merge;                 /* --stacks-merge: no process root frame */
	struct outbuf o;
	struct folded_entry *tab;   /* open addressing, cap a power of two */
	size_t cap, n;
	uint64_t dropped;           /* stacks not counted (out of memory) */
	char line[FOLDED_MAX_LINE];
};

static uint32_t hash_str(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

/* The root frame: the process's name (its last path component:
 * "/system/bin/surfaceflinger" is "surfaceflinger"), else the thread's comm,
 * else "[unknown]"; no pid, so processes of one name merge, as
 * stackcollapse-perf.pl's and bcc profile -f's process roots do.  Its
 * length in buf (';' written as ':'). */
static size_t root_frame(const struct event *ev, char *buf, size_t size)
{
	const char *name = ev->process && *ev->process ? ev->process : ev->comm;
	const char *slash;
	int n;

	if (!name || !*name)
		name = "[unknown]";
	slash = strrchr(name, '/');
	if (slash && slash[1])
		name = slash + 1;
	n = snprintf(buf, size, "%s;", name);
	if (n < 0)
		return 0;
	if ((size_t)n >= size)
		n = (int)size - 1;
	for (int k = 0; k < n - 1; k++)
		if (buf[k] == ';' || buf[k] == '\n')
			buf[k] = ':';
	return (size_t)n;
}

/* The folded line of st (no count), root first, into buf after its first
 * len bytes (the root frame); its length. */
static size_t fold(const struct stack_trace *st, char *buf, size_t size, size_t len)
{

	for (size_t i = st->n; i-- > 0 && len + 2 < size;) {
		size_t n = stack_frame_label(&st->frames[i], buf + len, size - len);

		for (size_t k = len; k < len + n; k++)
			if (buf[k] == ';' || buf[k] == '\n')
				buf[k] = ':';
		len += n;
		if (i && len + 1 < size)
			buf[len++] = ';';
	}
	buf[len] = '\0';
	return len;
}

static bool grow(struct folded_out *s)
{
	size_t cap;
	struct folded_entry *tab;

	if (grow_cap(s->cap, s->cap + 1, 1024, sizeof(*tab), &cap) < 0 ||
	    !(tab = calloc(cap, sizeof(*tab))))
		return false;
	for (size_t i = 0; i < s->cap; i++) {
		size_t j;

		if (!s->tab[i].key)
			continue;
		for (j = s->tab[i].hash & (cap - 1); tab[j].key; j = (j + 1) & (cap - 1))
			;
		tab[j] = s->tab[i];
	}
	free(s->tab);
	s->tab = tab;
	s->cap = cap;
	return true;
}

static void count(struct folded_out *s, const char *key, size_t len)
{
	uint32_t h = hash_str(key, len);
	size_t j;

	if ((s->n + 1) * 2 > s->cap && !grow(s)) {
		s->dropped++;
		return;
	}
	for (j = h & (s->cap - 1); s->tab[j].key; j = (j + 1) & (s->cap - 1)) {
		if (s->tab[j].hash == h && !strcmp(s->tab[j].key, key)) {
			s->tab[j].count++;
			return;
		}
	}
	s->tab[j].key = strdup(key);
	if (!s->tab[j].key) {
		s->dropped++;
		return;
	}
	s->tab[j].hash = h;
	s->tab[j].count = 1;
	s->n++;
}

static bool folded_wanted(const struct sinks_options *o)
{
	return o->folded_stacks != NULL;
}

static int folded_open(void *st, const struct sinks_options *o, struct err *e)
{
	struct folded_out *s = st;
	int rc = outbuf_init(&s->o, o->folded_stacks, 1 << 16, "stacks", e);

	s->o.at_exit = true;
	s->open = rc == 0;
	s->merge = o->folded_merge;
	return rc;
}

static void folded_event(void *st, const struct event *ev)
{
	struct folded_out *s = st;
	size_t root;

	if (!ev->stack || !ev->stack->n)
		return;
	root = s->merge ? 0 : root_frame(ev, s->line, sizeof(s->line) / 4);
	count(s, s->line, fold(ev->stack, s->line, sizeof(s->line), root));
}

static struct outbuf *folded_output(void *st)
{
	return &((struct folded_out *)st)->o;
}

static void folded_finish(void *st)
{
	struct folded_out *s = st;

	for (size_t i = 0; i < s->cap; i++) {
		if (!s->tab[i].key)
			continue;
		outbuf_puts(&s->o, s->tab[i].key);
		outbuf_printf(&s->o, " %" PRIu64 "\n", s->tab[i].count);
	}
	outbuf_flush(&s->o);
}

static void folded_close(void *st)
{
	struct folded_out *s = st;

	for (size_t i = 0; i < s->cap; i++)
		free(s->tab[i].key);
	free(s->tab);
	if (s->open) {
		outbuf_flush(&s->o);
		outbuf_free(&s->o);
	}
}

const struct sink_ops folded_sink = {
	.name = "stacks",
	.state_size = sizeof(struct folded_out),
	.wanted = folded_wanted,
	.open = folded_open,
	.event = folded_event,
	.output = folded_output,
	.finish = folded_finish,
	.close = folded_close,
};
