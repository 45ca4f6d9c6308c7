#include "cli/trace_match.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/arena.h"
#include "resolve/native.h"

/* INTERIM until plan/pattern.h lands: FILE:symbol, exact. */
static int match_one(const char *pat, struct trace_matches *out, size_t *cap)
{
	const char *colon = strrchr(pat, ':');
	struct native_location loc;
	struct trace_method *m;
	struct err e = { 0 };
	char *path;

	if (!colon || colon == pat || !colon[1]) {
		p_err("pattern '%s': expected FILE:SYMBOL", pat);
		return EXIT_USAGE;
	}
	path = arena_strndup(out->arena, pat, (size_t)(colon - pat));
	if (!path || native_resolve(path, colon + 1, &loc, &e) < 0) {
		p_err("pattern '%s': %s", pat, e.msg);
		return EXIT_RESOLVE;
	}
	if (out->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		m = realloc(out->methods, nc * sizeof(*m));
		if (!m)
			return EXIT_RUNTIME;
		out->methods = m;
		*cap = nc;
	}
	m = &out->methods[out->n++];
	*m = (struct trace_method){ .path = path, .offset = loc.offset, .code_size = loc.size,
				    .machine = loc.machine,
				    .symbol = arena_strdup(out->arena, colon + 1) };
	m->display = m->symbol;
	return EXIT_OK;
}

int trace_match(char *const *patterns, size_t n, pid_t pid, const char *process_name,
		struct trace_matches *out)
{
	size_t cap = 0;
	int rc = EXIT_OK;

	(void)pid;
	(void)process_name;
	memset(out, 0, sizeof(*out));
	out->arena = arena_new();
	if (!out->arena)
		return EXIT_RUNTIME;
	for (size_t i = 0; i < n && rc == EXIT_OK; i++)
		rc = match_one(patterns[i], out, &cap);
	return rc;
}

void trace_matches_free(struct trace_matches *m)
{
	free(m->methods);
	arena_free(m->arena);
	memset(m, 0, sizeof(*m));
}
