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

static int match_pattern(const char *text, pid_t pid, const char *root, size_t max,
			 struct pattern_matches *m)
{
	struct trace_pattern *p;
	struct err e = { 0 };
	size_t before = m->n_found;
	int rc = pattern_parse(text, &p, &e);

	if (rc < 0) {
		p_err("%s", e.msg);
		return EXIT_USAGE;
	}
	rc = pattern_match_rooted(p, pid, root, max, m, &e);
	if (rc == 0 && m->n_found == before)
		rc = pattern_explain_no_match(p, m, &e);
	pattern_free(p);
	if (rc < 0) {
		p_err("%s", e.msg);
		/* a file of any kind that cannot be read as one to probe: 4, like methods */
		return rc == -EDESTADDRREQ ? EXIT_USAGE : rc == -ENOMEM ? EXIT_RUNTIME
		       : EXIT_RESOLVE;
	}
	return EXIT_OK;
}

void trace_match_report(const struct trace_matches *t)
{
	const struct pattern_matches *m = t->matches;
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
	size_t n = m->by_reason[MATCH_OK] ? m->by_reason[MATCH_OK] : 1;

	out->methods = calloc(n, sizeof(*out->methods));
	out->match_i = calloc(n, sizeof(*out->match_i));
	if (!out->methods || !out->match_i)
		return EXIT_RUNTIME;
	for (size_t i = 0; i < m->n; i++) {
		const struct pattern_match *x = &m->v[i];
		struct trace_method *t;
		if (x->left_out != MATCH_OK)
			continue;
		out->match_i[out->n] = i;
		t = &out->methods[out->n++];
		*t = (struct trace_method){
			.path = x->path, .offset = x->file_offset, .code_size = x->code_size,
			.machine = x->e_machine, .java = x->is_java, .is_static = x->is_static,
			.signature = x->is_java ? x->name : NULL,
			.param_descs = (const char *const *)x->param_descs,
			.n_params = x->n_params,
			.symbol = x->raw_name ? x->raw_name : x->name,
			.display = x->name,
			.source_file = x->source_file,
		};
	}
	return EXIT_OK;
}

int trace_match(char *const *patterns, size_t n, pid_t pid, size_t max,
		const struct guardrail_opts *g, struct code_cache *code,
		struct trace_matches *out)
{
	return trace_match_rooted(patterns, n, pid, NULL, max, g, code, out);
}

int trace_match_rooted(char *const *patterns, size_t n, pid_t pid, const char *root,
		       size_t max, const struct guardrail_opts *g, struct code_cache *code,
		       struct trace_matches *out)
{
	struct pattern_matches *m = calloc(1, sizeof(*m));
	int rc = EXIT_OK;

	memset(out, 0, sizeof(*out));
	if (!m)
		return EXIT_RUNTIME;
	out->matches = m;
	m->code = code;
	for (size_t i = 0; i < n && rc == EXIT_OK; i++)
		rc = match_pattern(patterns[i], pid, root, max, m);
	if (rc != EXIT_OK)
		return rc;
	if (guardrail_active(g))
		pattern_matches_guardrail(m, (int)g->list);
	return to_methods(m, out);
}

void trace_match_leave_out(struct trace_matches *t, size_t i, int reason, const char *detail)
{
	struct pattern_matches *m = t->matches;
	struct pattern_match *x = &m->v[t->match_i[i]];

	for (size_t f = 0; f < m->n_files; f++)
		if (!strcmp(m->files[f].path, x->path) && m->files[f].ok)
			m->files[f].ok--;
	m->by_reason[x->left_out]--;
	m->by_reason[reason]++;
	x->left_out = (enum match_left_out)reason;
	free(x->left_out_detail);
	x->left_out_detail = detail ? strdup(detail) : NULL;
}

void trace_match_compact(struct trace_matches *t)
{
	size_t kept = 0;

	for (size_t i = 0; i < t->n; i++) {
		if (t->matches->v[t->match_i[i]].left_out != MATCH_OK)
			continue;
		t->methods[kept] = t->methods[i];
		t->match_i[kept++] = t->match_i[i];
	}
	t->n = kept;
}

void trace_matches_free(struct trace_matches *t)
{
	free(t->methods);
	free(t->match_i);
	if (t->matches)
		pattern_matches_free(t->matches);
	free(t->matches);
	memset(t, 0, sizeof(*t));
}
