/* session_priv.h — what the parts of a session share: session.c (loading
 * the instances, their maps and output buffers), session_paths.c (the
 * attach path and output mode), session_share.c (which probes share a
 * copy), session_kwalk.c (the kernel walk's table), session_attach.c
 * (attaching and detaching: links, perf events, tracefs events, closing them
 * together) and session_counters.c (reading the counters back).  Not for
 * other modules: they use session.h. */
#ifndef UPROBESTATS_PROBE_SESSION_PRIV_H
#define UPROBESTATS_PROBE_SESSION_PRIV_H

#include <bpf/libbpf.h>
#include <stdbool.h>
#include <stddef.h>

#include "probe/attach.h"
#include "probe/session.h"
#include "probe/tracefs_uprobe.h"
#include "stack/kwalk.h"

/* Up to this many processes get their own uprobe each; past it one uprobe
 * serves all and the program filters by pid. */
#define PER_PID_ATTACH_MAX 8

/* One attachment running a program: a uprobe_multi link, a perf event
 * through the uprobe PMU, or a perf event through a tracefs uprobe_events
 * entry that must be removed again. */
struct attachment {
	int perf_fd;              /* the link or perf event */
	bool tracefs;
	uint32_t n_places;        /* uprobes it holds: 1, or a shared copy's link's offsets */
	struct tracefs_probe tp;
};

/* One loaded copy of an object, for one probe, or shared by the probes of
 * one task that run the same program with the same config on the same file
 * (with uprobe_multi links: one link per program over all their offsets,
 * each offset's cookie its probe's id; trace over a whole class or library).
 * A secondary copy keeps only its loaded programs (their maps live on in the
 * kernel through them): the object and its ~13 map descriptors are closed
 * after loading, so thousands of probes fit the descriptor limit. */
struct instance {
	struct bpf_object *obj;           /* the primary's; NULL once a secondary is loaded */
	int prog_fd[2];                   /* secondary: the main and the entry program */
	const char *prog_name[2];
	const struct plan_probe *probe;   /* the first member: program, file, task */
	const struct plan_probe **members; /* into session.members */
	size_t n_members;                 /* > 1: a shared copy, ids from cookies */
	struct attachment *atts;
	size_t n_atts;
};

/* Per object used by the plan: the primary instance owns the shared maps. */
struct object_state {
	const struct catalog_object *cat;
	void *elf;                  /* the object decoded once, read by every instance */
	size_t elf_size;
	struct bpf_object *primary;
	bool ring_used[8];
};

struct session {
	bool (*interrupted)(void);
	enum output_mode mode;
	bool legacy;
	struct uprobe_pmu pmu;
	bool use_multi;
	bool use_tracefs;
	/* Perf events (uprobe PMU or tracefs) bound through BPF perf links with
	 * cookies (5.15+): probes share a copy as with uprobe_multi links. */
	bool perf_cookies;
	struct tracefs tfs;
	/* tracefs: the events one attach creates before it opens them
	 * (session_attach.c's attach_in_passes). */
	struct tracefs_event *tfs_events;
	size_t tfs_n, tfs_cap, tfs_next, tfs_created;
	bool tfs_listing;
	uint32_t ring_bytes, wakeup_bytes;
	struct instance *instances;
	size_t n_instances;
	const struct plan_probe **members; /* every probe, grouped by instance */
	struct object_state *objects;
	size_t n_objects;
	struct session_ring *rings;
	size_t n_rings;
	const struct plan *plan;
	int ncpus;
	struct kwalk_table kwalk;  /* --stack-mode kernel (stack/kwalk.h) */
	struct code_cache *code;   /* when a probe records stacks (code/codecache.h) */
};

/* session.c */
const char *probe_entry_prog(const struct plan_probe *p);
int instance_prog_fd(const struct instance *in, const char *prog_name);

/* session_paths.c: s->use_multi / s->use_tracefs (the PMU's type in *pmu),
 * and s->mode with the buffer sizes. */
int session_choose_attach(struct session *s, const struct session_opts *opts,
			  struct uprobe_pmu *pmu, struct err *err);
int session_choose_output(struct session *s, const struct session_opts *opts, struct err *err);

/* session_share.c: s->members and s->instances, one per copy. */
bool session_shares_copies(const struct session *s);
int session_group_probes(struct session *s, const struct plan *plan, struct err *err);

/* session_kwalk.c: the table when a probe walks in the kernel (before
 * loading: the map's size), then the object's map filled (after). */
int session_build_kwalk(struct session *s, const struct plan *plan,
			const struct session_opts *opts, struct err *err);
int session_fill_kwalk(const struct session *s, const struct object_state *os,
		       struct err *err);

/* session_attach.c */
int attach_instance_pid(struct session *s, struct instance *in, pid_t pid, struct err *err);
int attach_instance(struct session *s, struct instance *in, const struct plan_task *task,
		    struct err *err);
/* Detaches the attachments beyond the first `keep`. */
void detach_instance_from(struct session *s, struct instance *in, size_t keep);
void detach_instance(struct session *s, struct instance *in);
/* Every instance of task_index (or all, with task_index < 0). */
void detach_where(struct session *s, long task_index);
/* The most descriptors the run holds at once (loading, attaching: one a
 * place, programs, maps, buffers), and in *places the places; from the
 * grouped instances, before anything is loaded. */
size_t session_fds_needed(const struct session *s, size_t *places);
/* Of those, the mapping records' perf events of --stack (one a CPU), or 0. */
size_t session_mmap_fds(const struct session *s);

#endif
