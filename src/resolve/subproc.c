#include "resolve/subproc.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/grow.h"

/* Exit code the child uses when exec fails (the message goes to stderr). */
#define EXEC_FAILED 127

static long long now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void keep_tail(struct subproc_result *r, const char *buf, size_t n)
{
	size_t have = strlen(r->err_tail), cap = sizeof(r->err_tail) - 1;

	if (n >= cap) {
		memcpy(r->err_tail, buf + n - cap, cap);
		r->err_tail[cap] = 0;
		return;
	}
	if (have + n > cap) {
		memmove(r->err_tail, r->err_tail + (have + n - cap), cap - n);
		have = cap - n;
	}
	memcpy(r->err_tail + have, buf, n);
	r->err_tail[have + n] = 0;
}

static int append_out(struct subproc_result *r, size_t *cap, const char *buf, size_t n,
		      size_t max_out)
{
	if (r->out_len + n > max_out)
		return -EFBIG;
	if (grow_array(&r->out, cap, r->out_len + n + 1, 65536) < 0)
		return -ENOMEM;
	memcpy(r->out + r->out_len, buf, n);
	r->out_len += n;
	r->out[r->out_len] = 0;
	return 0;
}

static pid_t spawn(char *const argv[], int out_fd[2], int err_fd[2])
{
	pid_t pid = fork();

	if (pid != 0)
		return pid;
	/* child */
	dup2(out_fd[1], 1);
	dup2(err_fd[1], 2);
	close(out_fd[0]);
	close(err_fd[0]);
	int devnull = open("/dev/null", O_RDONLY);
	if (devnull >= 0)
		dup2(devnull, 0);
	execvp(argv[0], argv);
	const char *m = strerror(errno);
	if (write(2, "exec failed: ", 13) < 0 || write(2, m, strlen(m)) < 0)
		_exit(EXEC_FAILED);
	_exit(EXEC_FAILED);
}

/* Reads both pipes until EOF or the deadline. */
static int pump(int out, int errfd, long long deadline, size_t max_out, struct subproc_result *r)
{
	struct pollfd p[2] = { { out, POLLIN, 0 }, { errfd, POLLIN, 0 } };
	size_t cap = 0;
	char buf[65536];
	int open_fds = 2, rc = 0;

	while (open_fds) {
		long long left = deadline - now_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		int n = poll(p, 2, (int)(left > 1000 ? 1000 : left));
		if (n < 0 && errno != EINTR)
			return -errno;
		for (int i = 0; i < 2 && n > 0; i++) {
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			ssize_t k = read(p[i].fd, buf, sizeof(buf));
			if (k <= 0) {
				if (k < 0 && errno == EINTR)
					continue;
				p[i].fd = -1;
				open_fds--;
				continue;
			}
			if (i == 1)
				keep_tail(r, buf, (size_t)k);
			else if (!rc)
				rc = append_out(r, &cap, buf, (size_t)k, max_out);
		}
	}
	return rc;
}

/* Waits for the child until the deadline (it may close its pipes and go on). */
static int reap(pid_t pid, long long deadline, int *status)
{
	for (;;) {
		pid_t w = waitpid(pid, status, WNOHANG);
		if (w == pid)
			return 0;
		if (w < 0 && errno != EINTR)
			return -errno;
		if (now_ms() >= deadline)
			return -ETIMEDOUT;
		struct timespec ts = { 0, 5 * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
}

int subproc_run(char *const argv[], int timeout_ms, size_t max_out, struct subproc_result *r,
		struct err *err)
{
	int out_fd[2], err_fd[2], status = 0, rc;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	if (pipe2(out_fd, O_CLOEXEC) < 0)
		return err_set(err, -errno, "pipe: %s", strerror(errno));
	if (pipe2(err_fd, O_CLOEXEC) < 0) {
		int e = errno;
		close(out_fd[0]);
		close(out_fd[1]);
		return err_set(err, -e, "pipe: %s", strerror(e));
	}
	pid = spawn(argv, out_fd, err_fd);
	close(out_fd[1]);
	close(err_fd[1]);
	if (pid < 0) {
		int e = errno;
		close(out_fd[0]);
		close(err_fd[0]);
		return err_set(err, -e, "%s: fork failed: %s", argv[0], strerror(e));
	}
	long long deadline = now_ms() + timeout_ms;
	rc = pump(out_fd[0], err_fd[0], deadline, max_out, r);
	close(out_fd[0]);
	close(err_fd[0]);
	if (!rc)
		rc = reap(pid, deadline, &status);
	if (rc) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	if (rc == -ETIMEDOUT) {
		r->timed_out = true;
		return err_set(err, rc, "%s did not finish within %d ms and was killed", argv[0],
			       timeout_ms);
	}
	if (rc == -EFBIG)
		return err_set(err, rc, "%s printed more than %zu bytes", argv[0], max_out);
	if (rc)
		return err_set(err, rc, "%s: reading its output failed: %s", argv[0],
			       strerror(-rc));
	if (WIFSIGNALED(status)) {
		r->signaled = true;
		r->signal = WTERMSIG(status);
		return 0;
	}
	r->exit_code = WEXITSTATUS(status);
	if (r->exit_code == EXEC_FAILED && strstr(r->err_tail, "exec failed: "))
		return err_set(err, -ENOENT, "cannot run %s: %s", argv[0],
			       r->err_tail + strlen("exec failed: "));
	return 0;
}

void subproc_result_free(struct subproc_result *r)
{
	free(r->out);
	r->out = NULL;
	r->out_len = 0;
}
