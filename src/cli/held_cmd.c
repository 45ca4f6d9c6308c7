/* held_cmd.c — the held command of -c (cli/held_cmd.h). */
#include "cli/held_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"

int held_cmd_split(const char *line, char ***argv, const char **why)
{
	size_t len = strlen(line);
	/* the words' bytes never outgrow the line; one pointer per word */
	char **v = malloc(sizeof(char *) * (HELD_CMD_MAX_WORDS + 1) + len + 1);
	char *out, quote = 0;
	size_t n = 0;
	bool in_word = false;

	if (!v) {
		*why = "out of memory";
		return -ENOMEM;
	}
	out = (char *)(v + HELD_CMD_MAX_WORDS + 1);
	for (const char *p = line;; p++) {
		char c = *p;
		if (!c || (!quote && (c == ' ' || c == '\t' || c == '\n'))) {
			if (in_word) {
				*out++ = '\0';
				in_word = false;
			}
			if (!c)
				break;
			continue;
		}
		if (!in_word) {
			if (n == HELD_CMD_MAX_WORDS) {
				free(v);
				*why = "more than 256 words";
				return -EINVAL;
			}
			v[n++] = out;
			in_word = true;
		}
		if (quote && c == quote) {
			quote = 0;
		} else if (!quote && (c == '\'' || c == '"')) {
			quote = c;
		} else if (c == '\\' && quote != '\'' && p[1]) {
			*out++ = *++p;
		} else {
			*out++ = c;
		}
	}
	if (quote) {
		free(v);
		*why = "a quote is not closed";
		return -EINVAL;
	}
	if (!n) {
		free(v);
		*why = "no command";
		return -EINVAL;
	}
	v[n] = NULL;
	*argv = v;
	return 0;
}

int held_cmd_chroot_root(char *const *argv, char root[PATH_MAX])
{
	const char *base = strrchr(argv[0], '/');
	struct stat st;
	size_t i = 1;

	root[0] = '\0';
	if (strcmp(base ? base + 1 : argv[0], "chroot"))
		return 0;
	/* chroot(8)'s options: --userspec=U:G, --groups=G, --skip-chdir */
	while (argv[i] && argv[i][0] == '-')
		i++;
	if (!argv[i])
		return 0;
	if (stat(argv[i], &st) != 0 || !S_ISDIR(st.st_mode) || !realpath(argv[i], root)) {
		root[0] = '\0';
		return -ENOENT;
	}
	if (!strcmp(root, "/"))
		root[0] = '\0';
	return 0;
}

/* The child: wait for the byte that says the probes are attached, then
 * become the command.  A tracer gone before that (EOF) ends it. */
static void child(int go_rd, char **argv)
{
	char c;
	ssize_t r;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)   /* the tracer died before the prctl */
		_exit(127);
	do
		r = read(go_rd, &c, 1);
	while (r < 0 && errno == EINTR);
	if (r != 1)
		_exit(127);
	close(go_rd);
	prctl(PR_SET_PDEATHSIG, 0);
	cli_restore_inherited_signals();   /* the command's own, as we got them */
	execvp(argv[0], argv);
	fprintf(stderr, "uprobestats: error: -c: cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

int held_cmd_start(const char *line, struct held_cmd *h)
{
	char **argv;
	const char *why = NULL;
	int fds[2];

	memset(h, 0, sizeof(*h));
	h->go_fd = -1;
	if (held_cmd_split(line, &argv, &why) < 0) {
		p_err("-c '%s': %s", line, why);
		return EXIT_USAGE;
	}
	if (held_cmd_chroot_root(argv, h->root) < 0) {
		p_err("-c '%s': the chroot's root is not a directory here", line);
		free(argv);
		return EXIT_USAGE;
	}
	if (pipe2(fds, O_CLOEXEC) < 0) {
		p_err("-c: pipe: %s", strerror(errno));
		free(argv);
		return EXIT_RUNTIME;
	}
	fflush(NULL);
	h->pid = fork();
	if (h->pid < 0) {
		p_err("-c: fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		free(argv);
		h->pid = 0;
		return EXIT_RUNTIME;
	}
	if (h->pid == 0) {
		close(fds[1]);
		child(fds[0], argv);
	}
	close(fds[0]);
	h->go_fd = fds[1];
	p_info("-c: process %d holds before running %s%s%s until the probes are attached",
	       (int)h->pid, argv[0], h->root[0] ? "; files are looked up under the chroot " : "",
	       h->root);
	free(argv);
	return EXIT_OK;
}

void held_cmd_go(struct held_cmd *h)
{
	char c = 'g';

	if (!h || h->go_fd < 0)
		return;
	if (write(h->go_fd, &c, 1) != 1)
		p_warn("-c: could not let process %d go: %s", (int)h->pid, strerror(errno));
	close(h->go_fd);
	h->go_fd = -1;
}

bool held_cmd_poll(struct held_cmd *h)
{
	if (!h || !h->pid || h->reaped)
		return h && h->reaped;
	if (waitpid(h->pid, &h->status, WNOHANG) == h->pid)
		h->reaped = true;
	return h->reaped;
}

int held_cmd_finish(struct held_cmd *h, int rc)
{
	if (!h || !h->pid)
		return rc;
	if (h->go_fd >= 0) {   /* never let go: the run failed before attaching */
		close(h->go_fd);
		h->go_fd = -1;
		kill(h->pid, SIGKILL);
		while (!h->reaped && waitpid(h->pid, &h->status, 0) < 0 && errno == EINTR)
			;
		h->reaped = true;
		h->pid = 0;
		return rc;
	}
	if (!held_cmd_poll(h)) {
		p_info("-c: process %d is still running; the exit status is the run's", (int)h->pid);
		return rc;
	}
	int code = WIFEXITED(h->status) ? WEXITSTATUS(h->status)
		   : WIFSIGNALED(h->status) ? 128 + WTERMSIG(h->status) : 1;
	p_info("-c: process %d %s %d%s", (int)h->pid,
	       WIFSIGNALED(h->status) ? "was killed by signal" : "exited with status",
	       WIFSIGNALED(h->status) ? WTERMSIG(h->status) : code,
	       rc == EXIT_OK ? " (the exit status of this run)" : "");
	h->pid = 0;
	return rc == EXIT_OK ? code : rc;
}
