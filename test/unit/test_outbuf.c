/* The output buffer (vocab/outbuf.c): it never waits for a reader, counts
 * every event written and lost, fails on a reader gone, and cuts a file that
 * fails back to its last whole event. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "vocab/outbuf.h"
#include "ut.h"

static int lost_tags[4];

static void count_lost(void *ctx, const void *tag)
{
	(void)ctx;
	lost_tags[*(const int *)tag]++;
}

static const int tag1 = 1, tag2 = 2;

static void put_event(struct outbuf *o, const void *tag, size_t len)
{
	char line[512];

	memset(line, 'x', len - 1);
	line[len - 1] = '\n';
	outbuf_event_begin(o);
	outbuf_put(o, line, len);
	outbuf_event_end(o, tag);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A pipe nobody reads: writes never wait, the queue fills, the output says
 * it is congested, events that find no room are dropped whole and counted. */
UT_TEST(outbuf_never_waits_for_a_reader_that_does_not_read)
{
	int p[2];
	FILE *f;
	struct outbuf o;
	double t0;

	memset(lost_tags, 0, sizeof(lost_tags));
	UT_ASSERT(pipe(p) == 0);
	f = fdopen(p[1], "w");
	UT_ASSERT(f);
	UT_EQ_INT(outbuf_init(&o, f, 4096, "test", NULL), 0);
	outbuf_on_lost(&o, count_lost, NULL);
	t0 = now_s();
	for (int i = 0; i < 2000; i++)  /* 1 MB: far more than the pipe holds */
		put_event(&o, i % 2 ? &tag1 : &tag2, 500);
	UT_EQ_INT(outbuf_flush(&o), 0);
	UT_ASSERT(now_s() - t0 < 2);
	UT_ASSERT(outbuf_congested(&o));
	UT_ASSERT(o.events_lost > 0);
	UT_EQ_U64(o.events_written + o.events_lost + outbuf_pending_events(&o), 2000);
	UT_EQ_INT(lost_tags[1] + lost_tags[2], (int)o.events_lost);
	/* at the end: a bounded wait, then the rest is lost */
	t0 = now_s();
	UT_EQ_INT(outbuf_finish(&o, 200), -ETIMEDOUT);
	UT_ASSERT(now_s() - t0 < 2);
	UT_EQ_U64(o.events_written + o.events_lost, 2000);
	/* what the pipe holds is whole lines */
	{
		char buf[1 << 16];
		ssize_t n = read(p[0], buf, sizeof(buf));
		UT_ASSERT(n > 0 && n % 500 == 0 && (uint64_t)n / 500 == o.events_written);
	}
	outbuf_free(&o);
	fclose(f);
	close(p[0]);
}

UT_TEST(outbuf_reader_gone_fails_with_epipe_and_counts)
{
	int p[2];
	FILE *f;
	struct outbuf o;
	struct err e = { 0 };
	void (*old)(int) = signal(SIGPIPE, SIG_IGN);

	memset(lost_tags, 0, sizeof(lost_tags));
	UT_ASSERT(pipe(p) == 0);
	f = fdopen(p[1], "w");
	UT_EQ_INT(outbuf_init(&o, f, 0, "json", NULL), 0);
	outbuf_on_lost(&o, count_lost, NULL);
	put_event(&o, &tag1, 100);
	UT_EQ_INT(outbuf_flush(&o), 0);
	close(p[0]);
	put_event(&o, &tag1, 100);
	put_event(&o, &tag2, 100);
	UT_EQ_INT(outbuf_flush(&o), -EPIPE);
	put_event(&o, &tag2, 100);    /* after the failure: lost at once */
	UT_EQ_U64(o.events_written, 1);
	UT_EQ_U64(o.events_lost, 3);
	UT_EQ_INT(lost_tags[1], 1);
	UT_EQ_INT(lost_tags[2], 2);
	UT_ASSERT(outbuf_check(&o, &e) < 0);
	UT_EQ_STR(e.msg, "json output: write failed: its reader has gone (EPIPE) (1 events "
		  "written, 3 lost)");
	outbuf_free(&o);
	fclose(f);
	signal(SIGPIPE, old);
}

/* A file that stops taking bytes (RLIMIT_FSIZE here, a full disk in life):
 * the file ends at its last whole event and the counts are exact. */
UT_TEST(outbuf_failed_file_is_cut_back_to_its_last_whole_event)
{
	const char *path = ut_tmpfile("outbuf-fsize");
	struct rlimit old, lim;
	void (*oldsig)(int) = signal(SIGXFSZ, SIG_IGN);
	struct outbuf o;
	struct stat st;
	FILE *f = fopen(path, "w");
	int rc;

	UT_ASSERT(f && getrlimit(RLIMIT_FSIZE, &old) == 0);
	lim = old;
	lim.rlim_cur = 10000;          /* 10000 bytes: 33 lines of 300 and a third */
	UT_ASSERT(setrlimit(RLIMIT_FSIZE, &lim) == 0);
	UT_EQ_INT(outbuf_init(&o, f, 4096, "json", NULL), 0);
	for (int i = 0; i < 100; i++)
		put_event(&o, &tag1, 300);
	rc = outbuf_flush(&o);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, oldsig);
	UT_EQ_INT(rc, -EFBIG);
	UT_EQ_U64(o.events_written, 33);
	UT_EQ_U64(o.events_lost, 67);
	fflush(f);
	UT_ASSERT(stat(path, &st) == 0);
	UT_EQ_INT(st.st_size, 33 * 300);
	outbuf_free(&o);
	fclose(f);
}

/* One event of n bytes, line i of it "<i> xxx...\n", written in pieces the
 * way the sinks write: puts, printf, reserve+commit. */
static void put_big_event(struct outbuf *o, const void *tag, int lines)
{
	outbuf_event_begin(o);
	for (int i = 0; i < lines; i++) {
		char *p;
		outbuf_printf(o, "%06d ", i);
		outbuf_puts(o, "key-");
		p = outbuf_reserve(o, 8);
		if (p) {
			memcpy(p, "abcdefg", 7);
			outbuf_commit(o, p + 7);
		}
		outbuf_putc(o, '\n');
	}
	outbuf_event_end(o, tag);
}

static bool big_event_text_ok(const char *s, size_t n, int lines)
{
	char want[32];

	if (n != (size_t)lines * 19)
		return false;
	for (int i = 0; i < lines; i++) {
		snprintf(want, sizeof(want), "%06d key-abcdefg\n", i);
		if (memcmp(s + (size_t)i * 19, want, 19) != 0)
			return false;
	}
	return true;
}

/* An event far larger than the buffer (a table of 20,000 keys) is written
 * whole to a file, counted once, and the buffer returns to its size. */
UT_TEST(outbuf_event_larger_than_the_buffer_is_written_whole_to_a_file)
{
	const char *path = ut_tmpfile("outbuf-big");
	FILE *f = fopen(path, "w+");
	struct outbuf o;
	char *back;
	long n;

	memset(lost_tags, 0, sizeof(lost_tags));
	UT_ASSERT(f);
	UT_EQ_INT(outbuf_init(&o, f, 4096, "text", NULL), 0);
	outbuf_on_lost(&o, count_lost, NULL);
	put_event(&o, &tag2, 100);
	put_big_event(&o, &tag1, 20000);    /* 380,000 bytes in a 4096-byte buffer */
	put_event(&o, &tag2, 100);
	UT_EQ_INT(outbuf_finish(&o, 1000), 0);
	UT_EQ_U64(o.events_written, 3);
	UT_EQ_U64(o.events_lost, 0);
	UT_EQ_INT(lost_tags[1] + lost_tags[2], 0);
	UT_EQ_U64(o.cap, 4096);
	fflush(f);
	n = ftell(f);
	UT_EQ_INT(n, 100 + 20000 * 19 + 100);
	back = malloc((size_t)n);
	UT_ASSERT(back);
	rewind(f);
	UT_EQ_INT(fread(back, 1, (size_t)n, f), n);
	UT_ASSERT(big_event_text_ok(back + 100, (size_t)n - 200, 20000));
	free(back);
	outbuf_free(&o);
	fclose(f);
}

/* To a pipe (written without blocking): the large event finds the queue
 * part full and still goes whole, after what was queued, with nothing
 * lost, however slowly the reader takes it; the buffer shrinks back. */
UT_TEST(outbuf_event_larger_than_the_buffer_goes_whole_through_a_pipe)
{
	int p[2];
	FILE *f;
	struct outbuf o;
	size_t want = 10 * 100 + 5000 * 19, got = 0;
	char *back = malloc(want + 1);
	bool grew;

	memset(lost_tags, 0, sizeof(lost_tags));
	UT_ASSERT(back && pipe(p) == 0);
	UT_ASSERT(fcntl(p[0], F_SETFL, O_NONBLOCK) == 0);
	f = fdopen(p[1], "w");
	UT_ASSERT(f);
	UT_EQ_INT(outbuf_init(&o, f, 4096, "json", NULL), 0);
	outbuf_on_lost(&o, count_lost, NULL);
	for (int i = 0; i < 10; i++)
		put_event(&o, &tag2, 100);
	put_big_event(&o, &tag1, 5000);
	grew = o.cap > 4096;
	UT_ASSERT(grew);
	UT_EQ_U64(o.events_lost, 0);
	/* the reader takes a little at a time: the loop flushes between reads */
	for (int round = 0; round < 100000 && got < want; round++) {
		ssize_t r;
		UT_EQ_INT(outbuf_flush(&o), 0);
		r = read(p[0], back + got, want + 1 - got < 1000 ? want + 1 - got : 1000);
		if (r > 0)
			got += (size_t)r;
	}
	UT_EQ_INT(outbuf_flush(&o), 0);
	UT_EQ_U64(got, want);
	UT_EQ_U64(o.events_written, 11);
	UT_EQ_U64(o.events_lost, 0);
	UT_EQ_U64(o.cap, 4096);
	UT_ASSERT(big_event_text_ok(back + 1000, want - 1000, 5000));
	free(back);
	outbuf_free(&o);
	fclose(f);
	close(p[0]);
}

/* What is written outside events (a profile or folded stacks at exit, in
 * many small pieces) to a pipe whose reader is slower than the writer: the
 * buffer grows instead of failing the output, and all of it arrives. */
UT_TEST(outbuf_bytes_outside_events_to_a_slow_pipe_are_all_written)
{
	int p[2];
	FILE *f;
	struct outbuf o;
	size_t want = 20000 * 19, got = 0;
	char *back = malloc(want + 1);

	UT_ASSERT(back && pipe(p) == 0);
	UT_ASSERT(fcntl(p[0], F_SETFL, O_NONBLOCK) == 0);
	f = fdopen(p[1], "w");
	UT_ASSERT(f);
	UT_EQ_INT(outbuf_init(&o, f, 4096, "profile", NULL), 0);
	o.at_exit = true;
	for (int i = 0; i < 20000; i++)
		outbuf_printf(&o, "%06d key-abcdefg\n", i);
	UT_EQ_INT(o.error, 0);
	for (int round = 0; round < 100000 && got < want; round++) {
		ssize_t r;
		UT_EQ_INT(outbuf_flush(&o), 0);
		r = read(p[0], back + got, want + 1 - got < 1000 ? want + 1 - got : 1000);
		if (r > 0)
			got += (size_t)r;
	}
	UT_EQ_U64(got, want);
	UT_ASSERT(big_event_text_ok(back, want, 20000));
	UT_EQ_U64(o.cap, 4096);
	free(back);
	outbuf_free(&o);
	fclose(f);
	close(p[0]);
}
