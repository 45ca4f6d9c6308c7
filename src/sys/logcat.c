#include "sys/logcat.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

static void put_u16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

size_t logcat_encode(uint8_t *buf, size_t size, enum logcat_buffer id, uint32_t tid,
		     const struct timespec *realtime, enum logcat_priority prio,
		     const char *tag, const char *msg)
{
	size_t cap = size < LOGCAT_MAX_DATAGRAM ? size : LOGCAT_MAX_DATAGRAM;
	size_t taglen = strlen(tag), msglen = strlen(msg), room;
	uint8_t *p = buf + LOGCAT_HEADER_SIZE;

	/* header + prio + at least the two NULs, and a tag that fits */
	if (cap < LOGCAT_HEADER_SIZE + 3)
		return 0;
	room = cap - LOGCAT_HEADER_SIZE - 3;
	if (taglen > room)
		taglen = room;
	room -= taglen;
	if (msglen > room)
		msglen = room;
	buf[0] = (uint8_t)id;
	put_u16(buf + 1, (uint16_t)tid);   /* logd keeps 16 bits of the tid */
	put_u32(buf + 3, (uint32_t)realtime->tv_sec);
	put_u32(buf + 7, (uint32_t)realtime->tv_nsec);
	*p++ = (uint8_t)prio;
	memcpy(p, tag, taglen);
	p += taglen;
	*p++ = '\0';
	memcpy(p, msg, msglen);
	p += msglen;
	*p++ = '\0';
	return (size_t)(p - buf);
}

static int connect_to(int fd, const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	/* connect() may be repeated on a datagram socket: that is the reconnect. */
	while (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0)
		if (errno != EINTR)
			return -errno;
	return 0;
}

int logcat_open(struct logcat *lc, const char *path, struct err *err)
{
	int rc;

	memset(lc, 0, sizeof(*lc));
	lc->fd = -1;
	if (strlen(path) >= sizeof(lc->path))
		return err_set(err, -ENAMETOOLONG, "%s: socket path too long", path);
	snprintf(lc->path, sizeof(lc->path), "%s", path);
	lc->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (lc->fd < 0)
		return err_set(err, -errno, "logd socket: %s", strerror(errno));
	rc = connect_to(lc->fd, path);
	if (rc < 0) {
		close(lc->fd);
		lc->fd = -1;
		return err_set(err, rc, "%s: cannot connect: %s", path, strerror(-rc));
	}
	return 0;
}

static int send_once(int fd, const uint8_t *buf, size_t len)
{
	ssize_t n;

	do
		n = send(fd, buf, len, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : 0;
}

int logcat_write(struct logcat *lc, enum logcat_priority prio, const char *tag,
		 const char *msg)
{
	uint8_t buf[LOGCAT_MAX_DATAGRAM];
	struct timespec now;
	size_t len;
	int rc;

	if (lc->fd < 0)
		return -ENOTCONN;
	clock_gettime(CLOCK_REALTIME, &now);
	len = logcat_encode(buf, sizeof(buf), LOGCAT_MAIN, (uint32_t)syscall(SYS_gettid), &now,
			    prio, tag, msg);
	rc = send_once(lc->fd, buf, len);
	/* EAGAIN: logd is behind; anything else: it went away, maybe came back. */
	if (rc < 0 && rc != -EAGAIN && connect_to(lc->fd, lc->path) == 0)
		rc = send_once(lc->fd, buf, len);
	if (rc < 0)
		lc->dropped++;
	else
		lc->sent++;
	return rc;
}

void logcat_close(struct logcat *lc)
{
	if (lc->fd >= 0)
		close(lc->fd);
	lc->fd = -1;
}
