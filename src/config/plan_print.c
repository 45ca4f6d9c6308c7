/* plan_print.c — see plan_print.h. */
#include "config/plan_print.h"

#include <inttypes.h>

#include "config/schema.h"

static void print_strs(FILE *out, const struct str_list *l, const char *sep)
{
	for (size_t i = 0; i < l->n; i++)
		fprintf(out, "%s%s", i ? sep : "", l->v[i]);
}

static void print_method(FILE *out, const struct probe_config *p)
{
	if (p->fully_qualified_class_name && p->method_name) {
		fprintf(out, "    method: %s.%s(", p->fully_qualified_class_name, p->method_name);
		print_strs(out, &p->fully_qualified_parameters, ", ");
		fprintf(out, ")  [by class + method name]\n");
	}
	if (p->method_signature)
		fprintf(out, "    %s %s  [by signature]\n",
			p->fully_qualified_class_name ? "   and:" : "method:", p->method_signature);
	if (!p->method_signature && !(p->fully_qualified_class_name && p->method_name))
		fprintf(out, "    method: (none)\n");
	if (p->file_paths.n) {
		fprintf(out, "    files:  ");
		print_strs(out, &p->file_paths, ", ");
		fputc('\n', out);
	}
}

static void print_binder(FILE *out, const struct binder_filter *f)
{
	fprintf(out, "    binder: %s\n", f->interface_name ? f->interface_name : "(no interface)");
	for (size_t m = 0; m < f->n_methods; m++) {
		const struct binder_method_config *mc = &f->methods[m];
		fprintf(out, "      code %" PRId64 ":", mc->method_id);
		if (mc->has_atom_config) {
			fprintf(out, " atom %d [", mc->atom_id);
			for (size_t k = 0; k < mc->atom_field_positions.n; k++) {
				int32_t v = mc->atom_field_positions.v[k];
				const char *n = schema_enum_name(&schema_enum_atom_field, v);
				fprintf(out, k ? ", %s" : "%s", n ? n : "?");
			}
			fputc(']', out);
		}
		if (mc->has_event_service_config)
			fprintf(out, " event-service%s", mc->flush ? " (flush)" : "");
		fputc('\n', out);
	}
	for (size_t k = 0; k < f->method_ids.n; k++)
		fprintf(out, "      code %" PRId64 " (deprecated method_ids)\n",
			f->method_ids.v[k]);
}

static void print_target(FILE *out, const struct task_config *t)
{
	int32_t tps = t->has_target_process_selection ? t->target_process_selection : 0;
	const char *name = t->target_process_name;

	fprintf(out, "  target: ");
	if (tps == TPS_ANY_APP_PROCESS_ON_START)
		fprintf(out, "the first app process to start");
	else if (tps == TPS_SPECIFIC_APP_PROCESS_ON_START)
		fprintf(out, "app process \"%s\" when it starts", name ? name : "?");
	else if (name)
		fprintf(out, "running process \"%s\"", name);
	else
		fprintf(out, "(none in the config: the pid comes from the command line)");
	if (t->has_target_process_selection) {
		const char *sel = schema_enum_name(&schema_enum_tps, tps);
		fprintf(out, "  [%s]", sel ? sel : "unknown selection");
	}
	fputc('\n', out);
}

static void print_task_header(FILE *out, const struct task_config *t, size_t i, size_t n)
{
	(void)n;   /* the header says how many; tasks are numbered from 0 everywhere */
	fprintf(out, "task %zu", i);
	if (t->has_task_id)
		fprintf(out, " (task_id %" PRId64 ")", t->task_id);
	fputs(":\n", out);
	print_target(out, t);
	if (t->has_duration_seconds)
		fprintf(out, "  duration: %d s\n", t->duration_seconds);
	else
		fprintf(out, "  duration: until stopped (none in the config)\n");
	if (t->has_statsd_logging_config) {
		const struct i32_list *pos = &t->statsd.primitive_argument_positions;
		fprintf(out, "  atom: %" PRId64, t->statsd.atom_id);
		if (pos->n) {
			fprintf(out, ", fields = arguments [");
			for (size_t k = 0; k < pos->n; k++)
				fprintf(out, k ? ", %d" : "%d", pos->v[k]);
			fputc(']', out);
		}
		fputc('\n', out);
	} else {
		fprintf(out, "  atom: none (no statsd_logging_config)\n");
	}
	if (t->bpf_maps.n) {
		fprintf(out, "  maps: ");
		print_strs(out, &t->bpf_maps, ", ");
		fputc('\n', out);
	}
}

void config_print_plan(FILE *out, const struct uprobestats_config *cfg,
		       const struct plan_print_opts *opts)
{
	static const struct plan_print_opts defaults = { 0 };

	if (!opts)
		opts = &defaults;
	fprintf(out, "config %s: %zu task%s\n", cfg->source_name, cfg->n_tasks,
		cfg->n_tasks == 1 ? "" : "s");
	if (opts->verbose) {
		fprintf(out, "  format: %s\n  era: %s\n", config_format_name(cfg->format),
			config_era_name(cfg->era));
		if (cfg->era_reason)
			fprintf(out, "  era chosen: %s\n", cfg->era_reason);
		if (cfg->n_unknown_fields)
			fprintf(out, "  unknown fields skipped: %zu\n", cfg->n_unknown_fields);
	}
	for (size_t i = 0; i < cfg->n_tasks; i++) {
		const struct task_config *t = &cfg->tasks[i];
		print_task_header(out, t, i, cfg->n_tasks);
		for (size_t j = 0; j < t->n_probes; j++) {
			const struct probe_config *p = &t->probes[j];
			fprintf(out, "  probe %zu/%zu: %s\n", j + 1, t->n_probes,
				p->bpf_name ? p->bpf_name : "(no bpf_name)");
			print_method(out, p);
			if (p->bpf_map)
				fprintf(out, "    map:    %s  [era-B per-probe map]\n", p->bpf_map);
			for (size_t k = 0; k < p->n_binder_filters; k++)
				print_binder(out, &p->binder_filters[k]);
			if (opts->probe_hook)
				opts->probe_hook(out, cfg, i, j, opts->hook_ctx);
		}
	}
}
