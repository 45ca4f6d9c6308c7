#include "probe/session.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/aggregation.h"
#include "probe/attach.h"
#include "probe/legacy_cfg.h"
#include "probe/verifier_log.h"
#include "probe/binder_filter.h"
#include "probe/tracefs_uprobe.h"
#include "stack/codecache.h"
#include "stack/kwalk.h"

#define DEFAULT_RINGBUF_BYTES (4u << 20)
/* With --stack a record carries the copied stack (2 KiB by default, up to
 * 16 KiB), so the default buffer holds more bytes for as many records. */
#define DEFAULT_STACK_RINGBUF_BYTES (16u << 20)
#define MAX_TARGET_PIDS 4096

#include "probe/session_priv.h"

static uint32_t round_pow2(uint32_t v)
{
	uint32_t p = 4096;
	while (p < v && p < (1u << 30))
		p <<= 1;
	return p;
}

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

static bool plan_uses_exit_probes(const struct plan *plan)
{
	for (size_t i = 0; i < plan->n_probes; i++)
		if (plan->probe_by_id[i]->exit_probes)
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
			   strcmp(name, CATALOG_MAP_TRAFFIC_SOCKS) == 0) {
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
 * exit site), and the entry program that goes with it (NULL: none). */
static const char *probe_main_prog(const struct plan_probe *p)
{
	return p->exit_probes ? p->prog->exit : p->prog->name;
}

const char *probe_entry_prog(const struct plan_probe *p)
{
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

/* ---- probes that share one copy of their object ---- */

/* Members of one shared copy at most: one link's offset and cookie arrays
 * stay small, and 10,000 probes still take two links per program. */
#define MAX_SHARED_MEMBERS 8192

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

/* Equal when probes a and b may share one copy: the same task, program,
 * probe form and file, and the same config but for the probe id. */
static int share_key_cmp(const struct plan_probe *a, const struct plan_probe *b)
{
	int c;

	if (a->desc.task_index != b->desc.task_index)
		return a->desc.task_index < b->desc.task_index ? -1 : 1;
	if (a->prog != b->prog)
		return (uintptr_t)a->prog < (uintptr_t)b->prog ? -1 : 1;
	if (a->exit_probes != b->exit_probes)
		return a->exit_probes ? 1 : -1;
	if ((c = strcmp(a->path, b->path)) != 0 ||
	    (c = memcmp(a->string_reg, b->string_reg, sizeof(a->string_reg))) != 0 ||
	    (c = memcmp(a->string_pos, b->string_pos, sizeof(a->string_pos))) != 0)
		return c;
	if ((c = cmp_u32(a->string_native, b->string_native)) != 0 ||
	    (c = cmp_u32(a->stack_mode, b->stack_mode)) != 0 ||
	    (c = cmp_u32(a->stack_frames, b->stack_frames)) != 0 ||
	    (c = cmp_u32(a->agg_by, b->agg_by)) != 0 || (c = cmp_u32(a->agg_sum, b->agg_sum)) != 0 ||
	    (c = cmp_u32(a->agg_hist, b->agg_hist)) != 0 ||
	    (c = cmp_u32(a->agg_regs, b->agg_regs)) != 0 ||
	    (c = cmp_u32(a->traffic_op, b->traffic_op)) != 0)
		return c;
	return cmp_u32(a->stack_bytes, b->stack_bytes);
}

static int share_order(const void *x, const void *y)
{
	const struct plan_probe *a = *(const struct plan_probe *const *)x;
	const struct plan_probe *b = *(const struct plan_probe *const *)y;
	int c = share_key_cmp(a, b);

	return c ? c : cmp_u32(a->id, b->id);
}

/* One instance per probe, or, where one link can carry many offsets with a
 * cookie each (uprobe_multi links, normal objects), one per group of
 * probes that may share a copy. */
static int group_probes(struct session *s, const struct plan *plan, struct err *err)
{
	size_t n = 0;

	s->members = calloc(plan->n_probes ? plan->n_probes : 1, sizeof(*s->members));
	if (!s->members)
		return err_set(err, -ENOMEM, "out of memory");
	for (size_t t = 0; t < plan->n_tasks; t++)
		for (size_t i = 0; i < plan->tasks[t].n_probes; i++)
			s->members[n++] = &plan->tasks[t].probes[i];
	if (s->use_multi && !s->legacy)
		qsort(s->members, n, sizeof(*s->members), share_order);
	for (size_t i = 0; i < n;) {
		struct instance *in = &s->instances[s->n_instances++];
		size_t k = 1;

		while (s->use_multi && !s->legacy && i + k < n && k < MAX_SHARED_MEMBERS &&
		       share_key_cmp(s->members[i], s->members[i + k]) == 0)
			k++;
		in->probe = s->members[i];
		in->members = &s->members[i];
		in->n_members = k;
		i += k;
	}
	return 0;
}

/* uprobe_multi links (6.6+, filtering by process) unless a perf event path
 * is forced; else the uprobe PMU (4.17+) unless it is missing or tracefs is
 * forced.  Stale tracefs events of killed runs are removed whenever tracefs
 * is there. */
static int choose_attach(struct session *s, const struct session_opts *opts,
			 struct uprobe_pmu *pmu, struct err *err)
{
	struct err pmu_err = { 0 }, tfs_err = { 0 }, multi_err = { 0 };
	int pmu_rc = uprobe_pmu_detect(pmu, &pmu_err);
	int tfs_rc = tracefs_open(&s->tfs, opts->tracefs_root, &tfs_err);

	if (tfs_rc == 0)
		tracefs_remove_stale(&s->tfs, opts->proc_dir ? opts->proc_dir : "/proc", NULL);
	if (!opts->force_tracefs && !opts->force_pmu && uprobe_multi_detect(&multi_err) == 0) {
		s->use_multi = true;
		return 0;
	}
	s->use_tracefs = opts->force_tracefs || pmu_rc < 0;
	if (s->use_tracefs && tfs_rc < 0) {
		if (opts->force_tracefs || pmu_rc == 0)
			*err = tfs_err;
		else
			err_set(err, tfs_rc, "%s; and %s", pmu_err.msg, tfs_err.msg);
		return tfs_rc;
	}
	return 0;
}

static int choose_output(struct session *s, const struct session_opts *opts, struct err *err)
{
	bool has_ringbuf = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;

	uint32_t def = DEFAULT_RINGBUF_BYTES;

	for (size_t i = 0; i < s->plan->n_probes; i++)
		if (s->plan->probe_by_id[i]->stack_mode)
			def = DEFAULT_STACK_RINGBUF_BYTES;
	s->ring_bytes = round_pow2(opts->ringbuf_bytes ? opts->ringbuf_bytes : def);
	s->wakeup_bytes = opts->wakeup_bytes ? opts->wakeup_bytes : s->ring_bytes / 4;
	if (s->legacy) {
		for (size_t i = 0; i < s->plan->n_probes; i++)
			if (s->plan->probe_by_id[i]->stack_mode)
				return err_set(err, -ENOTSUP, "call stacks (--stack, stack_frames) "
					       "have no legacy form: they need the normal BPF "
					       "objects (kernels 5.5+)");
		if (opts->output == OUTPUT_RINGBUF)
			return err_set(err, -ENOTSUP, "the legacy objects (kernels before 5.5) "
				       "write to the perf buffer only; drop --force-ringbuf");
		s->mode = OUTPUT_PERFBUF;
		return 0;
	}
	switch (opts->output) {
	case OUTPUT_RINGBUF:
		if (!has_ringbuf)
			return err_set(err, -ENOTSUP, "this kernel has no BPF ring buffer (5.8+); "
				       "drop --force-ringbuf to use the perf buffer");
		s->mode = OUTPUT_RINGBUF;
		break;
	case OUTPUT_PERFBUF:
		s->mode = OUTPUT_PERFBUF;
		break;
	default:
		s->mode = has_ringbuf ? OUTPUT_RINGBUF : OUTPUT_PERFBUF;
		break;
	}
	return 0;
}

const char *session_attach_mode(const struct session *s)
{
	return s->use_multi ? "uprobe_multi links"
			    : s->use_tracefs ? "tracefs uprobe_events" : "uprobe PMU";
}

bool session_legacy(const struct session *s)
{
	return s->legacy;
}

enum output_mode session_output_mode(const struct session *s)
{
	return s->mode;
}

const char *output_mode_name(enum output_mode m)
{
	switch (m) {
	case OUTPUT_RINGBUF: return "ringbuf";
	case OUTPUT_PERFBUF: return "perfbuf";
	default: return "auto";
	}
}

/* The run's code cache (stack/codecache.h), when a probe records stacks;
 * --stack-mode kernel: the compiled Java methods of the processes known now
 * (stack/kwalk.h) from it, built once before any object is loaded. */
static int build_kwalk(struct session *s, const struct plan *plan, const char *proc_dir,
		       struct err *err)
{
	bool stacks = false, kernel = false;
	size_t n = 0;
	pid_t *pids;
	int rc;

	for (size_t i = 0; i < plan->n_probes; i++) {
		stacks |= plan->probe_by_id[i]->stack_mode != 0;
		kernel |= plan->probe_by_id[i]->stack_mode == UPS_STACK_KERNEL;
	}
	if (stacks && !(s->code = code_cache_new(proc_dir)))
		return err_set(err, -ENOMEM, "out of memory");
	if (!kernel)
		return 0;
	for (size_t t = 0; t < plan->n_tasks; t++)
		n += plan->tasks[t].n_pids;
	pids = calloc(n ? n : 1, sizeof(*pids));
	if (!pids)
		return err_set(err, -ENOMEM, "out of memory");
	n = 0;
	for (size_t t = 0; t < plan->n_tasks; t++)
		for (size_t i = 0; i < plan->tasks[t].n_pids; i++)
			pids[n++] = plan->tasks[t].pids[i];
	rc = kwalk_table_build(&s->kwalk, s->code, pids, n, err);
	free(pids);
	return rc;
}

static int fill_kwalk(const struct session *s, const struct object_state *os, struct err *err)
{
	struct bpf_map *map = bpf_object__find_map_by_name(os->primary, UPS_KWALK_MAP);

	if (!map || !s->kwalk.v)
		return 0;
	for (uint32_t i = 0; i < kwalk_table_size(&s->kwalk); i++)
		if (bpf_map_update_elem(bpf_map__fd(map), &i, &s->kwalk.v[i], BPF_ANY) < 0)
			return err_set(err, -errno, "filling %s: %s", UPS_KWALK_MAP,
				       strerror(errno));
	return 0;
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
	rc = choose_attach(s, opts, &pmu, err);
	if (rc < 0)
		goto fail;
	rc = choose_output(s, opts, err);
	if (rc < 0)
		goto fail;
	mark_used_rings(s, plan);
	rc = build_kwalk(s, plan, opts->proc_dir ? opts->proc_dir : "/proc", err);
	if (rc < 0)
		goto fail;
	rc = group_probes(s, plan, err);
	for (size_t i = 0; rc == 0 && i < s->n_instances; i++)
		rc = load_instance(s, &s->instances[i], opts, err);
	if (rc < 0)
		goto fail;
	for (size_t i = 0; i < s->n_objects; i++) {
		rc = fill_target_pids(&s->objects[i], plan, err);
		if (rc == 0)
			rc = fill_kwalk(s, &s->objects[i], err);
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

int session_attach_task_pid(struct session *s, uint32_t task_index, pid_t pid, struct err *err)
{
	size_t before[s->n_instances ? s->n_instances : 1];
	int rc = 0;

	for (size_t i = 0; i < s->n_instances; i++)
		before[i] = s->instances[i].n_atts;
	for (size_t i = 0; i < s->n_instances && rc == 0; i++)
		if (s->instances[i].probe->desc.task_index == task_index)
			rc = attach_instance_pid(s, &s->instances[i], pid, err);
	if (rc < 0) /* All or nothing for this process. */
		for (size_t i = 0; i < s->n_instances; i++)
			detach_instance_from(s, &s->instances[i], before[i]);
	return rc;
}

int session_attach(struct session *s, struct err *err)
{
	int rc;

	for (size_t i = 0; i < s->n_instances; i++) {
		const struct plan_probe *p = s->instances[i].probe;
		rc = s->interrupted && s->interrupted()
			     ? err_set(err, -EINTR,
				       "interrupted while attaching: nothing left attached")
			     : attach_instance(s, &s->instances[i],
					       &s->plan->tasks[p->desc.task_index], err);
		if (rc < 0) {
			/* All or nothing: detach what was attached. */
			for (size_t j = 0; j <= i; j++)
				detach_instance(s, &s->instances[j]);
			return rc;
		}
	}
	return 0;
}

void session_detach_task(struct session *s, uint32_t task_index)
{
	detach_where(s, (long)task_index);
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
	code_cache_free(s->code);
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

int session_probe_counters(const struct session *s, uint32_t probe_id,
			   struct ups_probe_counters *out)
{
	const struct plan_probe *p;
	struct object_state *os = NULL;
	struct ups_probe_counters *percpu;
	struct bpf_map *map;
	int rc;

	memset(out, 0, sizeof(*out));
	if (!s || probe_id >= s->plan->n_probes)
		return -ENOENT;
	p = s->plan->probe_by_id[probe_id];
	for (size_t i = 0; i < s->n_objects; i++)
		if (s->objects[i].cat == p->obj)
			os = &s->objects[i];
	if (!os || !os->primary)
		return -ENOENT;
	map = bpf_object__find_map_by_name(os->primary, CATALOG_MAP_COUNTERS);
	if (!map)
		return -ENOENT;
	percpu = calloc((size_t)s->ncpus, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	rc = bpf_map_lookup_elem(bpf_map__fd(map), &probe_id, percpu);
	if (rc == 0) {
		for (int c = 0; c < s->ncpus; c++) {
			out->hits += percpu[c].hits;
			out->drops += percpu[c].drops;
			out->unwound += percpu[c].unwound;
			out->untracked += percpu[c].untracked;
			out->unpaired += percpu[c].unpaired;
			out->agg_full += percpu[c].agg_full;
		}
	}
	free(percpu);
	return rc < 0 ? -errno : 0;
}

int session_map_fd(const struct session *s, const struct catalog_object *obj, const char *name)
{
	for (size_t i = 0; i < s->n_objects; i++) {
		struct bpf_map *map;

		if (s->objects[i].cat != obj || !s->objects[i].primary)
			continue;
		map = bpf_object__find_map_by_name(s->objects[i].primary, name);
		return map ? bpf_map__fd(map) : -ENOENT;
	}
	return -ENOENT;
}

int session_probe_histogram(const struct session *s, uint32_t probe_id,
			    uint64_t slots[UPS_HIST_SLOTS])
{
	const struct plan_probe *p;
	struct bpf_object *primary = NULL;
	struct bpf_map *map;
	uint64_t *percpu;
	int rc = 0;

	memset(slots, 0, UPS_HIST_SLOTS * sizeof(uint64_t));
	if (probe_id >= s->plan->n_probes)
		return -ENOENT;
	p = s->plan->probe_by_id[probe_id];
	for (size_t i = 0; i < s->n_objects; i++)
		if (s->objects[i].cat == p->obj)
			primary = s->objects[i].primary;
	map = primary ? bpf_object__find_map_by_name(primary, CATALOG_MAP_HISTOGRAM) : NULL;
	if (!map)
		return -ENOENT;
	percpu = calloc((size_t)s->ncpus, sizeof(uint64_t));
	if (!percpu)
		return -ENOMEM;
	for (uint32_t slot = 0; slot < UPS_HIST_SLOTS && rc == 0; slot++) {
		uint32_t key = probe_id * UPS_HIST_SLOTS + slot;
		rc = bpf_map_lookup_elem(bpf_map__fd(map), &key, percpu) < 0 ? -errno : 0;
		for (int c = 0; rc == 0 && c < s->ncpus; c++)
			slots[slot] += percpu[c];
	}
	free(percpu);
	return rc;
}

size_t session_attachment_count(const struct session *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_instances; i++)
		for (size_t k = 0; k < s->instances[i].n_atts; k++)
			n += s->instances[i].atts[k].n_places;
	return n;
}

size_t session_link_count(const struct session *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->n_instances; i++)
		n += s->instances[i].n_atts;
	return n;
}
