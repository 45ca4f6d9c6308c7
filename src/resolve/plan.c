#include "resolve/plan.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resolve/elf.h"
#include "resolve/native.h"
#include "sys/proc.h"

const char *resolve_how_name(enum resolve_how how)
{
	switch (how) {
	case RESOLVED_ELF_SYMBOL: return "elf-symbol";
	case RESOLVED_OAT_BUILTIN: return "oat-builtin";
	case RESOLVED_OATDUMP: return "oatdump";
	}
	return "?";
}

const char *arg_abi_name(enum arg_abi abi)
{
	switch (abi) {
	case ARG_ABI_NATIVE: return "native";
	case ARG_ABI_ART_INSTANCE: return "art-instance";
	case ARG_ABI_ART_STATIC: return "art-static";
	}
	return "?";
}

struct build_state {
	const struct plan_opts *opts;
	struct err *err;
	int n_problems;
};

/* Records a problem: with a problem callback it is reported and building
 * continues, otherwise it becomes the error. */
static int problem(struct build_state *st, struct err *e)
{
	st->n_problems++;
	if (st->opts->problem) {
		st->opts->problem(st->opts->problem_ctx, e->msg);
		if (st->n_problems == 1 && st->err != e)
			*st->err = *e;
		return 0;
	}
	if (st->err != e)
		*st->err = *e;
	return e->code ? e->code : -EINVAL;
}

static int elf_has_oatdata(const char *path)
{
	struct elf_file *elf;
	struct elf_symbol sym;
	int found;

	if (elf_open(path, &elf, NULL) < 0)
		return 0;
	found = elf_find_symbol(elf, "oatdata", &sym) == 0;
	elf_close(elf);
	return found;
}

static int resolve_in_file(struct plan_probe *p, const char *path, struct err *err)
{
	struct native_location loc;
	const char *method = p->cfg->method_signature;
	int rc;

	if (!method || !*method)
		return err_set(err, -EINVAL, "%s: no method_signature to look up", path);
	if (elf_has_oatdata(path))
		return err_set(err, -ENOTSUP, "%s: an oat/odex file; Java method resolution is "
			       "not available in this build", path);
	rc = native_resolve(path, method, &loc, err);
	if (rc < 0)
		return rc;
	snprintf(p->path, sizeof(p->path), "%s", path);
	p->offset = loc.offset;
	p->machine = loc.machine;
	p->how = RESOLVED_ELF_SYMBOL;
	p->abi = ARG_ABI_NATIVE;
	snprintf(p->note, sizeof(p->note), "symbol %s at 0x%llx in %s", method,
		 (unsigned long long)loc.vaddr, loc.from_dynsym ? ".dynsym" : ".symtab");
	return 0;
}

/* Tries file_paths in order (upstream semantics: the first that resolves). */
static int resolve_probe(struct plan_probe *p, struct err *err)
{
	const struct str_list *files = &p->cfg->file_paths;
	struct err first = { 0 };
	int rc = -ENOENT;

	if (files->n == 0)
		return err_set(err, -EINVAL, "probe %s: no file_paths to resolve '%s' in",
			       p->program_name, p->cfg->method_signature ? p->cfg->method_signature
									  : "?");
	for (size_t i = 0; i < files->n; i++) {
		struct err e = { 0 };
		rc = resolve_in_file(p, files->v[i], &e);
		if (rc == 0)
			return 0;
		if (i == 0)
			first = e;
	}
	if (files->n > 1)
		return err_set(err, first.code, "%s (and %zu more file_paths failed)", first.msg,
			       files->n - 1);
	*err = first;
	return first.code;
}

static int plan_probe_init(struct plan_probe *p, uint32_t id, struct plan_task *t,
			   const struct probe_config *pc, struct err *err)
{
	const char *map = NULL;

	p->id = id;
	p->task_cfg = t->cfg;
	p->cfg = pc;
	if (!pc->bpf_name || catalog_find_program(pc->bpf_name, &p->obj, &p->prog) < 0) {
		char known[4096];
		catalog_program_names(known, sizeof(known));
		return err_set(err, -ENOENT, "task %u: unknown bpf_name '%s'; known programs: %s",
			       t->index, pc->bpf_name ? pc->bpf_name : "(none)", known);
	}
	snprintf(p->program_name, sizeof(p->program_name), "%s", pc->bpf_name);
	snprintf(p->map_name, sizeof(p->map_name), "map_%s_%s", p->obj->name, p->prog->map);
	/* A configured map must be the one the program writes. */
	for (size_t i = 0; i < t->cfg->bpf_maps.n + (pc->bpf_map ? 1 : 0); i++) {
		const struct catalog_object *mo;
		const char *name = i < t->cfg->bpf_maps.n ? t->cfg->bpf_maps.v[i] : pc->bpf_map;
		if (catalog_find_map(name, &mo, &map) < 0) {
			char known[4096];
			catalog_map_names(known, sizeof(known));
			return err_set(err, -ENOENT, "task %u: unknown map '%s'; known maps: %s",
				       t->index, name, known);
		}
	}
	p->desc = (struct probe_desc){
		.task_index = t->index,
		.task_id = t->cfg->has_task_id ? t->cfg->task_id : 0,
		.probe_index = (uint32_t)(p - t->probes),
		.program = p->program_name,
		.map = p->map_name,
		.file = p->path,
		.method = pc->method_signature ? pc->method_signature
					       : (pc->method_name ? pc->method_name : ""),
		.offset = 0,
	};
	return 0;
}

static int plan_pids(struct plan_task *t, const struct plan_opts *opts, struct err *err)
{
	const char *name = t->cfg->target_process_name;
	pid_t *found;
	size_t n;
	int rc;

	if (opts->n_pids) {
		t->pids = malloc(opts->n_pids * sizeof(pid_t));
		if (!t->pids)
			return err_set(err, -ENOMEM, "out of memory");
		memcpy(t->pids, opts->pids, opts->n_pids * sizeof(pid_t));
		t->n_pids = opts->n_pids;
		return 0;
	}
	if (!name || !*name) {
		t->all_processes = true;
		return 0;
	}
	rc = proc_find_by_name(opts->proc_dir ? opts->proc_dir : "/proc", name, &found, &n, err);
	if (rc < 0)
		return rc;
	if (n == 0) {
		free(found);
		return err_set(err, -ESRCH, "task %u: no running process named '%s' "
			       "(matched against /proc/*/cmdline argv[0])", t->index, name);
	}
	/* Upstream takes the first match; --all-matches takes them all. */
	t->pids = found;
	t->n_pids = opts->all_matches ? n : 1;
	return 0;
}

static int plan_task(struct plan *plan, size_t ti, const struct task_config *tc,
		     uint32_t *next_id, struct build_state *st)
{
	struct plan_task *t = &plan->tasks[ti];
	struct err e = { 0 };
	int rc;

	t->index = (uint32_t)ti;
	t->cfg = tc;
	t->duration_seconds = st->opts->duration_override > 0 ? st->opts->duration_override
		: (tc->has_duration_seconds ? tc->duration_seconds : 0);
	t->probes = calloc(tc->n_probes ? tc->n_probes : 1, sizeof(*t->probes));
	if (!t->probes)
		return err_set(st->err, -ENOMEM, "out of memory");
	t->n_probes = tc->n_probes;
	for (size_t i = 0; i < tc->n_probes; i++) {
		struct plan_probe *p = &t->probes[i];
		rc = plan_probe_init(p, (*next_id)++, t, &tc->probes[i], &e);
		if (rc == 0 && !st->opts->no_resolve)
			rc = resolve_probe(p, &e);
		if (rc < 0) {
			rc = problem(st, &e);
			if (rc < 0)
				return rc;
			continue;
		}
		p->desc.offset = p->offset;
	}
	if (st->opts->no_resolve)
		return 0;
	rc = plan_pids(t, st->opts, &e);
	if (rc < 0)
		return problem(st, &e);
	return 0;
}

int plan_build(const struct uprobestats_config *cfg, const struct plan_opts *opts,
	       struct plan **out, struct err *err)
{
	struct build_state st = { .opts = opts, .err = err };
	struct plan *plan = calloc(1, sizeof(*plan));
	uint32_t next_id = 0;
	int rc = 0;

	*out = NULL;
	if (!plan)
		return err_set(err, -ENOMEM, "out of memory");
	plan->tasks = calloc(cfg->n_tasks ? cfg->n_tasks : 1, sizeof(*plan->tasks));
	if (!plan->tasks) {
		free(plan);
		return err_set(err, -ENOMEM, "out of memory");
	}
	plan->n_tasks = cfg->n_tasks;
	for (size_t i = 0; i < cfg->n_tasks && rc == 0; i++)
		rc = plan_task(plan, i, &cfg->tasks[i], &next_id, &st);
	plan->n_probes = next_id;
	if (rc == 0 && st.n_problems)
		rc = err_set(err, err->code ? err->code : -EINVAL, "%s%s", err->msg,
			     st.n_problems > 1 ? " (and more problems above)" : "");
	if (rc == 0) {
		plan->probe_by_id = calloc(next_id ? next_id : 1, sizeof(*plan->probe_by_id));
		if (!plan->probe_by_id)
			rc = err_set(err, -ENOMEM, "out of memory");
	}
	if (rc < 0) {
		plan_free(plan);
		return rc;
	}
	for (size_t i = 0; i < plan->n_tasks; i++)
		for (size_t j = 0; j < plan->tasks[i].n_probes; j++)
			plan->probe_by_id[plan->tasks[i].probes[j].id] = &plan->tasks[i].probes[j];
	*out = plan;
	return 0;
}

void plan_free(struct plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_tasks; i++) {
		free(plan->tasks[i].probes);
		free(plan->tasks[i].pids);
	}
	free(plan->tasks);
	free(plan->probe_by_id);
	free(plan);
}
