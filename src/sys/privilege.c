#include "sys/privilege.h"

#include <ctype.h>
#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ---- /proc/self/status ---- */

static const char *skip_blanks(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

/* One unsigned number in base 10 or 16 from [p, end); NULL if none. */
static const char *parse_num(const char *p, const char *end, int base, uint64_t *out)
{
	uint64_t v = 0;
	const char *start = p;

	for (; p < end; p++) {
		int d = isdigit((unsigned char)*p) ? *p - '0'
			: (base == 16 && isxdigit((unsigned char)*p))
				? tolower((unsigned char)*p) - 'a' + 10
				: -1;
		if (d < 0)
			break;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return NULL;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	if (p == start)
		return NULL;
	*out = v;
	return p;
}

static bool line_has_key(const char *line, const char *end, const char *key)
{
	size_t n = strlen(key);

	return (size_t)(end - line) >= n && memcmp(line, key, n) == 0;
}

int priv_parse_status(const char *text, size_t len, long *euid, uint64_t *cap_eff)
{
	const char *p = text, *end = text + len;
	int found = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		uint64_t v;

		if (line_has_key(p, eol, "Uid:")) {
			/* real, effective, saved, fs: the second one decides */
			const char *q = parse_num(skip_blanks(p + 4, eol), eol, 10, &v);
			if (q && parse_num(skip_blanks(q, eol), eol, 10, &v) && v <= INT32_MAX) {
				*euid = (long)v;
				found++;
			}
		} else if (line_has_key(p, eol, "CapEff:")) {
			if (parse_num(skip_blanks(p + 7, eol), eol, 16, &v)) {
				*cap_eff = v;
				found++;
			}
		}
		p = eol + 1;
	}
	return found;
}

/* ---- gathering ---- */

static bool capget_effective(uint64_t *out)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data) < 0)
		return false;
	*out = (uint64_t)data[0].effective | ((uint64_t)data[1].effective << 32);
	return true;
}

static void gather_ids(const struct sys_paths *p, struct priv_facts *f)
{
	char text[8192];
	long euid = PRIV_UNKNOWN;
	uint64_t caps = 0;
	bool have_caps = false;

	if (sys_read_text_at(p->proc, "self/status", text, sizeof(text)) == 0) {
		uint64_t c = UINT64_MAX;
		priv_parse_status(text, strlen(text), &euid, &c);
		if (c != UINT64_MAX) {
			caps = c;
			have_caps = true;
		}
	}
	/* Without /proc (or without those lines) ask the kernel directly. */
	if (euid == PRIV_UNKNOWN)
		euid = (long)geteuid();
	if (!have_caps)
		have_caps = capget_effective(&caps);
	f->euid = euid;
	f->cap_eff = caps;
	f->caps_known = have_caps;
}

static long read_sysctl(const struct sys_paths *p, const char *rel)
{
	long v;

	return sys_read_long_at(p->proc, rel, &v) == 0 ? v : PRIV_UNKNOWN;
}

void priv_gather(const struct sys_paths *paths, struct priv_facts *f)
{
	struct sys_paths p = sys_paths_resolve(paths);
	long enforce;

	memset(f, 0, sizeof(*f));
	gather_ids(&p, f);
	if (sys_kernel_release(&p, f->kernel_release, sizeof(f->kernel_release)) < 0 ||
	    !sys_kernel_version(f->kernel_release, &f->kmajor, &f->kminor))
		f->kmajor = f->kminor = 0;
	f->selinux = sys_read_long_at(p.sys, "fs/selinux/enforce", &enforce) == 0
			     ? (enforce != 0) : -1;
	if (sys_read_text_at(p.proc, "self/attr/current", f->selinux_context,
			     sizeof(f->selinux_context)) < 0)
		f->selinux_context[0] = '\0';
	f->perf_event_paranoid = read_sysctl(&p, "sys/kernel/perf_event_paranoid");
	f->unprivileged_bpf_disabled = read_sysctl(&p, "sys/kernel/unprivileged_bpf_disabled");
}

/* ---- the verdict ---- */

bool priv_has_cap(const struct priv_facts *f, int cap)
{
	return f->caps_known && (f->cap_eff >> cap) & 1;
}

static bool kernel_at_least(const struct priv_facts *f, unsigned major, unsigned minor)
{
	if (f->kmajor == 0)
		return true;   /* unknown: do not refuse on a guess */
	return f->kmajor > major || (f->kmajor == major && f->kminor >= minor);
}

static bool caps_sufficient(const struct priv_facts *f)
{
	if (priv_has_cap(f, PRIV_CAP_SYS_ADMIN))
		return true;
	return kernel_at_least(f, 5, 8) && priv_has_cap(f, PRIV_CAP_BPF) &&
	       priv_has_cap(f, PRIV_CAP_PERFMON);
}

const char *priv_selinux_domain(const struct priv_facts *f, char *buf, size_t size)
{
	/* user:role:type:level — the type is the third field. */
	const char *s = f->selinux_context;
	const char *a = strchr(s, ':'), *b = a ? strchr(a + 1, ':') : NULL;
	const char *c = b ? strchr(b + 1, ':') : NULL;

	if (!c) {
		snprintf(buf, size, "%s", s);
		return buf;
	}
	snprintf(buf, size, "%.*s", (int)(c - b - 1), b + 1);
	return buf;
}

static bool is_android(const struct android_info *a)
{
	return a && a->on_android;
}

static void hint_not_root(const struct priv_facts *f, const struct android_info *a, char *buf,
			  size_t size)
{
	const char *bt = is_android(a) ? a->build_type : "";

	if (!is_android(a))
		snprintf(buf, size, "not root (uid %ld) and no CAP_BPF+CAP_PERFMON: run it with "
			 "sudo, or `setcap cap_bpf,cap_perfmon+ep` on the binary (kernel 5.8+)",
			 f->euid);
	else if (!strcmp(bt, "userdebug") || !strcmp(bt, "eng"))
		snprintf(buf, size, "not root (uid %ld): on this %s build run `adb root` first "
			 "(or run it through `su -c`)", f->euid, bt);
	else if (!strcmp(bt, "user"))
		snprintf(buf, size, "not root (uid %ld): this is a user build, where `adb root` "
			 "is refused: run it through `su -c` on a rooted device (Magisk, KernelSU)",
			 f->euid);
	else
		snprintf(buf, size, "not root (uid %ld): run `adb root` on userdebug/eng builds, "
			 "or `su -c` on a rooted user build", f->euid);
}

static void hint_missing_caps(const struct priv_facts *f, char *buf, size_t size)
{
	if (!kernel_at_least(f, 5, 8) && priv_has_cap(f, PRIV_CAP_BPF))
		snprintf(buf, size, "kernel %u.%u predates CAP_BPF/CAP_PERFMON (5.8): it needs "
			 "CAP_SYS_ADMIN (CapEff=%016llx); as an init service use `capabilities "
			 "SYS_ADMIN`", f->kmajor, f->kminor, (unsigned long long)f->cap_eff);
	else
		snprintf(buf, size, "uid %ld without CAP_SYS_ADMIN or CAP_BPF+CAP_PERFMON "
			 "(CapEff=%016llx): as an init service list `capabilities BPF PERFMON "
			 "SYS_ADMIN`, otherwise run from a full root shell", f->euid,
			 (unsigned long long)f->cap_eff);
}

/* Domains that may use bpf and perf_event under an enforcing policy. */
static bool privileged_domain(const char *d)
{
	static const char *const ok[] = { "su", "magisk", "kernel", "init", NULL };

	for (size_t i = 0; ok[i]; i++)
		if (!strcmp(d, ok[i]))
			return true;
	return false;
}

/* Domains the platform policy never allows to trace. */
static bool confined_domain(const char *d)
{
	return !strcmp(d, "shell") || !strcmp(d, "untrusted_app") ||
	       !strncmp(d, "untrusted_app_", 14) || !strcmp(d, "adbd");
}

static enum priv_verdict check_selinux(const struct priv_facts *f, char *buf, size_t size)
{
	char dom[128];

	if (f->selinux != 1)
		return PRIV_OK;
	priv_selinux_domain(f, dom, sizeof(dom));
	if (dom[0] && privileged_domain(dom))
		return PRIV_OK;
	if (dom[0] && confined_domain(dom)) {
		snprintf(buf, size, "SELinux is enforcing and denies bpf/perf_event_open to the "
			 "%s domain: `setenforce 0` (userdebug) or run it as `su -c`", dom);
		return PRIV_DENIED;
	}
	/* Platform policy has neverallow { domain -bpfloader } *:bpf prog_load,
	 * so only a permissive domain (su on userdebug) gets past it. */
	snprintf(buf, size, "SELinux is enforcing and domain %s may not load BPF programs "
		 "(platform policy allows that only to bpfloader) unless it is permissive: run "
		 "as su, or `setenforce 0` on userdebug", dom[0] ? dom : "(unknown)");
	return PRIV_WARN;
}

static void summary(const struct priv_facts *f, char *buf, size_t size)
{
	char dom[128];
	const char *caps = priv_has_cap(f, PRIV_CAP_SYS_ADMIN) ? "CAP_SYS_ADMIN"
								: "CAP_BPF+CAP_PERFMON";

	if (f->selinux == 1)
		snprintf(buf, size, "uid %ld with %s; SELinux enforcing, domain %s", f->euid, caps,
			 priv_selinux_domain(f, dom, sizeof(dom)));
	else
		snprintf(buf, size, "uid %ld with %s; SELinux %s", f->euid, caps,
			 f->selinux == 0 ? "permissive" : "absent");
}

void priv_evaluate(const struct priv_facts *f, const struct android_info *android,
		   struct priv_report *r)
{
	memset(r, 0, sizeof(*r));
	r->caps_ok = caps_sufficient(f);
	if (!r->caps_ok) {
		r->verdict = PRIV_DENIED;
		if (f->euid != 0)
			hint_not_root(f, android, r->line, sizeof(r->line));
		else
			hint_missing_caps(f, r->line, sizeof(r->line));
		return;
	}
	r->verdict = check_selinux(f, r->line, sizeof(r->line));
	if (r->verdict != PRIV_OK)
		return;
	/* Android's perf_event_paranoid=3 patch checks CAP_SYS_ADMIN on older
	 * kernels even for holders of CAP_PERFMON. */
	if (!priv_has_cap(f, PRIV_CAP_SYS_ADMIN) && f->perf_event_paranoid >= 3) {
		r->verdict = PRIV_WARN;
		snprintf(r->line, sizeof(r->line), "kernel.perf_event_paranoid=%ld without "
			 "CAP_SYS_ADMIN: some Android kernels refuse perf_event_open then; add "
			 "SYS_ADMIN or `setprop security.perf_harden 0`", f->perf_event_paranoid);
		return;
	}
	summary(f, r->line, sizeof(r->line));
}

void priv_check(const struct sys_paths *paths, const struct android_info *android,
		struct priv_report *r)
{
	struct priv_facts f;

	priv_gather(paths, &f);
	priv_evaluate(&f, android, r);
}

const char *priv_verdict_name(enum priv_verdict v)
{
	switch (v) {
	case PRIV_OK: return "ok";
	case PRIV_WARN: return "warning";
	default: return "denied";
	}
}
