/* main.c — the command line: dispatch to the subcommand handlers in
 * src/cli/, which parse their options, print errors and pick exit codes. */
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "sys/log.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* libbpf's warnings name the failing map or program; its info and debug
	 * output (including verifier logs) only with -v. */
	if (level != LIBBPF_WARN && !cli_verbose())
		return 0;
	return vfprintf(stderr, fmt, ap);
}

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
};

static const struct cmd commands[] = {
	{ "run", cmd_run },
	{ "trace", cmd_trace },
	{ "sections", cmd_sections },
	{ "traffic", cmd_traffic },
	{ "check", cmd_check },
	{ "methods", cmd_methods },
	{ "resolve", cmd_resolve },
	{ "doctor", cmd_doctor },
	{ "check-objects", cmd_check_objects },
	{ "version", cmd_version },
	{ "--version", cmd_version },
	{ "help", cmd_help },
	{ "--help", cmd_help },
	{ "-h", cmd_help },
	{ CLI_CLOSER_COMMAND, cmd_closer },
	{ CLI_MAN_COMMAND, cmd_man },
	{ NULL, NULL },
};

static int dispatch(int argc, char **argv)
{
	const char *names[sizeof(commands) / sizeof(commands[0])];
	size_t n = 0;
	int rc;

	if (argc < 2) {
		cmd_help(0, NULL);
		return EXIT_USAGE;
	}
	for (const struct cmd *c = commands; c->name; c++) {
		if (strcmp(argv[1], c->name) == 0)
			return c->fn(argc - 1, argv + 1);
		names[n++] = c->name;
	}
	names[n] = NULL;
	/* `uprobestats [options] CONFIG`: how the Android service runs it;
	 * a word that is no config but near a command is a typo of it. */
	if ((rc = cli_unknown_command(argv[1], names)) != EXIT_OK)
		return rc;
	return cmd_run(argc, argv);
}

/* A standard descriptor that was closed (`>&-`, `2>&-`) would be handed to the
 * next open(): the --trace file would become stdout, or the --output file
 * stderr, and receive the other stream.  So 0-2 are reopened on /dev/null
 * before anything else is opened.  stdout read-only: an output of events
 * to a closed stdout is refused when it is set up (vocab/outbuf.h's
 * writable check: EBADF), never discarded; what stderr gets is discarded. */
static void reopen_std_fds(void)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		int n = open("/dev/null", fd == 2 ? O_WRONLY : O_RDONLY);
		if (n < 0)
			_exit(127);  /* nowhere to say so; nothing is safe to open */
		if (n != fd) {   /* a lower one was closed too and is filled first */
			dup2(n, fd);
			close(n);
		}
	}
}

int main(int argc, char **argv)
{
	struct logger lg;
	struct log_opts lo = { .min_level = LOG_LVL_DEBUG };
	int rc;

	cli_take_stop_signals();   /* before anything a signal could interrupt */
	reopen_std_fds();
	/* stderr always; logcat too when logd's socket is there (Android). */
	log_init(&lg, &lo);
	cli_set_logger(&lg);
	libbpf_set_print(libbpf_print);
	rc = dispatch(argc, argv);
	log_close(&lg);
	return rc;
}
