/* statsd_socket.h — the datagram writer to statsd's socket, behaving as
 * libstatssocket's statsd_writer + StatsSocketLossReporter do.
 *
 * Owns: the AF_UNIX SOCK_DGRAM|SOCK_NONBLOCK|SOCK_CLOEXEC connection to
 * /dev/socket/statsdw (or another path), one datagram per atom (header + magic
 * + event; sent in batches, see below), reconnect-once-and-resend on
 * ENOTCONN/ECONNREFUSED/ENOENT,
 * drop-and-count on every other error, and loss reporting after recovery: the
 * 24-byte legacy drop datagram, then atom 752 StatsSocketLossReported with per
 * (error, atom id) counts.  The writer never allocates after open.
 *
 * One difference from libstatssocket, which must never stall the app it lives
 * in: when statsd's queue is full (EAGAIN) the writer waits for room (poll
 * POLLOUT) and resends, for at most wait_ms per datagram; meanwhile records
 * wait in the kernel's ring buffer.  When the budget runs out the datagram is
 * dropped and counted as before and the writer is "congested": it drops at
 * once on EAGAIN until a datagram goes through again, so a stuck statsd costs
 * one budget, not one per atom.  wait_ms 0 is libstatssocket's behaviour
 * (never blocks, never retries).  A wait is one poll() bounded by what is left
 * of the budget: with our signals blocked for the loop's signalfd, the budget
 * (with the loop's 100 ms drain slices) bounds the delay before a SIGINT is
 * seen.
 *
 * Batching: statsd_writer_send only copies the datagram (frame stamped now +
 * event) into a fixed batch of STATSD_BATCH_MAX; statsd_writer_flush (the sink
 * set calls it after every drain, send calls it when the batch is full) sends
 * the batch with sendmmsg, one syscall for many datagrams, each still its own
 * datagram.  The syscall, not the encoding, is most of the CPU per event.  A
 * datagram the batch send could not take gets the one-datagram rules above
 * (wait, reconnect, drop and count), and drops are reported to statsd before
 * the next datagram of the batch, so what statsd sees is as without batching.
 * An atom's fate (sent or dropped) is known at flush, not at send. */
#ifndef UPROBESTATS_SINK_STATSD_SOCKET_H
#define UPROBESTATS_SINK_STATSD_SOCKET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "common/err.h"
#include "sink/statsd_encode.h"

#define STATSD_SOCKET_PATH "/dev/socket/statsdw"
#define STATSD_LOSS_ATOM_ID 752
#define STATSD_LOSS_MAX_PAIRS 100          /* beyond: overflow_count++ */
#define STATSD_LOSS_COOLDOWN_NS 10000000ull /* 10 ms between atom-752 attempts */
#define STATSD_WAIT_DEFAULT_MS 100u        /* per-datagram wait budget after open */
#define STATSD_WAIT_MAX_MS 10000u          /* the largest budget --statsd-wait takes */
#define STATSD_BATCH_MAX 64u               /* datagrams per sendmmsg */
#define STATSD_BATCH_BYTES (64u * 1024u)   /* their bytes; >= STATSD_MAX_DATAGRAM */

/* What the writer did, for the exit summary. */
struct statsd_writer_stats {
	uint64_t sent;          /* atoms delivered (the caller's, not atom 752) */
	uint64_t dropped;       /* atoms not delivered (EAGAIN, no socket, ...) */
	uint64_t reconnects;    /* successful reconnects after a lost connection */
	uint64_t drop_reports;  /* 24-byte drop datagrams delivered */
	uint64_t loss_atoms;    /* atom 752 reports delivered */
	uint64_t waited;        /* datagrams that found the queue full and waited
				 * (delivered or, once the budget ran out, dropped) */
	uint64_t wait_ns;       /* total time spent waiting */
	int last_error;         /* negative errno of the last drop, 0 if none */
	int32_t last_dropped_atom;
};

struct statsd_loss_pair {
	int32_t error;   /* negative errno */
	int32_t atom_id;
	int32_t count;
};

/* One queued datagram: batch_buf[off, off + len) is frame + event. */
struct statsd_pending {
	uint32_t off, len;
	int32_t atom_id;
	const void *tag;             /* the caller's, handed back on a drop */
};

/* Told of each atom that was dropped (error: its negative errno), at flush. */
typedef void statsd_drop_fn(void *ctx, int32_t atom_id, const void *tag, int error);

/* Treat as opaque: use the functions below.  Embeddable (no allocation). */
struct statsd_writer {
	int fd;                      /* -1 while disconnected */
	struct sockaddr_un addr;
	uint32_t tid;                /* header tid: the single writing thread */
	uint32_t uid;                /* field 1 of atom 752 */
	uint32_t wait_ms;            /* per-datagram budget on EAGAIN; 0: drop at once */
	bool congested;              /* a budget ran out: no waiting until one gets through */
	/* legacy drop counter, reported by the 24-byte datagram */
	int32_t legacy_dropped;
	int32_t legacy_error;
	int32_t legacy_atom;
	/* StatsSocketLossReporter */
	struct statsd_loss_pair pairs[STATSD_LOSS_MAX_PAIRS];
	size_t n_pairs;
	int32_t loss_overflow;
	uint64_t loss_first_ns, loss_last_ns;
	uint64_t loss_last_attempt_ns;
	bool loss_attempted;
	bool closed;
	/* the batch (zeroed at open up to loss_event; the arrays need not be) */
	size_t n_pending;
	size_t batch_used;           /* bytes of batch_buf */
	statsd_drop_fn *on_drop;
	void *on_drop_ctx;
	struct statsd_event loss_event;
	struct statsd_writer_stats stats;
	struct statsd_pending pending[STATSD_BATCH_MAX];
	uint8_t batch_buf[STATSD_BATCH_BYTES];
};

/* Connect to path (NULL: STATSD_SOCKET_PATH), with a wait budget of
 * STATSD_WAIT_DEFAULT_MS.  Fails with a message naming the path and the
 * reason when the socket cannot be reached. */
int statsd_writer_open(struct statsd_writer *w, const char *path, struct err *e);

/* How long one datagram may wait for room in statsd's queue (0: drop at once,
 * as libstatssocket does).  Any time after open. */
void statsd_writer_set_wait(struct statsd_writer *w, uint32_t wait_ms);

/* Call fn for every atom dropped from now on (NULL: none), e.g. to count
 * drops per probe.  Any time after open. */
void statsd_writer_on_drop(struct statsd_writer *w, statsd_drop_fn *fn, void *ctx);

/* Queue one built event for atom_id (flushing first when the batch is full);
 * the frame's realtime is taken now.  Its fate is known after the next
 * flush: sent, or dropped and counted (stats, on_drop with tag, and reported
 * to statsd later).  An event too large for the batch goes out at once. */
void statsd_writer_send_tagged(struct statsd_writer *w, const uint8_t *event, size_t len,
			       int32_t atom_id, const void *tag);
void statsd_writer_send(struct statsd_writer *w, const uint8_t *event, size_t len,
			int32_t atom_id);

/* Send every queued datagram, in order, reporting earlier drops first.
 * Returns 0 when all went, else the negative errno of the last one dropped. */
int statsd_writer_flush(struct statsd_writer *w);

/* Flush, last chance to report drops (best effort), then close.  Safe to call twice. */
void statsd_writer_close(struct statsd_writer *w);

/* Drops not yet reported to statsd (nonzero after close: they were lost
 * without statsd knowing; the exit summary says so). */
int32_t statsd_writer_unreported(const struct statsd_writer *w);

#endif
