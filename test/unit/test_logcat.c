/* logcat datagrams on a real AF_UNIX socket bound in the scratch directory,
 * decoded byte by byte here (the layout of liblog's logd_writer). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sys/log.h"
#include "sys/logcat.h"
#include "sys_testutil.h"
#include "ut.h"

struct decoded {
	unsigned id, tid, prio;
	uint32_t sec, nsec;
	char tag[64];
	char msg[LOGCAT_MAX_PAYLOAD];
	size_t len;
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* False unless the datagram is header + prio + tag NUL + msg NUL exactly. */
static bool decode(const uint8_t *b, size_t len, struct decoded *d)
{
	const uint8_t *tag, *tag_end, *msg, *msg_end;

	if (len < LOGCAT_HEADER_SIZE + 3)
		return false;
	d->len = len;
	d->id = b[0];
	d->tid = (unsigned)(b[1] | b[2] << 8);
	d->sec = le32(b + 3);
	d->nsec = le32(b + 7);
	d->prio = b[11];
	tag = b + 12;
	tag_end = memchr(tag, 0, len - 12);
	if (!tag_end || (size_t)(tag_end - tag) >= sizeof(d->tag))
		return false;
	msg = tag_end + 1;
	msg_end = memchr(msg, 0, (size_t)(b + len - msg));
	if (!msg_end || msg_end != b + len - 1)
		return false;
	memcpy(d->tag, tag, (size_t)(tag_end - tag) + 1);
	memcpy(d->msg, msg, (size_t)(msg_end - msg) + 1);
	return true;
}

/* A fake logd: a bound datagram socket at a fresh path. */
static int fake_logd(char *path, size_t size)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char dir[4096];
	int fd;

	st_mkdtemp("logd", dir, sizeof(dir));
	snprintf(path, size, "%s/logdw", dir);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		return -1;
	return fd;
}

static bool receive(int fd, struct decoded *d)
{
	uint8_t buf[LOGCAT_MAX_DATAGRAM + 64];
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

	return n > 0 && decode(buf, (size_t)n, d);
}

UT_TEST(logcat_encode_layout)
{
	uint8_t buf[LOGCAT_MAX_DATAGRAM];
	struct timespec ts = { .tv_sec = 0x01020304, .tv_nsec = 999999999 };
	struct decoded d;
	size_t n = logcat_encode(buf, sizeof(buf), LOGCAT_MAIN, 0x12345, &ts, LOGCAT_WARN,
				 "uprobestats", "hello");

	UT_EQ_INT(n, 11 + 1 + 12 + 6);
	UT_EQ_INT(buf[0], 0);
	UT_EQ_INT(buf[1], 0x45);          /* tid, low 16 bits, little-endian */
	UT_EQ_INT(buf[2], 0x23);
	UT_EQ_INT(buf[3], 0x04);          /* seconds, little-endian */
	UT_EQ_INT(buf[6], 0x01);
	UT_ASSERT(decode(buf, n, &d));
	UT_EQ_INT(d.nsec, 999999999);
	UT_EQ_INT(d.prio, LOGCAT_WARN);
	UT_EQ_STR(d.tag, "uprobestats");
	UT_EQ_STR(d.msg, "hello");
}

UT_TEST(logcat_encode_cuts_long_messages_to_the_payload_limit)
{
	static uint8_t buf[LOGCAT_MAX_DATAGRAM + 100];
	static char big[6000];
	struct timespec ts = { 0 };
	struct decoded d;
	size_t n;

	memset(big, 'x', sizeof(big) - 1);
	n = logcat_encode(buf, sizeof(buf), LOGCAT_MAIN, 1, &ts, LOGCAT_INFO, "t", big);
	UT_EQ_INT(n, LOGCAT_MAX_DATAGRAM);
	UT_ASSERT(decode(buf, n, &d));
	UT_EQ_INT(strlen(d.msg), LOGCAT_MAX_PAYLOAD - 1 - 2 - 1);   /* prio, "t\0", NUL */
	/* A buffer too small for even the header encodes nothing. */
	UT_EQ_INT(logcat_encode(buf, 12, LOGCAT_MAIN, 1, &ts, LOGCAT_INFO, "t", "m"), 0);
}

UT_TEST(logcat_write_reaches_a_bound_socket)
{
	char path[4096];
	struct logcat lc;
	struct decoded d;
	struct err e;
	struct timespec before, after;
	int srv = fake_logd(path, sizeof(path));

	UT_ASSERT(srv >= 0);
	UT_EQ_INT(logcat_open(&lc, path, &e), 0);
	clock_gettime(CLOCK_REALTIME, &before);
	UT_EQ_INT(logcat_write(&lc, LOGCAT_ERROR, "uprobestats", "attach failed"), 0);
	clock_gettime(CLOCK_REALTIME, &after);
	UT_ASSERT(receive(srv, &d));
	UT_EQ_INT(d.id, LOGCAT_MAIN);
	UT_EQ_INT(d.tid, (unsigned)syscall(SYS_gettid) & 0xffff);
	UT_ASSERT(d.sec >= (uint32_t)before.tv_sec && d.sec <= (uint32_t)after.tv_sec);
	UT_EQ_INT(d.prio, LOGCAT_ERROR);
	UT_EQ_STR(d.tag, "uprobestats");
	UT_EQ_STR(d.msg, "attach failed");
	UT_EQ_U64(lc.sent, 1);
	logcat_close(&lc);
	close(srv);
}

UT_TEST(logcat_busy_logd_drops_instead_of_blocking)
{
	char path[4096], msg[2048];
	struct logcat lc;
	struct err e;
	int srv = fake_logd(path, sizeof(path)), rc = 0;

	UT_ASSERT(srv >= 0);
	UT_EQ_INT(logcat_open(&lc, path, &e), 0);
	memset(msg, 'm', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	/* Nobody reads: the receive queue fills and sends must fail fast. */
	for (int i = 0; i < 100000 && rc == 0; i++)
		rc = logcat_write(&lc, LOGCAT_INFO, "t", msg);
	UT_EQ_INT(rc, -EAGAIN);
	UT_EQ_U64(lc.dropped, 1);
	logcat_close(&lc);
	close(srv);
}

UT_TEST(logcat_reconnects_when_logd_restarts)
{
	char path[4096];
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct logcat lc;
	struct decoded d;
	struct err e;
	int srv = fake_logd(path, sizeof(path)), srv2;

	UT_ASSERT(srv >= 0);
	UT_EQ_INT(logcat_open(&lc, path, &e), 0);
	close(srv);                      /* logd dies ... */
	unlink(path);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	srv2 = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);   /* ... and comes back */
	UT_EQ_INT(bind(srv2, (struct sockaddr *)&sun, sizeof(sun)), 0);
	UT_EQ_INT(logcat_write(&lc, LOGCAT_INFO, "t", "after restart"), 0);
	UT_ASSERT(receive(srv2, &d));
	UT_EQ_STR(d.msg, "after restart");
	logcat_close(&lc);
	close(srv2);
}

UT_TEST(logcat_open_without_logd_is_enoent)
{
	struct logcat lc;
	struct err e;

	UT_EQ_INT(logcat_open(&lc, ut_tmpfile("no-logdw"), &e), -ENOENT);
	UT_EQ_INT(lc.fd, -1);
	UT_CONTAINS(e.msg, "cannot connect");
	UT_EQ_INT(logcat_write(&lc, LOGCAT_INFO, "t", "x"), -ENOTCONN);
}

UT_TEST(log_writes_stderr_and_logcat)
{
	char path[4096], *text = NULL;
	size_t text_len = 0;
	FILE *mem = open_memstream(&text, &text_len);
	struct logger lg;
	struct decoded d;
	int srv = fake_logd(path, sizeof(path));

	UT_ASSERT(srv >= 0 && mem);
	log_init(&lg, &(struct log_opts){ .stream = mem, .logd_socket = path,
					  .min_level = LOG_LVL_INFO });
	UT_ASSERT(log_to_logcat(&lg));
	UT_CONTAINS(lg.logcat_status, "on (");
	log_msg(&lg, LOG_LVL_DEBUG, "hidden %d", 1);
	log_msg(&lg, LOG_LVL_INFO, "attached %d probes", 3);
	log_msg(&lg, LOG_LVL_ERROR, "no such method %s", "m");
	fflush(mem);
	UT_EQ_STR(text, "uprobestats: attached 3 probes\nuprobestats: error: no such method m\n");
	UT_ASSERT(receive(srv, &d));
	UT_EQ_INT(d.prio, LOGCAT_INFO);
	UT_EQ_STR(d.tag, "uprobestats");
	UT_EQ_STR(d.msg, "attached 3 probes");
	UT_ASSERT(receive(srv, &d));
	UT_EQ_INT(d.prio, LOGCAT_ERROR);
	UT_EQ_STR(d.msg, "no such method m");
	UT_ASSERT(!receive(srv, &d));    /* the debug line went nowhere */
	log_close(&lg);
	fclose(mem);
	free(text);
	close(srv);
}

UT_TEST(log_without_logd_writes_the_stream_only)
{
	char *text = NULL;
	size_t text_len = 0;
	FILE *mem = open_memstream(&text, &text_len);
	struct logger lg;

	UT_ASSERT(mem);
	log_init(&lg, &(struct log_opts){ .stream = mem, .logd_socket = ut_tmpfile("no-logdw"),
					  .tag = "ups" });
	UT_ASSERT(!log_to_logcat(&lg));
	UT_CONTAINS(lg.logcat_status, "off (");
	log_msg(&lg, LOG_LVL_DEBUG, "verbose");
	log_msg(&lg, LOG_LVL_WARN, "careful");
	fflush(mem);
	UT_EQ_STR(text, "ups: debug: verbose\nups: warning: careful\n");
	log_close(&lg);
	fclose(mem);
	free(text);

	log_init(&lg, &(struct log_opts){ .logd_socket = "" });
	UT_EQ_STR(lg.logcat_status, "off (disabled)");
	UT_ASSERT(lg.stream == stderr);
	log_close(&lg);
}
