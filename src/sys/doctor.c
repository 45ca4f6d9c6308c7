#include "sys/doctor.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "common/mapfile.h"
#include "config/guardrail.h"
#include "sys/privilege.h"
#include "sys/properties.h"
#include "vocab/json_out.h"

enum status { ST_OK, ST_INFO, ST_WARN, ST_FAIL };

#define MAX_ROWS 24

struct row {
	const char *key;      /* JSON name */
	const char *label;    /* text column */
	enum status st;
	char found[384];      /* what the device has */
	char uses[160];       /* what the tool will do with it */
};

struct report {
	struct row rows[MAX_ROWS];
	size_t n;
	bool ready;
};

/* The facts several checks share, read once. */
struct facts {
	const struct doctor_opts *o;
	struct sys_paths p;
	struct android_info android;
	struct priv_facts priv;
	struct priv_report verdict;
	struct mapped_file mounts;   /* <proc>/mounts; size 0 when unreadable */
	struct kfeatures k;          /* probed, never from the version string */
};

static struct row *add_row(struct report *r, const char *key, const char *label,
			   enum status st, const char *uses)
{
	struct row *row = &r->rows[r->n < MAX_ROWS - 1 ? r->n++ : MAX_ROWS - 1];

	row->key = key;
	row->label = label;
	row->st = st;
	row->found[0] = '\0';
	snprintf(row->uses, sizeof(row->uses), "%s", uses);
	return row;
}

static void found(struct row *row, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void found(struct row *row, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(row->found, sizeof(row->found), fmt, ap);
	va_end(ap);
}

static bool kernel_at_least(const struct facts *f, unsigned major, unsigned minor)
{
	return f->priv.kmajor > major || (f->priv.kmajor == major && f->priv.kminor >= minor);
}

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

/* ---- the checks ---- */

static void check_kernel(struct report *r, const struct facts *f)
{
	struct row *row = add_row(r, "kernel", "kernel", f->priv.kmajor ? ST_OK : ST_WARN, "");

	found(row, "%s", f->priv.kernel_release[0] ? f->priv.kernel_release : "unknown");
	if (f->priv.kmajor && !kernel_at_least(f, 4, 17))
		snprintf(row->uses, sizeof(row->uses), "older than 4.17: no uprobe PMU");
}

static void check_privileges(struct report *r, const struct facts *f)
{
	static const enum status st[] = { [PRIV_OK] = ST_OK, [PRIV_WARN] = ST_WARN,
					   [PRIV_DENIED] = ST_FAIL };
	struct row *row =
		add_row(r, "privileges", "privileges", st[f->verdict.verdict],
			f->verdict.verdict == PRIV_DENIED ? "cannot attach" : "can attach");
	char caps[160];
	struct row *c;

	found(row, "%s", f->verdict.line);
	if (f->verdict.verdict == PRIV_DENIED)
		r->ready = false;
	snprintf(caps, sizeof(caps), "CAP_SYS_ADMIN %s, CAP_BPF %s, CAP_PERFMON %s",
		 yes_no(priv_has_cap(&f->priv, PRIV_CAP_SYS_ADMIN)),
		 yes_no(priv_has_cap(&f->priv, PRIV_CAP_BPF)),
		 yes_no(priv_has_cap(&f->priv, PRIV_CAP_PERFMON)));
	c = add_row(r, "capabilities", "capabilities", ST_INFO, "");
	if (f->priv.caps_known)
		found(c, "CapEff %016llx: %s", (unsigned long long)f->priv.cap_eff, caps);
	else
		found(c, "unknown");
}

static void check_selinux(struct report *r, const struct facts *f)
{
	struct row *row = add_row(r, "selinux", "SELinux", ST_INFO, "");

	if (f->priv.selinux < 0)
		found(row, "absent");
	else
		found(row, "%s%s%s%s", f->priv.selinux ? "enforcing" : "permissive",
		      f->priv.selinux_context[0] ? " (" : "", f->priv.selinux_context,
		      f->priv.selinux_context[0] ? ")" : "");
}

static void check_sysctls(struct report *r, const struct facts *f)
{
	struct row *p = add_row(r, "perf_event_paranoid", "perf_event_paranoid", ST_INFO,
				f->priv.perf_event_paranoid >= 3
				? "3 is Android's: perf events need CAP_SYS_ADMIN"
				: "ignored with CAP_PERFMON or CAP_SYS_ADMIN");
	struct row *b = add_row(r, "unprivileged_bpf_disabled", "unprivileged_bpf_disabled",
				ST_INFO, "uprobes need privileges either way");

	if (f->priv.perf_event_paranoid == PRIV_UNKNOWN)
		found(p, "unknown");
	else
		found(p, "%ld", f->priv.perf_event_paranoid);
	if (f->priv.unprivileged_bpf_disabled == PRIV_UNKNOWN)
		found(b, "unknown");
	else
		found(b, "%ld", f->priv.unprivileged_bpf_disabled);
}

/* Which objects load here, and what the kernel lacks of what the tool uses
 * (each with the first kernel that has it). */
static void check_bpf_objects(struct report *r, const struct facts *f)
{
	enum kfeature why = KF_GLOBAL_DATA;
	bool legacy = kfeatures_need_legacy(&f->k, &why);
	struct row *row;
	char lacks[320] = "";
	size_t len = 0;

	if (f->k.denied) {
		row = add_row(r, "bpf_objects", "BPF objects", ST_WARN, "decided at run time");
		found(row, "could not probe the kernel's BPF features (needs the run's "
		      "privileges)");
		return;
	}
	row = add_row(r, "bpf_objects", "BPF objects", legacy ? ST_INFO : ST_OK,
		      legacy ? "legacy objects (4.14 rules): perf buffer, bpf_probe_read"
			     : "normal objects (global data, bpf_probe_read_user)");
	if (legacy)
		found(row, "no %s (%u.%u+): a kernel before 5.5", kfeature_name(why),
		      KVER_MAJOR(kfeature_since(why)), KVER_MINOR(kfeature_since(why)));
	else
		found(row, "global data and bpf_probe_read_user (5.5+)");
	for (size_t i = 0; i < KF_COUNT; i++) {
		unsigned v = kfeature_since((enum kfeature)i);
		int n;
		if (f->k.has[i] || (i == KF_UPROBE_MULTI && !f->o->probe_uprobe_multi))
			continue;
		n = snprintf(lacks + len, sizeof(lacks) - len, "%s%s (%u.%u)", len ? ", " : "",
			     kfeature_name((enum kfeature)i), KVER_MAJOR(v), KVER_MINOR(v));
		if (n < 0 || (size_t)n >= sizeof(lacks) - len)
			break;
		len += (size_t)n;
	}
	row = add_row(r, "kernel_lacks", "kernel lacks", ST_INFO, len ? "the older path for each"
								      : "");
	found(row, "%s", len ? lacks : "nothing the tool uses");
}

static int default_probe_ringbuf(void)
{
	return libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL);
}

static void check_ringbuf(struct report *r, const struct facts *f)
{
	int (*probe)(void) = f->o->probe_ringbuf ? f->o->probe_ringbuf : default_probe_ringbuf;
	int rc = probe();
	struct row *row;

	if (rc == 1) {
		row = add_row(r, "ringbuf", "BPF ring buffer", ST_OK, "ring buffer");
		found(row, "supported");
	} else if (rc == 0) {
		row = add_row(r, "ringbuf", "BPF ring buffer", ST_WARN, "perf buffer fallback");
		found(row, "not supported (kernel before 5.8)");
	} else {
		/* Usually EPERM: probing needs the privileges the run needs. */
		row = add_row(r, "ringbuf", "BPF ring buffer", ST_WARN,
			      kernel_at_least(f, 5, 8) ? "ring buffer (decided at run time)"
						       : "perf buffer fallback");
		found(row, "could not probe: %s", strerror(-rc));
	}
}

static int find_mount(const struct facts *f, const char *fstype, char *mnt, size_t size)
{
	mnt[0] = '\0';
	return sys_find_mount((const char *)f->mounts.data, f->mounts.size, fstype, mnt, size);
}

/* Informational: with uprobe_multi links exit is fast; without, each probe
 * costs the kernel a grace period to detach. */
static void check_uprobe_multi(struct report *r, const struct facts *f)
{
	struct err e = { 0 };
	struct row *row;
	int rc;

	if (!f->o->probe_uprobe_multi)
		return;
	rc = f->o->probe_uprobe_multi(&e);
	if (rc == 0) {
		row = add_row(r, "uprobe_multi", "uprobe_multi links", ST_OK,
			      "uprobe_multi links (detach together)");
		found(row, "supported, filtering by process");
		return;
	}
	row = add_row(r, "uprobe_multi", "uprobe_multi links", ST_INFO,
		      "uprobe PMU (exit takes ~0.1 s per probe)");
	found(row, "%s", e.msg[0] ? e.msg : strerror(-rc));
}

static const char *const tracefs_dirs[] = { "kernel/tracing", "kernel/debug/tracing" };

/* Where uprobe_events lives under the sys root, or NULL. */
static const char *tracefs_dir(const struct facts *f)
{
	for (size_t i = 0; i < sizeof(tracefs_dirs) / sizeof(tracefs_dirs[0]); i++) {
		char rel[64];
		snprintf(rel, sizeof(rel), "%s/uprobe_events", tracefs_dirs[i]);
		if (sys_exists_at(f->p.sys, rel))
			return tracefs_dirs[i];
	}
	return NULL;
}

static void check_uprobe_pmu(struct report *r, const struct facts *f)
{
	bool tracefs = tracefs_dir(f) != NULL;
	long type;
	struct row *row;

	if (sys_read_long_at(f->p.sys, "bus/event_source/devices/uprobe/type", &type) == 0) {
		row = add_row(r, "uprobe_pmu", "uprobe PMU", ST_OK, "uprobe PMU");
		found(row, "type %ld", type);
		return;
	}
	if (tracefs && f->o->tracefs_fallback) {
		row = add_row(r, "uprobe_pmu", "uprobe PMU", ST_WARN, "tracefs uprobe_events");
		found(row, "missing (kernel before 4.17)");
		return;
	}
	row = add_row(r, "uprobe_pmu", "uprobe PMU", ST_FAIL, "cannot attach uprobes");
	found(row, "missing (kernel before 4.17?)%s", tracefs
		     ? "; this build attaches through the PMU only"
		     : "; no tracefs uprobe_events either");
	r->ready = false;
}

static void check_tracefs(struct report *r, const struct facts *f)
{
	const char *dir = tracefs_dir(f);
	char mnt[256] = "";
	struct row *row;

	find_mount(f, "tracefs", mnt, sizeof(mnt));
	row = add_row(r, "tracefs", "tracefs", dir ? ST_INFO : ST_WARN,
		      !dir ? "" : f->o->tracefs_fallback ? "fallback for a missing uprobe PMU"
							 : "not needed");
	if (dir)
		found(row, "%s/%s/uprobe_events%s%s", f->p.sys, dir,
		      mnt[0] ? "; mounted at " : "", mnt);
	else
		found(row, "no uprobe_events under %s/kernel/{tracing,debug/tracing}%s%s", f->p.sys,
		      mnt[0] ? "; tracefs mounted at " : "", mnt);
}

static void check_bpffs(struct report *r, const struct facts *f)
{
	char mnt[256];
	struct row *row = add_row(r, "bpffs", "bpffs", ST_INFO, "not needed (nothing is pinned)");

	if (find_mount(f, "bpf", mnt, sizeof(mnt)) == 0)
		found(row, "mounted at %s", mnt);
	else
		found(row, "not mounted");
}

static void check_btf(struct report *r, const struct facts *f)
{
	bool btf = sys_exists_at(f->p.sys, "kernel/btf/vmlinux");
	struct row *row = add_row(r, "btf", "kernel BTF", ST_INFO,
				  "not needed (programs carry no CO-RE relocations)");

	found(row, btf ? "%s/kernel/btf/vmlinux" : "absent", f->p.sys);
}

static void check_android(struct report *r, const struct facts *f)
{
	const struct android_info *a = &f->android;
	struct row *row = add_row(r, "android", "Android", a->problem[0] ? ST_WARN : ST_INFO, "");

	if (!a->on_android) {
		found(row, "not Android (no property store)");
		return;
	}
	found(row, "sdk %s (Android %s), %s build, abi %s, debuggable %s; read from %s%s%s",
	      a->sdk[0] ? a->sdk : "?", a->release[0] ? a->release : "?",
	      a->build_type[0] ? a->build_type : "unknown", a->abi[0] ? a->abi : "?",
	      a->debuggable < 0 ? "?" : a->debuggable ? "1" : "0", props_source_name(a->source),
	      a->problem[0] ? "; " : "", a->problem);
}

static void check_guardrail(struct report *r, const struct facts *f)
{
	const struct android_info *a = &f->android;
	static const enum guardrail_mode modes[] = { [DOCTOR_GUARDRAIL_AUTO] = GUARDRAIL_AUTO,
						     [DOCTOR_GUARDRAIL_OFF] = GUARDRAIL_OFF,
						     [DOCTOR_GUARDRAIL_ON] = GUARDRAIL_USER };
	struct guardrail_opts g = { .mode = modes[f->o->guardrail], .on_android = a->on_android,
				    .build_type = a->build_type[0] ? a->build_type : NULL };
	bool on = guardrail_active(&g);
	struct row *row = add_row(r, "guardrail", "guardrail", ST_INFO,
				  on ? "guardrail on: only allowlisted methods" : "guardrail off");

	if (g.mode != GUARDRAIL_AUTO)
		found(row, "forced %s", on ? "on" : "off");
	else if (!a->on_android)
		found(row, "not Android");
	else
		found(row, "%s build", a->build_type[0] ? a->build_type : "unknown");
}

static bool is_socket(const char *dir, const char *name, char *path, size_t size)
{
	struct stat st;

	return sys_path_join(path, size, dir, name) && stat(path, &st) == 0 &&
	       S_ISSOCK(st.st_mode);
}

static void check_sockets(struct report *r, const struct facts *f)
{
	char path[4096];
	bool statsd = is_socket(f->p.sockets, "statsdw", path, sizeof(path));
	struct row *row = add_row(r, "statsd", "statsd socket", ST_INFO,
				  statsd ? "statsd sink" : "text on stdout");

	found(row, statsd ? "%s" : "no %s", path);
	bool logd = is_socket(f->p.sockets, "logdw", path, sizeof(path));
	row = add_row(r, "logd", "logd socket", ST_INFO,
		      logd ? "log to logcat and stderr" : "log to stderr");
	found(row, logd ? "%s" : "no %s", path);
}

/* ---- output ---- */

static const char *status_name(enum status s)
{
	static const char *const names[] = { "ok", "info", "warn", "FAIL" };

	return names[s];
}

static void print_text(FILE *out, const struct report *r)
{
	int lw = 5, fw = 5;

	for (size_t i = 0; i < r->n; i++) {
		int l = (int)strlen(r->rows[i].label), w = (int)strlen(r->rows[i].found);
		lw = l > lw ? l : lw;
		fw = w > fw && w <= 72 ? w : fw;   /* very long findings just push "uses" right */
	}
	fprintf(out, "%-*s  %-4s  %-*s  %s\n", lw, "check", "", fw, "found", "uprobestats uses");
	for (size_t i = 0; i < r->n; i++) {
		const struct row *row = &r->rows[i];
		fprintf(out, "%-*s  %-4s  %-*s  %s\n", lw, row->label, status_name(row->st), fw,
			row->found, row->uses);
	}
	fprintf(out, "\n%s\n", r->ready ? "ready: uprobestats can run here"
				       : "not ready: see the FAIL lines above");
}

static void print_json(FILE *out, const struct report *r)
{
	struct outbuf o;
	struct json_out j;

	if (outbuf_init(&o, out, 16384, "doctor", NULL) < 0)
		return;
	json_init(&j, &o);
	json_object_begin(&j);
	json_key(&j, "type");
	json_cstring(&j, "doctor");
	json_key(&j, "ready");
	json_bool(&j, r->ready);
	json_key(&j, "checks");
	json_object_begin(&j);
	for (size_t i = 0; i < r->n; i++) {
		const struct row *row = &r->rows[i];
		json_key(&j, row->key);
		json_object_begin(&j);
		json_key(&j, "status");
		json_cstring(&j, row->st == ST_FAIL ? "fail" : status_name(row->st));
		json_key(&j, "found");
		json_cstring(&j, row->found);
		json_key(&j, "uses");
		json_cstring(&j, row->uses);
		json_object_end(&j);
	}
	json_object_end(&j);
	json_object_end(&j);
	json_newline(&j);
	outbuf_flush(&o);
	outbuf_free(&o);
}

/* Android devices have hundreds of mounts: read the whole table. */
static void read_mounts(struct facts *f)
{
	char path[4096];

	if (!sys_path_join(path, sizeof(path), f->p.proc, "mounts") ||
	    mapfile_open(path, 4u << 20, MAPFILE_ALLOW_EMPTY, &f->mounts, NULL) < 0)
		memset(&f->mounts, 0, sizeof(f->mounts));
}

int doctor_run(FILE *out, const struct doctor_opts *opts)
{
	struct facts f;
	struct report r = { .ready = true };

	memset(&f, 0, sizeof(f));
	f.o = opts;
	f.p = sys_paths_resolve(&opts->paths);
	android_info_read(&f.p, &f.android);
	priv_gather(&f.p, &f.priv);
	priv_evaluate(&f.priv, &f.android, &f.verdict);
	read_mounts(&f);
	if (opts->probe_kernel)
		opts->probe_kernel(&f.k);
	else
		kfeatures_probe(&f.k, opts->probe_uprobe_multi);

	check_kernel(&r, &f);
	check_privileges(&r, &f);
	check_selinux(&r, &f);
	check_sysctls(&r, &f);
	check_bpf_objects(&r, &f);
	check_ringbuf(&r, &f);
	check_uprobe_pmu(&r, &f);
	check_uprobe_multi(&r, &f);
	check_tracefs(&r, &f);
	check_bpffs(&r, &f);
	check_btf(&r, &f);
	check_android(&r, &f);
	check_guardrail(&r, &f);
	check_sockets(&r, &f);
	mapfile_close(&f.mounts);
	if (opts->json)
		print_json(out, &r);
	else
		print_text(out, &r);
	return r.ready ? 0 : 1;
}
