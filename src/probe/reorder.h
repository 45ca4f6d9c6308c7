/* reorder.h — the perf buffer's records put back in time order.
 *
 * The legacy objects write through a perf event array: one buffer per CPU,
 * which the loop reads one CPU after another.  A thread that migrates has
 * its next call's record in another CPU's buffer, so reading them buffer by
 * buffer hands a later record out before an earlier one (63 of 3,000
 * consecutive calls of one thread, forced to change CPU every 7 calls; the
 * vm-6.1 legacy round paired a record with the wrong call that way, issue
 * 32).  The ring buffer (5.8+) is one buffer in reservation order and needs
 * none of this.
 *
 * Each record read is copied here, keyed by its envelope's CLOCK_MONOTONIC
 * time (the order read breaks ties), and taken out in time order up to a
 * watermark: a little before the time the drain started, since every record
 * stamped before that was in its buffer by then (perf's "finished round").
 * Records stamped after it wait for the next drain (a timer drains every
 * flush period), and the last drain takes them all.  Nothing is dropped:
 * what the reorder holds is at most what the buffers held. */
#ifndef UPROBESTATS_PROBE_REORDER_H
#define UPROBESTATS_PROBE_REORDER_H

#include <stddef.h>
#include <stdint.h>

/* How far before a drain's start the watermark lies: the time a BPF
 * program takes from stamping its record to writing it, with room to spare. */
#define REORDER_MARGIN_NS 5000000ULL /* 5 ms */

struct reorder_item {
	uint64_t ktime;
	uint64_t seq;          /* the order read: ties keep it */
	uint32_t size;
	uint8_t *data;
};

struct reorder {
	struct reorder_item *heap;   /* a binary min-heap on (ktime, seq) */
	size_t n, cap;
	uint64_t next_seq;
	size_t bytes;                /* record bytes held */
};

/* Holds a copy of the record (its first 8 bytes: the envelope's time; a
 * shorter one sorts first, at time 0).  0, or -ENOMEM (nothing held). */
int reorder_push(struct reorder *r, const void *data, uint32_t size);

/* The oldest record if its time is below watermark (its data stays valid
 * until reorder_pop), else NULL. */
const struct reorder_item *reorder_peek(const struct reorder *r, uint64_t watermark);

/* Removes the oldest record (after reorder_peek returned it). */
void reorder_pop(struct reorder *r);

void reorder_free(struct reorder *r);

#endif
