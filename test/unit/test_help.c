/* The help against the option rows every command parses with
 * (cli_command_rows), both ways: each command's `--help` names every row of
 * its tables, each with a group, an argument name when it takes one, and a
 * text; every option its help names (usage, text, examples) is a row of that
 * command, its short letter one the command takes.  Every command has
 * examples of itself; docs/uprobestats.1 is what the rows print as roff; the
 * commands that run probes parse with exactly the tables listed. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "ut.h"

/* What f printed, NUL-terminated; free() it. */
struct printed {
	char *text;
	size_t len;
	FILE *f;
};

static FILE *print_start(struct printed *p)
{
	p->text = NULL;
	p->len = 0;
	p->f = open_memstream(&p->text, &p->len);
	return p->f;
}

static char *print_end(struct printed *p)
{
	fclose(p->f);
	return p->text;
}

static char *command_help(const struct cli_command_rows *c)
{
	struct printed p;

	cli_print_command_help(print_start(&p), c);
	return print_end(&p);
}

static bool opt_char(char c)
{
	return isalnum((unsigned char)c) || c == '-';
}

/* Whether --name (or -c, c != 0) occurs as a whole option word in text. */
static bool mentions(const char *text, const char *name, char c)
{
	size_t len = strlen(name);

	for (const char *p = text; p[0] && p[1]; p++) {
		if (p > text && opt_char(p[-1]))
			continue;
		if (p[0] == '-' && p[1] == '-' && !strncmp(p + 2, name, len) &&
		    !opt_char(p[2 + len]))
			return true;
		if (c && p[0] == '-' && p[1] == c && !opt_char(p[2]))
			return true;
	}
	return false;
}

#define FOR_EACH_ROW(c, t, r)                                                   \
	for (size_t t##_i = 0; t##_i < CLI_MAX_TABLES && (c)->tables[t##_i]; t##_i++) \
		for (const struct opt_row *r = (c)->tables[t##_i]->v;                 \
		     r < (c)->tables[t##_i]->v + (c)->tables[t##_i]->n; r++)

UT_TEST(help_every_row_has_a_group_and_text)
{
	size_t n_cmd;
	const struct cli_command_rows *cmds = cli_command_rows(&n_cmd);
	int bad = 0;

	for (size_t c = 0; c < n_cmd; c++)
		FOR_EACH_ROW(&cmds[c], t, r) {
			const char *tab = r->doc ? strchr(r->doc, '\t') : NULL;
			bool ok = tab && r->doc[0] >= 1 && r->doc[0] <= OPT_GROUPS &&
				  tab[1] && (tab == r->doc + 1) == (r->has_arg == no_argument);
			if (!ok) {
				fprintf(stderr, "  %s --%s: no OPT_DOC, or its group, argument "
					"or text is wrong\n", cmds[c].command, r->name);
				bad++;
			}
		}
	UT_EQ_INT(bad, 0);
}

UT_TEST(help_documents_every_option_row)
{
	size_t n_cmd;
	const struct cli_command_rows *cmds = cli_command_rows(&n_cmd);
	int missing = 0;

	UT_ASSERT(n_cmd >= 9);
	for (size_t c = 0; c < n_cmd; c++) {
		char *text = command_help(&cmds[c]);
		FOR_EACH_ROW(&cmds[c], t, r) {
			char pair[64];
			bool both = mentions(text, r->name, 0);
			snprintf(pair, sizeof(pair), "  -%c, --%s", r->short_name, r->name);
			if (r->short_name && strchr(cmds[c].shorts, r->short_name))
				both = both && strstr(text, pair);
			if (!both) {
				fprintf(stderr, "  %s --%s: not in its --help\n", cmds[c].command,
					r->name);
				missing++;
			}
		}
		free(text);
	}
	UT_EQ_INT(missing, 0);
}

/* The row of c spelled name (len 1 and short: its short letter, when c
 * takes it). */
static bool row_exists(const struct cli_command_rows *c, const char *name, size_t len,
		       bool is_short)
{
	FOR_EACH_ROW(c, t, r) {
		if (is_short && r->short_name == name[0] && strchr(c->shorts, name[0]))
			return true;
		if (!is_short && strlen(r->name) == len && !strncmp(r->name, name, len))
			return true;
	}
	return false;
}

/* Every -x and --word of text that is no row of c; what follows " # " on a
 * line and PATTERN-like words (no letter after the dash) are skipped. */
static int unknown_options(const struct cli_command_rows *c, const char *text)
{
	int unknown = 0;

	for (const char *p = text; *p; p++) {
		const char *name;
		size_t len = 0, dashes;
		if (p[0] != '-' || (p > text && (opt_char(p[-1]) || p[-1] == '\'')))
			continue;
		dashes = p[1] == '-' ? 2 : 1;
		name = p + dashes;
		while (opt_char(name[len]))
			len++;
		if (!len || !isalpha((unsigned char)name[0]) || (dashes == 1 && len != 1)) {
			p += dashes + len - 1;
			continue;
		}
		if (!row_exists(c, name, len, dashes == 1)) {
			fprintf(stderr, "  %s --help: %s%.*s is no option of it\n", c->command,
				dashes == 2 ? "--" : "-", (int)len, name);
			unknown++;
		}
		p += dashes + len - 1;
	}
	return unknown;
}

UT_TEST(help_names_only_options_of_its_command)
{
	size_t n_cmd;
	const struct cli_command_rows *cmds = cli_command_rows(&n_cmd);
	int unknown = 0;

	for (size_t c = 0; c < n_cmd; c++) {
		char *text = command_help(&cmds[c]);
		unknown += unknown_options(&cmds[c], text);
		free(text);
	}
	UT_EQ_INT(unknown, 0);
}

/* A line of examples: "# what", "uprobestats CMD …" (run: also
 * "uprobestats CONFIG"), or a continuation (the line before ends in '\'). */
UT_TEST(help_every_command_has_examples_of_itself)
{
	size_t n_cmd;
	const struct cli_command_rows *cmds = cli_command_rows(&n_cmd);
	int bad = 0;

	for (size_t c = 0; c < n_cmd; c++) {
		const char *line = cmds[c].examples;
		int commands = 0, comments = 0;
		bool continued = false;
		char *text = command_help(&cmds[c]);
		char want[64];

		UT_CONTAINS(text, "\nexamples:\n");
		free(text);
		snprintf(want, sizeof(want), "uprobestats %s ", cmds[c].command);
		UT_ASSERT(line && *line);
		while (*line) {
			const char *eol = strchr(line, '\n');
			size_t n = eol ? (size_t)(eol - line) : strlen(line);
			bool ok = continued || line[0] == '#' ||
				  !strncmp(line, want, strlen(want)) ||
				  (!strcmp(cmds[c].command, "run") &&
				   !strncmp(line, "uprobestats ", 12) &&
				   !cli_command_find(strtok(strndupa(line + 12, n - 12), " ")));
			/* the last line of a command's examples, without options */
			if (!ok && n == strlen(want) - 1 && !strncmp(line, want, n))
				ok = true;
			if (!ok) {
				fprintf(stderr, "  %s examples: '%.*s' is not an example of it\n",
					cmds[c].command, (int)n, line);
				bad++;
			}
			comments += line[0] == '#';
			commands += !continued && line[0] != '#';
			continued = n && line[n - 1] == '\\';
			line += n + (eol != NULL);
		}
		UT_ASSERT(commands >= 1);
		UT_EQ_INT(comments, commands);   /* each example says what it shows */
	}
	UT_EQ_INT(bad, 0);
}

UT_TEST(help_lists_every_command_once)
{
	size_t n_cmd;
	const struct cli_command_rows *cmds = cli_command_rows(&n_cmd);
	struct printed p;
	char *text;

	cli_print_help(print_start(&p));
	text = print_end(&p);
	for (size_t c = 0; c < n_cmd; c++) {
		char line[128];
		snprintf(line, sizeof(line), "\n  %-15s%s\n", cmds[c].command, cmds[c].summary);
		UT_CONTAINS(text, line);
		UT_ASSERT(!strchr(cmds[c].summary, '\n'));
		UT_ASSERT(cli_command_find(cmds[c].command) == &cmds[c]);
	}
	UT_ASSERT(cli_command_find("nope") == NULL);
	free(text);
}

/* docs/uprobestats.1, next to this file's ../../ */
static char *read_man_page(void)
{
	char path[4096];
	const char *slash = strrchr(__FILE__, '/');
	FILE *f;
	char *buf;
	long size;

	snprintf(path, sizeof(path), "%.*s/../../docs/uprobestats.1",
		 slash ? (int)(slash - __FILE__) : 1, slash ? __FILE__ : ".");
	f = fopen(path, "r");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	size = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)size + 1);
	if (buf && fread(buf, 1, (size_t)size, f) != (size_t)size) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

UT_TEST(help_man_page_is_the_rows_printed)
{
	struct printed p;
	char *want, *have = read_man_page();
	size_t n_cmd;
	const struct cli_command_rows *cmds = cli_command_rows(&n_cmd);

	cli_print_man(print_start(&p));
	want = print_end(&p);
	UT_ASSERT(have != NULL);
	if (strcmp(have, want))
		fprintf(stderr, "  docs/uprobestats.1 differs from the rows: run `make man`\n");
	UT_ASSERT(!strcmp(have, want));
	/* every command has its section, every row its .TP (long names escaped) */
	for (size_t c = 0; c < n_cmd; c++) {
		char ss[64];
		snprintf(ss, sizeof(ss), "\n.SS %s\n", cmds[c].command);
		UT_CONTAINS(want, ss);
	}
	UT_CONTAINS(want, "\n.TP\n\\fB\\-p\\fR, \\fB\\-\\-pid\\fR \\fIN\\fR\n");
	UT_CONTAINS(want, "\n.TP\n\\fB\\-\\-stack\\fR[=\\fIFRAMES\\fR]\n");
	free(want);
	free(have);
}

static bool run_table(const struct opt_rows *t)
{
	const struct opt_rows *const run[] = { RUN_TABLES };

	for (size_t i = 0; i < sizeof(run) / sizeof(run[0]); i++)
		if (run[i] == t)
			return true;
	return false;
}

static bool shared_table(const struct opt_rows *t)
{
	return t == &cli_verbose_rows || t == &cli_help_rows;
}

/* The commands that run probes parse with run_opts_uses: exactly the tables
 * their command_rows entry lists (which the help is printed from), in that
 * order, each table that keeps values with a place for them. */
UT_TEST(help_run_commands_parse_with_the_tables_listed)
{
	size_t n_cmd, runs = 0;
	const struct cli_command_rows *cmds = cli_command_rows(&n_cmd);
	struct run_opts o;
	int own_ctx;

	for (size_t c = 0; c < n_cmd; c++) {
		const struct opt_rows *own = NULL;
		struct opt_use uses[CLI_MAX_TABLES];
		size_t n_tables = 0, n;

		bool runs_probes = false;

		for (; n_tables < CLI_MAX_TABLES && cmds[c].tables[n_tables]; n_tables++)
			runs_probes |= cmds[c].tables[n_tables] == &run_rows;
		if (!runs_probes)
			continue;
		runs++;
		if (!run_table(cmds[c].tables[n_tables - 1]))
			own = cmds[c].tables[n_tables - 1];
		n = run_opts_uses(&o, own, &own_ctx, uses);
		/* run_opts_uses adds cli_no_rows for no own rows */
		UT_EQ_INT(n - !own, n_tables);
		for (size_t t = 0; t < n_tables; t++) {
			if (uses[t].rows != cmds[c].tables[t])
				fprintf(stderr, "  %s: table %zu differs\n", cmds[c].command, t);
			UT_ASSERT(uses[t].rows == cmds[c].tables[t]);
			UT_ASSERT(uses[t].ctx || shared_table(uses[t].rows));
		}
		UT_ASSERT(uses[n - 1].ctx == &own_ctx);
	}
	UT_EQ_INT(runs, 4);    /* run, trace, sections, traffic */
}
