/* trace_match.h — the trace command's patterns turned into methods: each
 * pattern through plan/pattern.h (the matcher), every match that can be
 * probed as a struct trace_method, and before anything is attached a report
 * on stderr: how many methods matched in which files, and how many were
 * left out and why.  A pattern that matches nothing is an error naming the
 * files searched and the nearest names. */
#ifndef UPROBESTATS_CLI_TRACE_MATCH_H
#define UPROBESTATS_CLI_TRACE_MATCH_H

#include <stddef.h>
#include <sys/types.h>

#include "plan/trace_plan.h"

struct guardrail_opts;
struct pattern_matches;

struct trace_matches {
	struct trace_method *methods;     /* the matches to probe */
	size_t *match_i;                  /* per method: its index in matches->v */
	size_t n;
	struct pattern_matches *matches;  /* owns the methods' strings */
};

/* Matches every pattern against what pid maps (0: the default roots; a
 * pattern's FILE part wins), at most max methods, the guardrail applied
 * when active.  An exit code (cli.h), the error printed: EXIT_OK,
 * EXIT_USAGE for a bad pattern, EXIT_RESOLVE when a pattern matches nothing
 * (naming the files searched and the nearest names).  Prints nothing else:
 * the caller leaves out what it cannot trace, then reports.  code: the run's
 * code cache (code/codecache.h; required) the files are read through. */
struct code_cache;
int trace_match(char *const *patterns, size_t n, pid_t pid, size_t max,
		const struct guardrail_opts *g, struct code_cache *code,
		struct trace_matches *out);
/* The same with the files under root (-c 'chroot ROOT …'; NULL: none). */
int trace_match_rooted(char *const *patterns, size_t n, pid_t pid, const char *root,
		       size_t max, const struct guardrail_opts *g, struct code_cache *code,
		       struct trace_matches *out);
/* Method i is not traced after all (reason, detail copied): counted as
 * left out; trace_match_compact then drops such methods (the order kept). */
void trace_match_leave_out(struct trace_matches *t, size_t i, int reason,
			   const char *detail);
void trace_match_compact(struct trace_matches *t);
/* The report before attaching: matched, to probe, left out and why. */
void trace_match_report(const struct trace_matches *t);
void trace_matches_free(struct trace_matches *m);

#endif
