#include "sink/statsd_socket.h"

#include <errno.h>
#include <limits.h>
#include <linux/sockios.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define SNDBUF_BYTES (2 * 1024 * 1024)

_Static_assert(STATSD_BATCH_BYTES >= STATSD_MAX_DATAGRAM, "a full-size atom fits a batch");
_Static_assert(STATSD_BATCH_BYTES <= UINT32_MAX, "offsets are 32-bit");

static uint64_t clock_now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct timespec realtime_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ts;
}

static int sock_connect(struct statsd_writer *w)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int size = SNDBUF_BYTES;

	if (fd < 0)
		return -errno;
	/* Capped by net.core.wmem_max; failure is harmless (libstatssocket too). */
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
	if (connect(fd, (const struct sockaddr *)&w->addr, sizeof(w->addr)) < 0) {
		int rc = -errno;
		close(fd);
		return rc;
	}
	w->fd = fd;
	return 0;
}

static void sock_close(struct statsd_writer *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

int statsd_writer_open(struct statsd_writer *w, const char *path, struct err *e)
{
	int rc;

	memset(w, 0, offsetof(struct statsd_writer, loss_event));
	memset(&w->stats, 0, sizeof(w->stats));
	w->fd = -1;
	if (!path)
		path = STATSD_SOCKET_PATH;
	if (strlen(path) >= sizeof(w->addr.sun_path))
		return err_set(e, -ENAMETOOLONG, "statsd socket path '%s' is longer than %zu bytes",
			       path, sizeof(w->addr.sun_path) - 1);
	w->addr.sun_family = AF_UNIX;
	strcpy(w->addr.sun_path, path);
	w->tid = (uint32_t)syscall(SYS_gettid);
	w->uid = (uint32_t)getuid();
	w->wait_ms = STATSD_WAIT_DEFAULT_MS;
	rc = sock_connect(w);
	if (rc < 0)
		return err_set(e, rc, "statsd socket %s: cannot connect: %s", path, strerror(-rc));
	return 0;
}

void statsd_writer_set_wait(struct statsd_writer *w, uint32_t wait_ms)
{
	w->wait_ms = wait_ms;
}

/* One datagram, EINTR retried.  Returns bytes written or -errno. */
static ssize_t write_once(int fd, const struct iovec *iov, int n)
{
	ssize_t r;

	do
		r = writev(fd, iov, n);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

/* Sleep until fd is writable or ns have passed.  For a connected unix
 * datagram socket POLLOUT also means the peer's receive queue has room.  An
 * error or hang-up ends the wait too: the next write reports it. */
static void wait_writable(int fd, uint64_t ns)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	uint64_t ms = (ns + 999999) / 1000000; /* round up: never spin on 0 */

	(void)poll(&p, 1, ms > INT_MAX ? INT_MAX : (int)ms);
}

/* Bytes of our datagrams statsd has not read yet (a unix socket's sent
 * datagrams are charged to the sender until the receiver frees them); -1 when
 * the kernel does not say. */
static long unread_bytes(int fd)
{
	int n;

	return ioctl(fd, SIOCOUTQ, &n) == 0 ? n : -1;
}

/* After a full queue frees a slot, let statsd read about half of what was
 * queued before refilling it: resending as soon as one slot is free costs a
 * wakeup and two syscalls per datagram on both sides (3 us of CPU per event
 * here); this way it is one short sleep per few hundred datagrams. */
static void let_queue_drain(int fd, long full, uint64_t deadline)
{
	const struct timespec nap = { .tv_nsec = 200000 };

	while (full > 0 && unread_bytes(fd) > full / 2 && clock_now_ns(CLOCK_MONOTONIC) < deadline)
		nanosleep(&nap, NULL);
}

/* After one attempt at a datagram returned rc: while statsd's queue is full
 * (EAGAIN), wait for room and resend until the budget is spent, then give up
 * with -EAGAIN and stay congested (no more waiting) until a datagram goes
 * through.  Returns bytes written or -errno. */
static ssize_t retry_waiting(struct statsd_writer *w, const struct iovec *iov, int n,
			     ssize_t rc)
{
	uint64_t start, deadline, now;

	if (rc >= 0)
		w->congested = false;
	if (rc != -EAGAIN || w->wait_ms == 0 || w->congested)
		return rc;
	start = now = clock_now_ns(CLOCK_MONOTONIC);
	deadline = start + (uint64_t)w->wait_ms * 1000000u;
	long full = unread_bytes(w->fd);
	while (rc == -EAGAIN && now < deadline) {
		wait_writable(w->fd, deadline - now);
		let_queue_drain(w->fd, full, deadline);
		rc = write_once(w->fd, iov, n);
		now = clock_now_ns(CLOCK_MONOTONIC);
	}
	w->stats.waited++;
	w->stats.wait_ns += now - start;
	w->congested = rc == -EAGAIN;
	return rc;
}

/* Write one datagram, waiting for room as retry_waiting does. */
static ssize_t write_waiting(struct statsd_writer *w, const struct iovec *iov, int n)
{
	return retry_waiting(w, iov, n, write_once(w->fd, iov, n));
}

static bool is_disconnect(ssize_t rc)
{
	return rc == -ENOTCONN || rc == -ECONNREFUSED || rc == -ENOENT;
}

/* The rest of delivering one datagram whose first attempt returned first
 * (-ENOTCONN when there is no socket): wait for room (see retry_waiting); on
 * a lost connection (statsd restarted, socket file gone) reconnect once and
 * retry once.  Returns 0 or -errno. */
static int deliver_after(struct statsd_writer *w, const struct iovec *iov, int n,
			 size_t total, ssize_t first)
{
	ssize_t rc = -ENOTCONN;

	if (w->fd >= 0)
		rc = retry_waiting(w, iov, n, first);
	if (is_disconnect(rc) || w->fd < 0) {
		sock_close(w);
		int c = sock_connect(w);
		if (c < 0)
			return c;
		w->stats.reconnects++;
		rc = write_waiting(w, iov, n);
	}
	if (rc < 0)
		return (int)rc;
	return (size_t)rc == total ? 0 : -EMSGSIZE;
}

/* Write one datagram now, with the rules of deliver_after. */
static int deliver(struct statsd_writer *w, const struct iovec *iov, int n, size_t total)
{
	return deliver_after(w, iov, n, total, w->fd >= 0 ? write_once(w->fd, iov, n) : -ENOTCONN);
}

static int deliver_event(struct statsd_writer *w, const uint8_t *event, size_t len)
{
	uint8_t frame[STATSD_FRAME_LEN];
	struct iovec iov[2] = {
		{ .iov_base = frame, .iov_len = sizeof(frame) },
		{ .iov_base = (void *)event, .iov_len = len },
	};

	statsd_frame(frame, w->tid, realtime_now());
	return deliver(w, iov, 2, sizeof(frame) + len);
}

/* StatsSocketLossReporter::noteDrop: per (error, atom) counts, atom 752's own
 * drops are not counted there (only in the legacy counter). */
static void note_loss(struct statsd_writer *w, int32_t error, int32_t atom_id)
{
	uint64_t now = clock_now_ns(CLOCK_BOOTTIME);

	if (atom_id == STATSD_LOSS_ATOM_ID)
		return;
	if (w->n_pairs == 0 && w->loss_overflow == 0)
		w->loss_first_ns = now;
	w->loss_last_ns = now;
	for (size_t i = 0; i < w->n_pairs; i++) {
		if (w->pairs[i].error == error && w->pairs[i].atom_id == atom_id) {
			w->pairs[i].count++;
			return;
		}
	}
	if (w->n_pairs == STATSD_LOSS_MAX_PAIRS) {
		w->loss_overflow++;
		return;
	}
	w->pairs[w->n_pairs++] = (struct statsd_loss_pair){ error, atom_id, 1 };
}

static void note_drop(struct statsd_writer *w, int error, int32_t atom_id)
{
	w->legacy_dropped++;
	w->legacy_error = error;
	w->legacy_atom = atom_id;
	note_loss(w, error, atom_id);
}

/* dumpAtomsLossStats: atom 752 with parallel int32 lists; kept on failure. */
static void dump_loss_atom(struct statsd_writer *w)
{
	int32_t errs[STATSD_LOSS_MAX_PAIRS], tags[STATSD_LOSS_MAX_PAIRS],
		counts[STATSD_LOSS_MAX_PAIRS];
	struct statsd_event *ev = &w->loss_event;
	uint64_t now = clock_now_ns(CLOCK_BOOTTIME);

	if (w->n_pairs == 0 && w->loss_overflow == 0)
		return;
	if (w->loss_attempted && now - w->loss_last_attempt_ns < STATSD_LOSS_COOLDOWN_NS)
		return;
	w->loss_attempted = true;
	w->loss_last_attempt_ns = now;
	for (size_t i = 0; i < w->n_pairs; i++) {
		errs[i] = w->pairs[i].error;
		tags[i] = w->pairs[i].atom_id;
		counts[i] = w->pairs[i].count;
	}
	statsd_event_init(ev, now);
	statsd_event_set_atom_id(ev, STATSD_LOSS_ATOM_ID);
	statsd_event_write_int32(ev, (int32_t)w->uid);
	statsd_event_add_bool_annotation(ev, STATSD_ANN_IS_UID, true);
	statsd_event_write_int64(ev, (int64_t)w->loss_first_ns);
	statsd_event_write_int64(ev, (int64_t)w->loss_last_ns);
	statsd_event_write_int32(ev, w->loss_overflow);
	statsd_event_write_int32_list(ev, errs, w->n_pairs);
	statsd_event_write_int32_list(ev, tags, w->n_pairs);
	statsd_event_write_int32_list(ev, counts, w->n_pairs);
	statsd_event_build(ev);
	int rc = deliver_event(w, ev->buf, ev->len);
	if (rc < 0) {
		note_drop(w, rc, STATSD_LOSS_ATOM_ID);
		return;
	}
	w->stats.loss_atoms++;
	w->n_pairs = 0;
	w->loss_overflow = 0;
}

/* The legacy 24-byte datagram; on success also try the atom-752 report.
 * Like libstatssocket, a failed report puts the count back. */
static void report_drops(struct statsd_writer *w)
{
	uint8_t dg[STATSD_DROP_LEN];
	struct iovec iov = { .iov_base = dg, .iov_len = sizeof(dg) };
	int32_t snapshot = w->legacy_dropped;

	if (snapshot == 0)
		return;
	statsd_drop_datagram(dg, w->tid, realtime_now(), w->legacy_error, w->legacy_atom,
			     snapshot);
	w->legacy_dropped = 0;
	if (deliver(w, &iov, 1, sizeof(dg)) < 0) {
		w->legacy_dropped += snapshot;
		return;
	}
	w->stats.drop_reports++;
	dump_loss_atom(w);
}

void statsd_writer_on_drop(struct statsd_writer *w, statsd_drop_fn *fn, void *ctx)
{
	w->on_drop = fn;
	w->on_drop_ctx = ctx;
}

/* The atom is lost: counted for the summary, the caller, and statsd. */
static void drop_atom(struct statsd_writer *w, int rc, int32_t atom_id, const void *tag)
{
	note_drop(w, rc, atom_id);
	w->stats.dropped++;
	w->stats.last_error = rc;
	w->stats.last_dropped_atom = atom_id;
	if (w->on_drop)
		w->on_drop(w->on_drop_ctx, atom_id, tag, rc);
}

/* sendmmsg(2) itself.  musl's 64-bit sendmmsg() is a loop of sendmsg()
 * calls (its msghdr has int fields with padding where the kernel has size_t,
 * and it will not assume the caller zeroed the padding): one syscall per
 * datagram, the very cost batching is for.  Our headers are built with every
 * padding byte zero and no control data, so the kernel reads them right. */
static int sys_sendmmsg(int fd, struct mmsghdr *msg, unsigned int n)
{
	return (int)syscall(SYS_sendmmsg, fd, msg, n, 0);
}

/* Queued datagrams [from, n_pending) in one sendmmsg, EINTR retried.
 * Returns how many went (> 0; a datagram goes whole or not at all), or the
 * -errno of the first: sendmmsg reports an error only when nothing went, so
 * after a partial send the next call finds out why the rest did not go. */
static int send_run(struct statsd_writer *w, size_t from)
{
	struct mmsghdr msg[STATSD_BATCH_MAX];
	struct iovec iov[STATSD_BATCH_MAX];
	size_t n = w->n_pending - from;
	int r;

	if (w->fd < 0)
		return -ENOTCONN;
	memset(msg, 0, n * sizeof(msg[0])); /* padding too: see sys_sendmmsg */
	for (size_t i = 0; i < n; i++) {
		const struct statsd_pending *p = &w->pending[from + i];
		iov[i] = (struct iovec){ .iov_base = w->batch_buf + p->off, .iov_len = p->len };
		msg[i].msg_hdr.msg_iov = &iov[i];
		msg[i].msg_hdr.msg_iovlen = 1;
	}
	do
		r = sys_sendmmsg(w->fd, msg, (unsigned int)n);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

/* The batch send could not take p (its attempt returned first): the
 * one-datagram rules decide, and a failure drops it.  Returns 0 or -errno. */
static int settle_one(struct statsd_writer *w, const struct statsd_pending *p, int first)
{
	struct iovec iov = { .iov_base = w->batch_buf + p->off, .iov_len = p->len };
	int rc = deliver_after(w, &iov, 1, p->len, first);

	if (rc < 0)
		drop_atom(w, rc, p->atom_id, p->tag);
	else
		w->stats.sent++;
	return rc;
}

int statsd_writer_flush(struct statsd_writer *w)
{
	size_t i = 0;
	int last = 0;

	while (i < w->n_pending) {
		/* as without batching: earlier drops are reported before the next atom */
		report_drops(w);
		int r = send_run(w, i);
		if (r > 0) {
			w->congested = false;
			w->stats.sent += (uint64_t)r;
			i += (size_t)r;
			continue;
		}
		int rc = settle_one(w, &w->pending[i], r);
		if (rc < 0)
			last = rc;
		i++;
	}
	w->n_pending = 0;
	w->batch_used = 0;
	return last;
}

/* An event larger than the whole batch: sent alone, at once. */
static void send_alone(struct statsd_writer *w, const uint8_t *event, size_t len,
		       int32_t atom_id, const void *tag)
{
	int rc;

	statsd_writer_flush(w);
	report_drops(w);
	rc = deliver_event(w, event, len);
	if (rc < 0)
		drop_atom(w, rc, atom_id, tag);
	else
		w->stats.sent++;
}

void statsd_writer_send_tagged(struct statsd_writer *w, const uint8_t *event, size_t len,
			       int32_t atom_id, const void *tag)
{
	size_t total = STATSD_FRAME_LEN + len;

	if (total > STATSD_BATCH_BYTES) {
		send_alone(w, event, len, atom_id, tag);
		return;
	}
	if (w->n_pending == STATSD_BATCH_MAX || w->batch_used + total > STATSD_BATCH_BYTES)
		statsd_writer_flush(w);
	uint8_t *d = w->batch_buf + w->batch_used;
	statsd_frame(d, w->tid, realtime_now());
	memcpy(d + STATSD_FRAME_LEN, event, len);
	w->pending[w->n_pending++] = (struct statsd_pending){
		.off = (uint32_t)w->batch_used, .len = (uint32_t)total,
		.atom_id = atom_id, .tag = tag,
	};
	w->batch_used += total;
}

void statsd_writer_send(struct statsd_writer *w, const uint8_t *event, size_t len,
			int32_t atom_id)
{
	statsd_writer_send_tagged(w, event, len, atom_id, NULL);
}

void statsd_writer_close(struct statsd_writer *w)
{
	if (w->closed)
		return;
	statsd_writer_flush(w);
	w->closed = true;
	report_drops(w);
	/* The report just sent may have used up the cool-down: one more try. */
	w->loss_attempted = false;
	dump_loss_atom(w);
	sock_close(w);
}

int32_t statsd_writer_unreported(const struct statsd_writer *w)
{
	return w->legacy_dropped;
}
