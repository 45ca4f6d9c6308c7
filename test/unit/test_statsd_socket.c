/* The statsd writer on a real AF_UNIX datagram socket: exact datagrams, drops
 * under a full receiver queue, the loss report after recovery, reconnects. */
#include "ut.h"

#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sink/statsd_socket.h"
#include "statsd_decoder.h"
#include "statsd_testutil.h"

#define TS 0x0102030405060708ull

static void build_940(struct statsd_event *ev, int32_t uid)
{
	statsd_event_init(ev, TS);
	statsd_event_set_atom_id(ev, 940);
	statsd_event_write_int32(ev, uid);
	statsd_event_write_bool(ev, true);
	statsd_event_build(ev);
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
	UT_EQ_INT(statsd_writer_send(&w, ev.buf, ev.len, 940), 0);
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

/* The receiver stops reading: sends fail with EAGAIN and are counted, nothing
 * blocks.  Once it reads again, the next send first delivers the 24-byte drop
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

	UT_ASSERT(rx >= 0);
	UT_EQ_INT(statsd_writer_open(&w, path, &e), 0);
	/* Until the queue is full, whatever net.unix.max_dgram_qlen is here. */
	for (int i = 0; i < 100000 && dropped < 20; i++) {
		build_940(&ev, i);
		int rc = statsd_writer_send(&w, ev.buf, ev.len, 940);
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
	UT_EQ_INT(statsd_writer_unreported(&w), dropped);
	UT_EQ_INT(st_drain(rx), delivered);

	build_940(&ev, 4242);
	UT_EQ_INT(statsd_writer_send(&w, ev.buf, ev.len, 940), 0);
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
	UT_EQ_INT(statsd_writer_send(&w, ev.buf, ev.len, 940), 0);
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
	UT_EQ_INT(statsd_writer_send(&w, ev.buf, ev.len, 940), -ENOENT);
	UT_EQ_INT(statsd_writer_send(&w, ev.buf, ev.len, 940), -ENOENT);
	UT_EQ_INT(w.stats.dropped, 2);
	rx = st_receiver(path);
	UT_ASSERT(rx >= 0);
	UT_EQ_INT(statsd_writer_send(&w, ev.buf, ev.len, 940), 0);
	long n = st_recv(rx, buf, sizeof(buf));
	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.kind, SD_DROP_REPORT);
	UT_EQ_INT(d.drop_error, -ENOENT);
	UT_EQ_INT(d.drop_count, 2);
	n = st_recv(rx, buf, sizeof(buf));
	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.atom_id, 752);
	UT_EQ_INT(sd_list_int(&d.fields[4], 0), -ENOENT);
	UT_EQ_INT(sd_list_int(&d.fields[6], 0), 2);
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
		dropped += statsd_writer_send(&w, ev.buf, ev.len, 940) < 0;
	}
	UT_ASSERT(dropped > 0);
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
