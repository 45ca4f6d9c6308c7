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

/* A run whose /proc is hidden (its own mount namespace, a tmpfs over /proc):
 * exec of /proc/self/exe fails, so the closer is forked, and it cannot list
 * /proc/self/fd either.  Hands job_fd to a closer, says its pid on report,
 * lets go of its own copies as a run does, and exits. */
static void __attribute__((noreturn)) hand_over_without_proc(int job_fd, int report)
{
	struct closer_job job = { .fds = &job_fd, .n_fds = 1 };
	int release = -1;
	pid_t closer;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("none", "/proc", "tmpfs", 0, NULL) < 0)
		_exit(2);
	closer = closer_start(&job, &release);
	if (closer <= 0 || write(report, &closer, sizeof(closer)) != sizeof(closer))
		_exit(3);
	close(job_fd);
	close(release);
	_exit(0);
}

/* The forked closer (exec refused) must not hold the write end of its own
 * gate: it would never see the run let go, and would keep the probes (here
 * a pipe's only write end) forever. */
UT_TEST(closer_forked_when_exec_fails_still_closes_what_it_was_given)
{
	int p[2], rep[2], status = 0;
	pid_t child, closer = 0;
	struct pollfd pf;
	bool closed;
	char c;

	UT_EQ_INT(pipe2(p, O_CLOEXEC), 0);
	UT_EQ_INT(pipe2(rep, O_CLOEXEC), 0);
	child = fork();
	if (child == 0) {
		close(p[0]);
		close(rep[0]);
		hand_over_without_proc(p[1], rep[1]);
	}
	close(p[1]);
	close(rep[1]);
	UT_ASSERT(child > 0);
	UT_EQ_INT(waitpid(child, &status, 0), child);
	UT_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);   /* 2: no namespace */
	UT_EQ_INT(read(rep[0], &closer, sizeof(closer)), sizeof(closer));
	close(rep[0]);
	/* the closer closed the job's descriptor, the pipe's last write end */
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN };
	closed = poll(&pf, 1, 5000) == 1 && read(p[0], &c, 1) == 0;
	if (!closed && closer > 0)
		kill(closer, SIGKILL);   /* (hung: don't leave it behind) */
	close(p[0]);
	UT_ASSERT(closed);
}
