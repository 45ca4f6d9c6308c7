#include "vmproc.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BTF_PATH "/sys/kernel/btf/vmlinux"

long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static int redirect(int target_fd, const char *path)
{
	int fd = open(path ? path : "/dev/null", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);

	if (fd < 0 || dup2(fd, target_fd) < 0)
		return -1;
	close(fd);
	return 0;
}

/* In the child: hide the kernel's BTF from what it execs, in its own mount namespace. */
static int hide_kernel_btf(void)
{
	struct stat st;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("/dev/null", BTF_PATH, NULL, MS_BIND, NULL) < 0) {
		fprintf(stderr, "vmtest: cannot bind /dev/null over %s: %s\n", BTF_PATH,
			strerror(errno));
		return -1;
	}
	if (stat(BTF_PATH, &st) < 0 || !S_ISCHR(st.st_mode)) {
		fprintf(stderr, "vmtest: %s is still the kernel's BTF\n", BTF_PATH);
		return -1;
	}
	return 0;
}

pid_t spawn(const char *path, char *const argv[], const char *out, const char *err,
	    enum spawn_flags flags)
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	if (redirect(1, out) < 0 || redirect(2, err) < 0)
		_exit(125);
	if ((flags & SPAWN_NO_BTF) && hide_kernel_btf() < 0)
		_exit(125);
	execv(path, argv);
	fprintf(stderr, "vmtest: exec %s: %s\n", path, strerror(errno));
	_exit(127);
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}

int wait_exit(pid_t pid, int timeout_ms, struct statsd_rx *rx)
{
	long long deadline = now_ms() + timeout_ms;
	int status;

	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			return exit_code(status);
		if (r < 0 && errno != EINTR)
			return -1;
		if (rx)
			statsd_rx_drain(rx);
		if (now_ms() > deadline)
			break;
		sleep_ms(5);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

int reap_if_exited(pid_t pid, int *code)
{
	int status;
	pid_t r = waitpid(pid, &status, WNOHANG);

	if (r == pid) {
		*code = exit_code(status);
		return 1;
	}
	return r == 0 ? 0 : -1;
}

void kill_quietly(pid_t pid, int sig)
{
	if (pid > 0 && waitpid(pid, NULL, WNOHANG) == 0)
		kill(pid, sig);
}

char *read_file(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (!buf)
		abort();
	if (fd >= 0) {
		for (;;) {
			if (cap - n < 4096) {
				cap *= 2;
				buf = realloc(buf, cap);
				if (!buf)
					abort();
			}
			ssize_t r = read(fd, buf + n, cap - n - 1);
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				break;
			n += (size_t)r;
		}
		close(fd);
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* --- statsd stand-in ------------------------------------------------------------------ */

#define QLEN_SYSCTL "/proc/sys/net/unix/max_dgram_qlen"
#define STATSD_QLEN "2400"

/* Writes TEXT to the sysctl file PATH; 0 or -1. */
static int write_sysctl(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, text, strlen(text));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* A datagram socket that queues 2400 datagrams, like statsd's on Android (init.rc sets
 * net.unix.max_dgram_qlen; Linux defaults to 10).  The kernel takes the limit from the
 * sysctl when the socket is created, so it is set for that moment only. */
static int socket_with_queue(void)
{
	char *old = read_file(QLEN_SYSCTL, NULL);
	int fd;

	old[strcspn(old, "\n")] = '\0';
	bool set = old[0] && write_sysctl(QLEN_SYSCTL, STATSD_QLEN) == 0;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (set)
		write_sysctl(QLEN_SYSCTL, old);
	free(old);
	return fd;
}

int statsd_rx_open(struct statsd_rx *rx, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	memset(rx, 0, sizeof(*rx));
	if (strlen(path) >= sizeof(sa.sun_path) || strlen(path) >= sizeof(rx->path))
		return -1;
	strcpy(sa.sun_path, path);
	strcpy(rx->path, path);
	rx->fd = socket_with_queue();
	if (rx->fd < 0)
		return -1;
	if (bind(rx->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(rx->fd);
		rx->fd = -1;
		return -1;
	}
	return 0;
}

static int keep_datagram(struct statsd_rx *rx, const unsigned char *d, size_t len)
{
	if (rx->count == rx->cap) {
		int cap = rx->cap ? rx->cap * 2 : 64;
		unsigned char **dg = realloc(rx->dgram, (size_t)cap * sizeof(*dg));
		size_t *ln = dg ? realloc(rx->len, (size_t)cap * sizeof(*ln)) : NULL;
		if (!dg || !ln)
			return -1;
		rx->dgram = dg;
		rx->len = ln;
		rx->cap = cap;
	}
	rx->dgram[rx->count] = malloc(len ? len : 1);
	if (!rx->dgram[rx->count])
		return -1;
	memcpy(rx->dgram[rx->count], d, len);
	rx->len[rx->count++] = len;
	return 0;
}

int statsd_rx_drain(struct statsd_rx *rx)
{
	unsigned char buf[8192];

	if (rx->fd < 0)
		return -1;
	for (;;) {
		ssize_t n = recv(rx->fd, buf, sizeof(buf), 0);
		if (n < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
		if (keep_datagram(rx, buf, (size_t)n) < 0)
			return -1;
	}
}

void statsd_rx_close(struct statsd_rx *rx)
{
	if (rx->fd >= 0) {
		close(rx->fd);
		unlink(rx->path);
	}
	for (int i = 0; i < rx->count; i++)
		free(rx->dgram[i]);
	free(rx->dgram);
	free(rx->len);
	memset(rx, 0, sizeof(*rx));
	rx->fd = -1;
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

#define STATSD_MAGIC 1937006964u
#define STATSD_HEADER 11
#define LOSS_REPORT_LEN 24

/* One field: type byte (annotation count in the high nibble) and value; *POS moves
 * past it and its annotations. */
static int decode_field(const unsigned char *b, size_t n, size_t *pos, long long *v,
			const char **why)
{
	size_t p = *pos;

	if (p >= n)
		return *why = "truncated field", -1;
	unsigned t = b[p++], kind = t & 0x0F, n_ann = t >> 4;
	size_t size = kind == 0 ? 4 : kind == 1 ? 8 : kind == 5 ? 1 : 0;
	if (size == 0)
		return *why = "field type not an int32, int64 or bool", -1;
	if (n - p < size)
		return *why = "truncated value", -1;
	*v = kind == 0 ? (long long)(int32_t)le32(b + p) :
	     kind == 1 ? (long long)le64(b + p) : (long long)b[p];
	p += size;
	for (unsigned i = 0; i < n_ann; i++) {
		/* id, value type, value (bool: 1 byte, int32: 4 bytes) */
		if (n - p < 2)
			return *why = "truncated annotation", -1;
		size_t asz = b[p + 1] == 5 ? 3 : 6;
		if (n - p < asz)
			return *why = "truncated annotation", -1;
		p += asz;
	}
	*pos = p;
	return 0;
}

int statsd_decode(const unsigned char *d, size_t len, struct atom *a, const char **why)
{
	if (len == LOSS_REPORT_LEN)
		return 1;
	if (len < STATSD_HEADER + 4 + 16 || d[0] != 5)
		return *why = "not a statsd datagram", -1;
	if (le32(d + STATSD_HEADER) != STATSD_MAGIC)
		return *why = "bad magic", -1;
	const unsigned char *b = d + STATSD_HEADER + 4;
	size_t n = len - STATSD_HEADER - 4;
	if ((b[0] & 0x0F) != 7 || b[2] != 0x01)
		return *why = "bad event header", -1;
	if ((b[11] & 0x0F) != 0)
		return *why = "atom id is not INT32", -1;
	int count = b[1];
	a->id = (int)(int32_t)le32(b + 12);
	a->nvalues = 0;
	size_t pos = 16;
	for (int i = 0; i < count - 2; i++) {
		long long v;
		if (decode_field(b, n, &pos, &v, why) < 0)
			return -1;
		if (a->nvalues == ATOM_MAX_VALUES)
			return *why = "too many fields", -1;
		a->values[a->nvalues++] = v;
	}
	if (pos != n)
		return *why = "trailing bytes", -1;
	return 0;
}
