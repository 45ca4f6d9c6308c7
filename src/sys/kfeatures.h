/* kfeatures.h — which kernel offers what the tool uses, as one table of first
 * versions (mainline; Android's kernels only ever add backports).
 *
 * Three users share the table: --target-kernel (load only what a kernel of
 * that version accepts), the run's choice of objects, output and attach path
 * on this kernel (from probes, never from the version string), and the
 * static check of the legacy objects (probe/objcheck.h: helper and map-type
 * first versions live here too).  Sources: the kernel's own history as
 * summarised in bcc's docs/kernel-versions.md ("BPF Features by Linux Kernel
 * Version"), checked against include/uapi/linux/bpf.h of the vendored libbpf
 * for the helper numbering. */
#ifndef UPROBESTATS_SYS_KFEATURES_H
#define UPROBESTATS_SYS_KFEATURES_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"

#define KVER(major, minor) ((unsigned)(major) << 8 | (unsigned)(minor))
#define KVER_MAJOR(v) ((v) >> 8)
#define KVER_MINOR(v) ((v) & 0xff)

/* The oldest kernel the tool supports: the legacy objects are built and
 * checked (make test) against it.  docs/requirements.md says the same. */
#define KF_OLDEST_KERNEL KVER(4, 14)

enum kfeature {            /* in the order of their first kernel */
	KF_BPF_CALLS,         /* BPF-to-BPF calls */
	KF_UPROBE_PMU,        /* perf_event_open on the uprobe PMU (else tracefs) */
	KF_BTF,               /* BTF loaded into the kernel */
	KF_GLOBAL_DATA,       /* .rodata/.data/.bss maps */
	KF_LARGE_PROGS,       /* 1M verified instructions, no 4,096-instruction cap */
	KF_BOUNDED_LOOPS,     /* back-edges */
	KF_PROBE_READ_USER,   /* bpf_probe_read_user{,_str} */
	KF_RINGBUF,           /* BPF_MAP_TYPE_RINGBUF */
	KF_CAP_BPF,           /* CAP_BPF + CAP_PERFMON instead of CAP_SYS_ADMIN */
	KF_UPROBE_MULTI,      /* uprobe_multi links filtering by process */
	KF_COUNT
};

struct kfeatures {
	bool has[KF_COUNT];
	unsigned target;      /* KVER of --target-kernel, 0: this kernel, probed */
	bool probed;          /* the probes ran */
	bool denied;          /* the BPF probes were refused (EPERM): results unknown */
};

/* "ring buffer", and the first kernel that has it. */
const char *kfeature_name(enum kfeature f);
unsigned kfeature_since(enum kfeature f);

/* "4.14", "4.19.157", "5.4.0-android12-9" -> KVER(major, minor); refuses
 * versions older than KF_OLDEST_KERNEL or not of that form. */
int kfeatures_parse_version(const char *s, unsigned *kver, struct err *err);

/* What a kernel of version kver has, from the table. */
void kfeatures_for_version(unsigned kver, struct kfeatures *out);

/* This kernel's features from probes (BPF map and helper probes, sysfs, the
 * capability count); uprobe_multi is asked through multi (probe/attach.h,
 * 0 when present).  Features with no probe of their own are implied by a
 * newer probed one. */
void kfeatures_probe(struct kfeatures *out, int (*multi)(struct err *err));

/* Both: what this kernel has and a kernel of `target` would have. */
void kfeatures_intersect(struct kfeatures *k, const struct kfeatures *target);

/* True when the normal objects cannot load (no global data or no
 * bpf_probe_read_user); *missing (may be NULL) is the first one missing. */
bool kfeatures_need_legacy(const struct kfeatures *k, enum kfeature *missing);

/* First kernel of BPF helper `id` (include/uapi/linux/bpf.h numbering), or
 * 0 when the table does not know it (newer than it covers). */
unsigned kfeatures_helper_since(int id, const char **name);
/* First kernel of map type `type`, 0 when unknown. */
unsigned kfeatures_map_type_since(unsigned type, const char **name);

#endif
