/* attach.h — one uprobe or uretprobe on (file, offset) for one pid (or every
 * process), running one BPF program.
 *
 * The preferred path is the uprobe PMU: perf_event_open() with the PMU type
 * from sysfs, config1 = path, config2 = file offset, then
 * PERF_EVENT_IOC_SET_BPF.  Per-pid events make the kernel install the
 * breakpoint only in the target's address space, so other processes that map
 * the same file pay nothing.
 *
 * On 6.6+ kernels whose uprobe_multi links filter by process (libbpf's test:
 * a negative pid is refused with EINVAL), a BPF link of one offset is used
 * instead: the same per-process breakpoint, but its teardown does not hold
 * the tracing event_mutex, so closing many links from several threads takes
 * one RCU grace period instead of one each (100 probes: 10 s -> 0.2 s). */
#ifndef UPROBESTATS_PROBE_ATTACH_H
#define UPROBESTATS_PROBE_ATTACH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

struct uprobe_pmu {
	int type;            /* PMU type id, -1 when the uprobe PMU is missing */
	int retprobe_bit;    /* config bit that makes it a uretprobe */
};

/* Reads /sys/bus/event_source/devices/uprobe/{type,format/retprobe}. */
int uprobe_pmu_detect(struct uprobe_pmu *pmu, struct err *err);

/* strerror() for an attach failure, with the kernel-internal codes spelled
 * out: ENOTSUPP (524) is the uprobe refusing the instruction at the offset,
 * which strerror() calls "No error information". */
const char *uprobe_strerror(int e);
#define UPROBE_ENOTSUPP 524

/* Binds prog_fd to the perf event perf_fd and enables it.  Without a
 * cookie: PERF_EVENT_IOC_SET_BPF (4.14+), and perf_fd is what to keep.  With
 * one: a BPF perf link (5.15+) whose bpf_get_attach_cookie() is *cookie (the
 * probe id of a shared program copy); the link holds the event, so perf_fd is
 * closed and the link is what to keep: one descriptor a place either way.
 * Returns that descriptor, or -errno with perf_fd closed. */
int perf_event_bind(int perf_fd, int prog_fd, const uint64_t *cookie);

/* 0 when this kernel has BPF perf links with cookies (5.15+). */
int perf_link_detect(void);

/* Opens, binds prog_fd (perf_event_bind: cookie NULL or the place's cookie)
 * and enables; *out_fd is the one descriptor to close on detach.  pid < 0
 * means every process. */
int uprobe_attach_pmu(const struct uprobe_pmu *pmu, const char *path, uint64_t offset,
		      bool retprobe, pid_t pid, int prog_fd, const uint64_t *cookie, int *out_fd,
		      struct err *err);

/* BPF_TRACE_UPROBE_MULTI, from a uapi newer than the headers we build with. */
#define UPS_ATTACH_UPROBE_MULTI 48

/* 0 when this kernel has uprobe_multi links with process filtering;
 * otherwise a negative errno and, in err, why not. */
int uprobe_multi_detect(struct err *err);

/* A uprobe_multi link of one offset for prog_fd (loaded with expected
 * attach type UPS_ATTACH_UPROBE_MULTI); *out_fd is the link.  pid < 0 means
 * every process. */
int uprobe_attach_multi(const char *path, uint64_t offset, bool retprobe, pid_t pid,
			int prog_fd, int *out_fd, struct err *err);

/* One uprobe_multi link over n offsets of path, offset k's BPF attach cookie
 * being cookies[k] (the probe id of a shared program copy).  All or nothing:
 * the kernel refuses the whole link when one offset fails, so the caller
 * tries the offsets alone to name the one at fault. */
int uprobe_attach_multi_n(const char *path, const uint64_t *offsets, const uint64_t *cookies,
			  uint32_t n, bool retprobe, pid_t pid, int prog_fd, int *out_fd,
			  struct err *err);

#endif
