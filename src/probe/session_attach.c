/* session_attach.c — attaching a session's loaded instances (uprobe_multi
 * links, uprobe PMU perf events or tracefs events, per process or once) and
 * detaching them, closing many together so the kernel's RCU waits overlap. */
#include <bpf/bpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/grow.h"
#include "probe/closer.h"
#include "probe/session_priv.h"

static int grow_atts(struct instance *in, size_t more, struct err *err)
{
	if (resize_array(&in->atts, in->n_atts + more) < 0)
		return err_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* Events created in one go, then opened before the next are: opening a
 * tracepoint's perf event walks the kernel's list of every event, so each
 * open costs less while fewer of ours exist (10,000 probes under strace:
 * 0.56 ms an open, 0.88 ms with all created first). */
#define TFS_CHUNK 256

/* A tracefs place: the listing pass only notes the event to create (returns
 * 1); the attaching pass opens the one created for it, creating the next
 * chunk when none is left.  *at_fault: the probe a failure is about. */
static int tracefs_place(struct session *s, const struct plan_probe *p, uint64_t offset,
			 bool retprobe, pid_t pid, int prog_fd, const uint64_t *cookie,
			 struct attachment *a, const struct plan_probe **at_fault,
			 struct err *err)
{
	struct tracefs_event *ev = s->tfs_events + s->tfs_next;
	size_t n = s->tfs_n - s->tfs_next, failed;
	int rc;

	if (s->tfs_listing) {
		if (grow_array(&s->tfs_events, &s->tfs_cap, s->tfs_n + 1, 64) < 0)
			return err_set(err, -ENOMEM, "out of memory");
		s->tfs_events[s->tfs_n++] = (struct tracefs_event){
			.path = plan_probe_uprobe_file(p), .offset = offset, .retprobe = retprobe, .owner = p };
		return 1;
	}
	/* Both passes walk the same places in the same order. */
	if (!n || ev->owner != p || ev->offset != offset)
		return err_set(err, -EINVAL, "%s+0x%llx: no tracefs event was listed for it",
			       plan_probe_uprobe_file(p), (unsigned long long)offset);
	if (s->tfs_next == s->tfs_created) {
		n = n < TFS_CHUNK ? n : TFS_CHUNK;
		rc = tracefs_create(&s->tfs, ev, n, &failed, err);
		if (rc < 0) {   /* it removed what it had created */
			*at_fault = ev[failed].owner;
			return rc;
		}
		s->tfs_created += n;
	}
	rc = tracefs_open_event(ev, pid, prog_fd, cookie, &a->tp, err);
	s->tfs_next += rc == 0;
	return rc;
}

/* One place of probe p (in's probe, or a member of a shared copy, whose id
 * is then the place's cookie) running prog_name. */
static int attach_one(struct session *s, struct instance *in, const struct plan_probe *p,
		      const char *prog_name, uint64_t offset, bool retprobe, pid_t pid,
		      struct err *err)
{
	uint64_t id = p->id;
	const uint64_t *cookie = in->n_members > 1 ? &id : NULL;
	int prog_fd = instance_prog_fd(in, prog_name);
	struct attachment *a = &in->atts[in->n_atts];
	const struct plan_probe *at_fault = p;
	int rc;

	if (prog_fd < 0)
		return err_set(err, -ENOENT,
			       "probe %s: program %s missing from the embedded object",
			       p->program_name, prog_name);
	offset = plan_probe_uprobe_offset(p, offset);   /* in the file the kernel probes */
	memset(a, 0, sizeof(*a));
	a->tracefs = s->use_tracefs;
	if (s->use_tracefs) {
		rc = tracefs_place(s, p, offset, retprobe, pid, prog_fd, cookie, a, &at_fault,
				   err);
		if (rc > 0)
			return 0;
		a->perf_fd = a->tp.perf_fd;
	} else if (s->use_multi) {
		rc = uprobe_attach_multi(plan_probe_uprobe_file(p), offset, retprobe, pid, prog_fd,
					 &a->perf_fd, err);
	} else {
		rc = uprobe_attach_pmu(&s->pmu, plan_probe_uprobe_file(p), offset, retprobe, pid, prog_fd, cookie,
				       &a->perf_fd, err);
	}
	if (rc < 0)
		return err_prefix(err, "probe %s", at_fault->program_name);
	a->n_places = 1;
	in->n_atts++;
	return 0;
}

/* The sites of member m where a shared copy's program runs: its exit sites
 * (exit probes' return half) or its offset.  Appends them with m's id as
 * their cookie; returns how many. */
static size_t member_sites(const struct plan_probe *m, bool at_exits, uint64_t *offs,
			   uint64_t *cookies)
{
	size_t n = at_exits ? m->n_exits : 1;

	for (size_t k = 0; k < n; k++) {
		offs[k] = plan_probe_uprobe_offset(m, at_exits ? m->exit_offsets[k] : m->offset);
		cookies[k] = m->id;
	}
	return n;
}

/* The whole link was refused: the kernel does not say for which offset, so
 * each member is tried alone (and let go at once) to name the one at fault. */
static void name_refused_member(const struct instance *in, int prog_fd, bool at_exits,
				bool retprobe, pid_t pid, struct err *err)
{
	for (size_t i = 0; i < in->n_members; i++) {
		const struct plan_probe *m = in->members[i];
		size_t most = at_exits ? m->n_exits : 1;
		uint64_t *offs = malloc((most ? most : 1) * 2 * sizeof(*offs));
		struct err alone = { 0 };
		int fd, rc;

		if (!offs)
			return;
		size_t n = member_sites(m, at_exits, offs, offs + most);
		rc = uprobe_attach_multi_n(plan_probe_uprobe_file(m), offs, offs + most, (uint32_t)n, retprobe, pid,
					   prog_fd, &fd, &alone);
		free(offs);
		if (rc == 0) {
			close(fd);
			continue;
		}
		*err = alone;
		err_prefix(err, "probe %s (%s, one of %zu sharing a link)", m->program_name,
			   m->desc.method ? m->desc.method : "?", in->n_members);
		return;
	}
}

/* A shared copy (in->n_members > 1): one uprobe_multi link for prog_name over
 * every member's sites, each with its member's id as the cookie. */
static int attach_shared(struct instance *in, const char *prog_name, bool at_exits,
			 bool retprobe, pid_t pid, struct err *err)
{
	const struct plan_probe *p = in->probe;
	int prog_fd = instance_prog_fd(in, prog_name);
	struct attachment *a = &in->atts[in->n_atts];
	size_t n = 0;
	uint64_t *offs, *cookies;
	int rc;

	if (prog_fd < 0)
		return err_set(err, -ENOENT,
			       "probe %s: program %s missing from the embedded object",
			       p->program_name, prog_name);
	for (size_t i = 0; i < in->n_members; i++)
		n += at_exits ? in->members[i]->n_exits : 1;
	if (n == 0)   /* no member has an exit site (none returns): nothing to attach */
		return 0;
	offs = malloc(n * sizeof(*offs));
	cookies = malloc(n * sizeof(*cookies));
	if (!offs || !cookies) {
		free(offs);
		free(cookies);
		return err_set(err, -ENOMEM, "out of memory");
	}
	n = 0;
	for (size_t i = 0; i < in->n_members; i++)
		n += member_sites(in->members[i], at_exits, offs + n, cookies + n);
	memset(a, 0, sizeof(*a));
	rc = uprobe_attach_multi_n(plan_probe_uprobe_file(p), offs, cookies, (uint32_t)n, retprobe, pid, prog_fd,
				   &a->perf_fd, err);
	free(offs);
	free(cookies);
	if (rc < 0) {
		name_refused_member(in, prog_fd, at_exits, retprobe, pid, err);
		return rc;
	}
	a->n_places = (uint32_t)n;
	in->n_atts++;
	return 0;
}

/* attach_instance_pid for a shared copy: the return half first, as below. */
static int attach_shared_pid(struct instance *in, pid_t pid, struct err *err)
{
	const struct plan_probe *p = in->probe;
	const struct catalog_program *cp = p->prog;
	int rc = grow_atts(in, 2, err);

	if (rc == 0)
		rc = attach_shared(in, p->exit_probes ? cp->exit : cp->name, p->exit_probes,
				   !p->exit_probes && cp->is_return, pid, err);
	if (rc == 0 && probe_entry_prog(p))
		rc = attach_shared(in, probe_entry_prog(p), false, false, pid, err);
	return rc;
}

static void detach_one(struct session *s, struct attachment *a)
{
	if (a->tracefs)
		tracefs_detach(&s->tfs, &a->tp);   /* closes tp.perf_fd unless -1 */
	else if (a->perf_fd >= 0)
		close(a->perf_fd);
}

/* Probe p's places in copy in, a perf event each (or a uprobe_multi link of
 * one offset). */
static int attach_places(struct session *s, struct instance *in, const struct plan_probe *p,
			 pid_t pid, struct err *err)
{
	const struct catalog_program *cp = p->prog;
	int rc = grow_atts(in, 2 + p->n_exits, err);

	/* The return half first, so no entry is stored without its exit. */
	if (p->exit_probes) {
		for (uint32_t i = 0; rc == 0 && i < p->n_exits; i++)
			rc = attach_one(s, in, p, cp->exit, p->exit_offsets[i], false, pid, err);
	} else if (rc == 0) {
		rc = attach_one(s, in, p, cp->name, p->offset, cp->is_return, pid, err);
	}
	if (rc == 0 && probe_entry_prog(p))
		rc = attach_one(s, in, p, probe_entry_prog(p), p->offset, false, pid, err);
	return rc;
}

int attach_instance_pid(struct session *s, struct instance *in, pid_t pid,
			       struct err *err)
{
	int rc = 0;

	if (in->n_members > 1 && s->use_multi)
		return attach_shared_pid(in, pid, err);
	/* A shared copy on perf events: each member's places, its id the cookie. */
	for (size_t i = 0; rc == 0 && i < in->n_members; i++)
		rc = attach_places(s, in, in->members[i], pid, err);
	return rc;
}

int attach_instance(struct session *s, struct instance *in, const struct plan_task *task,
			   struct err *err)
{
	bool once = task->all_processes || task->n_pids > PER_PID_ATTACH_MAX;
	size_t n = once ? 1 : task->n_pids;
	int rc;

	for (size_t i = 0; i < n; i++) {
		rc = attach_instance_pid(s, in, once ? -1 : task->pids[i], err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Detaches the attachments beyond the first `keep`. */
void detach_instance_from(struct session *s, struct instance *in, size_t keep)
{
	while (in->n_atts > keep)
		detach_one(s, &in->atts[--in->n_atts]);
}

void detach_instance(struct session *s, struct instance *in)
{
	detach_instance_from(s, in, 0);
	free(in->atts);
	in->atts = NULL;
}

/* Closing a uprobe waits for the kernel's RCU grace periods (≈100 ms each
 * on this machine class).  uprobe_multi links closed from several threads
 * wait together (128 links: 0.16 s); perf events still wait one after the
 * other (the kernel holds event_mutex across the wait), 18 s for 128. */
#define CLOSE_THREADS 32

struct fd_closer {
	const int *fds;
	size_t n, first, step;
};

static void *close_slice(void *arg)
{
	const struct fd_closer *c = arg;
	for (size_t i = c->first; i < c->n; i += c->step)
		close(c->fds[i]);
	return NULL;
}

static void close_in_parallel(const int *fds, size_t n)
{
	pthread_t th[CLOSE_THREADS];
	struct fd_closer c[CLOSE_THREADS];
	size_t step = n < CLOSE_THREADS ? n : CLOSE_THREADS, started = 0;

	if (n < 4) {
		for (size_t i = 0; i < n; i++)
			close(fds[i]);
		return;
	}
	for (size_t k = 0; k < step; k++) {
		c[k] = (struct fd_closer){ .fds = fds, .n = n, .first = k, .step = step };
		if (pthread_create(&th[k], NULL, close_slice, &c[k]) != 0)
			break;
		started++;
	}
	for (size_t k = started; k < step; k++)   /* threads we could not start */
		close_slice(&c[k]);
	for (size_t k = 0; k < started; k++)
		pthread_join(th[k], NULL);
}

/* The final detach hands the perf events (uprobe PMU or tracefs) to the
 * closer past this many: each takes the kernel 50-100 ms, one after the
 * other (closer.h).  uprobe_multi links are closed here unless they hold
 * more uprobes than CLOSE_HERE_MAX_PLACES: 10,000 probes' took 0.2-0.4 s on
 * a quiet machine, 1.5 s on a busy one. */
#define CLOSE_HERE_MAX 4
#define CLOSE_HERE_MAX_PLACES 1000

/* Every attachment's descriptor of task_index (or all, task_index < 0),
 * forgotten by its attachment (and, with forget_events, its tracefs event:
 * the closer removes those). */
static size_t take_fds(struct session *s, long task_index, int *fds, bool forget_events)
{
	size_t n = 0;

	for (size_t i = 0; i < s->n_instances; i++) {
		struct instance *in = &s->instances[i];
		if (task_index >= 0 && (!in->probe || in->probe->desc.task_index != task_index))
			continue;
		for (size_t k = 0; k < in->n_atts; k++) {
			struct attachment *a = &in->atts[k];
			if (a->perf_fd >= 0)
				fds[n++] = a->perf_fd;
			a->perf_fd = -1;
			a->tp.perf_fd = -1;
			a->tracefs &= !forget_events;
		}
	}
	return n;
}

/* The closer takes every attachment: returns its pid, or -errno with
 * nothing changed. */
static pid_t hand_over(struct session *s, size_t n_atts)
{
	int *fds = malloc(n_atts * sizeof(int)), release;
	bool tracefs = false;
	size_t n = 0;
	pid_t pid = -ENOMEM;

	for (size_t i = 0; fds && i < s->n_instances; i++)
		for (size_t k = 0; k < s->instances[i].n_atts; k++) {
			const struct attachment *a = &s->instances[i].atts[k];
			fds[n++] = a->perf_fd;
			tracefs |= a->tracefs;
		}
	struct closer_job job = { .fds = fds, .n_fds = n,
				  .tracefs_dir = tracefs ? s->tfs.dir : NULL,
				  .group = s->tfs.group };
	if (fds)
		pid = closer_start(&job, &release);
	if (pid > 0) {
		/* Ours are not the last references: these closes are cheap. */
		n = take_fds(s, -1, fds, true);
		for (size_t i = 0; i < n; i++)
			close(fds[i]);
		close(release);
	}
	free(fds);
	return pid;
}

/* Detaches every instance of task_index (or all, with task_index < 0): the
 * perf events are closed together, then tracefs events are removed. */
void detach_where(struct session *s, long task_index)
{
	size_t n = 0;
	int *fds;

	for (size_t i = 0; i < s->n_instances; i++)
		n += s->instances[i].n_atts;
	fds = malloc((n ? n : 1) * sizeof(int));
	n = fds ? take_fds(s, task_index, fds, false) : 0;
	close_in_parallel(fds, n);
	free(fds);
	/* Without memory for the list the fds are still open: close them in turn. */
	for (size_t i = 0; i < s->n_instances; i++) {
		struct instance *in = &s->instances[i];
		if (task_index < 0 || (in->probe && in->probe->desc.task_index == task_index))
			detach_instance(s, in);
	}
}

typedef int (*attach_pass)(struct session *s, const void *ctx, struct err *err);

/* On tracefs an attach runs twice: a first pass lists the events its places
 * need, the second creates them TFS_CHUNK at a time (many lines a write,
 * not one write and one open of uprobe_events each) and opens each.  Events created and
 * not opened (a failure on the way) are removed; the first pass attaches
 * nothing, so a failure there leaves nothing either. */
static int attach_in_passes(struct session *s, attach_pass pass, const void *ctx,
			    struct err *err)
{
	int rc;

	if (!s->use_tracefs)
		return pass(s, ctx, err);
	s->tfs_n = s->tfs_next = s->tfs_created = 0;
	s->tfs_listing = true;
	rc = pass(s, ctx, err);
	s->tfs_listing = false;
	if (rc == 0)
		rc = pass(s, ctx, err);
	tracefs_remove(&s->tfs, s->tfs_events + s->tfs_next, s->tfs_created - s->tfs_next);
	free(s->tfs_events);
	s->tfs_events = NULL;
	s->tfs_n = s->tfs_cap = s->tfs_next = s->tfs_created = 0;
	return rc;
}

struct task_pid {
	uint32_t task_index;
	pid_t pid;
};

static int attach_task_pid_pass(struct session *s, const void *ctx, struct err *err)
{
	const struct task_pid *tp = ctx;
	int rc = 0;

	for (size_t i = 0; i < s->n_instances && rc == 0; i++)
		if (s->instances[i].probe->desc.task_index == tp->task_index)
			rc = attach_instance_pid(s, &s->instances[i], tp->pid, err);
	return rc;
}

int session_attach_task_pid(struct session *s, uint32_t task_index, pid_t pid, struct err *err)
{
	size_t before[s->n_instances ? s->n_instances : 1];
	const struct task_pid tp = { task_index, pid };
	int rc;

	for (size_t i = 0; i < s->n_instances; i++)
		before[i] = s->instances[i].n_atts;
	rc = attach_in_passes(s, attach_task_pid_pass, &tp, err);
	if (rc < 0) /* All or nothing for this process. */
		for (size_t i = 0; i < s->n_instances; i++)
			detach_instance_from(s, &s->instances[i], before[i]);
	return rc;
}

/* Whether copy in keeps its programs' descriptors once attached: the
 * primary (libbpf's object owns them) and copies of a task that attaches
 * later processes (a process it waits for). */
static bool keeps_programs(const struct session *s, const struct instance *in)
{
	return in->obj || s->plan->tasks[in->probe->desc.task_index].wait_for_start;
}

/* A secondary copy whose places are all attached lets go of its programs:
 * the perf events and links hold them (and their maps), so a probe that is
 * a copy of its own (kernels without perf links) takes one descriptor a
 * place, not one more for its program. */
static void release_programs(const struct session *s, struct instance *in)
{
	if (keeps_programs(s, in))
		return;
	for (int k = 0; k < 2; k++) {
		if (in->prog_fd[k] >= 0)
			close(in->prog_fd[k]);
		in->prog_fd[k] = -1;
	}
}

static int attach_all_pass(struct session *s, const void *ctx, struct err *err)
{
	int rc;

	(void)ctx;
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
		if (!s->tfs_listing)
			release_programs(s, &s->instances[i]);
	}
	return 0;
}

int session_attach(struct session *s, struct err *err)
{
	return attach_in_passes(s, attach_all_pass, NULL, err);
}

/* ---- the descriptors a run needs, counted before anything is loaded ---- */

/* Descriptors every run holds besides its places and programs (stdio,
 * outputs, epoll, signalfd, timers, tracefs files), and per object (a
 * primary copy's maps and BTF; libbpf's transient ones while loading a
 * secondary).  Measured: 100 places of one object peak at 128 descriptors,
 * 10 at 38; the estimate errs a little high. */
#define FDS_BASE 16
#define FDS_PER_OBJECT 16

/* The places (perf events or links) copy in takes for one process. */
static size_t places_per_process(const struct session *s, const struct instance *in)
{
	size_t n = 0;

	if (s->use_multi && in->n_members > 1)   /* a link per program */
		return probe_entry_prog(in->probe) ? 2 : 1;
	for (size_t i = 0; i < in->n_members; i++) {
		const struct plan_probe *p = in->members[i];
		n += (p->exit_probes ? p->n_exits : 1) + (probe_entry_prog(p) ? 1 : 0);
	}
	return n;
}

static size_t processes_of(const struct plan_task *t)
{
	if (t->all_processes || t->wait_for_start || t->n_pids > PER_PID_ATTACH_MAX)
		return 1;
	return t->n_pids;
}

/* Whether copy i is the first of its object (loaded as the primary). */
static bool first_of_object(const struct session *s, size_t i, const void **seen,
			    size_t *n_seen)
{
	const void *obj = s->instances[i].probe->obj;

	for (size_t k = 0; k < *n_seen; k++)
		if (seen[k] == obj)
			return false;
	if (*n_seen < s->n_objects)
		seen[(*n_seen)++] = obj;
	return true;
}

/* Call stacks read the kernel's mapping records (sys/perf_mmap): one dummy
 * perf event per CPU, opened after loading and held through the attach. */
size_t session_mmap_fds(const struct session *s)
{
	for (size_t i = 0; i < s->plan->n_probes; i++)
		if (s->plan->probe_by_id[i]->stack_mode)
			return (size_t)(s->ncpus > 0 ? s->ncpus : 1);
	return 0;
}

/* The most descriptors open at once: every copy's programs after loading,
 * then while attaching, at copy i, the places of copies 0..i, the programs
 * of copies i.. not yet let go and those kept; and the mapping records'
 * events. */
size_t session_fds_needed(const struct session *s, size_t *places)
{
	const void *seen[s->n_objects ? s->n_objects : 1];
	size_t progs_left = 0, held = 0, most, rings = 0, n_seen = 0;

	*places = 0;
	for (size_t i = 0; i < s->n_instances; i++)
		progs_left += probe_entry_prog(s->instances[i].probe) ? 2 : 1;
	most = progs_left;
	for (size_t i = 0; i < s->n_instances; i++) {
		const struct instance *in = &s->instances[i];
		const struct plan_task *t = &s->plan->tasks[in->probe->desc.task_index];
		size_t progs = probe_entry_prog(in->probe) ? 2 : 1;
		size_t n = places_per_process(s, in) * processes_of(t);

		*places += n;
		held += n;
		if (held + progs_left > most)
			most = held + progs_left;
		progs_left -= progs;
		if (first_of_object(s, i, seen, &n_seen) || t->wait_for_start)
			held += progs;
	}
	for (size_t o = 0; o < s->n_objects; o++)
		for (size_t r = 0; r < sizeof(s->objects[o].ring_used) / sizeof(bool); r++)
			rings += s->objects[o].ring_used[r];
	return most + FDS_BASE + FDS_PER_OBJECT * s->n_objects +
	       rings * (size_t)(s->ncpus > 0 ? s->ncpus + 1 : 2) + session_mmap_fds(s);
}

/* Returns once every BPF program that may have started before now has
 * finished: the kernel answers an update of a map-in-map only after
 * synchronize_rcu() (4.19+), which waits for them (non-sleepable programs
 * run inside an RCU read section).  Older kernels return at once; a program
 * runs for microseconds, so a millisecond's sleep covers them. */
static void wait_for_running_programs(void)
{
	int inner = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, 4, 1, NULL), outer = -1;
	uint32_t zero = 0;

	if (inner >= 0) {
		LIBBPF_OPTS(bpf_map_create_opts, o, .inner_map_fd = (uint32_t)inner);
		outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, NULL, 4, 4, 1, &o);
	}
	if (outer < 0 || bpf_map_update_elem(outer, &zero, &inner, BPF_ANY) < 0)
		usleep(1000);
	if (outer >= 0)
		close(outer);
	if (inner >= 0)
		close(inner);
}

void session_stop(struct session *s)
{
	uint32_t zero = 0, one = 1;

	for (size_t i = 0; i < s->n_objects; i++) {
		struct bpf_map *m = s->objects[i].primary
			? bpf_object__find_map_by_name(s->objects[i].primary, CATALOG_MAP_STOP)
			: NULL;
		if (m)
			bpf_map_update_elem(bpf_map__fd(m), &zero, &one, BPF_ANY);
	}
	wait_for_running_programs();
}

void session_detach_task(struct session *s, uint32_t task_index)
{
	detach_where(s, (long)task_index);
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

pid_t session_detach_all(struct session *s)
{
	size_t n = session_link_count(s);
	pid_t pid = 0;

	if (n && ((!s->use_multi && n > CLOSE_HERE_MAX) ||
		  session_attachment_count(s) > CLOSE_HERE_MAX_PLACES))
		pid = hand_over(s, n);
	detach_where(s, -1);   /* what is left: all, or nothing after a hand-over */
	return pid > 0 ? pid : 0;
}
