/* closer.c — the detached process that closes a run's links and perf events
 * and removes its tracefs events after the command has returned (closer.h). */
#include "probe/closer.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/grow.h"
#include "probe/tracefs_uprobe.h"

static bool is_kept(const int *fds, size_t n, int fd, int gate)
{
	if (fd == gate)
		return true;
	for (size_t i = 0; i < n; i++)
		if (fds[i] == fd)
			return true;
	return false;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Without /proc/self/fd to list (a forked closer where /proc is missing):
 * every number from 3 up to the descriptor limit, but the kept ones. */
static void close_by_number(const int *keep, size_t n_keep, int gate)
{
	int *sorted = malloc((n_keep ? n_keep : 1) * sizeof(int));
	long most = 1L << 20;   /* the kernel's default fs.nr_open */
	struct rlimit r;
	size_t k = 0;

	if (!sorted)
		return;
	if (n_keep) {
		memcpy(sorted, keep, n_keep * sizeof(int));
		qsort(sorted, n_keep, sizeof(int), cmp_int);
	}
	if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < (rlim_t)most)
		most = (long)r.rlim_cur;
	for (long fd = 3; fd < most; fd++) {
		while (k < n_keep && sorted[k] < fd)
			k++;
		if (fd != gate && (k == n_keep || sorted[k] != fd))
			close((int)fd);
	}
	free(sorted);
}

/* Lets go of everything else it inherited: a pipe the run wrote to would not
 * see its end while the closer holds it, nor would the shell reading the
 * run's output.  (Exec'd, it inherited only its descriptors; forked, all.) */
static void close_inherited(const int *keep, size_t n_keep, int gate)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int *fds = NULL, self;
	size_t n = 0, cap = 0;

	if (!d) {
		close_by_number(keep, n_keep, gate);
		return;
	}
	self = dirfd(d);
	while ((de = readdir(d)) != NULL) {
		char *end;
		long fd = strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name || fd == self || fd <= 2 ||
		    is_kept(keep, n_keep, (int)fd, gate))
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

static void stdio_to_null(void)
{
	int null = open("/dev/null", O_RDWR);

	for (int fd = 0; fd <= 2; fd++) {
		if (null >= 0)
			dup2(null, fd);
		else
			close(fd);
	}
	if (null > 2)
		close(null);
}

static bool read_all(int fd, void *buf, size_t len)
{
	for (size_t got = 0; got < len;) {
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	return true;
}

/* The list of descriptors the run wrote to the gate: how many, then each.
 * A run killed before it finished the list leaves a short one (the rest
 * are closed with everything else inherited: torn down all the same). */
static size_t read_fd_list(int gate, int **fds)
{
	uint32_t n = 0, got = 0;

	*fds = NULL;
	if (!read_all(gate, &n, sizeof(n)) || !n || !(*fds = calloc(n, sizeof(int))))
		return 0;
	while (got < n && read_all(gate, &(*fds)[got], sizeof(int)))
		got++;
	return got;
}

/* The closer itself, exec'd (closer_main) or, when exec is refused, forked. */
static int run_closer(int gate, const char *tracefs_dir, const char *group)
{
	sigset_t none;
	int *fds;
	size_t n;
	char c;

	/* Killable like any process (the run blocked its signals for signalfd). */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_NAME, "ups-closer", 0, 0, 0);
	stdio_to_null();
	n = read_fd_list(gate, &fds);
	close_inherited(fds, n, gate);
	/* EOF: the run closed its copies (or died), so ours are the last. */
	while (read(gate, &c, 1) < 0 && errno == EINTR)
		;
	close(gate);
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	free(fds);
	if (tracefs_dir && *tracefs_dir && group && *group)
		tracefs_remove_group(tracefs_dir, group);
	return 0;
}

int closer_main(int argc, char **argv)
{
	char *end;
	long gate = argc == 4 ? strtol(argv[1], &end, 10) : -1;

	if (gate < 3 || *end || fcntl((int)gate, F_GETFD) < 0) {
		fprintf(stderr, "uprobestats: " CLOSER_COMMAND " is run by uprobestats itself\n");
		return 2;
	}
	return run_closer((int)gate, argv[2], argv[3]);
}

/* The vfork child: it shares the run's memory until execve, so it only makes
 * system calls (and says why exec failed in *exec_errno). */
static void __attribute__((noreturn)) exec_closer(char *const argv[], const int *fds, size_t n,
						  int gate, volatile int *exec_errno)
{
	static char *const no_env[] = { NULL };

	setsid();   /* out of the terminal's process group: Ctrl-C is the run's */
	fcntl(gate, F_SETFD, 0);
	for (size_t i = 0; i < n; i++)
		fcntl(fds[i], F_SETFD, 0);   /* inherited across exec */
	execve("/proc/self/exe", argv, no_env);
	*exec_errno = errno;
	_exit(127);
}

/* The closer is our child in a session of its own: exec'd from a vfork, it
 * costs the run neither a copy of its page tables nor copy-on-write faults
 * while it frees its memory (a fork of a 10,000-probe run did both).  When
 * exec is refused (an SELinux domain without execute_no_trans on its own
 * file, no /proc), a fork does the same work; it lets go of the gate's
 * write end (gate_w) first, or it would wait for its own end of the gate:
 * forever when /proc/self/fd cannot be listed or the run dies mid-list. */
static pid_t spawn_closer(const struct closer_job *job, int gate, int gate_w)
{
	char gate_s[16], *argv[] = { "ups-closer", CLOSER_COMMAND, gate_s,
				     (char *)(job->tracefs_dir ? job->tracefs_dir : ""),
				     (char *)(job->group ? job->group : ""), NULL };
	volatile int exec_errno = 0;
	pid_t pid;

	snprintf(gate_s, sizeof(gate_s), "%d", gate);
	fflush(NULL);   /* nothing buffered may be written twice */
	pid = vfork();
	if (pid == 0)
		exec_closer(argv, job->fds, job->n_fds, gate, &exec_errno);
	if (pid > 0 && !exec_errno)
		return pid;
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	pid = fork();
	if (pid == 0) {
		close(gate_w);
		setsid();
		_exit(run_closer(gate, job->tracefs_dir, job->group));
	}
	return pid < 0 ? -errno : pid;
}

static bool write_all(int fd, const void *buf, size_t len)
{
	for (size_t put = 0; put < len;) {
		ssize_t n = write(fd, (const char *)buf + put, len - put);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		put += (size_t)n;
	}
	return true;
}

pid_t closer_start(const struct closer_job *job, int *release)
{
	uint32_t n = (uint32_t)job->n_fds;
	int gate[2];
	pid_t pid;

	if (pipe2(gate, O_CLOEXEC) < 0)
		return -errno;
	pid = spawn_closer(job, gate[0], gate[1]);
	close(gate[0]);
	if (pid < 0) {
		close(gate[1]);
		return pid;
	}
	/* The closer reads as we write: a list longer than the pipe holds is
	 * fine.  If it died, the kernel closed its copies: ours are the last. */
	if (!write_all(gate[1], &n, sizeof(n)) ||
	    !write_all(gate[1], job->fds, job->n_fds * sizeof(int))) {
		close(gate[1]);
		return -EPIPE;
	}
	*release = gate[1];
	return pid;
}
