/* The statsd writer on a real AF_UNIX datagram socket: exact datagrams, batches
 * sent with sendmmsg, drops
 * under a full receiver queue, the loss report after recovery, reconnects,
 * waiting for room in a full queue.  Queue sizes are whatever
 * net.unix.max_dgram_qlen is here: the tests fill the queue until the first
 * EAGAIN rather than assume a size.  Timings are asserted only as lower bounds
 * the code guarantees (a wait lasts its budget) and generous upper bounds. */
#include "ut.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include "sink/statsd_socket.h"
#include "statsd_decoder.h"
#include "statsd_testutil.h"

#define TS 0x0102030405060708ull

static void build_atom(struct statsd_event *ev, int32_t atom_id, int32_t uid)
{
	statsd_event_init(ev, TS);
	statsd_event_set_atom_id(ev, atom_id);
	statsd_event_write_int32(ev, uid);
	statsd_event_write_bool(ev, true);
	statsd_event_build(ev);
}

static void build_940(struct statsd_event *ev, int32_t uid)
{
	build_atom(ev, 940, uid);
}

/* One atom sent at once: what a send was before batching. */
static int send_now(struct statsd_writer *w, const struct statsd_event *ev)
{
	statsd_writer_send(w, ev->buf, ev->len, 940);
	return statsd_writer_flush(w);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* The next two datagrams on rx: the legacy drop report and atom 752, both
 * saying `count` atoms were dropped with `error`. */
static void expect_loss_reports(int rx, int error, int count)
{
	uint8_t buf[4096];
	struct sd_datagram d;
	char why[256];
	long n = st_recv(rx, buf, sizeof(buf));

	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.kind, SD_DROP_REPORT);
	UT_EQ_INT(d.drop_error, error);
	UT_EQ_INT(d.drop_count, count);
	n = st_recv(rx, buf, sizeof(buf));
	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.atom_id, 752);
	UT_EQ_INT(sd_list_int(&d.fields[4], 0), error);
	UT_EQ_INT(sd_list_int(&d.fields[6], 0), count);
}

UT_TEST(statsd_socket_sends_exact_datagram)
{
	const char *path = ut_tmpfile("statsdw-exact");
	int rx = st_receiver(path);
	struct statsd_writer w;
	struct statsd_event ev;
	struct err e = { 0 };
	uint8_t buf[8192];
	struct sd_datagram d;
	char why[200] = "";
	struct timespec now;

	UT_ASSERT(rx >= 0);
	UT_EQ_INT(statsd_writer_open(&w, path, &e), 0);
	build_940(&ev, 10001);
	statsd_writer_send(&w, ev.buf, ev.len, 940);
	UT_EQ_U64(w.stats.sent, 0); /* queued until the flush */
	UT_EQ_INT(st_recv(rx, buf, sizeof(buf)), -1);
	UT_EQ_INT(statsd_writer_flush(&w), 0);
	long n = st_recv(rx, buf, sizeof(buf));
	/* every byte but tid and realtime (§6.4 with its header masked) */
	UT_ASSERT(st_bytes_eq_skip(buf, (size_t)n,
		"05341200f1536515cd5b0774617473070401080706050403020100ac03000000112700000501",
		ST_SKIP_HEADER, __FILE__, __LINE__));
	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.log_id, 5);
	UT_EQ_INT(d.tid, (uint16_t)syscall(SYS_gettid));
	clock_gettime(CLOCK_REALTIME, &now);
	UT_ASSERT(now.tv_sec - (time_t)d.rt_sec < 5);
	UT_ASSERT(d.rt_nsec < 1000000000u);
	UT_EQ_INT(d.atom_id, 940);
	UT_EQ_INT(w.stats.sent, 1);
	statsd_writer_close(&w);
	statsd_writer_close(&w); /* twice is fine */
	UT_EQ_INT(st_recv(rx, buf, sizeof(buf)), -1); /* nothing else was sent */
	close(rx);
}

UT_TEST(statsd_socket_open_names_path_and_reason)
{
	struct statsd_writer w;
	struct err e = { 0 };

	UT_EQ_INT(statsd_writer_open(&w, ut_tmpfile("no-such-statsdw"), &e), -ENOENT);
	UT_CONTAINS(e.msg, "no-such-statsdw");
	UT_CONTAINS(e.msg, "No such file or directory");
}

/* With no wait budget (libstatssocket's behaviour) the receiver stops
 * reading: sends fail with EAGAIN at once and are counted, nothing blocks.
 * Once it reads again, the next send first delivers the 24-byte drop
 * datagram, then atom 752, then the atom itself. */
UT_TEST(statsd_socket_full_queue_drops_then_reports_loss)
{
	const char *path = ut_tmpfile("statsdw-full");
	int rx = st_receiver(path);
	struct statsd_writer w;
	struct statsd_event ev;
	struct err e = { 0 };
	uint8_t buf[8192];
	struct sd_datagram d;
	char why[200] = "";
	int delivered = 0, dropped = 0;
	uint64_t t0;

	UT_ASSERT(rx >= 0);
	UT_EQ_INT(statsd_writer_open(&w, path, &e), 0);
	statsd_writer_set_wait(&w, 0);
	t0 = mono_ms();
	/* Until the queue is full, whatever net.unix.max_dgram_qlen is here. */
	for (int i = 0; i < 100000 && dropped < 20; i++) {
		build_940(&ev, i);
		int rc = send_now(&w, &ev);
		if (rc == 0)
			delivered++;
		else if (rc == -EAGAIN)
			dropped++;
		else
			UT_EQ_INT(rc, -EAGAIN);
	}
	UT_ASSERT(dropped > 0);
	UT_EQ_INT(w.stats.dropped, dropped);
	UT_EQ_INT(w.stats.last_error, -EAGAIN);
	UT_EQ_U64(w.stats.waited, 0); /* never waited */
	UT_EQ_U64(w.stats.wait_ns, 0);
	UT_ASSERT(mono_ms() - t0 < 2000);
	UT_EQ_INT(statsd_writer_unreported(&w), dropped);
	UT_EQ_INT(st_drain(rx), delivered);

	build_940(&ev, 4242);
	UT_EQ_INT(send_now(&w, &ev), 0);
	/* 1: the legacy drop report */
	long n = st_recv(rx, buf, sizeof(buf));
	UT_EQ_INT(n, 24);
	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.kind, SD_DROP_REPORT);
	UT_EQ_INT(d.drop_error, -EAGAIN);
	UT_EQ_INT(d.drop_atom_id, 940);
	UT_EQ_INT(d.drop_count, dropped);
	/* 2: atom 752 */
	n = st_recv(rx, buf, sizeof(buf));
	UT_ASSERT(n > 0);
	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.atom_id, 752);
	UT_EQ_INT(d.n_fields, 7);
	UT_EQ_INT(d.fields[0].i64, (int32_t)getuid());
	UT_EQ_INT(d.fields[0].n_ann, 1);
	UT_EQ_INT(d.fields[0].ann[0].id, 1);
	UT_ASSERT(d.fields[1].i64 > 0 && d.fields[1].i64 <= d.fields[2].i64);
	UT_EQ_INT(d.fields[3].i64, 0);
	UT_EQ_INT(d.fields[4].count, 1);
	UT_EQ_INT(sd_list_int(&d.fields[4], 0), -EAGAIN);
	UT_EQ_INT(sd_list_int(&d.fields[5], 0), 940);
	UT_EQ_INT(sd_list_int(&d.fields[6], 0), dropped);
	/* 3: the atom */
	n = st_recv(rx, buf, sizeof(buf));
	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.atom_id, 940);
	UT_EQ_INT(d.fields[0].i64, 4242);
	UT_EQ_INT(st_recv(rx, buf, sizeof(buf)), -1);
	UT_EQ_INT(w.stats.drop_reports, 1);
	UT_EQ_INT(w.stats.loss_atoms, 1);
	UT_EQ_INT(statsd_writer_unreported(&w), 0);
	statsd_writer_close(&w);
	UT_EQ_INT(st_recv(rx, buf, sizeof(buf)), -1); /* nothing pending at close */
	close(rx);
}

/* statsd restarts: the old socket is gone, a new one is bound at the same
 * path.  The send fails with ECONNREFUSED, reconnects once and resends. */
UT_TEST(statsd_socket_reconnects_once_after_restart)
{
	const char *path = ut_tmpfile("statsdw-restart");
	int rx = st_receiver(path);
	struct statsd_writer w;
	struct statsd_event ev;
	struct err e = { 0 };
	uint8_t buf[8192];
	struct sd_datagram d;
	char why[200] = "";

	UT_ASSERT(rx >= 0);
	UT_EQ_INT(statsd_writer_open(&w, path, &e), 0);
	close(rx);
	rx = st_receiver(path);
	UT_ASSERT(rx >= 0);
	build_940(&ev, 77);
	UT_EQ_INT(send_now(&w, &ev), 0);
	UT_EQ_INT(w.stats.reconnects, 1);
	long n = st_recv(rx, buf, sizeof(buf));
	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.fields[0].i64, 77);
	statsd_writer_close(&w);
	close(rx);
}

/* statsd is down for a while: drops carry the connect error; when it is back
 * the writer reconnects and reports them. */
UT_TEST(statsd_socket_down_then_back_reports_errors)
{
	const char *path = ut_tmpfile("statsdw-down");
	int rx = st_receiver(path);
	struct statsd_writer w;
	struct statsd_event ev;
	struct err e = { 0 };
	uint8_t buf[8192];
	struct sd_datagram d;
	char why[200] = "";

	UT_ASSERT(rx >= 0);
	UT_EQ_INT(statsd_writer_open(&w, path, &e), 0);
	close(rx);
	unlink(path);
	build_940(&ev, 1);
	UT_EQ_INT(send_now(&w, &ev), -ENOENT);
	UT_EQ_INT(send_now(&w, &ev), -ENOENT);
	UT_EQ_INT(w.stats.dropped, 2);
	rx = st_receiver(path);
	UT_ASSERT(rx >= 0);
	UT_EQ_INT(send_now(&w, &ev), 0);
	expect_loss_reports(rx, -ENOENT, 2);
	long n;
	n = st_recv(rx, buf, sizeof(buf));
	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.atom_id, 940);
	statsd_writer_close(&w);
	close(rx);
}

/* Drops still pending at exit are reported by close when statsd is there. */
UT_TEST(statsd_socket_close_reports_pending_drops)
{
	const char *path = ut_tmpfile("statsdw-close");
	int rx = st_receiver(path);
	struct statsd_writer w;
	struct statsd_event ev;
	struct err e = { 0 };
	uint8_t buf[8192];
	struct sd_datagram d;
	char why[200] = "";
	int dropped = 0;

	UT_ASSERT(rx >= 0);
	UT_EQ_INT(statsd_writer_open(&w, path, &e), 0);
	for (int i = 0; i < 100000 && dropped < 20; i++) {
		build_940(&ev, i);
		dropped += send_now(&w, &ev) < 0;
	}
	UT_ASSERT(dropped > 0);
	/* the default budget: the first EAGAIN waited, the others did not */
	UT_EQ_U64(w.stats.waited, 1);
	st_drain(rx);
	statsd_writer_close(&w);
	long n = st_recv(rx, buf, sizeof(buf));
	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.kind, SD_DROP_REPORT);
	UT_EQ_INT(d.drop_count, dropped);
	n = st_recv(rx, buf, sizeof(buf));
	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.atom_id, 752);
	UT_EQ_INT(statsd_writer_unreported(&w), 0);
	close(rx);
}

/* Reads `want` datagrams after ~20 ms, each checked to be atom 940 with the
 * next uid in order.  A 2 s receive timeout ends it if they never come. */
struct slow_reader {
	int fd;
	int want;
	int got;
	int wrong;    /* not the expected atom (a drop report, out of order, ...) */
};

static void *slow_reader_run(void *arg)
{
	struct slow_reader *r = arg;
	struct timeval tv = { .tv_sec = 2 };
	uint8_t buf[8192];
	struct sd_datagram d;
	char why[200];

	(void)setsockopt(r->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	nanosleep(&(struct timespec){ .tv_nsec = 20000000 }, NULL);
	while (r->got < r->want) {
		ssize_t n = recv(r->fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)) < 0 ||
		    d.kind == SD_DROP_REPORT || d.atom_id != 940 || d.fields[0].i64 != r->got)
			r->wrong++;
		r->got++;
	}
	return NULL;
}

/* The receiver's queue fills while its reader sleeps ~20 ms, then drains:
 * with a 100 ms budget the writer waits for room instead of dropping, and
 * every datagram arrives, in order. */
UT_TEST(statsd_socket_waits_for_room_and_delivers_everything)
{
	const char *path = ut_tmpfile("statsdw-wait");
	int rx = st_receiver(path);
	struct slow_reader r = { .fd = rx, .want = 200 };
	struct statsd_writer w;
	struct statsd_event ev;
	struct err e = { 0 };
	pthread_t th;
	int failed = 0;

	UT_ASSERT(rx >= 0);
	UT_EQ_INT(statsd_writer_open(&w, path, &e), 0);
	statsd_writer_set_wait(&w, 100);
	UT_EQ_INT(pthread_create(&th, NULL, slow_reader_run, &r), 0);
	for (int i = 0; i < r.want; i++) {
		build_940(&ev, i);
		failed += send_now(&w, &ev) != 0;
	}
	pthread_join(th, NULL); /* before any assert: r lives on this stack */
	UT_EQ_INT(failed, 0);
	UT_EQ_INT(r.got, r.want);
	UT_EQ_INT(r.wrong, 0);
	UT_EQ_U64(w.stats.sent, r.want);
	UT_EQ_U64(w.stats.dropped, 0);
	UT_ASSERT(w.stats.waited > 0);
	UT_ASSERT(w.stats.wait_ns > 0 && w.stats.wait_ns < 2000000000ull);
	UT_EQ_INT(statsd_writer_unreported(&w), 0);
	statsd_writer_close(&w);
	close(rx);
}

/* Sends until the first drop; returns how many were delivered before it. */
static int fill_until_drop(struct statsd_writer *w, int *dropped)
{
	struct statsd_event ev;
	int delivered = 0;

	*dropped = 0;
	for (int i = 0; i < 100000 && !*dropped; i++) {
		build_940(&ev, i);
		if (send_now(w, &ev) == 0)
			delivered++;
		else
			(*dropped)++;
	}
	return delivered;
}

/* The receiver stops reading.  With a 50 ms budget the first send that finds
 * the queue full waits the budget out and drops; the writer is then congested
 * and the next sends drop at once (a stuck statsd costs one budget, not one
 * per atom).  Once the receiver reads, the loss report goes out, and the next
 * time the queue is full the writer waits again. */
UT_TEST(statsd_socket_stuck_receiver_costs_one_budget)
{
	const char *path = ut_tmpfile("statsdw-stuck");
	int rx = st_receiver(path);
	struct statsd_writer w;
	struct statsd_event ev;
	struct err e = { 0 };
	uint8_t buf[8192];
	struct sd_datagram d;
	char why[200] = "";
	int delivered, dropped, rc;
	uint64_t t0;

	UT_ASSERT(rx >= 0);
	UT_EQ_INT(statsd_writer_open(&w, path, &e), 0);
	statsd_writer_set_wait(&w, 50);
	t0 = mono_ms();
	delivered = fill_until_drop(&w, &dropped);
	UT_EQ_INT(dropped, 1);
	UT_ASSERT(mono_ms() - t0 >= 50);
	UT_EQ_U64(w.stats.waited, 1);
	UT_ASSERT(w.stats.wait_ns >= 50000000ull && w.stats.wait_ns < 2000000000ull);
	UT_EQ_INT(w.stats.last_error, -EAGAIN);

	/* congested: 100 more drops at once (waiting would take 5 s) */
	t0 = mono_ms();
	for (int i = 0; i < 100; i++) {
		build_940(&ev, i);
		rc = send_now(&w, &ev);
		dropped += rc == -EAGAIN;
	}
	UT_ASSERT(mono_ms() - t0 < 2000);
	UT_EQ_INT(dropped, 101);
	UT_EQ_U64(w.stats.waited, 1);
	UT_EQ_U64(w.stats.dropped, 101);
	UT_EQ_INT(statsd_writer_unreported(&w), 101);

	/* statsd reads again: drop report, atom 752, then the atom */
	UT_EQ_INT(st_drain(rx), delivered);
	build_940(&ev, 4242);
	UT_EQ_INT(send_now(&w, &ev), 0);
	expect_loss_reports(rx, -EAGAIN, 101);
	long n = st_recv(rx, buf, sizeof(buf));
	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.fields[0].i64, 4242);
	UT_EQ_INT(statsd_writer_unreported(&w), 0);
	UT_EQ_U64(w.stats.waited, 1); /* the report went through without waiting */

	/* no longer congested: the next full queue is waited for again */
	t0 = mono_ms();
	fill_until_drop(&w, &dropped);
	UT_EQ_INT(dropped, 1);
	UT_ASSERT(mono_ms() - t0 >= 50);
	UT_EQ_U64(w.stats.waited, 2);
	statsd_writer_close(&w);
	close(rx);
}

/* The next datagram on rx, decoded; false when there is none. */
static bool next_datagram(int rx, struct sd_datagram *d)
{
	static uint8_t buf[8192];
	char why[200] = "";
	long n = st_recv(rx, buf, sizeof(buf));

	return n > 0 && sd_decode_datagram(buf, (size_t)n, d, why, sizeof(why)) == 0;
}

/* Reads and decodes up to `want` datagrams as they come (2 s receive
 * timeout), so a small receiver queue never limits what the writer sends. */
struct collector {
	int fd;
	int want;
	int got;
	int bad;      /* not decodable, or not an atom */
	int32_t atom[256];
	int64_t uid[256];
	uint64_t rt_ns[256];
	uint16_t tid[256];
};

static void *collector_run(void *arg)
{
	struct collector *c = arg;
	struct timeval tv = { .tv_sec = 2 };
	uint8_t buf[8192];
	struct sd_datagram d;
	char why[200];

	(void)setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (c->got < c->want) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if (sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)) < 0 ||
		    d.kind == SD_DROP_REPORT || d.n_fields < 1) {
			c->bad++;
			continue;
		}
		c->atom[c->got] = d.atom_id;
		c->uid[c->got] = d.fields[0].i64;
		c->rt_ns[c->got] = (uint64_t)d.rt_sec * 1000000000ull + d.rt_nsec;
		c->tid[c->got] = d.tid;
		c->got++;
	}
	return NULL;
}

/* 150 atoms without a flush: each full batch went when the next atom found
 * it full, the rest at the flush; each is its own datagram, in order, its
 * frame stamped when it was queued (not when it was sent). */
UT_TEST(statsd_socket_batch_is_separate_datagrams_in_order)
{
	const char *path = ut_tmpfile("statsdw-batch");
	int rx = st_receiver(path);
	struct collector *c = calloc(1, sizeof(*c));
	struct statsd_writer w;
	struct statsd_event ev;
	struct err e = { 0 };
	const int n = 150;
	pthread_t th;
	uint64_t sent_before_flush;

	UT_ASSERT(rx >= 0 && c);
	c->fd = rx;
	c->want = n;
	UT_EQ_INT(statsd_writer_open(&w, path, &e), 0);
	statsd_writer_set_wait(&w, 1000);
	UT_EQ_INT(pthread_create(&th, NULL, collector_run, c), 0);
	for (int i = 0; i < n; i++) {
		build_atom(&ev, 900 + i % 7, i);
		statsd_writer_send(&w, ev.buf, ev.len, 900 + i % 7);
		if (i == 0)
			nanosleep(&(struct timespec){ .tv_nsec = 30000000 }, NULL);
	}
	sent_before_flush = w.stats.sent;
	int rc = statsd_writer_flush(&w);
	pthread_join(th, NULL);
	UT_EQ_INT(rc, 0);
	UT_EQ_U64(sent_before_flush, 2 * STATSD_BATCH_MAX);
	UT_EQ_U64(w.stats.sent, n);
	UT_EQ_U64(w.stats.dropped, 0);
	UT_EQ_INT(c->got, n);
	UT_EQ_INT(c->bad, 0);
	for (int i = 0; i < c->got; i++) {
		UT_EQ_INT(c->atom[i], 900 + i % 7);
		UT_EQ_INT(c->uid[i], i);
		UT_EQ_INT(c->tid[i], (uint16_t)syscall(SYS_gettid));
		if (i > 0)
			UT_ASSERT(c->rt_ns[i] >= c->rt_ns[i - 1]);
	}
	/* the second was queued 30 ms after the first, both sent together */
	UT_ASSERT(c->rt_ns[1] - c->rt_ns[0] >= 30000000ull);
	UT_EQ_INT(statsd_writer_flush(&w), 0); /* nothing queued: nothing sent */
	UT_EQ_INT(st_drain(rx), 0);
	statsd_writer_close(&w);
	free(c);
	close(rx);
}

struct drop_log {
	int n;
	int32_t atom[64];
	const void *tag[64];
	int error[64];
};

static void log_drop(void *ctx, int32_t atom_id, const void *tag, int error)
{
	struct drop_log *l = ctx;

	if (l->n < 64) {
		l->atom[l->n] = atom_id;
		l->tag[l->n] = tag;
		l->error[l->n] = error;
	}
	l->n++;
}

/* How many datagrams a receiver that never reads takes here (whatever
 * net.unix.max_dgram_qlen is). */
static int receiver_capacity(void)
{
	const char *path = ut_tmpfile("statsdw-capacity");
	int rx = st_receiver(path), dropped, cap;
	struct statsd_writer w;
	struct err e = { 0 };

	if (rx < 0 || statsd_writer_open(&w, path, &e) < 0)
		return -1;
	statsd_writer_set_wait(&w, 0);
	cap = fill_until_drop(&w, &dropped);
	statsd_writer_close(&w);
	close(rx);
	return cap;
}

/* The receiver's queue has room for 3 of a batch of 12 and nobody reads:
 * sendmmsg takes 3, and with no wait budget each of the other 9 is dropped
 * and counted with its own atom id and tag.  Once statsd reads, the drop
 * datagram and atom 752 (one pair per atom id) go before the next atom. */
UT_TEST(statsd_socket_full_mid_batch_drops_each_atom)
{
	const char *path = ut_tmpfile("statsdw-midbatch");
	int cap = receiver_capacity();
	int rx = st_receiver(path);
	struct statsd_writer w;
	struct statsd_event ev;
	struct err e = { 0 };
	struct drop_log log = { 0 };
	struct sd_datagram d;
	int tags[12];

	UT_ASSERT(cap >= 3 && rx >= 0);
	UT_EQ_INT(statsd_writer_open(&w, path, &e), 0);
	statsd_writer_set_wait(&w, 0);
	statsd_writer_on_drop(&w, log_drop, &log);
	for (int i = 0; i < cap - 3; i++) {
		build_940(&ev, i);
		UT_EQ_INT(send_now(&w, &ev), 0);
	}
	for (int i = 0; i < 12; i++) {
		build_atom(&ev, 3000 + i, i);
		statsd_writer_send_tagged(&w, ev.buf, ev.len, 3000 + i, &tags[i]);
	}
	UT_EQ_INT(statsd_writer_flush(&w), -EAGAIN);
	UT_EQ_U64(w.stats.sent, (uint64_t)cap);
	UT_EQ_U64(w.stats.dropped, 9);
	UT_EQ_U64(w.stats.waited, 0);
	UT_EQ_INT(w.stats.last_dropped_atom, 3011);
	UT_EQ_INT(log.n, 9);
	for (int i = 0; i < 9 && i < log.n; i++) {
		UT_EQ_INT(log.atom[i], 3003 + i);
		UT_ASSERT(log.tag[i] == &tags[3 + i]);
		UT_EQ_INT(log.error[i], -EAGAIN);
	}
	UT_EQ_INT(statsd_writer_unreported(&w), 9);
	for (int i = 0; i < cap - 3; i++)
		UT_ASSERT(next_datagram(rx, &d) && d.atom_id == 940);
	for (int i = 0; i < 3; i++) {
		UT_ASSERT(next_datagram(rx, &d));
		UT_EQ_INT(d.atom_id, 3000 + i);
	}
	UT_EQ_INT(st_drain(rx), 0);

	build_940(&ev, 4242);
	statsd_writer_send(&w, ev.buf, ev.len, 940);
	UT_EQ_INT(statsd_writer_flush(&w), 0);
	UT_ASSERT(next_datagram(rx, &d));
	UT_EQ_INT(d.kind, SD_DROP_REPORT);
	UT_EQ_INT(d.drop_count, 9);
	UT_EQ_INT(d.drop_atom_id, 3011);
	UT_ASSERT(next_datagram(rx, &d));
	UT_EQ_INT(d.atom_id, 752);
	UT_EQ_INT(d.fields[5].count, 9);
	for (int i = 0; i < 9; i++) {
		UT_EQ_INT(sd_list_int(&d.fields[5], (size_t)i), 3003 + i);
		UT_EQ_INT(sd_list_int(&d.fields[6], (size_t)i), 1);
	}
	UT_ASSERT(next_datagram(rx, &d));
	UT_EQ_INT(d.fields[0].i64, 4242);
	UT_EQ_INT(statsd_writer_unreported(&w), 0);
	statsd_writer_close(&w);
	close(rx);
}

/* A batch larger than the receiver's queue, read ~20 ms later: sendmmsg
 * takes what fits, the next datagram waits for room (within its budget),
 * the rest follow; every atom arrives once, in order. */
UT_TEST(statsd_socket_full_mid_batch_waits_then_sends_the_rest)
{
	const char *path = ut_tmpfile("statsdw-midwait");
	int rx = st_receiver(path);
	struct slow_reader r = { .fd = rx, .want = STATSD_BATCH_MAX };
	struct statsd_writer w;
	struct statsd_event ev;
	struct err e = { 0 };
	pthread_t th;

	UT_ASSERT(rx >= 0);
	UT_EQ_INT(statsd_writer_open(&w, path, &e), 0);
	statsd_writer_set_wait(&w, 1000);
	for (int i = 0; i < r.want; i++) {
		build_940(&ev, i);
		statsd_writer_send(&w, ev.buf, ev.len, 940);
	}
	UT_EQ_INT(pthread_create(&th, NULL, slow_reader_run, &r), 0);
	int rc = statsd_writer_flush(&w);
	pthread_join(th, NULL);
	UT_EQ_INT(rc, 0);
	UT_EQ_INT(r.got, r.want);
	UT_EQ_INT(r.wrong, 0);
	UT_EQ_U64(w.stats.sent, r.want);
	UT_EQ_U64(w.stats.dropped, 0);
	UT_ASSERT(w.stats.waited > 0);
	UT_ASSERT(w.stats.wait_ns >= 1000000ull && w.stats.wait_ns < 2000000000ull);
	statsd_writer_close(&w);
	close(rx);
}

/* statsd restarts while a batch is queued: the flush's first send fails,
 * the writer reconnects once and the whole batch reaches the new socket. */
UT_TEST(statsd_socket_reconnects_mid_batch)
{
	const char *path = ut_tmpfile("statsdw-batch-restart");
	int rx = st_receiver(path);
	struct statsd_writer w;
	struct statsd_event ev;
	struct err e = { 0 };
	struct sd_datagram d;

	UT_ASSERT(rx >= 0);
	UT_EQ_INT(statsd_writer_open(&w, path, &e), 0);
	for (int i = 0; i < 8; i++) {
		build_940(&ev, i);
		statsd_writer_send(&w, ev.buf, ev.len, 940);
	}
	close(rx);
	rx = st_receiver(path);
	UT_ASSERT(rx >= 0);
	UT_EQ_INT(statsd_writer_flush(&w), 0);
	UT_EQ_U64(w.stats.reconnects, 1);
	UT_EQ_U64(w.stats.sent, 8);
	for (int i = 0; i < 8; i++) {
		UT_ASSERT(next_datagram(rx, &d));
		UT_EQ_INT(d.fields[0].i64, i);
	}
	UT_EQ_INT(st_drain(rx), 0);

	/* statsd gone mid-batch: each atom dropped with its own id, then reported */
	for (int i = 0; i < 3; i++) {
		build_atom(&ev, 5000 + i, i);
		statsd_writer_send(&w, ev.buf, ev.len, 5000 + i);
	}
	close(rx);
	unlink(path);
	UT_EQ_INT(statsd_writer_flush(&w), -ENOENT);
	UT_EQ_U64(w.stats.dropped, 3);
	UT_EQ_INT(w.stats.last_dropped_atom, 5002);
	rx = st_receiver(path);
	UT_ASSERT(rx >= 0);
	build_940(&ev, 9);
	statsd_writer_send(&w, ev.buf, ev.len, 940);
	UT_EQ_INT(statsd_writer_flush(&w), 0);
	UT_ASSERT(next_datagram(rx, &d));
	UT_EQ_INT(d.kind, SD_DROP_REPORT);
	UT_EQ_INT(d.drop_count, 3);
	UT_ASSERT(next_datagram(rx, &d));
	UT_EQ_INT(d.atom_id, 752);
	UT_EQ_INT(d.fields[5].count, 3);
	UT_EQ_INT(sd_list_int(&d.fields[5], 2), 5002);
	UT_ASSERT(next_datagram(rx, &d));
	UT_EQ_INT(d.fields[0].i64, 9);
	statsd_writer_close(&w);
	close(rx);
}
