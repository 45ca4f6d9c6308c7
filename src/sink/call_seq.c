#include "sink/call_seq.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"

#define FIRST_CALLS 4096u
#define FIRST_ROWS 64u

/* ---- key -> index (open addressing, rebuilt twice as large at half full) ---- */

static size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

static size_t probe_slot(const struct call_seq_index *x, uint64_t key)
{
	size_t i = slot_of(key, x->cap);

	while (x->vals[i] && x->keys[i] != key)
		i = (i + 1) & (x->cap - 1);
	return i;
}

static bool index_grow(struct call_seq_index *x)
{
	struct call_seq_index n = { 0 };

	if (grow_cap(x->cap, x->cap + 1, FIRST_ROWS, sizeof(uint64_t) + sizeof(uint32_t),
		     &n.cap) < 0)
		return false;
	n.keys = calloc(n.cap, sizeof(*n.keys));
	n.vals = calloc(n.cap, sizeof(*n.vals));
	if (!n.keys || !n.vals) {
		free(n.keys);
		free(n.vals);
		return false;
	}
	for (size_t i = 0; i < x->cap; i++) {
		if (!x->vals[i])
			continue;
		size_t j = probe_slot(&n, x->keys[i]);
		n.keys[j] = x->keys[i];
		n.vals[j] = x->vals[i];
	}
	free(x->keys);
	free(x->vals);
	*x = n;
	return true;
}

/* The index of key, or (when new) *added set and n the index to give it;
 * -1 when memory ran out. */
static int64_t index_get(struct call_seq_index *x, uint64_t key, size_t n, bool *added)
{
	size_t i;

	*added = false;
	if (x->cap) {
		i = probe_slot(x, key);
		if (x->vals[i])
			return x->vals[i] - 1;
	}
	if ((n + 1) * 2 > x->cap && !index_grow(x))
		return -1;
	i = probe_slot(x, key);
	x->keys[i] = key;
	x->vals[i] = (uint32_t)n + 1;
	*added = true;
	return (int64_t)n;
}

static void index_free(struct call_seq_index *x)
{
	free(x->keys);
	free(x->vals);
	memset(x, 0, sizeof(*x));
}

/* ---- rows ---- */

static void set_name(struct call_seq_thread *t, const char *comm)
{
	if (comm && comm[0])
		snprintf(t->name, sizeof(t->name), "%s", comm);
}

static int64_t thread_of(struct call_seq *s, const struct event *ev)
{
	bool added;
	int64_t i = index_get(&s->by_tid, ev->tid, s->n_threads, &added);

	if (i < 0 || !added) {
		if (i >= 0)
			set_name(&s->threads[i], ev->comm);
		return i;
	}
	if (grow_array(&s->threads, &s->cap_threads, s->n_threads + 1, FIRST_ROWS) < 0) {
		size_t k = probe_slot(&s->by_tid, ev->tid);
		s->by_tid.vals[k] = 0;  /* not kept after all (only a full table: never a hole) */
		return -1;
	}
	s->threads[i] = (struct call_seq_thread){ .tid = ev->tid, .pid = ev->pid };
	set_name(&s->threads[i], ev->comm);
	s->n_threads++;
	return i;
}

static int64_t method_of(struct call_seq *s, const struct probe_desc *p)
{
	bool added;
	int64_t i = index_get(&s->by_probe, (uint64_t)(uintptr_t)p, s->n_methods, &added);

	if (i < 0 || !added)
		return i;
	if (grow_array(&s->methods, &s->cap_methods, s->n_methods + 1, FIRST_ROWS) < 0) {
		s->by_probe.vals[probe_slot(&s->by_probe, (uint64_t)(uintptr_t)p)] = 0;
		return -1;
	}
	s->methods[i] = p;
	s->n_methods++;
	return i;
}

/* ev's time on CLOCK_BOOTTIME, from its record's own clock (CLOCK_MONOTONIC)
 * by the offset the first such event had: the loop measures the offset anew
 * at every tick, and a call unwound at an entry must end at exactly the ns
 * the call entering there begins, whichever drains brought their records. */
static uint64_t boot_of(struct call_seq *s, const struct event *ev)
{
	if (!ev->mono_ns)
		return ev->boot_ns;
	if (!s->has_offset) {
		s->mono_to_boot = ev->boot_ns - ev->mono_ns;
		s->has_offset = true;
	}
	return ev->mono_ns + s->mono_to_boot;
}

bool call_seq_add(struct call_seq *s, const struct event *ev)
{
	int64_t th, m;
	uint64_t dur, end;

	if ((ev->kind != EVENT_RETURN && ev->kind != EVENT_UNWOUND) || !ev->probe)
		return false;
	th = thread_of(s, ev);
	m = th < 0 ? -1 : method_of(s, ev->probe);
	if (m < 0 || grow_array(&s->calls, &s->cap_calls, s->n_calls + 1, FIRST_CALLS) < 0) {
		s->lost++;
		return true;
	}
	end = boot_of(s, ev);
	dur = ev->duration_ns <= end ? ev->duration_ns : end;
	s->calls[s->n_calls++] = (struct call_seq_call){
		.enter_ns = end - dur, .exit_ns = end, .entry_sp = ev->entry_sp,
		.thread = (uint32_t)th, .method = (uint32_t)m,
		.unroll = ev->kind == EVENT_UNWOUND,
	};
	s->unwound += ev->kind == EVENT_UNWOUND;
	if (!s->first_ns || end - dur < s->first_ns)
		s->first_ns = end - dur;
	if (end > s->last_ns)
		s->last_ns = end;
	return true;
}

bool call_seq_add_running(struct call_seq *s, const struct running_call *c, uint64_t end_ns)
{
	struct event ev = { .kind = EVENT_RETURN, .tid = c->tid, .probe = c->probe,
			    .entry_sp = c->entry_sp, .pid = c->pid ? c->pid : c->tid,
			    .comm = c->comm[0] ? c->comm : NULL };
	size_t n = s->n_calls;
	/* on the events' clock (boot_of): an entry that revealed an unwound
	 * call begins exactly where that call ends */
	uint64_t enter = c->enter_mono_ns && s->has_offset ? c->enter_mono_ns + s->mono_to_boot
							   : c->enter_boot_ns;

	if (!c->probe || enter > end_ns)
		return false;
	ev.boot_ns = end_ns;
	ev.duration_ns = end_ns - enter;
	call_seq_add(s, &ev);
	if (s->n_calls > n)
		s->calls[n].unroll = true;
	return true;
}

/* ---- the replay ---- */

/* By thread, then entry; at the same entry the longer (outer) call first,
 * then the earlier method index, so the order never depends on qsort. */
static int by_thread_entry(const void *a, const void *b)
{
	const struct call_seq_call *x = a, *y = b;

	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	if (x->enter_ns != y->enter_ns)
		return x->enter_ns < y->enter_ns ? -1 : 1;
	if (x->exit_ns != y->exit_ns)
		return x->exit_ns > y->exit_ns ? -1 : 1;
	return x->method < y->method ? -1 : x->method > y->method;
}

struct open_stack {
	struct call_seq_call **v;
	size_t n, cap;
};

static void close_to(struct open_stack *st, uint64_t until, call_seq_fn fn, void *ctx)
{
	while (st->n && st->v[st->n - 1]->exit_ns <= until) {
		struct call_seq_call *c = st->v[--st->n];
		fn(ctx, c, c->unroll ? CALL_UNROLL : CALL_EXIT, c->exit_ns);
	}
}

/* Whether open, an unrolled call still open when c enters, was left before
 * c entered: c's entry sp at or above open's, both known.  A returned call
 * open there is never: c entered between its entry and its exit. */
static bool frame_gone_by(const struct call_seq_call *open, const struct call_seq_call *c)
{
	return open->unroll && open->entry_sp && c->entry_sp && c->entry_sp >= open->entry_sp;
}

/* Ends at c's entry the unrolled calls on top of st that c's sp shows were
 * left before it, innermost first.  It stops at the first open call that was
 * not: the calls below it enclose it, so they were left no earlier. */
static void close_gone(struct call_seq *s, struct open_stack *st, const struct call_seq_call *c,
		       call_seq_fn fn, void *ctx)
{
	while (st->n && frame_gone_by(st->v[st->n - 1], c)) {
		struct call_seq_call *o = st->v[--st->n];
		o->exit_ns = c->enter_ns;   /* it was later: close_to left it open */
		s->gone++;
		fn(ctx, o, CALL_UNROLL, o->exit_ns);
	}
}

void call_seq_replay(struct call_seq *s, call_seq_fn fn, void *ctx)
{
	struct open_stack st = { 0 };

	if (s->n_calls)
		qsort(s->calls, s->n_calls, sizeof(*s->calls), by_thread_entry);
	for (size_t i = 0; i < s->n_calls; i++) {
		struct call_seq_call *c = &s->calls[i];

		if (st.n && st.v[st.n - 1]->thread != c->thread)
			close_to(&st, UINT64_MAX, fn, ctx);
		close_to(&st, c->enter_ns, fn, ctx);
		close_gone(s, &st, c, fn, ctx);
		if (st.n && c->exit_ns > st.v[st.n - 1]->exit_ns) {
			c->exit_ns = st.v[st.n - 1]->exit_ns;
			s->clamped++;
		}
		if (grow_array(&st.v, &st.cap, st.n + 1, FIRST_ROWS) < 0) {
			s->lost++;      /* deeper than memory allows: left out whole */
			continue;
		}
		fn(ctx, c, CALL_ENTER, c->enter_ns);
		st.v[st.n++] = c;
	}
	close_to(&st, UINT64_MAX, fn, ctx);
	free(st.v);
}

void call_seq_free(struct call_seq *s)
{
	free(s->calls);
	free(s->threads);
	free(s->methods);
	index_free(&s->by_tid);
	index_free(&s->by_probe);
	memset(s, 0, sizeof(*s));
}
