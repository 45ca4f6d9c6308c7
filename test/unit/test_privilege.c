/* Privilege verdicts from fixture /proc and /sys trees. */
#include <stdint.h>
#include <unistd.h>

#include "sys/privilege.h"
#include "sys_testutil.h"
#include "ut.h"

#define CAPS_ALL "000001ffffffffff"
#define CAPS_BPF_PERFMON "000000c000000000"   /* bits 38, 39 */
#define CAPS_NONE "0000000000000000"

struct tree {
	char root[4096], proc[4096], sys[4096];
	struct sys_paths paths;
};

/* A fake /proc + /sys: uid, CapEff, SELinux mode and domain, paranoid. */
static void make_tree(struct tree *t, const char *name, int euid, const char *caps,
		      const char *enforce, const char *context, const char *paranoid,
		      const char *release)
{
	char status[512];

	st_mkdtemp(name, t->root, sizeof(t->root));
	snprintf(t->proc, sizeof(t->proc), "%s/proc", t->root);
	snprintf(t->sys, sizeof(t->sys), "%s/sys", t->root);
	snprintf(status, sizeof(status),
		 "Name:\tuprobestats\nUmask:\t0022\nState:\tR (running)\n"
		 "Uid:\t%d\t%d\t%d\t%d\nGid:\t0\t0\t0\t0\n"
		 "CapInh:\t0000000000000000\nCapPrm:\t%s\nCapEff:\t%s\n",
		 euid, euid, euid, euid, caps, caps);
	st_write(t->proc, "self/status", status);
	if (enforce)
		st_write(t->sys, "fs/selinux/enforce", enforce);
	if (context)
		st_write(t->proc, "self/attr/current", context);
	if (paranoid)
		st_write(t->proc, "sys/kernel/perf_event_paranoid", paranoid);
	st_write(t->proc, "sys/kernel/unprivileged_bpf_disabled", "2\n");
	st_write(t->proc, "sys/kernel/osrelease", release ? release : "6.1.75-android14-11\n");
	t->paths = (struct sys_paths){ .proc = t->proc, .sys = t->sys };
}

static void verdict(struct tree *t, const struct android_info *a, struct priv_report *r)
{
	priv_check(&t->paths, a, r);
}

static struct android_info android(const char *build_type)
{
	struct android_info a = { .on_android = true, .source = PROPS_SOURCE_AREA };

	snprintf(a.build_type, sizeof(a.build_type), "%s", build_type);
	return a;
}

UT_TEST(priv_parse_status_reads_effective_uid_and_caps)
{
	static const char s[] = "Uid:\t2000\t0\t0\t0\nCapEff:\t000001ffffffffff\n";
	long euid = -5;
	uint64_t caps = 0;

	UT_EQ_INT(priv_parse_status(s, sizeof(s) - 1, &euid, &caps), 2);
	UT_EQ_INT(euid, 0);
	UT_EQ_U64(caps, 0x1ffffffffffull);
	/* Truncated mid-line, garbage, no newline at the end. */
	euid = -5;
	UT_EQ_INT(priv_parse_status("Uid:\t12", 7, &euid, &caps), 0);
	UT_EQ_INT(euid, -5);
	UT_EQ_INT(priv_parse_status("CapEff:\tzz\nUid: 1 2", 19, &euid, &caps), 1);
	UT_EQ_INT(euid, 2);
	UT_EQ_INT(priv_parse_status("CapEff:\tfffffffffffffffff\n", 26, &euid, &caps), 0);
}

UT_TEST(priv_root_with_all_caps_is_ok)
{
	struct tree t;
	struct priv_report r;
	struct android_info a = android("userdebug");

	make_tree(&t, "priv-root", 0, CAPS_ALL, "1\n", "u:r:su:s0", "3\n", NULL);
	verdict(&t, &a, &r);
	UT_EQ_INT(r.verdict, PRIV_OK);
	UT_ASSERT(r.caps_ok);
	UT_CONTAINS(r.line, "uid 0 with CAP_SYS_ADMIN; SELinux enforcing, domain su");
	UT_EQ_STR(priv_verdict_name(r.verdict), "ok");
}

UT_TEST(priv_not_root_hint_depends_on_the_build)
{
	struct tree t;
	struct priv_report r;
	struct android_info ud = android("userdebug"), user = android("user");

	make_tree(&t, "priv-shell", 2000, CAPS_NONE, "1\n", "u:r:shell:s0", "3\n", NULL);
	verdict(&t, &ud, &r);
	UT_EQ_INT(r.verdict, PRIV_DENIED);
	UT_CONTAINS(r.line, "not root (uid 2000): on this userdebug build run `adb root`");
	UT_EQ_STR(priv_verdict_name(r.verdict), "denied");
	verdict(&t, &user, &r);
	UT_CONTAINS(r.line, "user build, where `adb root` is refused: run it through `su -c`");
	verdict(&t, NULL, &r);
	UT_CONTAINS(r.line, "sudo");
	UT_ASSERT(!strchr(r.line, '\n'));
}

UT_TEST(priv_bpf_and_perfmon_suffice_on_5_8)
{
	struct tree t;
	struct priv_report r;
	struct android_info a = android("user");

	make_tree(&t, "priv-caps", 1000, CAPS_BPF_PERFMON, "0\n", "u:r:vendor_x:s0", "2\n",
		  "5.10.198-android12-9\n");
	verdict(&t, &a, &r);
	UT_EQ_INT(r.verdict, PRIV_OK);
	UT_CONTAINS(r.line, "uid 1000 with CAP_BPF+CAP_PERFMON; SELinux permissive");
}

UT_TEST(priv_old_kernel_needs_sys_admin)
{
	struct tree t;
	struct priv_report r;

	make_tree(&t, "priv-old", 0, CAPS_BPF_PERFMON, "0\n", NULL, "2\n", "4.19.191-g1\n");
	verdict(&t, NULL, &r);
	UT_EQ_INT(r.verdict, PRIV_DENIED);
	UT_CONTAINS(r.line, "kernel 4.19 predates CAP_BPF/CAP_PERFMON (5.8): it needs CAP_SYS_ADMIN");
}

UT_TEST(priv_root_without_caps_names_the_service_fix)
{
	struct tree t;
	struct priv_report r;

	make_tree(&t, "priv-nocaps", 0, CAPS_NONE, NULL, NULL, "2\n", NULL);
	verdict(&t, NULL, &r);
	UT_EQ_INT(r.verdict, PRIV_DENIED);
	UT_CONTAINS(r.line, "uid 0 without CAP_SYS_ADMIN or CAP_BPF+CAP_PERFMON "
			    "(CapEff=0000000000000000)");
	UT_CONTAINS(r.line, "capabilities BPF PERFMON SYS_ADMIN");
}

UT_TEST(priv_selinux_enforcing_confined_domain_is_denied)
{
	struct tree t;
	struct priv_report r;

	/* Root caps but the shell domain (e.g. a setuid helper): policy refuses. */
	make_tree(&t, "priv-se", 0, CAPS_ALL, "1\n", "u:r:shell:s0\n", "3\n", NULL);
	verdict(&t, NULL, &r);
	UT_EQ_INT(r.verdict, PRIV_DENIED);
	UT_CONTAINS(r.line, "SELinux is enforcing and denies bpf/perf_event_open to the shell "
			    "domain: `setenforce 0` (userdebug)");
	/* An unknown vendor domain: may work, say what it needs. */
	st_write(t.proc, "self/attr/current", "u:r:vendor_tracer:s0");
	verdict(&t, NULL, &r);
	UT_EQ_INT(r.verdict, PRIV_WARN);
	UT_CONTAINS(r.line, "domain vendor_tracer may not load BPF programs (platform policy "
			    "allows that only to bpfloader) unless it is permissive");
}

UT_TEST(priv_paranoid_3_without_sys_admin_warns)
{
	struct tree t;
	struct priv_report r;
	struct priv_facts f;

	make_tree(&t, "priv-paranoid", 0, CAPS_BPF_PERFMON, NULL, NULL, "3\n", NULL);
	priv_gather(&t.paths, &f);
	UT_EQ_INT(f.perf_event_paranoid, 3);
	UT_EQ_INT(f.unprivileged_bpf_disabled, 2);
	UT_EQ_INT(f.selinux, -1);
	UT_EQ_INT(f.kmajor, 6);
	UT_EQ_INT(f.kminor, 1);
	priv_evaluate(&f, NULL, &r);
	UT_EQ_INT(r.verdict, PRIV_WARN);
	UT_CONTAINS(r.line, "kernel.perf_event_paranoid=3 without CAP_SYS_ADMIN");
}

UT_TEST(priv_without_proc_asks_the_kernel)
{
	struct sys_paths p = { .proc = ut_tmpfile("no-proc"), .sys = ut_tmpfile("no-sys") };
	struct priv_facts f;

	priv_gather(&p, &f);
	UT_EQ_INT(f.euid, (long)geteuid());
	UT_ASSERT(f.caps_known);   /* from capget(2) */
	UT_EQ_INT(f.perf_event_paranoid, PRIV_UNKNOWN);
	UT_EQ_INT(f.selinux, -1);
	UT_ASSERT(f.kernel_release[0]);   /* from uname(2) */
}
