/* `--help` against the option rows every command parses with (cli_command_rows):
 * every row is documented in its command's help sections (by its long name or
 * its short letter), and every option the help names is a row of a command
 * that section documents.  A new option without help, or help for an option
 * that is gone, fails here; so does a command that runs probes parsing with
 * other tables than it lists. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "ut.h"

#define MAX_SECTIONS 16

struct section {
	char name[32];          /* "run", "methods/resolve", …; "usage" for the top lines */
	const char *start, *end;
};

/* Split at the lines "NAME options…:" (no indent), the part before them "usage". */
static size_t split_sections(const char *text, struct section *s, size_t max)
{
	size_t n = 0;
	const char *line = text;

	snprintf(s[0].name, sizeof(s[0].name), "usage");
	s[0].start = text;
	n = 1;
	while (*line) {
		const char *eol = strchr(line, '\n');
		const char *opts = strstr(line, " options");
		if (!eol)
			eol = line + strlen(line);
		/* "NAME options…": one word, then " options" */
		if (line[0] != ' ' && opts && opts < eol && !memchr(line, ' ', opts - line) &&
		    n < max) {
			s[n - 1].end = line;
			snprintf(s[n].name, sizeof(s[n].name), "%.*s", (int)(opts - line), line);
			s[n].start = line;
			n++;
		}
		line = *eol ? eol + 1 : eol;
	}
	s[n - 1].end = line;
	return n;
}

static bool opt_char(char c)
{
	return isalnum((unsigned char)c) || c == '-';
}

/* Whether --name (or -c, c != 0) occurs as a whole option word in [start, end). */
static bool mentions(const char *start, const char *end, const char *name, char c)
{
	size_t len = strlen(name);

	for (const char *p = start; p + 2 < end; p++) {
		if (p > start && opt_char(p[-1]))
			continue;
		if (p[0] == '-' && p[1] == '-' && p + 2 + len <= end &&
		    !strncmp(p + 2, name, len) && !opt_char(p[2 + len]))
			return true;
		if (c && p[0] == '-' && p[1] == c && !opt_char(p[2]))
			return true;
	}
	return false;
}

static bool in_sections(const struct cli_command_rows *c, const char *section)
{
	if (!strcmp(section, "usage"))
		return true;
	for (size_t i = 0; i < 3 && c->sections[i]; i++)
		if (!strcmp(c->sections[i], section))
			return true;
	return false;
}

static bool shared_table(const struct opt_rows *t)
{
	return t == &cli_verbose_rows || t == &cli_help_rows;
}

UT_TEST(help_documents_every_option_row)
{
	struct section s[MAX_SECTIONS];
	const char *text = cli_help_text();
	size_t n_sec = split_sections(text, s, MAX_SECTIONS), n_cmd;
	const struct cli_command_rows *cmds = cli_command_rows(&n_cmd);
	int missing = 0;

	UT_ASSERT(n_sec >= 7);
	for (size_t c = 0; c < n_cmd; c++)
		for (size_t t = 0; t < CLI_MAX_TABLES && cmds[c].tables[t]; t++)
			for (size_t r = 0; r < cmds[c].tables[t]->n; r++) {
				const struct opt_row *row = &cmds[c].tables[t]->v[r];
				bool found = false;
				for (size_t k = 0; k < n_sec && !found; k++)
					if (shared_table(cmds[c].tables[t]) ||
					    in_sections(&cmds[c], s[k].name))
						found = mentions(s[k].start, s[k].end, row->name,
								 row->short_name);
				if (!found) {
					fprintf(stderr, "  %s --%s: not in --help\n",
						cmds[c].command, row->name);
					missing++;
				}
			}
	UT_EQ_INT(missing, 0);
}

/* The row spelled name (or, with len 1, the short letter) in the tables of a
 * command that documents section. */
static bool row_exists(const char *section, const char *name, size_t len)
{
	size_t n_cmd;
	const struct cli_command_rows *cmds = cli_command_rows(&n_cmd);

	for (size_t c = 0; c < n_cmd; c++) {
		if (!in_sections(&cmds[c], section))
			continue;
		for (size_t t = 0; t < CLI_MAX_TABLES && cmds[c].tables[t]; t++)
			for (size_t r = 0; r < cmds[c].tables[t]->n; r++) {
				const struct opt_row *row = &cmds[c].tables[t]->v[r];
				if (len == 1 && row->short_name == name[0])
					return true;
				if (strlen(row->name) == len && !strncmp(row->name, name, len))
					return true;
			}
	}
	return false;
}

UT_TEST(help_names_only_options_that_exist)
{
	struct section s[MAX_SECTIONS];
	const char *text = cli_help_text();
	size_t n_sec = split_sections(text, s, MAX_SECTIONS);
	int unknown = 0;

	for (size_t k = 0; k < n_sec; k++)
		for (const char *p = s[k].start; p + 1 < s[k].end; p++) {
			const char *name;
			size_t len = 0, dashes;
			if (p[0] != '-' || (p > s[k].start && opt_char(p[-1])))
				continue;
			dashes = p[1] == '-' ? 2 : 1;
			name = p + dashes;
			while (name + len < s[k].end && opt_char(name[len]))
				len++;
			if (!len || !isalpha((unsigned char)name[0]) || (dashes == 1 && len != 1)) {
				p += dashes + len - 1;
				continue;
			}
			/* main.c's table dispatches `uprobestats --version`: a command */
			if (dashes == 2 && len == 7 && !strncmp(name, "version", 7)) {
				p += dashes + len - 1;
				continue;
			}
			if (!row_exists(s[k].name, name, len)) {
				fprintf(stderr, "  %s section: %s%.*s is no option of "
					"its commands\n", s[k].name, dashes == 2 ? "--" : "-",
					(int)len, name);
				unknown++;
			}
			p += dashes + len - 1;
		}
	UT_EQ_INT(unknown, 0);
}

static bool run_table(const struct opt_rows *t)
{
	const struct opt_rows *const run[] = { RUN_TABLES };

	for (size_t i = 0; i < sizeof(run) / sizeof(run[0]); i++)
		if (run[i] == t)
			return true;
	return false;
}

/* The commands that run probes parse with run_opts_uses: exactly the tables
 * their command_rows entry lists (which the help is checked against), in
 * that order, each table that keeps values with a place for them. */
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
