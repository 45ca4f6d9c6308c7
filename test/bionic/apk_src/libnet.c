/* libnet — an app library with socket calls of its own (test_bionic_apk_cmds.py):
 * socket, bind, connect, sendto, recvfrom, write, read and close as system call
 * wrappers under libc's names, as an app that links its own C library (Go, Rust on
 * musl, a vendored libc) ships them inside its APK.  `traffic --lib APK!/…/libnet.so`
 * probes these as it probes a libc.  x86_64 only (the host tests). */
typedef unsigned long size_t;
typedef long ssize_t;
typedef unsigned int socklen_t;
struct sockaddr;

static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;
	long r;

	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10),
			 "r"(r8), "r"(r9) : "rcx", "r11", "memory");
	return r;
}

static long ok(long r)
{
	return r < 0 && r > -4096 ? -1 : r;
}

int socket(int domain, int type, int proto)
{
	return (int)ok(sys6(41, domain, type, proto, 0, 0, 0));
}

int bind(int fd, const struct sockaddr *a, socklen_t len)
{
	return (int)ok(sys6(49, fd, (long)a, len, 0, 0, 0));
}

int connect(int fd, const struct sockaddr *a, socklen_t len)
{
	return (int)ok(sys6(42, fd, (long)a, len, 0, 0, 0));
}

ssize_t sendto(int fd, const void *buf, size_t n, int flags, const struct sockaddr *a,
	       socklen_t len)
{
	return ok(sys6(44, fd, (long)buf, (long)n, flags, (long)a, len));
}

ssize_t recvfrom(int fd, void *buf, size_t n, int flags, struct sockaddr *a, socklen_t *len)
{
	return ok(sys6(45, fd, (long)buf, (long)n, flags, (long)a, (long)len));
}

ssize_t write(int fd, const void *buf, size_t n)
{
	return ok(sys6(1, fd, (long)buf, (long)n, 0, 0, 0));
}

ssize_t read(int fd, void *buf, size_t n)
{
	return ok(sys6(0, fd, (long)buf, (long)n, 0, 0, 0));
}

int close(int fd)
{
	return (int)ok(sys6(3, fd, 0, 0, 0, 0, 0));
}
