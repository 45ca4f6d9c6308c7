/* call_seq.h — the calls of a run kept for the writers that need a whole
 * call tree per thread (sink/art_trace_out.h, sink/speedscope_out.h).
 *
 * Each return event (EVENT_RETURN: the call's end at boot_ns and its
 * duration) is one call on its thread, and so is each unwound event
 * (EVENT_UNWOUND: a call an exception or a longjmp left, ended where the
 * later hit that revealed it was, with an unroll).  Return events come when a call
 * returns, so an outer call comes after the calls it made; at the end the
 * calls of each thread are sorted by entry (an outer call before the calls
 * it made when they enter at the same ns) and replayed as properly nested
 * enter/exit actions, thread by thread.  A call that would end after the
 * call enclosing it is ended with it and counted in `clamped`: a returned
 * call never does (both ends are read on that thread), but an unwound one
 * does when the call enclosing it was revealed first (each probe reveals
 * only its own calls: A's next entry reveals A, B's next entry the B that
 * A called), and was unwound with it.  Calls still
 * running at the end (call_seq_add_running) end there with an unroll, as
 * ART's method tracing ends the calls on the stack when it stops.
 *
 * An unrolled call's end is only known as "no later than": the hit that
 * revealed it, or the end of the run.  The stack pointer at each call's entry
 * (entry_sp: the records carry it) bounds it better: the stack grows down,
 * so a later call C on the thread whose entry sp is at or above an unrolled
 * call U's (sp_C >= sp_U) was entered when U's frame was already gone, and U
 * ends (is unrolled) at C's entry instead (counted in `gone`): C and what
 * follows are drawn beside U, not inside it, whichever probe revealed U and
 * when.  A call entered below U's sp is taken as inside it (it may have been
 * made after U was left, from a deeper frame: the sp cannot tell), and a
 * returned call is never cut (both its ends were seen).
 *
 * Threads are numbered in the order they first appear, methods (one per
 * probe_desc) likewise; a thread keeps the last name it was seen with. */
#ifndef UPROBESTATS_SINK_CALL_SEQ_H
#define UPROBESTATS_SINK_CALL_SEQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vocab/event.h"

#define CALL_SEQ_NAME_MAX 32

struct call_seq_thread {
	uint32_t tid, pid;
	char name[CALL_SEQ_NAME_MAX];
};

struct call_seq_call {
	uint64_t enter_ns, exit_ns;   /* CLOCK_BOOTTIME */
	uint64_t entry_sp;            /* the stack pointer at the entry; 0: unknown */
	uint32_t thread, method;      /* indexes into threads[] and methods[] */
	bool unroll;                  /* unwound, or still running at the end: an unroll */
};

/* One index table: key -> index + 1 (0: free slot). */
struct call_seq_index {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap;
};

struct call_seq {
	struct call_seq_call *calls;
	size_t n_calls, cap_calls;
	struct call_seq_thread *threads;
	size_t n_threads, cap_threads;
	const struct probe_desc **methods;
	size_t n_methods, cap_methods;
	struct call_seq_index by_tid, by_probe;
	uint64_t first_ns, last_ns;   /* earliest entry, latest end (0, 0: none) */
	uint64_t lost;                /* calls not kept: out of memory */
	uint64_t clamped;             /* calls ended with the call enclosing them */
	uint64_t gone;                /* unrolled calls ended at the entry of a later call
				       * their frame was gone by (its sp at or above theirs) */
	uint64_t unwound;             /* of the calls, the unwound ones (EVENT_UNWOUND) */
	uint64_t mono_to_boot;        /* the first event's BOOTTIME - MONOTONIC: every */
	bool has_offset;              /* event's time is its mono_ns plus it */
};

enum call_action {
	CALL_ENTER = 0,               /* the values of ART's trace actions */
	CALL_EXIT = 1,
	CALL_UNROLL = 2,
};

/* Keeps ev when it is a return or an unwound event of a probe (anything
 * else: false). */
bool call_seq_add(struct call_seq *s, const struct event *ev);

/* A call still running at the end (end_ns): its exit is an unroll there. */
bool call_seq_add_running(struct call_seq *s, const struct running_call *c, uint64_t end_ns);

/* Calls fn for every action, thread by thread (in thread index order), each
 * thread's actions in time order, properly nested.  Sorts s->calls. */
typedef void (*call_seq_fn)(void *ctx, const struct call_seq_call *c, enum call_action a,
			    uint64_t ns);
void call_seq_replay(struct call_seq *s, call_seq_fn fn, void *ctx);

void call_seq_free(struct call_seq *s);

#endif
