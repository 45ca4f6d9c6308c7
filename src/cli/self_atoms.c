/* self_atoms.c — see self_atoms.h. */
#include "cli/self_atoms.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "config/signature.h"
#include "catalog/catalog.h"
#include "sink/statsd_atoms.h"

static uint64_t boot_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_BOOTTIME, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int32_t self_program_code(const struct plan_probe *p)
{
	for (size_t o = 0; o < catalog_object_count(); o++) {
		const struct catalog_object *obj = catalog_object_at(o);
		if (obj != p->obj)
			continue;
		for (size_t i = 0; i < obj->n_programs; i++)
			if (&obj->programs[i] == p->prog)
				return (int32_t)(o * 64 + i + 1);
	}
	return 0;
}

/* The probe's class and method as upstream names them: the config's
 * fully_qualified_class_name and method_name, else the parts of its
 * method_signature; a native symbol has no class. */
static void class_and_method(const struct probe_config *c, char *cls, size_t cs, char *m,
			     size_t ms)
{
	struct method_sig sig;

	cls[0] = m[0] = 0;
	if (c->fully_qualified_class_name && c->method_name) {
		snprintf(cls, cs, "%s", c->fully_qualified_class_name);
		snprintf(m, ms, "%s", c->method_name);
		return;
	}
	if (!c->method_signature || sig_parse(c->method_signature, &sig, NULL))
		return;
	if (sig.native) {
		snprintf(m, ms, "%.*s", (int)sig.name.len, sig.name.p);
		return;
	}
	struct span k = sig_class(&sig);
	snprintf(cls, cs, "%.*s", (int)k.len, k.p);
	snprintf(m, ms, "%.*s", (int)(sig.name.len - k.len - 1), sig.name.p + k.len + 1);
}

void self_atoms_attached(struct sinks *s, const struct plan *plan, int32_t atom_id)
{
	uint64_t now = boot_ns();

	for (size_t i = 0; i < plan->n_probes; i++) {
		const struct plan_probe *p = plan->probe_by_id[i];
		const char *proc = p->task_cfg->target_process_name;
		char cls[512], method[512];
		struct attached_atom aa;

		class_and_method(p->cfg, cls, sizeof(cls), method, sizeof(method));
		sinks_atom(s, statsd_attached_atom(&aa, atom_id, self_program_code(p), cls, method,
						   proc ? proc : "", p->desc.task_id, now));
	}
}

void self_atoms_error(struct sinks *s, const struct plan *plan, int32_t atom_id,
		      enum self_error_type type, enum self_failure_point where)
{
	uint64_t now = boot_ns();
	struct err e = { 0 };

	for (size_t t = 0; t < plan->n_tasks; t++) {
		const struct task_config *c = plan->tasks[t].cfg;
		struct error_atom ea;

		sinks_atom(s, statsd_error_atom(&ea, atom_id, type, c->has_task_id ? c->task_id : 0,
						0, 0, where, now));
	}
	(void)sinks_flush(s, &e);
}
