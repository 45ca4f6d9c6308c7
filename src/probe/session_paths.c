/* session_paths.c — the paths a session takes, chosen once before loading:
 * how probes attach (uprobe_multi links, the uprobe PMU or tracefs) and
 * where records go (ring buffer or perf buffer, and its size). */
#include <bpf/libbpf.h>
#include <errno.h>

#include "probe/closer.h"
#include "probe/session_priv.h"

#define DEFAULT_RINGBUF_BYTES (4u << 20)
/* With --stack a record carries the copied stack (2 KiB by default, up to
 * 16 KiB), so the default buffer holds more bytes for as many records. */
#define DEFAULT_STACK_RINGBUF_BYTES (16u << 20)

static uint32_t round_pow2(uint32_t v)
{
	uint32_t p = 4096;
	while (p < v && p < (1u << 30))
		p <<= 1;
	return p;
}

/* uprobe_multi links (6.6+, filtering by process) unless a perf event path
 * is forced; else the uprobe PMU (4.17+) unless it is missing or tracefs is
 * forced, its events bound through perf links with cookies where the kernel
 * has them (5.15+), so probes share program copies there too.  Stale tracefs events of killed runs are removed whenever tracefs
 * is there. */
int session_choose_attach(struct session *s, const struct session_opts *opts,
			  struct uprobe_pmu *pmu, struct err *err)
{
	struct err pmu_err = { 0 }, tfs_err = { 0 }, multi_err = { 0 };
	int pmu_rc = uprobe_pmu_detect(pmu, &pmu_err);
	int tfs_rc = tracefs_open(&s->tfs, opts->tracefs_root, &tfs_err);

	if (tfs_rc == 0)
		tracefs_remove_stale(&s->tfs, opts->proc_dir ? opts->proc_dir : "/proc",
				     CLOSER_COMMAND, NULL);
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
	s->perf_cookies = !opts->no_perf_link && perf_link_detect() == 0;
	return 0;
}

int session_choose_output(struct session *s, const struct session_opts *opts, struct err *err)
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
