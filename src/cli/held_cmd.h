/* held_cmd.h — `-c 'CMD ARGS'`: the command the run starts, held before its
 * exec until every probe is attached for its pid, so its first call is
 * counted.
 *
 * The command line is split into words as a shell would for a simple
 * command (spaces; '…' and "…" quoting; \ escapes), never run through a
 * shell: the pid traced is the command's own, and stays so across its exec
 * (and across an exec of its own that does not fork, as chroot(8) does:
 * `chroot ROOT PROG …` runs PROG in the same process).  A leading
 * `chroot [OPTIONS] ROOT` names the root the traced program will see: the
 * patterns' files and libraries and a config's file_paths are then looked
 * up under ROOT (held_cmd.root), since the held process still has the
 * tracer's root.  The child waits on a pipe, and dies with the tracer
 * (PR_SET_PDEATHSIG) until it is let go. */
#ifndef UPROBESTATS_CLI_HELD_CMD_H
#define UPROBESTATS_CLI_HELD_CMD_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#define HELD_CMD_MAX_WORDS 256

struct held_cmd {
	pid_t pid;                 /* 0: none started */
	int go_fd;                 /* write end of the pipe it waits on (-1: let go) */
	bool reaped;
	int status;                /* waitpid status once reaped */
	char root[PATH_MAX];       /* the chroot's ROOT, canonical ("": none) */
};

/* Splits line into words (malloc'd vector in *argv, NULL-terminated, one
 * block: free(*argv)).  0, or -EINVAL with why (an open quote, no word). */
int held_cmd_split(const char *line, char ***argv, const char **why);

/* The root a `chroot [OPTIONS] ROOT …` command line gives its program
 * (canonical, into root), "" for any other command.  0, or -ENOENT when
 * ROOT is not a directory here. */
int held_cmd_chroot_root(char *const *argv, char root[PATH_MAX]);

/* Forks the held child of line.  0, or an exit code (cli.h) with the
 * error printed. */
int held_cmd_start(const char *line, struct held_cmd *h);
/* Lets it exec (the probes are attached). */
void held_cmd_go(struct held_cmd *h);
/* Reaps it if it has exited (no wait); true once it has. */
bool held_cmd_poll(struct held_cmd *h);
/* The run is over: a child never let go is killed and reaped.  rc: the
 * run's exit code; returns what the tool exits with: the command's own
 * status (128+N for signal N) when the run itself succeeded and the
 * command has ended, else rc. */
int held_cmd_finish(struct held_cmd *h, int rc);

#endif
