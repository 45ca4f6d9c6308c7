/* closer.c — the detached process that closes a run's links and perf events
 * and removes its tracefs events after the command has returned (closer.h). */
#include "probe/closer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/grow.h"

static bool is_kept(const struct closer_job *job, int fd, int gate)
{
	if (fd == gate)
		return true;
	for (size_t i = 0; i < job->n_fds; i++)
		if (job->fds[i] == fd)
			return true;
	return false;
}

/* Lets go of everything else it inherited: a pipe we wrote to would not see
 * its end while the closer holds it, nor would the shell reading our output. */
static void close_inherited(const struct closer_job *job, int gate)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int *fds = NULL, self;
	size_t n = 0, cap = 0;

	if (!d)
		return;
	self = dirfd(d);
	while ((de = readdir(d)) != NULL) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name || fd == self || fd <= 2 ||
		    is_kept(job, (int)fd, gate))
			continue;
		if (grow_array(&fds, &cap, n + 1, 64) < 0)
			break;
		fds[n++] = (int)fd;
	}
	closedir(d);
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
}

static void stdio_to_null(const struct closer_job *job, int gate)
{
	int null = open("/dev/null", O_RDWR);

	for (int fd = 0; fd <= 2; fd++) {
		if (is_kept(job, fd, gate))   /* stdio was closed: a probe took its number */
			continue;
		if (null >= 0)
			dup2(null, fd);
		else
			close(fd);
	}
	if (null > 2)
		close(null);
}

static void remove_events(const struct closer_job *job)
{
	char path[512], line[80];
	int fd;

	if (!job->tracefs_dir || !job->n_events)
		return;
	snprintf(path, sizeof(path), "%s/uprobe_events", job->tracefs_dir);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return;
	/* One line a write: a batch stops at its first failing line. */
	for (size_t i = 0; i < job->n_events; i++) {
		int len = snprintf(line, sizeof(line), "-:%s\n", job->events[i]);
		if (write(fd, line, (size_t)len) < 0 && errno == EINTR)
			i--;
	}
	close(fd);
}

static void __attribute__((noreturn)) run_closer(const struct closer_job *job, int gate)
{
	sigset_t none;
	char c;

	/* Killable like any process (the run blocked its signals for signalfd). */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_NAME, "ups-closer", 0, 0, 0);
	stdio_to_null(job, gate);
	close_inherited(job, gate);
	/* EOF: the run closed its copies (or died), so ours are the last. */
	while (read(gate, &c, 1) < 0 && errno == EINTR)
		;
	close(gate);
	for (size_t i = 0; i < job->n_fds; i++)
		close(job->fds[i]);
	remove_events(job);
	_exit(0);
}

pid_t closer_start(const struct closer_job *job, int *release)
{
	int gate[2], report[2], status;
	pid_t mid, closer = -1;
	ssize_t n;

	if (pipe2(gate, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(report, O_CLOEXEC) < 0) {
		int e = -errno;
		close(gate[0]);
		close(gate[1]);
		return e;
	}
	fflush(NULL);   /* nothing buffered may be written twice */
	mid = fork();
	if (mid == 0) {
		/* The middle child: a session of its own, then the closer, then gone,
		 * so the closer is nobody's child to wait for but init's. */
		close(gate[1]);
		close(report[0]);
		setsid();
		closer = fork();
		if (closer == 0) {
			pid_t me = getpid();
			if (write(report[1], &me, sizeof(me)) != (ssize_t)sizeof(me))
				_exit(1);
			close(report[1]);
			run_closer(job, gate[0]);
		}
		_exit(closer < 0 ? 1 : 0);
	}
	close(gate[0]);
	close(report[1]);
	if (mid < 0) {
		int e = -errno;
		close(gate[1]);
		close(report[0]);
		return e;
	}
	while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
	do
		n = read(report[0], &closer, sizeof(closer));
	while (n < 0 && errno == EINTR);
	close(report[0]);
	if (n != (ssize_t)sizeof(closer)) {
		close(gate[1]);
		return -ECHILD;
	}
	*release = gate[1];
	return closer;
}
