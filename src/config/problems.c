/* problems.c — see problems.h. */
#include "config/problems.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>

#include "common/arena.h"
#include "common/grow.h"

int config_problem_add(const struct uprobestats_config *cfg, struct config_problems *out,
		       const struct src_loc *loc, enum config_problem_kind kind,
		       enum config_severity sev, size_t task, size_t probe, const char *fmt, ...)
{
	char msg[ERR_MSG_MAX];
	struct config_problem *pr;
	va_list ap;

	/* Same growth rule as the model's lists: at 0 and at powers of two. */
	if ((out->n & (out->n - 1)) == 0) {
		struct config_problem *nv;
		size_t cap;
		if (grow_cap(out->n, out->n + 1, 1, sizeof(*nv), &cap) < 0 ||
		    !(nv = arena_grow(cfg->arena, out->v, out->n, cap, sizeof(*nv))))
			return -ENOMEM;
		out->v = nv;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr = &out->v[out->n];
	pr->msg = arena_strdup(cfg->arena, msg);
	if (!pr->msg)
		return -ENOMEM;
	pr->loc = loc ? *loc : (struct src_loc){ 0 };
	pr->kind = kind;
	pr->severity = sev;
	pr->task = task;
	pr->probe = probe;
	out->n++;
	if (sev == CS_ERROR)
		out->n_errors++;
	else
		out->n_warnings++;
	return 0;
}

const char *config_problem_kind_name(enum config_problem_kind k)
{
	switch (k) {
	case CP_NO_TASKS:
		return "no-tasks";
	case CP_METHOD:
		return "method";
	case CP_PROGRAM:
		return "program";
	case CP_MAP:
		return "map";
	case CP_ARG_POSITION:
		return "arg-position";
	case CP_DURATION:
		return "duration";
	case CP_ATOM:
		return "atom";
	case CP_TARGET:
		return "target";
	case CP_BINDER:
		return "binder";
	case CP_ENUM:
		return "enum";
	case CP_GUARDRAIL:
		return "guardrail";
	}
	return "problem";
}

void config_print_problems(FILE *out, const struct uprobestats_config *cfg,
			   const struct config_problems *p)
{
	char where[512];

	for (size_t i = 0; i < p->n; i++) {
		const struct config_problem *pr = &p->v[i];
		fprintf(out, "%s: %s: %s [%s]\n",
			config_loc_str(cfg, &pr->loc, where, sizeof(where)),
			pr->severity == CS_ERROR ? "error" : "warning", pr->msg,
			config_problem_kind_name(pr->kind));
	}
	fprintf(out, "%zu error%s, %zu warning%s\n", p->n_errors, p->n_errors == 1 ? "" : "s",
		p->n_warnings, p->n_warnings == 1 ? "" : "s");
}
