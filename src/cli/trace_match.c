#include "cli/trace_match.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "config/guardrail.h"
#include "plan/pattern.h"

/* Up to this many left-out methods are named one by one. */
#define NAMED_LEFT_OUT 10

static int match_pattern(const char *text, pid_t pid, size_t max, struct pattern_matches *m)
{
	struct trace_pattern *p;
	struct err e = { 0 };
	size_t before = m->n;
	int rc = pattern_parse(text, &p, &e);

	if (rc < 0) {
		p_err("%s", e.msg);
		return EXIT_USAGE;
	}
	rc = pattern_match_pid(p, pid, max, m, &e);
	if (rc == 0 && m->n == before)
		rc = pattern_explain_no_match(p, m, &e);
	pattern_free(p);
	if (rc < 0) {
		p_err("%s", e.msg);
		return rc == -EINVAL ? EXIT_USAGE : EXIT_RESOLVE;
	}
	return EXIT_OK;
}

static void report(const struct pattern_matches *m)
{
	char line[1024];
	size_t len, named = 0;

	len = (size_t)snprintf(line, sizeof(line), "matched %zu method(s) in %zu file(s), %zu to "
			       "probe", m->n, m->n_files, m->by_reason[MATCH_OK]);
	for (int r = 1; r < MATCH_N_REASONS && len < sizeof(line); r++)
		if (m->by_reason[r])
			len += (size_t)snprintf(line + len, sizeof(line) - len, "; left out %zu %s",
						m->by_reason[r], match_left_out_name(r));
	p_info("%s", line);
	for (size_t i = 0; i < m->n_files; i++)
		p_info("  %s: %zu matched, %zu to probe", m->files[i].path, m->files[i].matched,
		       m->files[i].ok);
	for (size_t i = 0; i < m->n; i++) {
		const struct pattern_match *x = &m->v[i];
		if (x->left_out == MATCH_OK || x->left_out == MATCH_OVER_MAX)
			continue;
		if (named++ == NAMED_LEFT_OUT) {
			p_info("  (more left out: `uprobestats methods --match PATTERN` lists "
			       "them)");
			break;
		}
		p_info("  left out %s: %s%s%s", x->name, match_left_out_name(x->left_out),
		       x->left_out_detail ? ": " : "",
		       x->left_out_detail ? x->left_out_detail : "");
	}
}

static int to_methods(const struct pattern_matches *m, struct trace_matches *out)
{
	out->methods = calloc(m->by_reason[MATCH_OK] ? m->by_reason[MATCH_OK] : 1,
			      sizeof(*out->methods));
	if (!out->methods)
		return EXIT_RUNTIME;
	for (size_t i = 0; i < m->n; i++) {
		const struct pattern_match *x = &m->v[i];
		struct trace_method *t;
		if (x->left_out != MATCH_OK)
			continue;
		t = &out->methods[out->n++];
		*t = (struct trace_method){
			.path = x->path, .offset = x->file_offset, .code_size = x->code_size,
			.machine = x->e_machine, .java = x->is_java, .is_static = x->is_static,
			.signature = x->is_java ? x->name : NULL,
			.param_descs = (const char *const *)x->param_descs,
			.n_params = x->n_params,
			.symbol = x->raw_name ? x->raw_name : x->name,
			.display = x->name,
		};
	}
	return EXIT_OK;
}

int trace_match(char *const *patterns, size_t n, pid_t pid, size_t max,
		const struct guardrail_opts *g, struct trace_matches *out)
{
	struct pattern_matches *m = calloc(1, sizeof(*m));
	int rc = EXIT_OK;

	memset(out, 0, sizeof(*out));
	if (!m)
		return EXIT_RUNTIME;
	out->matches = m;
	for (size_t i = 0; i < n && rc == EXIT_OK; i++)
		rc = match_pattern(patterns[i], pid, max, m);
	if (rc != EXIT_OK)
		return rc;
	if (guardrail_active(g))
		pattern_matches_guardrail(m, (int)g->list);
	report(m);
	return to_methods(m, out);
}

void trace_matches_free(struct trace_matches *t)
{
	free(t->methods);
	if (t->matches)
		pattern_matches_free(t->matches);
	free(t->matches);
	memset(t, 0, sizeof(*t));
}
