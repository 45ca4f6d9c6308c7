#include "plan/trace_plan.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "config/model.h"

#define PROG_ENTRY   "prog_GenericInstrumentation_uprobe_call_detail"
#define PROG_STRINGS "prog_Uprobestats_uprobe_call_args"
#define PROG_RETURN  "prog_Uprobestats_uretprobe_call_return"
#define PROG_AGG     "prog_Uprobestats_uprobe_aggregate"
#define PROG_AGG_RET "prog_Uprobestats_uretprobe_aggregate_return"

/* "arg 2", "arg2", "arg:2" -> 2; -1 when s is no argument. */
static int32_t parse_arg_ref(const char *s, size_t len)
{
	char *end;
	long v;

	if (len < 4 || strncmp(s, "arg", 3))
		return -1;
	s += 3;
	len -= 3;
	if (*s == ' ' || *s == ':') {
		s++;
		len--;
	}
	if (!len || *s < '0' || *s > '9')
		return -1;
	v = strtol(s, &end, 10);
	return (size_t)(end - s) == len && v <= 255 ? (int32_t)v : -1;
}

int trace_agg_parse_by(const char *s, struct trace_agg *agg, struct err *e)
{
	static const struct { const char *name; int32_t key; } names[] = {
		{ "pid", AGG_KEY_PID }, { "tid", AGG_KEY_TID }, { "uid", AGG_KEY_UID },
		{ "ret", AGG_KEY_RET }, { "comm", AGG_KEY_COMM }, { "process", AGG_KEY_PROCESS },
	};
	const char *p = s;

	agg->n_by = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		int32_t key = AGG_KEY_UNKNOWN, arg = parse_arg_ref(p, len);

		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strlen(names[i].name) == len && !strncmp(p, names[i].name, len))
				key = names[i].key;
		if (arg >= 0) {
			if (agg->by_arg >= 0 && agg->by_arg != arg)
				return err_set(e, -EINVAL, "--by %s: one argument key at most", s);
			key = AGG_KEY_ARG;
			agg->by_arg = arg;
		}
		if (key == AGG_KEY_UNKNOWN)
			return err_set(e, -EINVAL, "--by %s: '%.*s' is not pid, tid, uid, comm, "
				       "process, arg N or ret", s, (int)len, p);
		for (size_t i = 0; i < agg->n_by; i++)
			if (agg->by[i] == key)
				return err_set(e, -EINVAL, "--by %s: '%.*s' twice", s, (int)len, p);
		agg->by[agg->n_by++] = key;
		p += len;
		if (*p == ',' && !*++p)
			return err_set(e, -EINVAL, "--by %s: a key after the last ','", s);
	}
	if (!agg->n_by)
		return err_set(e, -EINVAL, "--by: no key given (pid, tid, uid, comm, process, arg N, ret)");
	agg->on = true;
	return 0;
}

int trace_agg_parse_value(const char *s, const char *what, int32_t *value, int32_t *arg,
			  struct err *e)
{
	int32_t a = parse_arg_ref(s, strlen(s));

	if (a >= 0) {
		*value = AGG_VALUE_ARG;
		*arg = a;
	} else if (!strcmp(s, "ret")) {
		*value = AGG_VALUE_RET;
	} else if (!strcmp(s, "latency")) {
		*value = AGG_VALUE_LATENCY;
	} else {
		return err_set(e, -EINVAL, "%s takes arg N, ret or latency, not '%s'", what, s);
	}
	return 0;
}

bool trace_agg_needs_return(const struct trace_agg *agg)
{
	for (size_t i = 0; i < agg->n_by; i++)
		if (agg->by[i] == AGG_KEY_RET)
			return true;
	return agg->sum == AGG_VALUE_RET || agg->sum == AGG_VALUE_LATENCY ||
	       agg->hist == AGG_VALUE_RET || agg->hist == AGG_VALUE_LATENCY;
}

int trace_args_parse(const char *s, struct trace_spec *spec, struct err *e)
{
	const char *p = s;

	spec->n_args = 0;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);
		bool str = false;

		if (end == p || v < 0 || v > 255)
			return err_set(e, -EINVAL, "--args %s: expected an argument position "
				       "(0, 1, …) at '%s'", s, p);
		if (!strncmp(end, ":str", 4)) {
			str = true;
			end += 4;
		}
		if (*end && *end != ',')
			return err_set(e, -EINVAL, "--args %s: expected ',' or ':str' after %ld, "
				       "found '%s'", s, v, end);
		if (spec->n_args == TRACE_MAX_ARGS)
			return err_set(e, -EINVAL, "--args %s: at most %d positions", s,
				       TRACE_MAX_ARGS);
		for (size_t i = 0; i < spec->n_args; i++)
			if (spec->args[i].pos == v)
				return err_set(e, -EINVAL, "--args %s: position %ld twice", s, v);
		spec->args[spec->n_args++] = (struct trace_arg){ .pos = (int32_t)v, .str = str };
		p = *end ? end + 1 : end;
		if (*end && !*p)
			return err_set(e, -EINVAL, "--args %s: a position after the last ','", s);
	}
	if (!spec->n_args)
		return err_set(e, -EINVAL, "--args: no argument position given");
	return 0;
}

static size_t n_str_args(const struct trace_spec *spec)
{
	size_t n = 0;

	for (size_t i = 0; i < spec->n_args; i++)
		n += spec->args[i].str;
	return n;
}

static enum arg_abi abi_of(const struct trace_method *m)
{
	if (!m->java)
		return ARG_ABI_NATIVE;
	return m->is_static ? ARG_ABI_ART_STATIC : ARG_ABI_ART_INSTANCE;
}

/* Registers an argument can be read from in BPF: rdi..r9, x0..x7. */
static int arg_regs(uint16_t machine)
{
	return machine == EM_X86_64 ? 6 : 8;
}

int trace_check_args(const struct trace_spec *spec, const struct trace_method *m,
		     struct err *e)
{
	if (n_str_args(spec) > 4)
		return err_set(e, -EINVAL, "--args: at most 4 positions marked str");
	for (size_t i = 0; i < spec->n_args; i++) {
		const struct trace_arg *a = &spec->args[i];
		int reg = plan_arg_register(abi_of(m), a->pos);

		if (m->java && (size_t)a->pos >= m->n_params)
			return err_set(e, -EINVAL, "%s: no argument %d (it takes %zu)", m->display,
				       a->pos, m->n_params);
		if (!m->java && (reg < 0 || reg >= arg_regs(m->machine)))
			return err_set(e, -EINVAL, "--args %d: %s gets argument %d on the stack; "
				       "--args reads the %d argument registers (positions 0-%d)",
				       a->pos, m->display, a->pos, arg_regs(m->machine),
				       arg_regs(m->machine) - 1);
		if (!a->str)
			continue;
		if (m->java && strcmp(m->param_descs[a->pos], "Ljava/lang/String;"))
			return err_set(e, -EINVAL, "%s: argument %d is %s, not a String (only "
				       "String or char * positions take :str)", m->display, a->pos,
				       m->param_descs[a->pos]);
		if (reg < 0 || reg >= arg_regs(m->machine))
			return err_set(e, -ENOTSUP, "%s: argument %d is passed on the stack; "
				       ":str reads registers only", m->display, a->pos);
	}
	return 0;
}

/* ---- the model ---- */

static int push_str(struct arena *a, struct str_list *l, const char *s)
{
	char *d = arena_strdup(a, s);

	return d ? model_push_string(a, l, d, NULL) : -ENOMEM;
}

static int fill_probe(struct arena *a, struct probe_config *pc, const char *prog,
		      const struct trace_method *m, bool ret, bool uretprobe)
{
	char abs[PATH_MAX];
	/* a relative path (./target) would name another file wherever the
	 * emitted config is run from: the file's absolute path */
	const char *path = m->path[0] != '/' && realpath(m->path, abs) ? abs : m->path;

	pc->bpf_name = arena_strdup(a, prog);
	if (!pc->bpf_name || push_str(a, &pc->file_paths, path) < 0)
		return -ENOMEM;
	if (ret || uretprobe) {
		/* Java always; native unless --unsafe-uretprobe (a C++ exception
		 * thrown through a uretprobe's function aborts the program), which
		 * the config then says, so that run of it needs the flag too. */
		pc->has_exit_probes = true;
		pc->exit_probes = ret;
	}
	if (m->section) {
		pc->has_section = true;
		pc->section = m->section;
		pc->has_section_name_arg = m->section_name_arg >= 0;
		pc->section_name_arg = m->section_name_arg;
		pc->has_section_value_arg = m->section_value_arg >= 0;
		pc->section_value_arg = m->section_value_arg;
	}
	/* Java: upstream's "void a.B.m(int)" form; native: the ELF symbol. */
	pc->method_signature = arena_strdup(a, m->java ? m->signature : m->symbol);
	return pc->method_signature ? 0 : -ENOMEM;
}

static void fill_location(struct plan_location *l, const struct trace_method *m,
			  const struct trace_spec *spec, bool strings)
{
	size_t k = 0;

	*l = (struct plan_location){
		.path = m->path, .offset = m->offset, .code_size = m->code_size,
		.machine = m->machine, .java = m->java, .abi = abi_of(m),
		.display = m->display, .source_file = m->source_file,
		.note = "matched by a trace pattern",
	};
	memset(l->string_reg, 0xff, sizeof(l->string_reg));
	memset(l->string_pos, 0xff, sizeof(l->string_pos));
	for (size_t i = 0; strings && i < spec->n_args && k < 4; i++) {
		int reg = plan_arg_register(l->abi, spec->args[i].pos);
		if (!spec->args[i].str || reg < 0)
			continue;
		l->string_reg[k] = (uint8_t)reg;
		l->string_pos[k] = (uint8_t)spec->args[i].pos;
		if (!m->java)
			l->string_native |= (uint8_t)(1u << k);
		k++;
	}
}

static int fill_task(struct arena *a, struct task_config *t, const struct trace_spec *spec,
		     bool args)
{
	if (spec->process_name) {
		t->target_process_name = arena_strdup(a, spec->process_name);
		if (!t->target_process_name)
			return -ENOMEM;
	}
	if (spec->duration > 0) {
		t->has_duration_seconds = true;
		t->duration_seconds = spec->duration;
	}
	if (!args || !spec->n_args)
		return 0;
	t->has_statsd_logging_config = true;
	t->statsd.has_atom_id = true;
	t->statsd.atom_id = spec->atom_id ? spec->atom_id : TRACE_PLACEHOLDER_ATOM;
	for (size_t i = 0; i < spec->n_args; i++)
		if (model_push_i32(a, &t->statsd.primitive_argument_positions,
				   spec->args[i].pos, NULL) < 0)
			return -ENOMEM;
	return 0;
}

static int fill_aggregation(struct arena *a, struct probe_config *pc, const struct trace_agg *g)
{
	pc->has_aggregation = true;
	for (size_t i = 0; i < g->n_by; i++) {
		if (model_push_i32(a, &pc->agg_by, g->by[i], NULL) < 0)
			return -ENOMEM;
		if (g->by[i] == AGG_KEY_ARG) {
			pc->has_agg_by_arg = true;
			pc->agg_by_arg = g->by_arg;
		}
	}
	pc->has_agg_sum = g->sum != AGG_VALUE_NONE;
	pc->agg_sum = g->sum;
	pc->has_agg_sum_arg = g->sum == AGG_VALUE_ARG;
	pc->agg_sum_arg = g->sum_arg;
	pc->has_agg_hist = g->hist != AGG_VALUE_NONE;
	pc->agg_hist = g->hist;
	pc->has_agg_hist_arg = g->hist == AGG_VALUE_ARG;
	pc->agg_hist_arg = g->hist_arg;
	pc->has_agg_interval = g->interval_s > 0;
	pc->agg_interval_seconds = (int32_t)g->interval_s;
	pc->has_agg_max_keys = g->max_keys > 0;
	pc->agg_max_keys = (int32_t)g->max_keys;
	return 0;
}

/* One task per program kind: the entry probes (with the argument positions)
 * first, the return probes after them, so probe ids run through the tasks
 * in order and the positions stay with the programs that record them. */
static int build_task(const struct trace_spec *spec, const struct trace_method *m, size_t n,
		      bool ret, struct trace_source *out)
{
	struct arena *a = out->cfg->arena;
	struct task_config *t = &out->cfg->tasks[out->cfg->n_tasks++];
	bool agg_ret = spec->agg.on && trace_agg_needs_return(&spec->agg);
	const char *prog = spec->agg.on ? (agg_ret ? PROG_AGG_RET : PROG_AGG)
			   : ret ? PROG_RETURN
			   : n_str_args(spec) || spec->sections ? PROG_STRINGS : PROG_ENTRY;

	t->probes = arena_alloc(a, n * sizeof(*t->probes));
	if (!t->probes || fill_task(a, t, spec, !ret) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct probe_config *pc = &t->probes[t->n_probes++];
		bool returns = ret || agg_ret;
		bool exits = returns && (m[i].java || !spec->native_uretprobe);
		if (fill_probe(a, pc, prog, &m[i], exits, returns && !exits) < 0 ||
		    (spec->agg.on && fill_aggregation(a, pc, &spec->agg) < 0))
			return -ENOMEM;
		fill_location(&out->located[out->n_located++], &m[i], spec,
			      !ret && n_str_args(spec) > 0);
	}
	return 0;
}

int trace_source_build(const struct trace_spec *spec, const struct trace_method *m, size_t n,
		       struct trace_source *out, struct err *e)
{
	bool entry = !spec->ret || spec->n_args;
	size_t per = spec->agg.on ? 1 : (spec->ret ? 1 : 0) + (entry ? 1 : 0);
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!n)
		return err_set(e, -ENOENT, "trace: no method to probe");
	out->cfg = model_new("trace");
	if (!out->cfg)
		return err_set(e, -ENOMEM, "out of memory");
	out->cfg->tasks = arena_alloc(out->cfg->arena, per * sizeof(*out->cfg->tasks));
	out->located = calloc(n * per, sizeof(*out->located));
	if (!out->cfg->tasks || !out->located) {
		trace_source_free(out);
		return err_set(e, -ENOMEM, "out of memory");
	}
	out->cfg->format = CONFIG_FORMAT_TEXT;
	out->cfg->era = CONFIG_ERA_CURRENT;
	if (spec->agg.on || entry)
		rc = build_task(spec, m, n, false, out);
	if (rc == 0 && spec->ret && !spec->agg.on)
		rc = build_task(spec, m, n, true, out);
	if (rc < 0) {
		trace_source_free(out);
		return err_set(e, rc, "out of memory");
	}
	return 0;
}

void trace_source_free(struct trace_source *src)
{
	if (!src)
		return;
	config_free(src->cfg);
	free(src->located);
	memset(src, 0, sizeof(*src));
}
