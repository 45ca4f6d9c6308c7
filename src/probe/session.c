/* session.c — loading: one copy of its object per instance (the probe id and
 * config in .rodata, or patched in for the legacy build), the maps sized or
 * shared with the object's primary copy, the programs loaded (a refusal
 * named with the verifier's reason), then the primaries' maps filled and the
 * output buffers collected for the loop; closing it all again. */
#include "probe/session.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "plan/aggregation.h"
#include "probe/attach.h"
#include "probe/legacy_cfg.h"
#include "probe/verifier_log.h"
#include "probe/binder_filter.h"
#include "probe/tracefs_uprobe.h"
#include "stack/kwalk.h"

#define MAX_TARGET_PIDS 4096

#include "probe/session_priv.h"

static struct object_state *object_state_for(struct session *s, const struct catalog_object *c)
{
	for (size_t i = 0; i < s->n_objects; i++)
		if (s->objects[i].cat == c)
			return &s->objects[i];
	s->objects[s->n_objects].cat = c;
	return &s->objects[s->n_objects++];
}

static size_t ring_index(const struct catalog_object *c, const char *map)
{
	for (size_t i = 0; c->ring_maps[i]; i++)
		if (strcmp(c->ring_maps[i], map) == 0)
			return i;
	return 0;
}

static int set_config(struct bpf_object *obj, const struct ups_prog_config *cfg, struct err *err)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj) {
		if (bpf_map__is_internal(map) &&
		    catalog_name_ends(bpf_map__name(map), CATALOG_RODATA_SUFFIX)) {
			int rc = bpf_map__set_initial_value(map, cfg, sizeof(*cfg));
			if (rc < 0)
				return err_set(err, rc, "setting the program config: %s",
					       strerror(-rc));
			return 0;
		}
	}
	return err_set(err, -ENOENT, "embedded object has no .rodata config");
}

/* The ring buffer stand-in when it must not exist (perf mode, or unused):
 * a one-entry array, so the program's relocation still resolves while the
 * branch that would use it is pruned by the verifier. */
static int make_stand_in(struct bpf_map *map)
{
	int rc = bpf_map__set_type(map, BPF_MAP_TYPE_ARRAY);
	if (rc == 0)
		rc = bpf_map__set_key_size(map, sizeof(__u32));
	if (rc == 0)
		rc = bpf_map__set_value_size(map, sizeof(__u32));
	if (rc == 0)
		rc = bpf_map__set_max_entries(map, 1);
	return rc;
}

static bool is_output_used(const struct object_state *os, const char *name, bool *is_perf)
{
	size_t len = strlen(name);
	char base[128];

	*is_perf = len > strlen(CATALOG_PERF_SUFFIX) &&
		   catalog_name_ends(name, CATALOG_PERF_SUFFIX);
	if (*is_perf)
		len -= strlen(CATALOG_PERF_SUFFIX);
	snprintf(base, sizeof(base), "%.*s", (int)len, name);
	for (size_t i = 0; os->cat->ring_maps[i]; i++)
		if (strcmp(os->cat->ring_maps[i], base) == 0)
			return os->ring_used[i];
	return false;
}

/* Whether a probe pairs entries with exits on pending_calls (a lone `ret`
 * pairs nothing: its one probe is the entry and the exit). */
static bool plan_uses_exit_probes(const struct plan *plan)
{
	for (size_t i = 0; i < plan->n_probes; i++)
		if (plan->probe_by_id[i]->exit_probes && !plan->probe_by_id[i]->lone_ret)
			return true;
	return false;
}

static bool plan_uses_histogram(const struct plan *plan)
{
	for (size_t i = 0; i < plan->n_probes; i++)
		if (plan->probe_by_id[i]->prog->histogram)
			return true;
	return false;
}

/* Sizes the primary's maps, or points an instance's maps at the primary's. */
static int setup_maps(struct session *s, struct bpf_object *obj, struct object_state *os,
		      struct err *err)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj) {
		const char *name = bpf_map__name(map);
		bool is_perf;
		int rc = 0;

		if (bpf_map__is_internal(map))
			continue;
		if (os->primary) {
			struct bpf_map *shared = bpf_object__find_map_by_name(os->primary, name);
			if (!shared)
				return err_set(err, -ENOENT, "map %s missing from primary", name);
			rc = bpf_map__reuse_fd(map, bpf_map__fd(shared));
		} else if (bpf_map__type(map) == BPF_MAP_TYPE_RINGBUF) {
			bool used = is_output_used(os, name, &is_perf);
			if (used && s->mode == OUTPUT_RINGBUF)
				rc = bpf_map__set_max_entries(map, s->ring_bytes);
			else
				rc = make_stand_in(map);
		} else if (strcmp(name, CATALOG_MAP_COUNTERS) == 0) {
			rc = bpf_map__set_max_entries(
				map, s->plan->n_probes ? (uint32_t)s->plan->n_probes : 1);
		} else if (strcmp(name, CATALOG_MAP_PIDS) == 0) {
			rc = bpf_map__set_max_entries(map, MAX_TARGET_PIDS);
		} else if (strcmp(name, CATALOG_MAP_PENDING) == 0 &&
			   !plan_uses_exit_probes(s->plan)) {
			rc = bpf_map__set_max_entries(map, 1);  /* 4 MiB only when used */
		} else if (strcmp(name, UPS_KWALK_MAP) == 0 && s->kwalk.v) {
			rc = bpf_map__set_max_entries(map, (uint32_t)kwalk_table_size(&s->kwalk));
		} else if (strcmp(name, CATALOG_MAP_AGG_DATA) == 0) {
			/* preallocated (what 4.14 and every tracing program can
			 * use): 56 bytes a key, only when a probe aggregates */
			rc = bpf_map__set_max_entries(map, plan_aggregates(s->plan)
							   ? plan_agg_max_keys(s->plan) : 1);
		} else if (strcmp(name, CATALOG_MAP_TRAFFIC_DATA) == 0 ||
			   strcmp(name, CATALOG_MAP_TRAFFIC_SOCKS) == 0 ||
			   strcmp(name, CATALOG_MAP_TRAFFIC_HOSTS) == 0) {
			rc = bpf_map__set_max_entries(map, plan_traffic_probes(s->plan)
							   ? plan_agg_max_keys(s->plan) : 1);
		} else if (strcmp(name, CATALOG_MAP_AGG_ENTRIES) == 0 &&
			   !plan_agg_returns(s->plan)) {
			rc = bpf_map__set_max_entries(map, 1);
		} else if (strcmp(name, CATALOG_MAP_HISTOGRAM) == 0) {
			/* per-CPU slots per probe: creating 10,000 probes' took 0.35 s,
			 * so only when a call_latency probe fills them */
			size_t n = s->plan->n_probes && plan_uses_histogram(s->plan)
					   ? s->plan->n_probes : 1;
			rc = bpf_map__set_max_entries(map, (uint32_t)(n * UPS_HIST_SLOTS));
		}
		if (rc < 0)
			return err_set(err, rc, "preparing map %s: %s", name, strerror(-rc));
	}
	return 0;
}

/* Past this many processes a task's probes are attached once for every
 * process and filtered by tgid in BPF: each uprobe perf event costs the
 * kernel ~130 ms to tear down, serialized, so 300 per-process events took a
 * minute to detach; one filtered event takes one teardown. */

static bool task_filters_in_bpf(const struct plan_task *t, const struct session_opts *opts)
{
	return !t->all_processes && (opts->bpf_pid_filter || t->n_pids > PER_PID_ATTACH_MAX);
}

/* The verifier's log of a refused program (libbpf asks for it only after a
 * failure).  Big enough for the log of a 4,096-instruction program on old
 * kernels, which stop at a full buffer instead of keeping its end; the pages
 * are touched only when a log is written. */
#define VERIFIER_LOG_SIZE (16u << 20)
#define MAX_LOADED_PROGS 2        /* a program and its entry half */

/* Loads the object; when the kernel refuses a program, the error names it
 * and quotes the verifier's reason. */
static int load_object(struct bpf_object *obj, const struct plan_probe *p,
		       const struct session_opts *opts, struct err *err)
{
	struct bpf_program *prog, *progs[MAX_LOADED_PROGS] = { 0 };
	char *logs[MAX_LOADED_PROGS] = { 0 }, reason[256] = "";
	const char *failed = NULL;
	size_t n = 0;
	int rc;

	bpf_object__for_each_program(prog, obj) {
		if (!bpf_program__autoload(prog) || n == MAX_LOADED_PROGS)
			continue;
		logs[n] = malloc(VERIFIER_LOG_SIZE);
		if (logs[n]) {
			logs[n][0] = '\0';
			bpf_program__set_log_buf(prog, logs[n], VERIFIER_LOG_SIZE);
		}
		progs[n++] = prog;
	}
	rc = bpf_object__load(obj);
	for (size_t i = 0; i < n; i++) {
		if (rc < 0 && logs[i] && logs[i][0] && !failed) {
			failed = bpf_program__name(progs[i]);
			verifier_log_reason(logs[i], VERIFIER_LOG_SIZE, reason, sizeof(reason));
			if (opts->verifier_log)
				opts->verifier_log(failed, logs[i]);
		}
		free(logs[i]);
	}
	if (rc < 0 && failed)
		return err_set(err, rc, "loading program %s (%s) into the kernel: %s; the verifier "
			       "says: %s", failed, p->program_name, strerror(-rc),
			       reason[0] ? reason : "(no reason given)");
	if (rc < 0)
		return err_set(err, rc, "loading program %s into the kernel: %s (run with -v "
			       "for the verifier log)", p->program_name, strerror(-rc));
	return 0;
}

/* The program a probe runs at its offset (or, with exit probes, at every
 * exit site), and the entry program that goes with it (NULL: none; a lone
 * `ret`'s exit program runs alone). */
static const char *probe_main_prog(const struct plan_probe *p)
{
	return p->exit_probes ? p->prog->exit : p->prog->name;
}

const char *probe_entry_prog(const struct plan_probe *p)
{
	if (p->lone_ret)
		return NULL;
	return p->exit_probes ? p->prog->exit_entry : p->prog->entry;
}

/* A loaded secondary instance: its programs' descriptors, then the object
 * goes (the programs keep their maps). */
static int keep_programs_only(struct instance *in, struct err *err)
{
	const char *names[2] = { probe_main_prog(in->probe), probe_entry_prog(in->probe) };
	int rc = 0;

	for (int k = 0; k < 2; k++) {
		struct bpf_program *prog = names[k]
			? bpf_object__find_program_by_name(in->obj, names[k]) : NULL;
		in->prog_fd[k] = -1;
		in->prog_name[k] = names[k];
		if (prog && bpf_program__fd(prog) >= 0) {
			in->prog_fd[k] = fcntl(bpf_program__fd(prog), F_DUPFD_CLOEXEC, 3);
			if (in->prog_fd[k] < 0 && rc == 0)
				rc = err_set(err, -errno, "keeping program %s: %s", names[k],
					     strerror(errno));
		}
	}
	bpf_object__close(in->obj);
	in->obj = NULL;
	return rc;
}

/* The loaded program prog_name of in, or -1. */
int instance_prog_fd(const struct instance *in, const char *prog_name)
{
	struct bpf_program *prog;

	if (!in->obj) {
		for (int k = 0; k < 2; k++)
			if (in->prog_name[k] && !strcmp(in->prog_name[k], prog_name))
				return in->prog_fd[k];
		return -1;
	}
	prog = bpf_object__find_program_by_name(in->obj, prog_name);
	return prog ? bpf_program__fd(prog) : -1;
}

static int load_instance(struct session *s, struct instance *in,
			 const struct session_opts *opts, struct err *err)
{
	const struct plan_probe *p = in->probe;
	struct object_state *os = object_state_for(s, p->obj);
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = p->obj->name);
	struct ups_prog_config cfg = { 0 };
	struct bpf_program *prog;
	int rc;

	if (!os->elf && (rc = (s->legacy ? catalog_object_legacy_elf : catalog_object_elf)(
				 p->obj, &os->elf, &os->elf_size, err)))
		return rc;
	in->obj = bpf_object__open_mem(os->elf, os->elf_size, &oo);
	if (!in->obj) {
		rc = -errno;
		return err_set(err, rc, "opening embedded object %s: %s", p->obj->name,
			       strerror(-rc));
	}
	bpf_object__for_each_program(prog, in->obj) {
		const char *name = bpf_program__name(prog);
		bool wanted = strcmp(name, probe_main_prog(p)) == 0 ||
			      (probe_entry_prog(p) && strcmp(name, probe_entry_prog(p)) == 0);

		bpf_program__set_autoload(prog, wanted);
		/* a program is loaded for one kind of attachment */
		if (s->use_multi)
			bpf_program__set_expected_attach_type(prog, UPS_ATTACH_UPROBE_MULTI);
	}
	cfg.probe_id = p->id;
	cfg.wakeup_bytes = s->wakeup_bytes;
	cfg.filter_pids = task_filters_in_bpf(&s->plan->tasks[p->desc.task_index], opts);
	cfg.use_perfbuf = s->mode == OUTPUT_PERFBUF;
	memcpy(cfg.string_reg, p->string_reg, sizeof(cfg.string_reg));
	memcpy(cfg.string_pos, p->string_pos, sizeof(cfg.string_pos));
	cfg.string_native = p->string_native;
	cfg.stack_mode = p->stack_mode;
	cfg.stack_bytes = p->stack_bytes;
	cfg.stack_frames = p->stack_frames;
	cfg.stack_search_bits = s->kwalk.bits;
	cfg.stack_after_ret = !p->exit_probes && p->prog->is_return;
	cfg.probe_from_cookie = in->n_members > 1;
	cfg.agg_by = p->agg_by;
	cfg.agg_sum = p->agg_sum;
	cfg.agg_hist = p->agg_hist;
	cfg.agg_regs = p->agg_regs;
	cfg.traffic_op = p->traffic_op;
	cfg.lone_ret = p->lone_ret;
	rc = s->legacy ? legacy_patch_object(in->obj, &cfg, err) : set_config(in->obj, &cfg, err);
	if (rc == 0)
		rc = setup_maps(s, in->obj, os, err);
	if (rc < 0)
		return rc;
	rc = load_object(in->obj, p, opts, err);
	if (rc < 0)
		return rc;
	if (!os->primary) {
		os->primary = in->obj;
		return 0;
	}
	return keep_programs_only(in, err);
}

static int fill_target_pids(const struct object_state *os, const struct plan *plan,
			    struct err *err)
{
	struct bpf_map *map = bpf_object__find_map_by_name(os->primary, CATALOG_MAP_PIDS);
	__u8 one = 1;

	if (!map)
		return 0;
	for (size_t t = 0; t < plan->n_tasks; t++) {
		for (size_t i = 0; i < plan->tasks[t].n_pids; i++) {
			__u32 pid = (__u32)plan->tasks[t].pids[i];
			if (bpf_map_update_elem(bpf_map__fd(map), &pid, &one, BPF_ANY) < 0)
				return err_set(err, -errno, "filling target_pids: %s",
					       strerror(errno));
		}
	}
	return 0;
}

static int collect_rings(struct session *s, struct err *err)
{
	s->rings = calloc(s->n_objects * 8 + 1, sizeof(*s->rings));
	if (!s->rings)
		return err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < s->n_objects; i++) {
		struct object_state *os = &s->objects[i];
		for (size_t r = 0; os->cat->ring_maps[r]; r++) {
			char name[160];
			struct bpf_map *m;
			bool perf = s->mode == OUTPUT_PERFBUF;
			if (!os->ring_used[r])
				continue;
			snprintf(name, sizeof(name), "%s%s", os->cat->ring_maps[r],
				 perf ? CATALOG_PERF_SUFFIX : "");
			m = bpf_object__find_map_by_name(os->primary, name);
			if (!m || bpf_map__fd(m) < 0)
				return err_set(err, -ENOENT, "output buffer %s not created", name);
			s->rings[s->n_rings++] = (struct session_ring){
				.map_fd = bpf_map__fd(m), .perf = perf, .bytes = s->ring_bytes,
				.wakeup_bytes = s->wakeup_bytes, .obj = os->cat,
				.legacy = s->legacy,
				.map = os->cat->ring_maps[r],
			};
		}
	}
	return 0;
}

/* Marks which ring buffers each object needs before any primary is loaded. */
static void mark_used_rings(struct session *s, const struct plan *plan)
{
	for (size_t t = 0; t < plan->n_tasks; t++) {
		for (size_t i = 0; i < plan->tasks[t].n_probes; i++) {
			const struct plan_probe *p = &plan->tasks[t].probes[i];
			struct object_state *os = object_state_for(s, p->obj);
			if (p->prog->map)
				os->ring_used[ring_index(p->obj, p->prog->map)] = true;
		}
	}
}

/* Refuses, before anything is loaded, a run whose descriptors would not fit
 * the limit (raised to the hard limit by then): failing half way through the
 * attach would leave nothing attached after minutes of work. */
static int check_fd_budget(const struct session *s, struct err *err)
{
	struct rlimit r = { 0 };
	size_t places, need = session_fds_needed(s, &places), mmaps = session_mmap_fds(s);
	char stacks[96] = "";

	if (getrlimit(RLIMIT_NOFILE, &r) < 0 || r.rlim_cur == RLIM_INFINITY ||
	    need <= r.rlim_cur)
		return 0;
	if (mmaps)
		snprintf(stacks, sizeof(stacks), " (%zu of them the call stacks' mapping records: "
			 "one a CPU)", mmaps);
	return err_set(err, -EMFILE, "%zu probe(s) in %zu place(s) via %s%s: this run needs "
		       "about %zu file descriptors%s and may open %llu (hard limit %llu); nothing "
		       "was loaded: raise the limit (ulimit -n; the hard limit as root: "
		       "ulimit -Hn) or trace fewer probes, places (--ret adds one a return "
		       "site) or processes", s->plan->n_probes, places, session_attach_mode(s),
		       s->use_multi ? "" : " (a descriptor each)", need, stacks,
		       (unsigned long long)r.rlim_cur, (unsigned long long)r.rlim_max);
}

int session_open(const struct plan *plan, const struct session_opts *opts,
		 struct session **out, struct err *err)
{
	struct session *s = calloc(1, sizeof(*s));
	struct uprobe_pmu pmu;
	int rc;

	*out = NULL;
	if (!s)
		return err_set(err, -ENOMEM, "out of memory");
	s->plan = plan;
	s->interrupted = opts->interrupted;
	s->legacy = opts->legacy;
	s->ncpus = libbpf_num_possible_cpus();
	s->instances = calloc(plan->n_probes ? plan->n_probes : 1, sizeof(*s->instances));
	s->objects = calloc(catalog_object_count(), sizeof(*s->objects));
	if (!s->instances || !s->objects || s->ncpus <= 0) {
		session_close(s);
		return err_set(err, -ENOMEM, "out of memory");
	}
	rc = session_choose_attach(s, opts, &pmu, err);
	if (rc < 0)
		goto fail;
	rc = session_choose_output(s, opts, err);
	if (rc < 0)
		goto fail;
	mark_used_rings(s, plan);
	rc = session_build_kwalk(s, plan, opts, err);
	if (rc < 0)
		goto fail;
	rc = session_group_probes(s, plan, err);
	if (rc == 0)
		rc = check_fd_budget(s, err);
	for (size_t i = 0; rc == 0 && i < s->n_instances; i++)
		rc = load_instance(s, &s->instances[i], opts, err);
	if (rc < 0)
		goto fail;
	for (size_t i = 0; i < s->n_objects; i++) {
		rc = fill_target_pids(&s->objects[i], plan, err);
		if (rc == 0)
			rc = session_fill_kwalk(s, &s->objects[i], err);
		if (rc < 0)
			goto fail;
	}
	/* Object-specific maps (Binder's interface filter) before any attach. */
	for (size_t i = 0; i < s->n_objects; i++) {
		if (s->objects[i].cat->prepare == CATALOG_PREPARE_BINDER_FILTER &&
		    (rc = binder_filter_prepare(s->objects[i].primary, plan, err)) < 0)
			goto fail;
	}
	rc = collect_rings(s, err);
	if (rc < 0)
		goto fail;
	s->pmu = pmu;
	*out = s;
	return 0;
fail:
	session_close(s);
	return rc;
}

void session_close(struct session *s)
{
	if (!s)
		return;
	detach_where(s, -1);
	/* Secondary instances first: the primaries own the shared maps. */
	for (size_t i = s->n_instances; i-- > 0;) {
		bool primary = false;
		for (size_t o = 0; o < s->n_objects; o++)
			primary |= s->objects[o].primary == s->instances[i].obj;
		if (!primary)
			bpf_object__close(s->instances[i].obj);
		for (int k = 0; k < 2; k++)
			if (s->instances[i].prog_name[k] && s->instances[i].prog_fd[k] >= 0)
				close(s->instances[i].prog_fd[k]);
	}
	for (size_t o = 0; o < s->n_objects; o++)
		bpf_object__close(s->objects[o].primary);
	for (size_t o = 0; o < s->n_objects; o++)
		free(s->objects[o].elf);
	free(s->instances);
	free(s->members);
	free(s->objects);
	kwalk_table_free(&s->kwalk);
	free(s->rings);
	free(s);
}

struct code_cache *session_code_cache(const struct session *s)
{
	return s->code;
}

size_t session_ring_count(const struct session *s)
{
	return s->n_rings;
}

const struct session_ring *session_ring_at(const struct session *s, size_t i)
{
	return i < s->n_rings ? &s->rings[i] : NULL;
}

