/* test_closer.c — probe/closer.c: the detached closer of a run's probes. */
#include "ut.h"

#include <fcntl.h>
#include <stdbool.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "probe/closer.h"

/* In a forked test child: /proc hidden (its own mount namespace, a tmpfs
 * over /proc), so exec of /proc/self/exe fails, the closer is forked, and it
 * cannot list /proc/self/fd either.  Exits 2 when that cannot be set up. */
static void hide_proc(void)
{
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("none", "/proc", "tmpfs", 0, NULL) < 0)
		_exit(2);
}

/* A run without /proc: hands job_fd to a closer, says its pid on report,
 * lets go of its own copies (and of other, when >= 0), waits for a byte on
 * go (when >= 0), then lets go of the gate as a run does, and exits. */
static void __attribute__((noreturn)) hand_over_without_proc(int job_fd, int report, int other,
							       int go)
{
	struct closer_job job = { .fds = &job_fd, .n_fds = 1 };
	int release = -1;
	pid_t closer;
	char b;

	hide_proc();
	closer = closer_start(&job, &release);
	if (closer <= 0 || write(report, &closer, sizeof(closer)) != sizeof(closer))
		_exit(3);
	close(job_fd);
	if (other >= 0)
		close(other);
	if (go >= 0 && read(go, &b, 1) < 0)
		_exit(4);
	close(release);
	_exit(0);
}

/* Whether fd (a pipe's read end) sees its end within 5 s. */
static bool sees_end(int fd)
{
	struct pollfd pf = { .fd = fd, .events = POLLIN };
	char c;

	return poll(&pf, 1, 5000) == 1 && read(fd, &c, 1) == 0;
}

/* The forked closer (exec refused) must not hold the write end of its own
 * gate: it would never see the run let go, and would keep the probes (here
 * a pipe's only write end) forever. */
UT_TEST(closer_forked_when_exec_fails_still_closes_what_it_was_given)
{
	int p[2], rep[2], status = 0;
	pid_t child, closer = 0;
	bool closed;

	UT_EQ_INT(pipe2(p, O_CLOEXEC), 0);
	UT_EQ_INT(pipe2(rep, O_CLOEXEC), 0);
	child = fork();
	if (child == 0) {
		close(p[0]);
		close(rep[0]);
		hand_over_without_proc(p[1], rep[1], -1, -1);
	}
	close(p[1]);
	close(rep[1]);
	UT_ASSERT(child > 0);
	UT_EQ_INT(waitpid(child, &status, 0), child);
	UT_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);   /* 2: no namespace */
	UT_EQ_INT(read(rep[0], &closer, sizeof(closer)), sizeof(closer));
	close(rep[0]);
	/* the closer closed the job's descriptor, the pipe's last write end */
	closed = sees_end(p[0]);
	if (!closed && closer > 0)
		kill(closer, SIGKILL);   /* (hung: don't leave it behind) */
	close(p[0]);
	UT_ASSERT(closed);
}

/* Forked with no /proc/self/fd to list, the closer still lets go of what
 * else it inherited (here a pipe's write end) before it waits for the run,
 * by number up to the descriptor limit. */
UT_TEST(closer_forked_without_proc_lets_go_of_what_else_it_inherited)
{
	int job[2], other[2], rep[2], go[2], status = 0;
	bool let_go, closed;
	pid_t child, closer = 0;

	UT_EQ_INT(pipe2(job, O_CLOEXEC) | pipe2(other, O_CLOEXEC) | pipe2(rep, O_CLOEXEC) |
		  pipe2(go, O_CLOEXEC), 0);
	child = fork();
	if (child == 0) {
		close(job[0]);
		close(other[0]);
		close(rep[0]);
		close(go[1]);
		hand_over_without_proc(job[1], rep[1], other[1], go[0]);
	}
	close(job[1]);
	close(other[1]);
	close(rep[1]);
	close(go[0]);
	UT_ASSERT(child > 0);
	UT_EQ_INT(read(rep[0], &closer, sizeof(closer)), sizeof(closer));
	close(rep[0]);
	let_go = sees_end(other[0]);    /* while the run still holds the gate */
	UT_EQ_INT(write(go[1], "x", 1), 1);
	close(go[1]);
	UT_EQ_INT(waitpid(child, &status, 0), child);
	closed = sees_end(job[0]);
	if (!closed && closer > 0)
		kill(closer, SIGKILL);   /* (hung: don't leave it behind) */
	close(job[0]);
	close(other[0]);
	UT_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);   /* 2: no namespace */
	UT_ASSERT(let_go);
	UT_ASSERT(closed);
}
