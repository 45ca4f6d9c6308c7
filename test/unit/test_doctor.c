/* doctor against fixture device trees: a modern phone with everything, an old
 * kernel without ring buffers or the uprobe PMU, and a plain Linux box. */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sink_testutil.h"
#include "sys/doctor.h"
#include "sys_testutil.h"
#include "ut.h"

struct device {
	char root[4096], proc[4096], sys[4096], sockets[4096], props[4096];
	struct doctor_opts opts;
};

static int ringbuf_yes(void) { return 1; }
static int ringbuf_no(void) { return 0; }
static int ringbuf_eperm(void) { return -1; }

static void bind_socket(const char *dir, const char *name)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/%s", dir, name);
	bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	close(fd);   /* the socket file stays; doctor only looks at it */
}

static void make_device(struct device *d, const char *name, const char *release, bool pmu,
			bool android)
{
	char status[256];

	st_mkdtemp(name, d->root, sizeof(d->root));
	snprintf(d->proc, sizeof(d->proc), "%s/proc", d->root);
	snprintf(d->sys, sizeof(d->sys), "%s/sys", d->root);
	snprintf(d->sockets, sizeof(d->sockets), "%s/dev/socket", d->root);
	snprintf(d->props, sizeof(d->props), "%s", android ? st_fixture("props/android14")
							  : ut_tmpfile("no-props"));
	snprintf(status, sizeof(status), "Uid:\t0\t0\t0\t0\nCapEff:\t000001ffffffffff\n");
	st_write(d->proc, "self/status", status);
	st_write(d->proc, "self/attr/current", "u:r:su:s0");
	st_write(d->proc, "sys/kernel/osrelease", release);
	st_write(d->proc, "sys/kernel/perf_event_paranoid", "3\n");
	st_write(d->proc, "sys/kernel/unprivileged_bpf_disabled", "2\n");
	st_write(d->proc, "mounts",
		 "rootfs / rootfs ro,seclabel 0 0\n"
		 "tracefs /sys/kernel/tracing tracefs rw,seclabel,relatime 0 0\n"
		 "none /sys/fs/bpf bpf rw,nosuid,nodev,noexec,relatime 0 0\n");
	st_write(d->sys, "fs/selinux/enforce", "1\n");
	st_write(d->sys, "kernel/tracing/uprobe_events", "");
	if (pmu) {
		st_write(d->sys, "bus/event_source/devices/uprobe/type", "9\n");
		st_write(d->sys, "kernel/btf/vmlinux", "BTF");
	}
	if (android) {
		st_write(d->sockets, ".keep", "");
		bind_socket(d->sockets, "statsdw");
		bind_socket(d->sockets, "logdw");
	}
	d->opts = (struct doctor_opts){
		.paths = { .proc = d->proc, .sys = d->sys, .props = d->props, .getprop = "",
			   .sockets = d->sockets },
		.probe_ringbuf = ringbuf_yes,
	};
}

/* Runs doctor into a string (free it). */
static char *run(const struct doctor_opts *o, int *rc)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	*rc = doctor_run(f, o);
	fclose(f);
	return text;
}

UT_TEST(doctor_everything_present)
{
	struct device d;
	int rc;
	char *out;

	make_device(&d, "doc-full", "6.1.75-android14-11-g0\n", true, true);
	out = run(&d.opts, &rc);
	UT_EQ_INT(rc, 0);
	UT_CONTAINS(out, "6.1.75-android14-11-g0");
	UT_CONTAINS(out, "uid 0 with CAP_SYS_ADMIN; SELinux enforcing, domain su");
	UT_CONTAINS(out, "CAP_SYS_ADMIN yes, CAP_BPF yes, CAP_PERFMON yes");
	UT_CONTAINS(out, "enforcing (u:r:su:s0)");
	UT_CONTAINS(out, "supported");
	UT_CONTAINS(out, "  ring buffer\n");
	UT_CONTAINS(out, "type 9");
	UT_CONTAINS(out, "  uprobe PMU\n");
	UT_CONTAINS(out, "/kernel/tracing/uprobe_events; mounted at /sys/kernel/tracing");
	UT_CONTAINS(out, "mounted at /sys/fs/bpf");
	UT_CONTAINS(out, "not needed (programs carry no CO-RE relocations)");
	UT_CONTAINS(out, "sdk 34 (Android 14), userdebug build, abi arm64-v8a, debuggable 1; "
			 "read from property areas");
	UT_CONTAINS(out, "guardrail off");
	UT_CONTAINS(out, "  statsd sink\n");
	UT_CONTAINS(out, "log to logcat and stderr");
	UT_CONTAINS(out, "ready: uprobestats can run here");
	UT_ASSERT(!strstr(out, "FAIL"));
	free(out);
}

UT_TEST(doctor_text_columns_line_up)
{
	struct device d;
	int rc;
	char *out, *line, *save = NULL;
	long col = -1;

	make_device(&d, "doc-cols", "6.1.0\n", true, true);
	out = run(&d.opts, &rc);
	/* The status column starts at the same offset on every row. */
	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *st = strstr(line, "  ok  ");
		if (!st)
			st = strstr(line, "  info  ");
		if (!st)
			continue;
		if (col < 0)
			col = st - line;
		UT_EQ_INT(st - line, col);
	}
	UT_ASSERT(col > 0);
	free(out);
}

static void kernel_4_14(struct kfeatures *k)
{
	kfeatures_for_version(KVER(4, 14), k);
}

static void kernel_5_4(struct kfeatures *k)
{
	kfeatures_for_version(KVER(5, 4), k);
}

UT_TEST(doctor_old_kernel_no_ringbuf_no_pmu)
{
	struct device d;
	int rc;
	char *out;

	make_device(&d, "doc-old", "4.14.190-perf\n", false, true);
	d.opts.probe_ringbuf = ringbuf_no;
	d.opts.probe_kernel = kernel_4_14;
	out = run(&d.opts, &rc);
	UT_EQ_INT(rc, 1);
	UT_CONTAINS(out, "4.14.190-perf");
	UT_CONTAINS(out, "older than 4.17: no uprobe PMU");
	UT_CONTAINS(out, "not supported (kernel before 5.8)");
	UT_CONTAINS(out, "perf buffer fallback");
	UT_CONTAINS(out, "FAIL");
	UT_CONTAINS(out, "this build attaches through the PMU only");
	UT_CONTAINS(out, "absent");                  /* no BTF */
	UT_CONTAINS(out, "not ready");
	UT_CONTAINS(out, "no global data (5.2+): a kernel before 5.5");
	UT_CONTAINS(out, "legacy objects (4.14 rules)");
	UT_CONTAINS(out, "BPF-to-BPF calls (4.16), uprobe PMU (4.17), BTF (4.18)");
	UT_CONTAINS(out, "CAP_BPF and CAP_PERFMON (5.8)");
	free(out);

	/* A 5.4 kernel: the legacy objects all the same, for bpf_probe_read_user. */
	d.opts.probe_kernel = kernel_5_4;
	out = run(&d.opts, &rc);
	UT_CONTAINS(out, "no bpf_probe_read_user (5.5+)");
	free(out);
	d.opts.probe_kernel = kernel_4_14;

	/* With the tracefs fallback the same device can run. */
	d.opts.tracefs_fallback = true;
	out = run(&d.opts, &rc);
	UT_EQ_INT(rc, 0);
	UT_CONTAINS(out, "tracefs uprobe_events");
	UT_CONTAINS(out, "fallback for a missing uprobe PMU");
	free(out);
}

UT_TEST(doctor_json)
{
	struct device d;
	int rc;
	char *out;

	make_device(&d, "doc-json", "4.14.190-perf\n", false, true);
	d.opts.probe_ringbuf = ringbuf_no;
	d.opts.json = true;
	out = run(&d.opts, &rc);
	UT_EQ_INT(rc, 1);
	UT_ASSERT(!strncmp(out, "{\"type\":\"doctor\",\"ready\":false,\"checks\":{\"kernel\":"
				"{\"status\":\"ok\",\"found\":\"4.14.190-perf\"", 88));
	UT_CONTAINS(out, "\"ringbuf\":{\"status\":\"warn\",\"found\":\"not supported (kernel "
			 "before 5.8)\",\"uses\":\"perf buffer fallback\"}");
	UT_CONTAINS(out, "\"uprobe_pmu\":{\"status\":\"fail\"");
	UT_CONTAINS(out, "\"guardrail\":{\"status\":\"info\",\"found\":\"userdebug build\","
			 "\"uses\":\"guardrail off\"}");
	UT_ASSERT(!strchr(out, '\t'));
	UT_EQ_STR(out + strlen(out) - 3, "}}\n");
	/* one object, of docs/event.schema.json's "doctor" type */
	struct jc_doc schema;
	char why[512] = "";
	UT_EQ_INT(load_schema(&schema), 0);
	if (validate_lines(&schema, out, why, sizeof(why)) != 1)
		ut_fail(__FILE__, __LINE__, "doctor --json breaks the schema: %s", why);
	jc_free(&schema);
	free(out);
}

UT_TEST(doctor_plain_linux_unprivileged)
{
	struct device d;
	int rc;
	char *out;

	make_device(&d, "doc-linux", "6.8.0-45-generic\n", true, false);
	st_write(d.proc, "self/status",
		 "Uid:\t1000\t1000\t1000\t1000\nCapEff:\t0000000000000000\n");
	st_write(d.sys, "fs/selinux/enforce", "0\n");
	char mounts[4200];
	snprintf(mounts, sizeof(mounts), "%s/mounts", d.proc);
	UT_EQ_INT(unlink(mounts), 0);
	d.opts.probe_ringbuf = ringbuf_eperm;
	d.opts.guardrail = DOCTOR_GUARDRAIL_ON;
	out = run(&d.opts, &rc);
	UT_EQ_INT(rc, 1);
	UT_CONTAINS(out, "not root (uid 1000) and no CAP_BPF+CAP_PERFMON: run it with sudo");
	UT_CONTAINS(out, "cannot attach");
	UT_CONTAINS(out, "could not probe");
	UT_CONTAINS(out, "ring buffer (decided at run time)");
	UT_CONTAINS(out, "not Android (no property store)");
	UT_CONTAINS(out, "forced on");
	UT_CONTAINS(out, "not mounted");
	UT_CONTAINS(out, "text on stdout");
	UT_CONTAINS(out, "log to stderr");
	free(out);
}

UT_TEST(doctor_runs_on_this_machine)
{
	struct doctor_opts o = { .json = true };
	int rc;
	char *out = run(&o, &rc);

	UT_ASSERT(rc == 0 || rc == 1);
	UT_ASSERT(!strncmp(out, "{\"type\":\"doctor\",\"ready\":", 25));
	UT_CONTAINS(out, "\"kernel\":{\"status\":\"ok\"");
	free(out);
}

UT_TEST(doctor_user_build_through_getprop_turns_the_guardrail_on)
{
	struct device d;
	char gp[4096];
	int rc;
	char *out;

	make_device(&d, "doc-user", "5.15.110-android13-4\n", true, false);
	st_write_script(d.root, "bin/getprop",
			"case \"$1\" in\n"
			"ro.build.type) echo user ;;\n"
			"ro.build.version.sdk) echo 33 ;;\n"
			"ro.build.version.release) echo 13 ;;\n"
			"ro.product.cpu.abi) echo x86_64 ;;\n"
			"ro.debuggable) echo 0 ;;\n"
			"esac\n");
	snprintf(gp, sizeof(gp), "%s/bin/getprop", d.root);
	d.opts.paths.getprop = gp;
	out = run(&d.opts, &rc);
	UT_EQ_INT(rc, 0);
	UT_CONTAINS(out, "sdk 33 (Android 13), user build, abi x86_64, debuggable 0; read from getprop");
	UT_CONTAINS(out, "user build");
	UT_CONTAINS(out, "guardrail on: only allowlisted methods");
	free(out);
}

static int multi_yes(struct err *e)
{
	(void)e;
	return 0;
}

static int multi_thread_filter(struct err *e)
{
	return err_set(e, -ENOTSUP, "uprobe_multi links: this kernel filters them by thread");
}

UT_TEST(doctor_reports_uprobe_multi_links)
{
	struct device d;
	int rc;
	char *out;

	make_device(&d, "doc-multi", "6.12.23-android16-5-g0\n", true, true);
	d.opts.probe_uprobe_multi = multi_yes;
	out = run(&d.opts, &rc);
	UT_EQ_INT(rc, 0);
	UT_CONTAINS(out, "supported, filtering by process");
	UT_CONTAINS(out, "uprobe_multi links (detach together)");
	free(out);
	d.opts.probe_uprobe_multi = multi_thread_filter;
	out = run(&d.opts, &rc);
	UT_EQ_INT(rc, 0);
	UT_CONTAINS(out, "this kernel filters them by thread");
	UT_CONTAINS(out, "uprobe PMU (exit takes ~0.1 s per probe)");
	free(out);
	d.opts.probe_uprobe_multi = NULL;
	out = run(&d.opts, &rc);
	UT_ASSERT(!strstr(out, "uprobe_multi"));
	free(out);
}
