/* target_traffic_calls — every call `uprobestats traffic` counts bytes of,
 * with exact byte and call counts, in one process over loopback (ports the
 * kernel picks) and a socketpair:
 *
 *   TCP  client c -> accepted a:  send 100, write 200, writev 300, sendmsg 400,
 *        sendfile 500 (from FILE), splice 600 (from a pipe): 2100 bytes, 6 calls;
 *        a: recvfrom(MSG_WAITALL) 2100 in 1 call, into a sockaddr_in already
 *        holding 10.9.8.7:4321 (a connected TCP socket gives no address back:
 *        addrlen 0, the buffer untouched, so the peer is still c)
 *   TCP  a -> c:  send 700; c: splice 700 from the socket into a pipe (rx, 1 call)
 *   UDP  u1 <-> u2 (connected to each other):  u1 sendmmsg 10+20+30 (3 messages,
 *        1 call), u2 recvmmsg 3 of them (60 bytes, 1 call); u2 sendmmsg 40+50,
 *        u1 recvmmsg 2 (90 bytes)
 *   unix socketpair(AF_UNIX, SOCK_STREAM) s0 -> s1:  write 55, recvfrom 55
 *        into the same 10.9.8.7:4321 buffer (no address back either)
 *
 * and no other traffic: FILE's read by sendfile, the pipe writes and reads
 * around splice are no socket's.  Exits 0 when every call moved what it
 * should.
 *
 * With --edges instead, the calls whose address or message count the tool
 * once got wrong (STALE is 10.9.8.7:4321, a buffer's old contents or an
 * address the kernel ignores):
 *
 *   TCP  c2 -> a2, accepted into a buffer holding STALE with addrlen 4 (the
 *        kernel copies the family and port, and writes back 16): a2's peer is
 *        "truncated".  c2: sendto 77 naming STALE (a connected TCP socket's
 *        bytes go to its peer whatever the address) + sendmsg 88 with
 *        msg_name STALE: 165 bytes, 2 calls on c2's real peer; a2: read 165
 *        (1 call), send 33; c2: read 33
 *   UDP  u4 -> u3 (unconnected):  sendto 44 and 22 to u3; u3: recvfrom 44
 *        into STALE with addrlen 4 and 22 into STALE with addrlen 0 (the
 *        kernel copies 4 and 0 bytes, writes back 16 each): "truncated", 2
 *        calls, 66 bytes
 *   UDP  u5 <-> u6 (connected):  u5 sendmmsg 40 messages of 1..40 bytes
 *        (820) in 1 call; u6 recvmmsg the 40 (820) in 1 call
 *   TCP  e_c -> e_a, connected before the go (at the attach the tool learns
 *        them from /proc):  e_c sendto 99 naming STALE, on its real peer;
 *        e_a: read 99
 *
 * (the peer of a2, u3's datagrams never STALE's address).
 *
 * With --msgname instead, the unconnected UDP sockets u7, u8, u9, whose
 * sendmsg and recvmsg name the peer in msg_name:  u7 sendmsg 111 to u8 and
 * 122 to u9; u9 sendto 133 to u8; u8 recvmsg 111 (from u7) and 133 (from
 * u9), u9 recvmsg 122 (from u7), each source address checked; then u7
 * sendmmsg 5 to u8 and 6 to u9 (2 messages naming 2 peers, 1 call), u8 and
 * u9 recvfrom them.
 *
 * No libc headers: the same source is built with gcc against glibc
 * (mk/e2e.mk) and with clang's Android target against the Android 11
 * userland's bionic (test/bionic/test_bionic_traffic.py; its own _start as
 * test/targets/android/target_atrace.c's).  The structures are the 64-bit
 * Linux ones (x86_64 and arm64 alike).
 *
 *   target_traffic_calls [--go-fifo PATH] FILE
 *   target_traffic_calls [--go-fifo PATH] --edges
 *   target_traffic_calls [--go-fifo PATH] --msgname */

struct sockaddr_in4 {
	unsigned short family;
	unsigned short port;      /* network order */
	unsigned int addr;        /* network order */
	unsigned char zero[8];
};

struct io_vec {
	void *base;
	unsigned long len;
};

struct msg_hdr {
	void *name;
	unsigned int namelen;
	struct io_vec *iov;
	unsigned long iovlen;
	void *control;
	unsigned long controllen;
	int flags;
};

struct mmsg_hdr {
	struct msg_hdr hdr;
	unsigned int len;
};

_Static_assert(sizeof(struct msg_hdr) == 56, "struct msghdr");
_Static_assert(sizeof(struct mmsg_hdr) == 64, "struct mmsghdr");

extern int socket(int domain, int type, int protocol);
extern int socketpair(int domain, int type, int protocol, int sv[2]);
extern int bind(int fd, const void *addr, unsigned int len);
extern int listen(int fd, int backlog);
extern int getsockname(int fd, void *addr, unsigned int *len);
extern int connect(int fd, const void *addr, unsigned int len);
extern int accept(int fd, void *addr, unsigned int *len);
extern long send(int fd, const void *buf, unsigned long n, int flags);
extern long recvfrom(int fd, void *buf, unsigned long n, int flags, void *addr,
		     unsigned int *addrlen);
extern long sendto(int fd, const void *buf, unsigned long n, int flags, const void *addr,
		   unsigned int addrlen);
extern long sendmsg(int fd, const struct msg_hdr *msg, int flags);
extern long recvmsg(int fd, struct msg_hdr *msg, int flags);
extern int sendmmsg(int fd, struct mmsg_hdr *vec, unsigned int vlen, int flags);
extern int recvmmsg(int fd, struct mmsg_hdr *vec, unsigned int vlen, int flags, void *timeout);
extern long sendfile(int out_fd, int in_fd, long *offset, unsigned long count);
extern long splice(int fd_in, long *off_in, int fd_out, long *off_out, unsigned long len,
		   unsigned int flags);
extern long write(int fd, const void *buf, unsigned long n);
extern long writev(int fd, const struct io_vec *iov, int n);
extern long read(int fd, void *buf, unsigned long n);
extern int open(const char *path, int flags, ...);
extern int close(int fd);
extern int pipe(int fds[2]);
extern int ioctl(int fd, unsigned long request, ...);
extern int usleep(unsigned int us);

#define AF_UNIX_ 1
#define AF_INET_ 2
#define SOCK_STREAM_ 1
#define SOCK_DGRAM_ 2
#define MSG_WAITALL_ 0x100
#define FIONREAD_ 0x541B
#define LOOPBACK_NET 0x0100007fu   /* 127.0.0.1 in network order (little-endian) */

static char buf[4096];

static unsigned long len_of(const char *s)
{
	unsigned long n = 0;

	while (s[n])
		n++;
	return n;
}

__attribute__((noreturn)) static void die(const char *what)
{
	(void)!write(2, "target_traffic_calls: ", 22);
	(void)!write(2, what, len_of(what));
	(void)!write(2, "\n", 1);
	__builtin_trap();
}

static void want(long got, long n, const char *what)
{
	if (got != n)
		die(what);
}

/* A socket of type bound on 127.0.0.1 (a port the kernel picks); *a gets
 * its address. */
/* recvfrom(fd, buf, n, flags) into a source address buffer that holds
 * 10.9.8.7:4321 beforehand; fd's kind gives no address back (addrlen 0). */
static long recvfrom_none(int fd, unsigned long n, int flags, const char *what)
{
	struct sockaddr_in4 from = { .family = AF_INET_, .port = 0xe110 /* 4321 */,
				     .addr = 0x0708090au /* 10.9.8.7 */ };
	unsigned int len = sizeof(from);
	long got = recvfrom(fd, buf, n, flags, &from, &len);

	if (got >= 0 && len != 0)
		die("recvfrom gave an address back");
	want(got, (long)n, what);
	return got;
}

static int bound(int type, struct sockaddr_in4 *a)
{
	unsigned int len = sizeof(*a);
	int fd = socket(AF_INET_, type, 0);

	*a = (struct sockaddr_in4){ .family = AF_INET_, .addr = LOOPBACK_NET };
	if (fd < 0 || bind(fd, a, sizeof(*a)) < 0 || getsockname(fd, a, &len) < 0)
		die("bind");
	return fd;
}

/* Waits until fd has n bytes to read (the data is in flight on loopback). */
static void readable(int fd, int n)
{
	for (int i = 0; i < 100000; i++) {
		int have = 0;
		if (ioctl(fd, FIONREAD_, &have) < 0)
			die("FIONREAD");
		if (have >= n)
			return;
		usleep(100);
	}
	die("the bytes never arrived");
}

static void tcp(const char *file)
{
	struct sockaddr_in4 la, peer;
	struct io_vec iov = { buf, 400 }, iov3 = { buf, 300 };
	struct msg_hdr msg = { .iov = &iov, .iovlen = 1 };
	int l = bound(SOCK_STREAM_, &la), c, a, f, p[2];
	unsigned int len = sizeof(peer);
	long off = 0;

	if (listen(l, 1) < 0 || (c = socket(AF_INET_, SOCK_STREAM_, 0)) < 0 ||
	    connect(c, &la, sizeof(la)) < 0 || (a = accept(l, &peer, &len)) < 0)
		die("tcp connect");
	close(l);
	want(send(c, buf, 100, 0), 100, "send");
	want(write(c, buf, 200), 200, "write");
	want(writev(c, &iov3, 1), 300, "writev");
	want(sendmsg(c, &msg, 0), 400, "sendmsg");
	if ((f = open(file, 0)) < 0)
		die("open FILE");
	want(sendfile(c, f, &off, 500), 500, "sendfile (FILE has 500 bytes or more)");
	close(f);
	if (pipe(p) < 0)
		die("pipe");
	want(write(p[1], buf, 600), 600, "pipe write");
	want(splice(p[0], 0, c, 0, 600, 0), 600, "splice to the socket");
	recvfrom_none(a, 2100, MSG_WAITALL_, "recvfrom 2100");
	want(send(a, buf, 700, 0), 700, "send 700");
	readable(c, 700);
	want(splice(c, 0, p[1], 0, 700, 0), 700, "splice from the socket");
	want(read(p[0], buf, sizeof(buf)), 700, "pipe read");
	close(p[0]), close(p[1]), close(a), close(c);
}

#define MANY 40

/* sizes[0..n-1] from fd in one sendmmsg (n <= MANY). */
static void send_many(int fd, const unsigned long *sizes, unsigned int n)
{
	struct io_vec iov[MANY];
	struct mmsg_hdr v[MANY] = { 0 };

	for (unsigned int i = 0; i < n; i++) {
		iov[i] = (struct io_vec){ buf, sizes[i] };
		v[i].hdr.iov = &iov[i];
		v[i].hdr.iovlen = 1;
	}
	want(sendmmsg(fd, v, n, 0), n, "sendmmsg");
}

/* n datagrams into fd in one recvmmsg (n <= MANY); returns their bytes. */
static long recv_many(int fd, unsigned int n)
{
	static char in[MANY][128];
	struct io_vec iov[MANY];
	struct mmsg_hdr v[MANY] = { 0 };
	long sum = 0;

	for (unsigned int i = 0; i < n; i++) {
		iov[i] = (struct io_vec){ in[i], sizeof(in[i]) };
		v[i].hdr.iov = &iov[i];
		v[i].hdr.iovlen = 1;
	}
	want(recvmmsg(fd, v, n, 0, 0), n, "recvmmsg");
	for (unsigned int i = 0; i < n; i++)
		sum += v[i].len;
	return sum;
}

static void udp(void)
{
	static const unsigned long out1[] = { 10, 20, 30 }, out2[] = { 40, 50 };
	struct sockaddr_in4 a1, a2;
	int u1 = bound(SOCK_DGRAM_, &a1), u2 = bound(SOCK_DGRAM_, &a2);

	if (connect(u1, &a2, sizeof(a2)) < 0 || connect(u2, &a1, sizeof(a1)) < 0)
		die("udp connect");
	send_many(u1, out1, 3);
	want(recv_many(u2, 3), 60, "recvmmsg bytes");
	send_many(u2, out2, 2);
	want(recv_many(u1, 2), 90, "recvmmsg bytes");
	close(u1), close(u2);
}

static void pair(void)
{
	int sv[2];

	if (socketpair(AF_UNIX_, SOCK_STREAM_, 0, sv) < 0)
		die("socketpair");
	want(write(sv[0], buf, 55), 55, "socketpair write");
	recvfrom_none(sv[1], 55, 0, "socketpair recvfrom");
	close(sv[0]), close(sv[1]);
}

/* 10.9.8.7:4321: an address no socket here has */
static const struct sockaddr_in4 stale = { .family = AF_INET_, .port = 0xe110,
					   .addr = 0x0708090au };

/* recvfrom(fd, n bytes) into a buffer holding STALE whose length is given as
 * short: the kernel copies short bytes of the source address and writes back
 * its whole length. */
static void recvfrom_short(int fd, unsigned long n, unsigned int short_len)
{
	struct sockaddr_in4 from = stale;
	unsigned int len = short_len;

	want(recvfrom(fd, buf, n, 0, &from, &len), (long)n, "recvfrom short");
	if (len != sizeof(from) || from.addr != stale.addr)
		die("recvfrom: the kernel did not cut the address short");
}

/* A connected TCP pair whose accept() got a short buffer; sendto and
 * sendmsg on the connected end naming STALE. */
static void edge_tcp(void)
{
	struct sockaddr_in4 la, peer = stale;
	struct io_vec iov = { buf, 88 };
	struct msg_hdr msg = { .name = (void *)&stale, .namelen = sizeof(stale), .iov = &iov,
			       .iovlen = 1 };
	int l = bound(SOCK_STREAM_, &la), c, a;
	unsigned int len = 4;

	if (listen(l, 1) < 0 || (c = socket(AF_INET_, SOCK_STREAM_, 0)) < 0 ||
	    connect(c, &la, sizeof(la)) < 0 || (a = accept(l, &peer, &len)) < 0)
		die("edge tcp connect");
	if (len != sizeof(peer) || peer.addr != stale.addr)
		die("accept: the kernel did not cut the address short");
	close(l);
	want(sendto(c, buf, 77, 0, &stale, sizeof(stale)), 77, "sendto on a connected TCP socket");
	want(sendmsg(c, &msg, 0), 88, "sendmsg with msg_name on a connected TCP socket");
	readable(a, 165);
	want(read(a, buf, 165), 165, "read 165");
	want(send(a, buf, 33, 0), 33, "send 33");
	readable(c, 33);
	want(read(c, buf, 33), 33, "read 33");
	close(a), close(c);
}

static void edge_udp(void)
{
	struct sockaddr_in4 a3, a4;
	int u3 = bound(SOCK_DGRAM_, &a3), u4 = bound(SOCK_DGRAM_, &a4);

	want(sendto(u4, buf, 44, 0, &a3, sizeof(a3)), 44, "sendto 44");
	want(sendto(u4, buf, 22, 0, &a3, sizeof(a3)), 22, "sendto 22");
	recvfrom_short(u3, 44, 4);
	recvfrom_short(u3, 22, 0);
	close(u3), close(u4);
}

static void edge_mmsg(void)
{
	unsigned long sizes[MANY];
	struct sockaddr_in4 a5, a6;
	int u5 = bound(SOCK_DGRAM_, &a5), u6 = bound(SOCK_DGRAM_, &a6);

	if (connect(u5, &a6, sizeof(a6)) < 0 || connect(u6, &a5, sizeof(a5)) < 0)
		die("mmsg connect");
	for (unsigned int i = 0; i < MANY; i++)
		sizes[i] = i + 1;
	send_many(u5, sizes, MANY);
	want(recv_many(u6, MANY), 820, "recvmmsg of 40");
	close(u5), close(u6);
}

/* A connected TCP pair made before the go (held there, it is open at the attach). */
static void edge_early(int fds[2])
{
	struct sockaddr_in4 la, peer;
	int l = bound(SOCK_STREAM_, &la);
	unsigned int len = sizeof(peer);

	if (listen(l, 1) < 0 || (fds[0] = socket(AF_INET_, SOCK_STREAM_, 0)) < 0 ||
	    connect(fds[0], &la, sizeof(la)) < 0 || (fds[1] = accept(l, &peer, &len)) < 0)
		die("early tcp connect");
	close(l);
}

/* On that pair, after the go: a sendto of 99 naming STALE, read by the other end. */
static void edge_early_sendto(const int fds[2])
{
	want(sendto(fds[0], buf, 99, 0, &stale, sizeof(stale)), 99, "sendto on an early socket");
	readable(fds[1], 99);
	want(read(fds[1], buf, 99), 99, "read 99");
	close(fds[0]), close(fds[1]);
}

/* sendmsg(fd, n bytes) naming to in msg_name. */
static void sendmsg_to(int fd, unsigned long n, const struct sockaddr_in4 *to)
{
	struct io_vec iov = { buf, n };
	struct msg_hdr msg = { .name = (void *)to, .namelen = sizeof(*to), .iov = &iov,
			       .iovlen = 1 };

	want(sendmsg(fd, &msg, 0), (long)n, "sendmsg naming a peer");
}

/* recvmsg(fd) of n bytes, whose source (msg_name) must be from. */
static void recvmsg_from(int fd, unsigned long n, const struct sockaddr_in4 *from)
{
	struct sockaddr_in4 got = stale;
	struct io_vec iov = { buf, sizeof(buf) };
	struct msg_hdr msg = { .name = &got, .namelen = sizeof(got), .iov = &iov, .iovlen = 1 };

	want(recvmsg(fd, &msg, 0), (long)n, "recvmsg");
	if (msg.namelen != sizeof(got) || got.port != from->port || got.addr != from->addr)
		die("recvmsg: not the source expected");
}

static void msgname(void)
{
	struct sockaddr_in4 a7, a8, a9, from;
	int u7 = bound(SOCK_DGRAM_, &a7), u8 = bound(SOCK_DGRAM_, &a8);
	int u9 = bound(SOCK_DGRAM_, &a9);
	struct io_vec iov[2] = { { buf, 5 }, { buf, 6 } };
	struct mmsg_hdr v[2] = {
		{ .hdr = { .name = &a8, .namelen = sizeof(a8), .iov = &iov[0], .iovlen = 1 } },
		{ .hdr = { .name = &a9, .namelen = sizeof(a9), .iov = &iov[1], .iovlen = 1 } },
	};
	unsigned int len;

	sendmsg_to(u7, 111, &a8);
	sendmsg_to(u7, 122, &a9);
	want(sendto(u9, buf, 133, 0, &a8, sizeof(a8)), 133, "sendto 133");
	recvmsg_from(u8, 111, &a7);
	recvmsg_from(u8, 133, &a9);
	recvmsg_from(u9, 122, &a7);
	want(sendmmsg(u7, v, 2, 0), 2, "sendmmsg to two peers");
	len = sizeof(from);
	want(recvfrom(u8, buf, sizeof(buf), 0, &from, &len), 5, "recvfrom 5");
	len = sizeof(from);
	want(recvfrom(u9, buf, sizeof(buf), 0, &from, &len), 6, "recvfrom 6");
	close(u7), close(u8), close(u9);
}

static int streq(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return *a == *b;
}

int main(int argc, char **argv)
{
	int argi = argc > 2 && streq(argv[1], "--go-fifo") ? 3 : 1, early[2] = { -1, -1 };
	int edges;

	if (argc - argi != 1) {
		die("usage: target_traffic_calls [--go-fifo PATH] FILE|--edges|--msgname");
		return 2;
	}
	edges = streq(argv[argi], "--edges");
	if (edges)
		edge_early(early);   /* before the go: the attach learns it from /proc */
	if (argi == 3) {
		char c[16];
		int fd = open(argv[2], 0);   /* blocks until the test opens the other end */
		if (fd < 0 || read(fd, c, sizeof(c)) <= 0)
			die("go fifo");
		close(fd);
	}
	if (streq(argv[argi], "--msgname")) {
		msgname();
		return 0;
	}
	if (edges) {
		edge_tcp();
		edge_udp();
		edge_mmsg();
		edge_early_sendto(early);
		return 0;
	}
	tcp(argv[argi]);
	udp();
	pair();
	return 0;
}

#if defined(__ANDROID__)
/* bionic without the NDK's crtbegin: its _start calls __libc_init */
struct structors {
	void (**preinit)(void);
	void (**init)(void);
	void (**fini)(void);
};
const struct structors target_structors = { 0, 0, 0 };
#if defined(__aarch64__)
__asm__(".text\n.globl _start\n_start:\n"
	"  mov x0, sp\n  mov x1, xzr\n  adrp x2, main\n  add x2, x2, :lo12:main\n"
	"  adrp x3, target_structors\n  add x3, x3, :lo12:target_structors\n"
	"  bl __libc_init\n  brk #0\n");
#else
__asm__(".text\n.globl _start\n_start:\n"
	"  mov %rsp, %rdi\n  xor %esi, %esi\n  lea main(%rip), %rdx\n"
	"  lea target_structors(%rip), %rcx\n  and $-16, %rsp\n  call __libc_init@PLT\n  hlt\n");
#endif
#endif
