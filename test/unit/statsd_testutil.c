#include "statsd_testutil.h"

#include "ut.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

long st_hex(const char *hex, uint8_t *out, size_t cap)
{
	size_t n = 0;
	int hi = -1;

	for (; *hex; hex++) {
		if (*hex == ' ' || *hex == '|')
			continue;
		int v = hexval(*hex);
		if (v < 0)
			return -1;
		if (hi < 0) {
			hi = v;
			continue;
		}
		if (n >= cap)
			return -1;
		out[n++] = (uint8_t)(hi << 4 | v);
		hi = -1;
	}
	return hi < 0 ? (long)n : -1;
}

bool st_bytes_eq_skip(const uint8_t *p, size_t n, const char *hex, uint64_t skip,
		      const char *file, int line)
{
	static const size_t cap = 8192;
	uint8_t want[8192];
	long wn = st_hex(hex, want, cap);

	if (wn < 0) {
		ut_fail(file, line, "bad hex literal");
		return false;
	}
	for (size_t i = 0; i < n && i < (size_t)wn; i++) {
		if (i < 64 && (skip >> i & 1))
			continue;
		if (p[i] != want[i]) {
			ut_fail(file, line, "byte %zu: got %02x, want %02x (len %zu vs %ld)", i,
				p[i], want[i], n, wn);
			return false;
		}
	}
	if ((size_t)wn != n) {
		ut_fail(file, line, "length %zu, want %ld", n, wn);
		return false;
	}
	return true;
}

int st_receiver(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || strlen(path) >= sizeof(a.sun_path))
		return -1;
	strcpy(a.sun_path, path);
	unlink(path);
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

long st_recv(int fd, uint8_t *buf, size_t cap)
{
	return (long)recv(fd, buf, cap, MSG_DONTWAIT);
}

int st_drain(int fd)
{
	uint8_t buf[8192];
	int n = 0;

	while (st_recv(fd, buf, sizeof(buf)) >= 0)
		n++;
	return n;
}
