#include "sink/sections.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

#define NAME_MAX_LEN 128

struct sec_thread {
	uint32_t tid;
	bool used;
	uint32_t depth;
	char **names;              /* names[0..min(depth, SECTIONS_MAX_DEPTH)) */
	size_t names_cap;
	/* the thread's previous section event, for merging one call's layers */
	bool has_last;
	uint8_t last_op;
	uint8_t last_layer;        /* enum layer of its (latest) probe */
	uint32_t last_hash;
	int64_t last_value;
};

struct sec_async {
	uint32_t pid;
	int64_t cookie;
	uint32_t hash;             /* 0: free slot */
	bool gone;                 /* a tombstone (ended) */
	uint32_t n_open;           /* begun and not yet ended: the same (pid, name, cookie)
				    * begun again nests, its ends pair last-begun first */
	char *name;
};

struct sections {
	struct sec_thread *threads;
	size_t cap, used;
	struct sec_async *async;
	size_t acap, aused;        /* aused counts tombstones too */
	size_t aopen;
	struct sections_report r;
	char ended_name[NAME_MAX_LEN];
};

const char *section_op_name(uint8_t op)
{
	switch (op) {
	case SECTION_OP_BEGIN: return "begin";
	case SECTION_OP_END: return "end";
	case SECTION_OP_ASYNC_BEGIN: return "async_begin";
	case SECTION_OP_ASYNC_END: return "async_end";
	case SECTION_OP_COUNTER:
	case SECTION_OP_COUNTER64: return "counter";
	}
	return "?";
}

struct sections *sections_new(void)
{
	return calloc(1, sizeof(struct sections));
}

void sections_free(struct sections *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->cap; i++) {
		for (size_t k = 0; k < s->threads[i].names_cap; k++)
			free(s->threads[i].names[k]);
		free(s->threads[i].names);
	}
	for (size_t i = 0; i < s->acap; i++)
		free(s->async[i].name);
	free(s->threads);
	free(s->async);
	free(s);
}

static uint32_t hash_bytes(const char *p, size_t n, uint64_t seed)
{
	uint32_t h = 2166136261u ^ (uint32_t)seed ^ (uint32_t)(seed >> 32);

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * 16777619u;
	return h | 1;
}

/* ---- threads ---- */

static struct sec_thread *thread_slot(struct sec_thread *tab, size_t cap, uint32_t tid)
{
	size_t i = (size_t)(tid * 2654435761u) & (cap - 1);

	while (tab[i].used && tab[i].tid != tid)
		i = (i + 1) & (cap - 1);
	return &tab[i];
}

static bool grow_threads(struct sections *s)
{
	size_t cap;
	struct sec_thread *tab;

	if (grow_cap(s->cap, s->cap + 1, 64, sizeof(*tab), &cap) < 0 ||
	    !(tab = calloc(cap, sizeof(*tab))))
		return false;
	for (size_t i = 0; i < s->cap; i++)
		if (s->threads[i].used)
			*thread_slot(tab, cap, s->threads[i].tid) = s->threads[i];
	free(s->threads);
	s->threads = tab;
	s->cap = cap;
	return true;
}

static struct sec_thread *thread_of(struct sections *s, uint32_t tid)
{
	struct sec_thread *t;

	if (s->cap && (t = thread_slot(s->threads, s->cap, tid))->used)
		return t;
	if ((s->used + 1) * 2 > s->cap && !grow_threads(s))
		return NULL;
	t = thread_slot(s->threads, s->cap, tid);
	t->used = true;
	t->tid = tid;
	s->used++;
	return t;
}

/* Keeps the name of the section at the thread's current depth. */
static void push_name(struct sec_thread *t, const char *name, uint32_t len)
{
	if (t->depth >= SECTIONS_MAX_DEPTH)
		return;
	if (t->depth >= t->names_cap) {
		size_t old = t->names_cap;
		if (grow_array(&t->names, &t->names_cap, (size_t)t->depth + 1, 8) < 0)
			return;
		memset(t->names + old, 0, (t->names_cap - old) * sizeof(*t->names));
	}
	if (!t->names[t->depth] && !(t->names[t->depth] = malloc(NAME_MAX_LEN)))
		return;
	if (len >= NAME_MAX_LEN)
		len = NAME_MAX_LEN - 1;
	memcpy(t->names[t->depth], name, len);
	t->names[t->depth][len] = 0;
}

static const char *name_at(const struct sec_thread *t, uint32_t depth)
{
	return depth < t->names_cap && t->names[depth] ? t->names[depth] : "";
}

/* ---- async sections: open addressing on (pid, name, cookie) ---- */

static struct sec_async *async_find(struct sections *s, uint32_t pid, int64_t cookie,
				    uint32_t h, const char *name, uint32_t len, bool for_insert)
{
	struct sec_async *free_slot = NULL;

	if (!s->acap)
		return NULL;
	for (size_t i = h & (s->acap - 1), n = 0; n < s->acap; i = (i + 1) & (s->acap - 1), n++) {
		struct sec_async *a = &s->async[i];
		if (!a->hash)
			return for_insert ? (free_slot ? free_slot : a) : NULL;
		if (a->gone) {
			if (!free_slot)
				free_slot = a;
			continue;
		}
		if (a->hash == h && a->pid == pid && a->cookie == cookie &&
		    strlen(a->name) == len && !memcmp(a->name, name, len))
			return a;
	}
	return for_insert ? free_slot : NULL;
}

static bool grow_async(struct sections *s)
{
	struct sec_async *old = s->async;
	size_t ocap = s->acap, cap;

	if (grow_cap(s->acap, s->acap + 1, 256, sizeof(*s->async), &cap) < 0)
		return false;
	s->async = calloc(cap, sizeof(*s->async));
	if (!s->async) {
		s->async = old;
		return false;
	}
	s->acap = cap;
	s->aused = 0;
	for (size_t i = 0; i < ocap; i++) {
		struct sec_async *a = &old[i], *d;
		if (!a->hash || a->gone) {
			free(a->name);
			continue;
		}
		d = async_find(s, a->pid, a->cookie, a->hash, a->name, (uint32_t)strlen(a->name),
			       true);
		*d = *a;
		s->aused++;
	}
	free(old);
	return true;
}

static void async_begin(struct sections *s, uint32_t pid, const struct section_call *c)
{
	uint32_t h = hash_bytes(c->name, c->name_len, (uint64_t)c->value ^ pid);
	struct sec_async *a;

	s->r.async_begun++;
	if (s->aopen >= SECTIONS_MAX_ASYNC ||
	    ((s->aused + 1) * 2 > s->acap && !grow_async(s))) {
		s->r.async_untracked++;
		return;
	}
	a = async_find(s, pid, c->value, h, c->name, c->name_len, true);
	if (!a) {
		s->r.async_untracked++;
		return;
	}
	if (a->hash && !a->gone) {  /* begun again before its end: one more open */
		a->n_open++;
		s->aopen++;
		return;
	}
	if (!a->hash)
		s->aused++;
	free(a->name);
	a->name = strndup(c->name, c->name_len);
	if (!a->name) {
		a->hash = 0;
		s->r.async_untracked++;
		return;
	}
	*a = (struct sec_async){ .pid = pid, .cookie = c->value, .hash = h, .n_open = 1,
				 .name = a->name };
	s->aopen++;
}

static void async_end(struct sections *s, uint32_t pid, struct section_call *c)
{
	uint32_t h = hash_bytes(c->name, c->name_len, (uint64_t)c->value ^ pid);
	struct sec_async *a = async_find(s, pid, c->value, h, c->name, c->name_len, false);

	if (!a) {
		s->r.async_end_unbegun++;
		c->verdict = SECTION_END_UNBEGUN;
		return;
	}
	if (--a->n_open == 0)
		a->gone = true;
	s->aopen--;
	s->r.async_ended++;
}

/* ---- one event ---- */

static const struct field *field_named(const struct event *ev, const char *name)
{
	for (size_t i = 0; i < ev->n_fields; i++)
		if (!strcmp(ev->fields[i].name, name))
			return &ev->fields[i];
	return NULL;
}

static void read_call(const struct event *ev, struct section_call *c)
{
	const struct probe_desc *p = ev->probe;
	char reg[8];

	*c = (struct section_call){ .op = p->section, .name = "" };
	for (size_t i = 0; i < ev->n_fields; i++)
		if (ev->fields[i].type == FIELD_STRING) {
			c->name = ev->fields[i].v.str.ptr;
			c->name_len = ev->fields[i].v.str.len;
			break;
		}
	if (p->section_value_reg >= 0) {
		const struct field *f;
		snprintf(reg, sizeof(reg), "r%d", p->section_value_reg);
		f = field_named(ev, reg);
		if (f)
			/* 32-bit arguments: the upper half of the register is not
			 * defined by either ABI */
			c->value = p->section == SECTION_OP_COUNTER64 ? (int64_t)f->v.u64
				   : (int64_t)(int32_t)(uint32_t)f->v.u64;
	}
}

/* Who calls whom: Trace.beginAsyncSection calls Trace.asyncTraceBegin; the
 * Java methods (through JNI) and the NDK's ATrace_* call libcutils'
 * atrace_*_body when the tag is enabled.  Known by the probed function's
 * name; any other function is LAYER_OTHER and never merges. */
enum layer { LAYER_OTHER, LAYER_JAVA_API, LAYER_JAVA_FW, LAYER_NDK, LAYER_CUTILS };

static uint8_t layer_of(const char *method)
{
	static const char *const api[] = { ".beginSection(", ".endSection(",
					   ".beginAsyncSection(", ".endAsyncSection(",
					   ".setCounter(" };
	const char *m = method ? strstr(method, "android.os.Trace.") : NULL;

	if (m) {
		for (size_t i = 0; i < sizeof(api) / sizeof(api[0]); i++)
			if (strstr(m, api[i]))
				return LAYER_JAVA_API;
		return LAYER_JAVA_FW;
	}
	if (method && !strncmp(method, "ATrace_", 7))
		return LAYER_NDK;
	if (method && !strncmp(method, "atrace_", 7))
		return LAYER_CUTILS;
	return LAYER_OTHER;
}

static bool calls(uint8_t caller, uint8_t callee)
{
	return (callee == LAYER_CUTILS && caller != LAYER_OTHER && caller != LAYER_CUTILS) ||
	       (callee == LAYER_JAVA_FW && caller == LAYER_JAVA_API);
}

/* The same call as the thread's previous section event, one layer down. */
static bool merges(struct sec_thread *t, const struct section_call *c, uint8_t layer,
		   uint32_t h)
{
	bool same = t->has_last && t->last_op == c->op && t->last_hash == h &&
		    t->last_value == c->value && calls(t->last_layer, layer);

	t->has_last = true;
	t->last_op = c->op;
	t->last_hash = h;
	t->last_value = c->value;
	t->last_layer = layer;
	return same;
}

static void sync_section(struct sections *s, struct sec_thread *t, struct section_call *c)
{
	if (c->op == SECTION_OP_BEGIN) {
		push_name(t, c->name, c->name_len);
		t->depth++;
		c->depth = t->depth;
		s->r.begun++;
		return;
	}
	c->depth = t->depth;
	if (!t->depth) {
		c->verdict = SECTION_END_UNBEGUN;
		s->r.end_unbegun++;
		return;
	}
	t->depth--;
	snprintf(s->ended_name, sizeof(s->ended_name), "%s", name_at(t, t->depth));
	c->name = s->ended_name;
	c->name_len = (uint32_t)strlen(s->ended_name);
	s->r.ended++;
}

void sections_classify(struct sections *s, const struct event *ev, struct section_call *c)
{
	uint8_t layer = layer_of(ev->probe->method);
	struct sec_thread *t;
	uint32_t h;

	read_call(ev, c);
	s->r.any = true;
	h = hash_bytes(c->name, c->name_len, 0);
	t = thread_of(s, ev->tid);
	if (t && merges(t, c, layer, h)) {
		c->verdict = SECTION_MERGED;
		s->r.merged++;
		return;
	}
	switch (c->op) {
	case SECTION_OP_BEGIN:
	case SECTION_OP_END:
		if (t)
			sync_section(s, t, c);
		break;
	case SECTION_OP_ASYNC_BEGIN:
		async_begin(s, ev->pid, c);
		break;
	case SECTION_OP_ASYNC_END:
		async_end(s, ev->pid, c);
		break;
	default:
		s->r.counters++;
		break;
	}
}

void sections_finish(struct sections *s)
{
	s->r.open_at_exit = 0;
	for (size_t i = 0; i < s->cap; i++) {
		const struct sec_thread *t = &s->threads[i];
		if (!t->used || !t->depth)
			continue;
		if (!s->r.first_open[0])
			snprintf(s->r.first_open, sizeof(s->r.first_open), "%s", name_at(t, 0));
		s->r.open_at_exit += t->depth;
	}
	s->r.async_open_at_exit = s->aopen;
	for (size_t i = 0; i < s->acap && !s->r.first_open[0]; i++)
		if (s->async[i].hash && !s->async[i].gone)
			snprintf(s->r.first_open, sizeof(s->r.first_open), "%s", s->async[i].name);
}

void sections_report(const struct sections *s, struct sections_report *r)
{
	*r = s->r;
}

void sections_report_text(FILE *f, const struct sections_report *r)
{
	fprintf(f, "sections: %" PRIu64 " begun, %" PRIu64 " ended; async %" PRIu64 " begun, %"
		PRIu64 " ended; %" PRIu64 " counter values\n", r->begun, r->ended, r->async_begun,
		r->async_ended, r->counters);
	if (r->end_unbegun || r->async_end_unbegun)
		fprintf(f, "sections: %" PRIu64 " ends and %" PRIu64 " async ends had no begin "
			   "(begun before the attach): not paired, no slice written\n",
			r->end_unbegun, r->async_end_unbegun);
	if (r->open_at_exit || r->async_open_at_exit)
		fprintf(f, "sections: %" PRIu64 " sections and %" PRIu64 " async sections were "
			   "still open at exit (e.g. '%s'): left open, no end written\n",
			r->open_at_exit, r->async_open_at_exit, r->first_open);
	if (r->async_untracked)
		fprintf(f, "sections: %" PRIu64 " async begins not tracked (over %d open at once)\n",
			r->async_untracked, SECTIONS_MAX_ASYNC);
	if (r->merged)
		fprintf(f, "sections: %" PRIu64 " calls seen again one layer down (Java -> "
			   "libcutils) counted once\n", r->merged);
}

static void count(struct json_out *j, const char *key, uint64_t v)
{
	json_key(j, key);
	json_u64(j, v);
}

void sections_report_json(struct json_out *j, const struct sections_report *r)
{
	json_object_begin(j);
	count(j, "begun", r->begun);
	count(j, "ended", r->ended);
	count(j, "end_unbegun", r->end_unbegun);
	count(j, "open_at_exit", r->open_at_exit);
	count(j, "async_begun", r->async_begun);
	count(j, "async_ended", r->async_ended);
	count(j, "async_end_unbegun", r->async_end_unbegun);
	count(j, "async_open_at_exit", r->async_open_at_exit);
	count(j, "async_untracked", r->async_untracked);
	count(j, "counters", r->counters);
	count(j, "merged", r->merged);
	json_object_end(j);
}
