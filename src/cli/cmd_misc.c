/* cmd_misc.c — `--help`, `help CMD`, `CMD --help`, the man page and
 * `--version`.  Each command's help is printed from the option rows it
 * parses with (command_rows below; each row's OPT_DOC says its group,
 * argument and text), so an option is documented by its row alone;
 * test_help.c checks the help and docs/uprobestats.1 against the rows. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "sink/sink_args.h"
#include "stack/stack_args.h"
#include "ups_version.h" /* gen/, by mk/static.mk: the only user of the git revision */

#define WIDTH 79       /* the text help's lines */
#define OPT_COL 26     /* where an option's text starts */

static const char *const group_names[OPT_GROUPS] = {
	"what to trace", "output", "advanced", "Android service",
};

static const char pattern_about[] =
	"PATTERN names Java methods, [FILE:]Class.method[(params)], or native functions, "
	"LIB_OR_PATH:symbol, with * ** ? [a-z] globs (docs/patterns.md).";

/* RUN_TABLES: cmd_run.h, what run_opts_parse_cmd parses with.  The order is
 * the command list's. */
static const struct cli_command_rows command_rows[] = {
	{ "trace", CLI_SHORTS_PROCS, "trace methods and functions by pattern, no config",
	  "trace [options] PATTERN...",
	  "Probes every method or function PATTERN matches in the processes given "
	  "(-p, -n; none: every process that maps the file) and prints one record per call; "
	  "a flat profile per method on stderr at exit. --count/--by/--sum/--hist count in "
	  "the kernel instead.",
	  "# ActivityManager's start* methods in system_server: returns and durations\n"
	  "uprobestats trace -n system_server --ret 'com.android.server.am.*.start*'\n"
	  "# write() calls of one process: fd and count, with their call stacks\n"
	  "uprobestats trace -p 1234 --args 0,2 --stack libc.so:write\n"
	  "# every onCreate(Bundle) of an app, as a trace to open in Perfetto UI\n"
	  "uprobestats trace -n com.example.app --ret --trace oncreate.json \\\n"
	  "    '*Activity.onCreate(android.os.Bundle)'\n"
	  "# binder commands of surfaceflinger counted per command, for 10 seconds\n"
	  "uprobestats trace -n surfaceflinger --count --by arg1 --duration 10 \\\n"
	  "    'libbinder.so:*executeCommand*'\n"
	  "# the same probes as a config the Android service can run\n"
	  "uprobestats trace -n system_server --emit-config am.textproto "
	  "'com.android.server.am.*.start*'\n",
	  { RUN_TABLES, &trace_rows } },
	{ "sections", CLI_SHORTS_PROCS, "an app's trace sections, whatever the atrace tags say",
	  "sections [-p PID|-n NAME] [options]",
	  "Probes android.os.Trace (in the boot image the process maps), the NDK's ATrace_* "
	  "and libcutils' atrace_*_body, and prints each section's begin and end, async "
	  "sections and counters, tags enabled or not.",
	  "# an app's sections as a systrace file (what atrace would have written)\n"
	  "uprobestats sections -n com.example.app --trace app.systrace "
	  "--trace-format systrace\n"
	  "# native sections only, for 5 seconds\n"
	  "uprobestats sections -p 1234 --no-java --duration 5\n",
	  { RUN_TABLES, &sections_rows } },
	{ "traffic", CLI_SHORTS_PROCS, "bytes sent and received per socket and peer",
	  "traffic [-p PID]... [-n NAME] [--uid U] [options]",
	  "Counts the bytes of libc's socket calls per process, socket and peer address, in "
	  "the kernel, and prints a table every --interval and at exit.",
	  "# one app's traffic, a table every 5 seconds\n"
	  "uprobestats traffic -n com.example.app --interval 5\n"
	  "# every process of uid 10123, as JSON Lines\n"
	  "uprobestats traffic --uid 10123 --format json --duration 60\n",
	  { RUN_TABLES, &traffic_rows } },
	{ "run", CLI_SHORTS_RUN, "run a UprobeStats config, as the Android service does",
	  "run CONFIG [options]\n[options] CONFIG",
	  "CONFIG is a UprobestatsConfig, textproto or binary proto.  A bare name (no '/') "
	  "that is not a file here is read from " ANDROID_CONFIG_DIR "NAME.  Events go to "
	  "statsd when /dev/socket/statsdw exists, else to stdout.",
	  "# a config's events as text, whatever statsd would have received\n"
	  "uprobestats run --no-statsd --format text config.textproto\n"
	  "# as the Android service runs a config pushed to the device\n"
	  "uprobestats my_config\n"
	  "# with a trace file, for 30 seconds\n"
	  "uprobestats run config.textproto --trace run.json --duration 30s\n"
	  "# a config's probes on a command run from its start\n"
	  "uprobestats run config.textproto -c './app once'\n",
	  { RUN_TABLES, &run_only_rows } },
	{ "check", CLI_SHORTS_CHECK, "parse, validate and resolve a config; attach nothing",
	  "check CONFIG [options]",
	  "Reports every problem of CONFIG (file:line:col), the guardrail's verdict and what "
	  "each probe resolves to, without attaching anything.",
	  "# is this config right for this device?\n"
	  "uprobestats check config.textproto\n"
	  "# a phone's config checked on a workstation, then made binary for statsd\n"
	  "uprobestats check --no-resolve config.textproto --to-binary config.pb\n",
	  { &check_rows, &cli_verbose_rows, &cli_help_rows } },
	{ "methods", CLI_SHORTS_OAT, "the compiled methods of an oat/odex, or what a pattern matches",
	  "methods OAT [--filter TEXT] [--json]\n"
	  "methods --match PATTERN [FILE | --pid N] [--json]",
	  "Lists each compiled method and its file offset (an oatdump replacement), or every "
	  "match of PATTERN and what was left out and why.",
	  "# the compiled methods of services.odex whose signature contains 'onStart'\n"
	  "uprobestats methods /system/framework/oat/arm64/services.odex --filter onStart\n"
	  "# what a pattern matches in what system_server maps\n"
	  "uprobestats methods --match 'com.android.server.am.*.start*' --pid 1234\n"
	  "# native functions\n"
	  "uprobestats methods --match 'libbinder.so:*executeCommand*' --pid 1234\n",
	  { &oat_rows, &cli_verbose_rows, &cli_help_rows } },
	{ "resolve", CLI_SHORTS_OAT, "one method's file offset",
	  "resolve OAT|- 'SIGNATURE' [--json]\nresolve FILE|- PATTERN [--pid N] [--json]",
	  "Prints the file offset of the one method SIGNATURE or PATTERN names; with '-', "
	  "searched in what process --pid maps.",
	  "# where handleBindApplication starts in what process 1234 maps\n"
	  "uprobestats resolve - 'android.app.ActivityThread.handleBindApplication' "
	  "--pid 1234\n",
	  { &oat_rows, &cli_verbose_rows, &cli_help_rows } },
	{ "doctor", CLI_SHORTS_DOCTOR, "what this device offers, and which path a run takes",
	  "doctor [--json]",
	  "Probes the kernel (never its version string) and says which BPF objects, output "
	  "and attach path a run takes here and why, and what is missing.",
	  "# the report\n"
	  "uprobestats doctor\n"
	  "# as JSON, for a script\n"
	  "uprobestats doctor --json\n",
	  { &doctor_rows, &cli_help_rows } },
	{ "check-objects", CLI_SHORTS_OBJECTS, "the legacy BPF objects against an old kernel",
	  "check-objects [--kernel V] [FILE.o...]",
	  "Checks the embedded legacy BPF objects (or FILE.o) against the helpers, map types "
	  "and limits of kernel V, without loading them.",
	  "# the embedded objects against 4.14\n"
	  "uprobestats check-objects\n"
	  "# against 4.19\n"
	  "uprobestats check-objects --kernel 4.19\n",
	  { &check_objects_rows, &cli_help_rows } },
};

#define N_COMMANDS (sizeof(command_rows) / sizeof(command_rows[0]))

const struct cli_command_rows *cli_command_rows(size_t *n)
{
	*n = N_COMMANDS;
	return command_rows;
}

/* NULL for no name; a path (the program, `uprobestats [options] CONFIG`)
 * is no command either. */
const struct cli_command_rows *cli_command_find(const char *name)
{
	for (size_t i = 0; name && i < N_COMMANDS; i++)
		if (!strcmp(command_rows[i].command, name))
			return &command_rows[i];
	return NULL;
}

static const struct cli_command_rows *run_command(void)
{
	return cli_command_find("run");
}

/* --- the text help ---------------------------------------------------- */

/* Words of [s, end) from column col (already there) on, wrapped at WIDTH
 * with continuation lines indented to indent. */
static void put_wrapped(FILE *f, const char *s, const char *end, int col, int indent)
{
	while (s < end) {
		const char *w = s;
		int len;

		while (w < end && *w != ' ')
			w++;
		len = (int)(w - s);
		if (col > indent && col + 1 + len > WIDTH) {
			fprintf(f, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', f);
			col++;
		}
		fwrite(s, 1, (size_t)len, f);
		col += len;
		for (s = w; s < end && *s == ' '; s++)
			;
	}
	fputc('\n', f);
}

static void put_para(FILE *f, const char *s, int indent)
{
	fprintf(f, "%*s", indent, "");
	put_wrapped(f, s, s + strlen(s), indent, indent);
}

/* The argument's name and the text of a row's doc. */
static const char *doc_text(const struct opt_row *r, int *arg_len)
{
	const char *tab = strchr(r->doc + 1, '\t');

	*arg_len = (int)(tab - r->doc - 1);
	return tab + 1;
}

static bool has_short(const struct cli_command_rows *c, const struct opt_row *r)
{
	return r->short_name && strchr(c->shorts, r->short_name);
}

/* "  -p, --pid N", "      --stack[=FRAMES]": the width written. */
static int put_option_name(FILE *f, const struct cli_command_rows *c, const struct opt_row *r)
{
	int arg_len, n;

	doc_text(r, &arg_len);
	n = has_short(c, r) ? fprintf(f, "  -%c, --%s", r->short_name, r->name)
			    : fprintf(f, "      --%s", r->name);
	if (arg_len)
		n += fprintf(f, r->has_arg == optional_argument ? "[=%.*s]" : " %.*s", arg_len,
			     r->doc + 1);
	return n;
}

static bool shared_table(const struct opt_rows *t)
{
	return t == &cli_verbose_rows || t == &cli_help_rows;
}

/* Whether the man page lists t under run only (trace, sections and traffic
 * take every run option: said once for each). */
static bool run_table(const struct opt_rows *t)
{
	const struct cli_command_rows *run = run_command();

	for (size_t i = 0; i < CLI_MAX_TABLES && run->tables[i]; i++)
		if (run->tables[i] == t && !shared_table(t))
			return true;
	return false;
}

static bool takes_run_options(const struct cli_command_rows *c)
{
	for (size_t i = 0; i < CLI_MAX_TABLES && c->tables[i]; i++)
		if (c->tables[i] == &run_rows)
			return true;
	return false;
}

/* One style per output: the text help, or roff for the man page. */
struct style {
	bool man;
};

static void man_escaped(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '-' || s[i] == '\\')
			fputc('\\', f);
		fputc(s[i] == '\\' ? 'e' : s[i], f);
	}
}

static void man_line(FILE *f, const char *s, size_t n)
{
	if (n && (s[0] == '.' || s[0] == '\''))
		fputs("\\&", f);
	man_escaped(f, s, n);
	fputc('\n', f);
}

static void man_text(FILE *f, const char *s)
{
	man_line(f, s, strlen(s));
}

static void put_option(FILE *f, const struct style *st, const struct cli_command_rows *c,
		       const struct opt_row *r)
{
	int arg_len;
	const char *text = doc_text(r, &arg_len);

	if (st->man) {
		fputs(".TP\n\\fB", f);
		if (has_short(c, r))
			fprintf(f, "\\-%c\\fR, \\fB", r->short_name);
		fputs("\\-\\-", f);
		man_escaped(f, r->name, strlen(r->name));
		fputs("\\fR", f);
		if (arg_len) {
			fputs(r->has_arg == optional_argument ? "[=\\fI" : " \\fI", f);
			man_escaped(f, r->doc + 1, (size_t)arg_len);
			fputs(r->has_arg == optional_argument ? "\\fR]" : "\\fR", f);
		}
		fputc('\n', f);
		man_text(f, text);
		return;
	}
	int col = put_option_name(f, c, r);
	if (col + 2 > OPT_COL) {
		fputc('\n', f);
		col = 0;
	}
	fprintf(f, "%*s", OPT_COL - col, "");
	put_wrapped(f, text, text + strlen(text), OPT_COL, OPT_COL);
}

/* The order a command's options are listed in, per group: in "what to
 * trace" the ones with a short letter first; the command's own tables, then
 * run's, then -v and -h. */
static int list_pass(const struct cli_command_rows *c, const struct opt_rows *t,
		     const struct opt_row *r)
{
	int pass = shared_table(t) ? 2 : run_table(t) ? 1 : 0;

	return r->doc[0] == 1 && has_short(c, r) ? pass : 3 + pass;
}

static void put_groups(FILE *f, const struct style *st, const struct cli_command_rows *c)
{
	bool skip_run = st->man && c != run_command() && takes_run_options(c);

	for (int g = 1; g <= OPT_GROUPS; g++) {
		bool any = false;
		for (int pass = 0; pass < 6; pass++)
			for (size_t t = 0; t < CLI_MAX_TABLES && c->tables[t]; t++) {
				for (size_t i = 0; i < c->tables[t]->n; i++) {
					const struct opt_row *r = &c->tables[t]->v[i];
					if (r->doc[0] != g || list_pass(c, c->tables[t], r) != pass)
						continue;
					/* run lists it; unless it has a short letter here only (-p) */
					if (skip_run && run_table(c->tables[t]) &&
					    (!has_short(c, r) || has_short(run_command(), r)))
						continue;
					if (!any)
						fprintf(f, st->man ? ".PP\n\\fI%s:\\fR\n" : "\n%s:\n",
							group_names[g - 1]);
					any = true;
					put_option(f, st, c, r);
				}
			}
	}
	if (skip_run)
		fputs(".PP\nEvery other option of \\fBrun\\fR as well.\n", f);
}

/* Each line of the examples, or of the usage after "uprobestats ". */
static void put_lines(FILE *f, const struct style *st, const char *s, const char *prefix)
{
	while (*s) {
		const char *eol = strchr(s, '\n');
		size_t n = eol ? (size_t)(eol - s) : strlen(s);
		if (st->man) {
			fputs(prefix, f);
			man_line(f, s, n);
		} else {
			fprintf(f, "%s%.*s\n", prefix, (int)n, s);
		}
		s += n + (eol != NULL);
	}
}

static void put_command(FILE *f, const struct style *st, const struct cli_command_rows *c)
{
	if (st->man) {
		fprintf(f, ".SS %s\n.nf\n", c->command);
		put_lines(f, st, c->usage, "uprobestats ");
		fputs(".fi\n.PP\n", f);
		if (c->about)
			man_text(f, c->about);
		if (c == cli_command_find("trace")) {
			fputs(".PP\n", f);
			man_text(f, pattern_about);
		}
	} else {
		const char *u = c->usage, *eol = strchr(u, '\n');
		fprintf(f, "usage: uprobestats %.*s\n", eol ? (int)(eol - u) : (int)strlen(u), u);
		if (eol)
			put_lines(f, st, eol + 1, "       uprobestats ");
		fprintf(f, "%s.\n\n", c->summary);
		if (c->about)
			put_para(f, c->about, 0);
		if (c == cli_command_find("trace")) {
			fputc('\n', f);
			put_para(f, pattern_about, 0);
		}
	}
	put_groups(f, st, c);
	if (st->man) {
		fputs(".PP\n\\fIexamples:\\fR\n.RS\n.nf\n", f);
		put_lines(f, st, c->examples, "");
		fputs(".fi\n.RE\n", f);
	} else {
		fputs("\nexamples:\n", f);
		put_lines(f, st, c->examples, "  ");
	}
}

void cli_print_command_help(FILE *f, const struct cli_command_rows *c)
{
	static const struct style text = { false };

	put_command(f, &text, c ? c : run_command());
}

static const char exit_codes[] =
	"exit codes: 0 ok, 1 runtime error, 2 usage, 3 config, 4 resolve, 5 privilege, "
	"6 target process not found (docs/exit-codes.md)";

void cli_print_help(FILE *f)
{
	fputs("usage: uprobestats COMMAND [options] ...\n"
	      "       uprobestats [options] CONFIG   (run CONFIG, as the Android service does)\n"
	      "\ncommands:\n", f);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-15s%s\n", command_rows[i].command, command_rows[i].summary);
	fputs("  --version      the version\n"
	      "\n`uprobestats COMMAND --help` or `uprobestats help COMMAND`: its options and\n"
	      "examples; all of them: man -l docs/uprobestats.1.\n", f);
	put_para(f, exit_codes, 0);
}

/* --- the man page: the same rows, as roff --------------------------------- */

void cli_print_man(FILE *f)
{
	static const struct style man = { true };

	fputs(".\\\" Generated by `uprobestats " CLI_MAN_COMMAND "` (make man) from the option\n"
	      ".\\\" rows; test_help.c checks that it matches.  Do not edit.\n"
	      ".TH UPROBESTATS 1 \"\" \"uprobestats\" \"User Commands\"\n"
	      ".SH NAME\nuprobestats \\- trace Java methods and native functions with "
	      "uprobes, as Android's UprobeStats does\n.SH SYNOPSIS\n.nf\n", f);
	for (size_t i = 0; i < N_COMMANDS; i++)
		put_lines(f, &man, command_rows[i].usage, "uprobestats ");
	fputs(".fi\n.SH DESCRIPTION\n", f);
	man_text(f, "One statically linked binary that does what Android's UprobeStats module "
		    "does, without the module: it reads a UprobeStats config or patterns on the "
		    "command line, resolves each to a file offset (Java methods in oat/odex "
		    "files, native functions by ELF symbols), attaches eBPF uprobes to exactly "
		    "the target processes and writes every event to statsd, as text, JSON Lines "
		    "or a trace file.");
	fputs(".SH COMMANDS\n", f);
	for (size_t i = 0; i < N_COMMANDS; i++)
		put_command(f, &man, &command_rows[i]);
	fputs(".SH EXIT STATUS\n", f);
	man_text(f, exit_codes);
	fputs(".SH SEE ALSO\nREADME.md, docs/usage.md, docs/android.md, docs/patterns.md\n", f);
}

int cmd_help(int argc, char **argv)
{
	const struct cli_command_rows *c;

	if (argc < 2) {
		cli_print_help(stdout);
		return EXIT_OK;
	}
	c = cli_command_find(argv[1]);
	if (!c) {
		p_err("help: no command '%s' (uprobestats --help lists them)", argv[1]);
		return EXIT_USAGE;
	}
	cli_print_command_help(stdout, c);
	return EXIT_OK;
}

int cmd_man(int argc, char **argv)
{
	cli_print_man(stdout);
	return EXIT_OK;
}

int cmd_version(int argc, char **argv)
{
	printf("uprobestats %s (%s)\n", UPROBESTATS_VERSION, UPROBESTATS_GITREV);
	return EXIT_OK;
}
