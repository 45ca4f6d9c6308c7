/* statsd_sink — a statsd stand-in that only counts: binds an AF_UNIX
 * datagram socket at PATH, reads datagrams as fast as it can, and on SIGINT or
 * SIGTERM prints "datagrams N bytes N" on stdout and removes PATH.
 *
 *   statsd_sink PATH
 *
 * Prints "statsd_sink: ready" on stderr once bound. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int bind_socket(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int rcvbuf = 8 << 20;

	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path))
		return -1;
	strcpy(sa.sun_path, path);
	unlink(path);
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int main(int argc, char **argv)
{
	struct sigaction act = { .sa_handler = on_signal };   /* no SA_RESTART */
	unsigned long long datagrams = 0, bytes = 0;
	char buf[65536];
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: statsd_sink PATH\n");
		return 2;
	}
	sigaction(SIGINT, &act, NULL);
	sigaction(SIGTERM, &act, NULL);
	fd = bind_socket(argv[1]);
	if (fd < 0) {
		fprintf(stderr, "statsd_sink: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	fprintf(stderr, "statsd_sink: ready\n");
	while (!stop) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);
		if (n >= 0) {
			datagrams++;
			bytes += (unsigned long long)n;
		} else if (errno != EINTR) {
			fprintf(stderr, "statsd_sink: recv: %s\n", strerror(errno));
			break;
		}
	}
	printf("datagrams %llu bytes %llu\n", datagrams, bytes);
	unlink(argv[1]);
	close(fd);
	return 0;
}
