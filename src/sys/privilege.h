/* privilege.h — may this process load BPF programs and open uprobe perf
 * events?  Checked before anything is attached, so a refusal is one line that
 * says what is missing and how to get it, instead of an EPERM from deep
 * inside the attach code.
 *
 * Facts come from <proc>/self/status (Uid, CapEff; capget(2) when it cannot
 * be read), the kernel release (CAP_BPF/CAP_PERFMON exist from 5.8), SELinux
 * (<sys>/fs/selinux/enforce and <proc>/self/attr/current) and the sysctls
 * kernel.perf_event_paranoid and kernel.unprivileged_bpf_disabled. */
#ifndef UPROBESTATS_SYS_PRIVILEGE_H
#define UPROBESTATS_SYS_PRIVILEGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sys/properties.h"
#include "sys/sysroot.h"

#define PRIV_CAP_SYS_ADMIN 21
#define PRIV_CAP_PERFMON 38
#define PRIV_CAP_BPF 39

#define PRIV_UNKNOWN (-1000)   /* a number that could not be read */

struct priv_facts {
	long euid;                 /* PRIV_UNKNOWN if unreadable */
	bool caps_known;
	uint64_t cap_eff;
	char kernel_release[128];  /* "" if unknown */
	unsigned kmajor, kminor;   /* 0.0 if unknown */
	int selinux;               /* 1 enforcing, 0 permissive, -1 no SELinux */
	char selinux_context[128]; /* "u:r:su:s0"; "" if unknown */
	long perf_event_paranoid;  /* PRIV_UNKNOWN if unreadable */
	long unprivileged_bpf_disabled;
};

enum priv_verdict {
	PRIV_OK = 0,      /* everything needed is there */
	PRIV_WARN,        /* probably works; the line says what may still refuse */
	PRIV_DENIED,      /* cannot work: do not try to attach */
};

struct priv_report {
	enum priv_verdict verdict;
	bool caps_ok;                /* CAP_SYS_ADMIN, or CAP_BPF+CAP_PERFMON on 5.8+ */
	char line[512];              /* one line, no newline: the verdict explained */
};

/* Parses the text of /proc/<pid>/status: effective uid (second Uid field) and
 * CapEff.  Missing fields stay as they were; returns the number found (0..2). */
int priv_parse_status(const char *text, size_t len, long *euid, uint64_t *cap_eff);

/* Reads every fact (never fails: what cannot be read is marked unknown). */
void priv_gather(const struct sys_paths *paths, struct priv_facts *f);

/* The verdict for these facts.  android may be NULL (or !on_android): the
 * hints then speak of sudo/setcap instead of adb root/su. */
void priv_evaluate(const struct priv_facts *f, const struct android_info *android,
		   struct priv_report *r);

/* priv_gather + priv_evaluate: the check to run before attaching anything. */
void priv_check(const struct sys_paths *paths, const struct android_info *android,
		struct priv_report *r);

bool priv_has_cap(const struct priv_facts *f, int cap);
const char *priv_verdict_name(enum priv_verdict v);

/* The SELinux type of the context ("su" in "u:r:su:s0"), into buf. */
const char *priv_selinux_domain(const struct priv_facts *f, char *buf, size_t size);

#endif
