/* main.c — the command line: dispatch to the subcommand handlers in
 * src/cli/, which parse their options, print errors and pick exit codes. */
#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "sys/log.h"

/* The process-wide CLI state (cli.h); the only mutable global of the tool. */
static struct cli_state state;

struct cli_state *cli_state(void)
{
	return &state;
}

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
	{ "check", cmd_check },
	{ "methods", cmd_methods },
	{ "resolve", cmd_resolve },
	{ "doctor", cmd_doctor },
	{ "version", cmd_version },
	{ "--version", cmd_version },
	{ "help", cmd_help },
	{ "--help", cmd_help },
	{ "-h", cmd_help },
	{ NULL, NULL },
};

static int dispatch(int argc, char **argv)
{
	if (argc < 2) {
		cmd_help(0, NULL);
		return EXIT_USAGE;
	}
	for (const struct cmd *c = commands; c->name; c++)
		if (strcmp(argv[1], c->name) == 0)
			return c->fn(argc - 1, argv + 1);
	/* `uprobestats [options] CONFIG`: how the Android service runs it. */
	return cmd_run(argc, argv);
}

int main(int argc, char **argv)
{
	struct logger lg;
	struct log_opts lo = { .min_level = LOG_LVL_DEBUG };
	int rc;

	/* stderr always; logcat too when logd's socket is there (Android). */
	log_init(&lg, &lo);
	cli_set_logger(&lg);
	libbpf_set_print(libbpf_print);
	rc = dispatch(argc, argv);
	log_close(&lg);
	return rc;
}
