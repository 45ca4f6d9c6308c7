/* target_traffic — a client (this process) and a server (its child) that
 * exchange known byte counts over loopback only, for `uprobestats traffic`:
 *   TCP  127.0.0.1:BASE   client send 1000, server write 300 back
 *   TCP  [::1]:BASE+1     client sendmsg 2000, server send 500
 *   UDP  127.0.0.1:BASE+2 client sendto 3 x 100, server sendto 50
 *   UDP  [::1]:BASE+3     client connect + send 2 x 200, server sendto 70
 *   unix stream UNIXPATH  client write 400, server write 123
 * and, in the client alone, over sockets it opened before the go line
 * (before uprobestats attached):
 *   TCP  [::1]:BASE+5 -> [::1]:BASE+4  send 600, the accepted end recv 600
 *   UDP  127.0.0.1:BASE+7 -> 127.0.0.1:BASE+6  send 80, the bound end recv 80
 * and, in the client, a read of FILE, a write to a pipe and a getaddrinfo
 * with AI_ADDRCONFIG (glibc asks the kernel for the interface addresses over
 * a netlink socket: socket, sendto, recvmsg), which are no traffic.  Both wait for the go line; the server listens before the client
 * starts.  Exits 0 when every byte arrived.
 *
 * With HOSTS, the client first bind-mounts that file on /etc/hosts in a
 * mount namespace of its own and finds the TCP peers by getaddrinfo of
 * upst-v4.test (AF_INET) and upst-v6.test (AF_INET6), which HOSTS maps to
 * 127.0.0.1 and ::1.
 *
 *   target_traffic [--go-fifo PATH] BASE UNIXPATH FILE [HOSTS] */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <sched.h>
#include <signal.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "go_fifo.h"

static char buf[4096];
static int use_names;     /* HOSTS given: TCP peers by getaddrinfo */

static void die(const char *what)
{
	perror(what);
	exit(3);
}

/* Reads exactly n bytes with fn (0: read, 1: recv, 2: readv). */
static void take(int fd, size_t n, int how)
{
	while (n) {
		ssize_t r;
		struct iovec iov = { buf, n < sizeof(buf) ? n : sizeof(buf) };
		if (how == 0)
			r = read(fd, buf, iov.iov_len);
		else if (how == 1)
			r = recv(fd, buf, iov.iov_len, 0);
		else
			r = readv(fd, &iov, 1);
		if (r <= 0)
			die("take");
		n -= (size_t)r;
	}
}

static socklen_t addr_of(int family, int port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;
		a->sin_family = AF_INET;
		a->sin_port = htons((unsigned short)port);
		a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		return sizeof(*a);
	}
	struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;
	a->sin6_family = AF_INET6;
	a->sin6_port = htons((unsigned short)port);
	a->sin6_addr = in6addr_loopback;
	return sizeof(*a);
}

/* HOSTS on /etc/hosts, for this process only. */
static void private_hosts(const char *hosts)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(hosts, "/etc/hosts", NULL, MS_BIND, NULL) < 0)
		die("private /etc/hosts");
	use_names = 1;
}

/* The address getaddrinfo finds for upst-v4.test / upst-v6.test. */
static socklen_t addr_by_name(int family, int port, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = family, .ai_socktype = SOCK_STREAM }, *res;
	socklen_t len;

	if (getaddrinfo(family == AF_INET ? "upst-v4.test" : "upst-v6.test", NULL, &hints,
			&res) != 0 || res->ai_addrlen > sizeof(*ss))
		die("getaddrinfo");
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	len = res->ai_addrlen;
	freeaddrinfo(res);
	((struct sockaddr_in *)ss)->sin_port = htons((unsigned short)port);  /* same place in v6 */
	return len;
}

static int listener(int family, int type, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = addr_of(family, port, &ss);
	int one = 1, fd = socket(family, type, 0);

	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) < 0)
		die("bind");
	if (type == SOCK_STREAM && listen(fd, 4) < 0)
		die("listen");
	return fd;
}

static int unix_listener(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 4) < 0)
		die("unix listen");
	return fd;
}

static void server(int base, const char *path, int ready)
{
	int t4 = listener(AF_INET, SOCK_STREAM, base), t6 = listener(AF_INET6, SOCK_STREAM, base + 1);
	int u4 = listener(AF_INET, SOCK_DGRAM, base + 2), u6 = listener(AF_INET6, SOCK_DGRAM, base + 3);
	int ux = unix_listener(path), c;
	struct sockaddr_storage peer;
	socklen_t len;

	if (write(ready, "r", 1) != 1)
		die("ready");
	c = accept4(t4, NULL, NULL, 0);
	take(c, 1000, 1);
	if (write(c, buf, 300) != 300)
		die("t4 write");
	close(c);
	len = sizeof(peer);
	c = accept4(t6, (struct sockaddr *)&peer, &len, 0);
	take(c, 2000, 2);
	if (send(c, buf, 500, 0) != 500)
		die("t6 send");
	close(c);
	for (int i = 0; i < 3; i++) {
		len = sizeof(peer);
		if (recvfrom(u4, buf, sizeof(buf), 0, (struct sockaddr *)&peer, &len) != 100)
			die("u4 recvfrom");
	}
	if (sendto(u4, buf, 50, 0, (struct sockaddr *)&peer, len) != 50)
		die("u4 sendto");
	for (int i = 0; i < 2; i++) {
		len = sizeof(peer);
		if (recvfrom(u6, buf, sizeof(buf), 0, (struct sockaddr *)&peer, &len) != 200)
			die("u6 recvfrom");
	}
	if (sendto(u6, buf, 70, 0, (struct sockaddr *)&peer, len) != 70)
		die("u6 sendto");
	c = accept(ux, NULL, NULL);
	take(c, 400, 0);
	if (write(c, buf, 123) != 123)
		die("ux write");
	close(c);
	close(t4), close(t6), close(u4), close(u6), close(ux);
	unlink(path);
}

/* The sockets of the client opened before the go line: fds [0] sends to
 * [1], TCP v6 then UDP v4. */
static int early[2][2];

static void open_early(int base)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int l = listener(AF_INET6, SOCK_STREAM, base + 4);

	int one = 1;

	early[0][0] = socket(AF_INET6, SOCK_STREAM, 0);
	len = addr_of(AF_INET6, base + 5, &ss);
	/* the same port pair as an earlier run's may still be in TIME_WAIT */
	if (early[0][0] >= 0)
		setsockopt(early[0][0], SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (early[0][0] < 0 || bind(early[0][0], (struct sockaddr *)&ss, len) < 0)
		die("early bind");
	len = addr_of(AF_INET6, base + 4, &ss);
	if (connect(early[0][0], (struct sockaddr *)&ss, len) < 0 ||
	    (early[0][1] = accept(l, NULL, NULL)) < 0)
		die("early tcp");
	close(l);
	early[1][1] = listener(AF_INET, SOCK_DGRAM, base + 6);
	early[1][0] = listener(AF_INET, SOCK_DGRAM, base + 7);
	len = addr_of(AF_INET, base + 6, &ss);
	if (connect(early[1][0], (struct sockaddr *)&ss, len) < 0)
		die("early udp");
}

static void use_early(void)
{
	if (send(early[0][0], buf, 600, 0) != 600 || send(early[1][0], buf, 80, 0) != 80)
		die("early send");
	take(early[0][1], 600, 1);
	if (recv(early[1][1], buf, sizeof(buf), 0) != 80)
		die("early recv");
	for (int i = 0; i < 4; i++)
		close(early[i / 2][i % 2]);
}

static int connected(int family, int type, int port)
{
	struct sockaddr_storage ss;
	socklen_t len = use_names && type == SOCK_STREAM ? addr_by_name(family, port, &ss)
							 : addr_of(family, port, &ss);
	int fd = socket(family, type, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len) < 0)
		die("connect");
	return fd;
}

static void not_traffic(const char *file)
{
	int fd = open(file, O_RDONLY), p[2];

	if (fd < 0 || read(fd, buf, 4096) < 0)
		die("file read");
	close(fd);
	if (pipe(p) < 0 || write(p[1], buf, 77) != 77)
		die("pipe write");
	close(p[0]);
	close(p[1]);
}

/* A lookup with AI_ADDRCONFIG: glibc's netlink conversation with the kernel
 * first (whatever the answer: a TEST-NET address, which no peer here has). */
static void addrconfig_lookup(void)
{
	struct addrinfo hints = { .ai_flags = AI_ADDRCONFIG | AI_NUMERICHOST }, *res;

	if (getaddrinfo("192.0.2.1", NULL, &hints, &res) == 0)
		freeaddrinfo(res);
}

static void client(int base, const char *path, const char *file)
{
	struct sockaddr_storage ss;
	socklen_t len;
	struct iovec iov = { buf, 2000 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct sockaddr_un ua = { .sun_family = AF_UNIX };
	int fd;

	not_traffic(file);
	addrconfig_lookup();
	fd = connected(AF_INET, SOCK_STREAM, base);
	if (send(fd, buf, 1000, 0) != 1000)
		die("t4 send");
	take(fd, 300, 0);
	close(fd);
	fd = connected(AF_INET6, SOCK_STREAM, base + 1);
	if (sendmsg(fd, &msg, 0) != 2000)
		die("t6 sendmsg");
	take(fd, 500, 1);
	close(fd);
	fd = socket(AF_INET, SOCK_DGRAM, 0);
	len = addr_of(AF_INET, base + 2, &ss);
	for (int i = 0; i < 3; i++)
		if (sendto(fd, buf, 100, 0, (struct sockaddr *)&ss, len) != 100)
			die("u4 sendto");
	if (recvfrom(fd, buf, sizeof(buf), 0, NULL, NULL) != 50)
		die("u4 recvfrom");
	close(fd);
	fd = connected(AF_INET6, SOCK_DGRAM, base + 3);
	for (int i = 0; i < 2; i++)
		if (send(fd, buf, 200, 0) != 200)
			die("u6 send");
	if (recv(fd, buf, sizeof(buf), 0) != 70)
		die("u6 recv");
	close(fd);
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	snprintf(ua.sun_path, sizeof(ua.sun_path), "%s", path);
	if (fd < 0 || connect(fd, (struct sockaddr *)&ua, sizeof(ua)) < 0)
		die("unix connect");
	if (write(fd, buf, 400) != 400)
		die("ux write");
	take(fd, 123, 0);
	close(fd);
	use_early();
	not_traffic(file);
}

int main(int argc, char **argv)
{
	int go[2], ready[2], status;
	char c;
	pid_t child, parent;
	int argi;

	if (pipe(go) < 0 || pipe(ready) < 0)
		die("pipe");
	parent = getpid();
	child = fork();
	if (child == 0) {
		/* the server: waits for the client's go, and never outlives the
		 * client (a failed test that kills the client must not leave it
		 * blocked here holding the test's output open) */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		if (getppid() != parent)
			return 4;
		if (read(go[0], &c, 1) != 1)
			return 4;
		argi = argc > 2 && !strcmp(argv[1], "--go-fifo") ? 3 : 1;
		server(atoi(argv[argi]), argv[argi + 1], ready[1]);
		return 0;
	}
	argi = argc > 2 && !strcmp(argv[1], "--go-fifo") ? 3 : 1;
	if (argc - argi >= 3)
		open_early(atoi(argv[argi]));
	argi = go_fifo_wait(argc, argv);
	if (argc - argi != 3 && argc - argi != 4) {
		fprintf(stderr, "usage: target_traffic [--go-fifo PATH] BASE UNIXPATH FILE "
			"[HOSTS]\n");
		return 2;
	}
	if (argc - argi == 4)
		private_hosts(argv[argi + 3]);
	if (write(go[1], "g", 1) != 1 || read(ready[0], &c, 1) != 1)
		die("sync");
	client(atoi(argv[argi]), argv[argi + 1], argv[argi + 2]);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status))
		return 1;
	return 0;
}
