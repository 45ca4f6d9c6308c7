/* optrows.h — a command's options as rows: one row per option (its long
 * name, short letter, argument and the function that takes the value).  Every
 * command parses its options through opt_rows_parse over its tables (run's
 * output, stack and own rows, then a command's own); getopt_long's table is
 * built from the rows, and `--help` is checked against the same rows
 * (test/unit/test_help.c), so an option cannot exist without help. */
#ifndef UPROBESTATS_COMMON_OPTROWS_H
#define UPROBESTATS_COMMON_OPTROWS_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

/* What a take() returns to end the parse at once (--help). */
#define OPT_ROW_STOP 2

struct opt_row {
	const char *name;            /* the long name, without "--" */
	char short_name;             /* 'p' for -p, or 0; active where the command lists it */
	int has_arg;                 /* no_argument, required_argument, optional_argument */
	/* 0, OPT_ROW_STOP, or negative with e saying what is wrong with arg
	 * (e left empty: the row printed its error itself) */
	int (*take)(void *ctx, const struct opt_row *row, const char *arg, struct err *e);
	size_t off;                  /* opt_set_*: the member's offset in ctx */
	const char *doc;             /* OPT_DOC: its help (group, argument, text) */
};

/* A row's help, which `CMD --help` and the man page print from the rows
 * (src/cli/cmd_misc.c): the group it is listed under, the argument's name
 * ("" when it takes none) and a sentence or two, wrapped when printed:
 * { "pid", 'p', required_argument, take_pid, 0,
 *   OPT_DOC(TRACE, "N", "trace this process (repeatable)") }.
 * Stored as one string: the group's byte, the argument, a tab, the text. */
#define OPT_DOC(group, arg, text) .doc = OPT_GROUP_##group arg "\t" text
#define OPT_GROUP_TRACE "\001"     /* what to trace */
#define OPT_GROUP_OUTPUT "\002"    /* output */
#define OPT_GROUP_ADVANCED "\003"  /* advanced */
#define OPT_GROUP_ANDROID "\004"   /* Android service (statsd, atoms, guardrail) */
#define OPT_GROUPS 4

/* The takes of options that only keep their value: a bool at row->off set
 * true, a const char * at row->off set to the argument. */
int opt_set_true(void *ctx, const struct opt_row *row, const char *arg, struct err *e);
int opt_set_str(void *ctx, const struct opt_row *row, const char *arg, struct err *e);
/* A row's take and off for them, the member's type checked at compile time:
 * { "no-java", 0, no_argument, OPT_TRUE(struct sections_opts, no_java) }. */
#define OPT_TRUE(T, member) opt_set_true, OPT_OFF_(T, member, bool)
#define OPT_STR(T, member) opt_set_str, OPT_OFF_(T, member, const char *)
#define OPT_OFF_(T, member, type)                                                       \
	(offsetof(T, member) +                                                         \
	 0 * sizeof(char[__builtin_types_compatible_p(__typeof__(((T *)0)->member), type)  \
			 ? 1 : -1]))

struct opt_rows {
	const struct opt_row *v;
	size_t n;
};

#define OPT_ROWS(rows) { (rows), sizeof(rows) / sizeof((rows)[0]) }

/* One table in one parse, with what its rows fill in. */
struct opt_use {
	const struct opt_rows *rows;
	void *ctx;
};

/* Appends getopt entries for the rows at opts[*n] (values first + row), up
 * to max entries; -ENOSPC when they do not fit. */
int opt_rows_getopt(const struct opt_rows *r, int first, struct option *opts, size_t *n,
		    size_t max);

/* opt, arg: what getopt_long returned.  0 when opt is none of these rows,
 * 1 when taken, OPT_ROW_STOP, or negative with e set. */
int opt_rows_take(const struct opt_rows *r, int first, void *ctx, int opt, const char *arg,
		  struct err *e);

/* getopt_long over argv with every row of uses[0..n) (a row's short letter
 * only when it is in shorts, e.g. "pnvh"), each value to its row's take.
 * 0 with optind at the first operand, OPT_ROW_STOP, or negative: e says
 * what, or is empty when getopt or the row printed it already. */
int opt_rows_parse(int argc, char **argv, const struct opt_use *uses, size_t n,
		   const char *shorts, struct err *e);

#endif
