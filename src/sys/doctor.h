/* doctor.h — `uprobestats doctor`: what this device offers and, for each
 * item, which path the tool will take (ring buffer or perf buffer, uprobe PMU
 * or tracefs, statsd sink or text, guardrail on or off), as aligned text or
 * as JSON.  Every path comes from a struct sys_paths so tests run it against
 * a fixture tree; the one kernel probe that cannot be faked through files
 * (can a BPF ring buffer be created?) is a function pointer. */
#ifndef UPROBESTATS_SYS_DOCTOR_H
#define UPROBESTATS_SYS_DOCTOR_H

#include <stdbool.h>
#include <stdio.h>

#include "common/err.h"

#include "sys/kfeatures.h"
#include "sys/sysroot.h"

/* --guardrail as the CLI parsed it; AUTO applies config/guardrail.h's rule
 * (on for Android user builds and Android builds of unknown type). */
enum doctor_guardrail {
	DOCTOR_GUARDRAIL_AUTO = 0,
	DOCTOR_GUARDRAIL_OFF,
	DOCTOR_GUARDRAIL_ON,
};

struct doctor_opts {
	struct sys_paths paths;
	bool json;
	/* 1: BPF_MAP_TYPE_RINGBUF works, 0: it does not, <0: -errno (could not
	 * tell).  NULL: libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL). */
	int (*probe_ringbuf)(void);
	/* The attach layer can fall back to tracefs uprobe_events when the
	 * uprobe PMU is missing. */
	bool tracefs_fallback;
	/* 0 when uprobe_multi links with process filtering work here, else a
	 * negative errno with the reason in err.  NULL: not checked. */
	int (*probe_uprobe_multi)(struct err *err);
	enum doctor_guardrail guardrail;
	/* This kernel's BPF features (sys/kfeatures.h); NULL: kfeatures_probe()
	 * with probe_uprobe_multi. */
	void (*probe_kernel)(struct kfeatures *out);
};

/* Writes the report to out.  Returns 0 when the tool can run here, 1 when
 * something it needs is missing (the report says what and how to get it). */
int doctor_run(FILE *out, const struct doctor_opts *opts);

#endif
