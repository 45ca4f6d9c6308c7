/* common/optrows: getopt over rows, short letters only where listed, the
 * generic setters, a take's error and --help's stop. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "common/optrows.h"
#include "common/parse_u32.h"
#include "ut.h"

struct opts {
	bool flag;
	const char *name;
	uint32_t n;
	int helped;
};

static int take_n(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return parse_u32_arg(arg, 1, 9, "--n", "a digit", &((struct opts *)ctx)->n, e);
}

static int take_help(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	return OPT_ROW_STOP;
}

static const struct opt_row own_v[] = {
	{ "flag", 'f', no_argument, OPT_TRUE(struct opts, flag), OPT_DOC(TRACE, "", "f") },
	{ "name", 'n', required_argument, OPT_STR(struct opts, name), OPT_DOC(TRACE, "N", "n") },
	{ "n", 0, required_argument, take_n, 0, OPT_DOC(TRACE, "N", "n") },
};
static const struct opt_row help_v[] = { { "help", 'h', no_argument, take_help, 0, OPT_DOC(OUTPUT, "", "h") } };
static const struct opt_rows own = OPT_ROWS(own_v), help = OPT_ROWS(help_v);

static int parse(struct opts *o, const char *shorts, struct err *e, int argc, ...)
{
	char *argv[8] = { "cmd" };
	va_list ap;

	va_start(ap, argc);
	for (int i = 1; i < argc; i++)
		argv[i] = va_arg(ap, char *);
	va_end(ap);
	const struct opt_use uses[] = { { &own, o }, { &help, NULL } };
	return opt_rows_parse(argc, argv, uses, 2, shorts, e);
}

UT_TEST(optrows_parse_sets_members_and_takes_short_letters_listed)
{
	struct opts o = { 0 };
	struct err e = { 0 };

	UT_EQ_INT(parse(&o, "fnh", &e, 5, "-f", "-n", "x", "operand"), 0);
	UT_ASSERT(o.flag);
	UT_EQ_STR(o.name, "x");
	UT_EQ_INT(optind, 4);
	o = (struct opts){ 0 };
	UT_EQ_INT(parse(&o, "h", &e, 4, "--flag", "--name=y", "--n=7"), 0);
	UT_ASSERT(o.flag);
	UT_EQ_STR(o.name, "y");
	UT_EQ_U64(o.n, 7);
	/* -f is not listed: unknown (said by us, getopt prints nothing) */
	UT_EQ_INT(parse(&o, "h", &e, 2, "-f"), -EINVAL);
	UT_EQ_STR(e.msg, "unknown option '-f'");
}

UT_TEST(optrows_parse_reports_a_takes_error_and_stops_at_help)
{
	struct opts o = { 0 };
	struct err e = { 0 };

	UT_EQ_INT(parse(&o, "h", &e, 3, "--n", "10"), -EINVAL);
	UT_EQ_STR(e.msg, "--n takes a digit from 1 to 9, not '10'");
	UT_EQ_INT(parse(&o, "h", &e, 3, "-h", "--n=0"), OPT_ROW_STOP);
	UT_EQ_INT(parse(&o, "h", &e, 2, "--help"), OPT_ROW_STOP);
}

/* What getopt refuses is one message of ours (getopt prints nothing): an
 * unknown long option names the nearest row, an ambiguous abbreviation the
 * rows it could be; a missing or extra value names the option. */
UT_TEST(optrows_bad_option_names_the_nearest_row)
{
	struct opts o = { 0 };
	struct err e = { 0 };

	UT_EQ_INT(parse(&o, "fnh", &e, 2, "--nme"), -EINVAL);
	UT_EQ_STR(e.msg, "unknown option '--nme' (did you mean --name?)");
	UT_EQ_INT(parse(&o, "fnh", &e, 2, "--falg=1"), -EINVAL);
	UT_EQ_STR(e.msg, "unknown option '--falg' (did you mean --flag?)");
	UT_EQ_INT(parse(&o, "fnh", &e, 2, "--completely-else"), -EINVAL);
	UT_EQ_STR(e.msg, "unknown option '--completely-else' (see --help)");
	UT_EQ_INT(parse(&o, "fnh", &e, 2, "--flag=x"), -EINVAL);
	UT_EQ_STR(e.msg, "option '--flag' takes no value");
	UT_EQ_INT(parse(&o, "fnh", &e, 2, "--name"), -EINVAL);
	UT_EQ_STR(e.msg, "option '--name' needs a value");
	UT_EQ_INT(parse(&o, "fnh", &e, 2, "-n"), -EINVAL);
	UT_EQ_STR(e.msg, "option '-n' needs a value");
	UT_EQ_INT(parse(&o, "fnh", &e, 2, "-q"), -EINVAL);
	UT_EQ_STR(e.msg, "unknown option '-q'");
	UT_EQ_INT(parse(&o, "h", &e, 2, "-f"), -EINVAL);   /* a letter the command lacks */
	UT_EQ_STR(e.msg, "unknown option '-f'");
}

/* Only whole names: getopt's unique abbreviations (--fla for --flag) are
 * refused with the name they abbreviate, whether the value is joined by '='
 * or the next word, and before or after an operand (getopt permutes). */
UT_TEST(optrows_refuses_abbreviations)
{
	struct opts o = { 0 };
	struct err e = { 0 };

	UT_EQ_INT(parse(&o, "fnh", &e, 2, "--fla"), -EINVAL);
	UT_EQ_STR(e.msg, "unknown option '--fla' (did you mean --flag?)");
	UT_ASSERT(!o.flag);
	UT_EQ_INT(parse(&o, "fnh", &e, 2, "--nam=x"), -EINVAL);
	UT_EQ_STR(e.msg, "unknown option '--nam' (did you mean --name?)");
	UT_EQ_INT(parse(&o, "fnh", &e, 4, "operand", "--na", "x"), -EINVAL);
	UT_EQ_STR(e.msg, "unknown option '--na' (did you mean --name?)");
	UT_EQ_INT(parse(&o, "fnh", &e, 5, "--name", "x", "op", "--fl"), -EINVAL);
	UT_EQ_STR(e.msg, "unknown option '--fl' (did you mean --flag?)");
	UT_EQ_INT(parse(&o, "fnh", &e, 2, "--hel"), -EINVAL);
	UT_EQ_STR(e.msg, "unknown option '--hel' (did you mean --help?)");
	/* the whole names still parse, a value that looks like a name too */
	o = (struct opts){ 0 };
	UT_EQ_INT(parse(&o, "fnh", &e, 7, "op", "--name", "--fl", "--n", "3", "--flag"), 0);
	UT_EQ_STR(o.name, "--fl");
	UT_EQ_U64(o.n, 3);
	UT_ASSERT(o.flag);
}
