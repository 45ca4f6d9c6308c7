#include "sys/sysroot.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

struct sys_paths sys_paths_resolve(const struct sys_paths *in)
{
	struct sys_paths p = { 0 };

	if (in)
		p = *in;
	if (!p.proc)
		p.proc = SYS_DEFAULT_PROC;
	if (!p.sys)
		p.sys = SYS_DEFAULT_SYS;
	if (!p.props)
		p.props = SYS_DEFAULT_PROPS;
	if (!p.getprop)
		p.getprop = SYS_DEFAULT_GETPROP;
	if (!p.sockets)
		p.sockets = SYS_DEFAULT_SOCKETS;
	return p;
}

bool sys_path_join(char *buf, size_t size, const char *dir, const char *rel)
{
	int n = snprintf(buf, size, "%s/%s", dir, rel);

	return n >= 0 && (size_t)n < size;
}

int sys_read_text(const char *path, char *buf, size_t size)
{
	size_t len = 0;
	int fd;

	if (size == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (len < size - 1) {
		ssize_t n = read(fd, buf + len, size - 1 - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			return -e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		len--;
	buf[len] = '\0';
	return 0;
}

int sys_read_long(const char *path, long *out)
{
	char buf[64];
	char *end;
	long v;
	int rc = sys_read_text(path, buf, sizeof(buf));

	if (rc < 0)
		return rc;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno || end == buf || *end)
		return -EINVAL;
	*out = v;
	return 0;
}

int sys_read_text_at(const char *dir, const char *rel, char *buf, size_t size)
{
	char path[4096];

	if (!sys_path_join(path, sizeof(path), dir, rel))
		return -ENAMETOOLONG;
	return sys_read_text(path, buf, size);
}

int sys_read_long_at(const char *dir, const char *rel, long *out)
{
	char path[4096];

	if (!sys_path_join(path, sizeof(path), dir, rel))
		return -ENAMETOOLONG;
	return sys_read_long(path, out);
}

bool sys_exists_at(const char *dir, const char *rel)
{
	char path[4096];
	struct stat st;

	return sys_path_join(path, sizeof(path), dir, rel) && lstat(path, &st) == 0;
}

int sys_kernel_release(const struct sys_paths *p, char *buf, size_t size)
{
	struct utsname u;

	if (p->uname_release) {
		snprintf(buf, size, "%s", p->uname_release);
		return 0;
	}
	if (sys_read_text_at(p->proc, "sys/kernel/osrelease", buf, size) == 0 && buf[0])
		return 0;
	if (uname(&u) < 0)
		return -errno;
	snprintf(buf, size, "%s", u.release);
	return 0;
}

static bool parse_uint(const char **s, unsigned *out)
{
	unsigned long v = 0;
	const char *p = *s;

	if (!isdigit((unsigned char)*p))
		return false;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (unsigned long)(*p - '0');
		if (v > 100000)
			return false;
	}
	*out = (unsigned)v;
	*s = p;
	return true;
}

bool sys_kernel_version(const char *release, unsigned *major, unsigned *minor)
{
	const char *s = release;

	if (!parse_uint(&s, major) || *s++ != '.')
		return false;
	return parse_uint(&s, minor);
}

/* Next space-separated field of [*p, end) as [start, *len). */
static const char *next_field(const char **p, const char *end, size_t *len)
{
	const char *s = *p, *e;

	while (s < end && *s == ' ')
		s++;
	for (e = s; e < end && *e != ' '; e++)
		;
	*p = e;
	*len = (size_t)(e - s);
	return s;
}

static bool is_octal(char c, char max)
{
	return c >= '0' && c <= max;
}

/* Copies a mount field, turning the kernel's \ooo escapes back into bytes. */
static int unescape_field(const char *s, size_t n, char *out, size_t size)
{
	size_t o = 0;

	if (size == 0)
		return -ERANGE;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (c == '\\' && i + 3 < n && is_octal(s[i + 1], '3') && is_octal(s[i + 2], '7') &&
		    is_octal(s[i + 3], '7')) {
			c = (char)((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
			i += 3;
		}
		if (o + 1 >= size)
			return -ERANGE;
		out[o++] = c;
	}
	out[o] = '\0';
	return 0;
}

int sys_find_mount(const char *text, size_t len, const char *fstype, char *mnt, size_t size)
{
	const char *p = text, *end;
	size_t tlen = strlen(fstype);

	if (!text || !len)
		return -ENOENT;
	for (end = text + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end, *q = p, *dev, *dir, *type;
		size_t dev_n, dir_n, type_n;

		dev = next_field(&q, eol, &dev_n);
		dir = next_field(&q, eol, &dir_n);
		type = next_field(&q, eol, &type_n);
		(void)dev;
		if (dev_n && dir_n && type_n == tlen && memcmp(type, fstype, tlen) == 0)
			return unescape_field(dir, dir_n, mnt, size);
		p = eol + 1;
	}
	return -ENOENT;
}
