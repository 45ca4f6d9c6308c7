/* vmtest_traffic.c — `uprobestats traffic` and `uprobestats sections` on real arm64
 * Android processes: the arm64 Android 11 userland at /android (vmtest_bionic.c), in a
 * chroot, as test/bionic/test_bionic_traffic.py and test/e2e/test_sections.py run the
 * x86_64 one on the host.
 *
 * traffic: `traffic -p` on a chrooted toybox `nc -l` probes the chroot's libc.  Not yet
 * here: exact bytes per direction.  bionic's arm64 system call wrappers (read, write,
 * __connect, ...) end in `b.hi __set_errno_internal`, a branch out of the function, so
 * traffic leaves them out ("their returns not proven") and counts nothing of nc; the
 * full scenario (nc server and client, exact bytes, the client's host name from a
 * chroot /system/etc/hosts) is in this file's first commit, to bring back once traffic
 * probes those wrappers on arm64.
 *
 * sections: target_atrace (test/targets/android/, built for arm64 by mk/vm.mk with
 * clang's Android target against the userland's own libc.so and libcutils.so) in the
 * chroot calls libcutils' atrace_*_body: nesting, names, async pairs, counters and the
 * summary counts exactly as the host test has them.
 *
 * In the legacy round every run gets --target-kernel too. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmjson.h"
#include "vmproc.h"
#include "vmtest.h"

#define ROOT "/android"
#define TOYBOX "/system/bin/toybox"
#define LIBC "/system/lib64/libc.so"
#define WAIT_MS 120000
#define IO_MS 20000

/* A chrooted Android program with its stdin and stdout on pipes. */
struct droid {
	pid_t pid;
	int in, out; /* our ends: its stdin, its stdout */
	char err[VM_PATH_MAX];
};

static int droid_start(struct tc *t, struct droid *d, char *const argv[], const char *errname)
{
	int in[2], out[2];

	d->pid = -1;
	d->in = d->out = -1;
	tc_path(t, errname, d->err);
	CHECK(access(ROOT TOYBOX, X_OK) == 0, "no Android userland at " ROOT);
	CHECK(pipe(in) == 0 && pipe(out) == 0, "pipe: %s", strerror(errno));
	d->pid = fork();
	CHECK(d->pid >= 0, "fork: %s", strerror(errno));
	if (d->pid == 0) {
		int err = open(d->err, O_WRONLY | O_CREAT | O_APPEND, 0644);
		dup2(in[0], 0);
		dup2(out[1], 1);
		dup2(err, 2);
		for (int fd = 3; fd < 64; fd++)
			close(fd);
		if (chroot(ROOT) || chdir("/"))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	d->in = in[1];
	d->out = out[0];
	return 0;
out:
	return -1;
}

static void droid_close_in(struct droid *d)
{
	if (d->in >= 0)
		close(d->in);
	d->in = -1;
}

static void droid_kill(struct droid *d)
{
	if (d->pid > 0) {
		kill_quietly(d->pid, SIGKILL);
		wait_exit(d->pid, 5000, NULL);
	}
	d->pid = -1;
	droid_close_in(d);
	if (d->out >= 0)
		close(d->out);
	d->out = -1;
}

/* `uprobestats CMD -p PID --format json` (legacy round: --target-kernel too), attached. */
static int ups_start_on(struct tc *t, struct ups *u, const char *cmd, pid_t pid)
{
	char spid[16];
	const char *args[] = { cmd, "-p", spid, "--format", "json", NULL, NULL, NULL };

	snprintf(spid, sizeof(spid), "%d", (int)pid);
	if (t->env->target_kernel) {
		args[5] = "--target-kernel";
		args[6] = t->env->target_kernel;
	}
	if (ups_start(t, u, args, SPAWN_NONE) < 0)
		return -1;
	return ups_wait_attached(t, u);
}

/* 127.0.0.1:PORT in LISTEN in /proc/net/tcp. */
static bool listening(int port)
{
	char *s = read_file("/proc/net/tcp", NULL), want[32], local[64], st[8];
	bool found = false;

	snprintf(want, sizeof(want), "0100007F:%04X", port);
	for (char *line = strchr(s, '\n'); line && !found; line = strchr(line + 1, '\n'))
		found = sscanf(line, " %*d: %63s %*s %7s", local, st) == 2 &&
			!strcmp(local, want) && !strcmp(st, "0A");
	free(s);
	return found;
}

/* --- traffic ------------------------------------------------------------------------------- */

/* traffic -p on a chrooted toybox `nc -l` (listening, blocked in accept()) probes the
 * libc that process maps, by a path that names it here: its maps path is relative to
 * the tracer's root (/android/system/lib64/libc.so), not to the process's. */
static void traffic_by_pid_probes_the_chroot_libc(struct tc *t)
{
	static int seq;
	int port = 26000 + (getpid() * 7 + ++seq) % 3000;
	char sport[16];
	struct droid srv = { .pid = -1, .in = -1, .out = -1 };
	struct ups u = { .pid = -1 };
	char *err = NULL;
	long long t0 = now_ms();

	snprintf(sport, sizeof(sport), "%d", port);
	char *const server[] = { TOYBOX, "nc", "-l", "-s", "127.0.0.1", "-p", sport, NULL };
	if (droid_start(t, &srv, server, "server.err") < 0)
		goto out;
	while (!listening(port)) {
		int code;
		CHECK(reap_if_exited(srv.pid, &code) == 0, "nc -l exited (%d): %.300s", code,
		      read_file(srv.err, NULL));
		CHECK(now_ms() - t0 < IO_MS, "nc -l did not listen on 127.0.0.1:%d", port);
		sleep_ms(10);
	}
	if (ups_start_on(t, &u, "traffic", srv.pid) < 0 ||
	    check_rc(t, &u, ups_stop(&u, 2), 0, "traffic exit code") < 0)
		goto out;
	err = ups_stderr(&u);
	CHECK(strstr(err, "probe(s) on " ROOT LIBC "\n") && strstr(err, "for 1 process(es)"),
	      "traffic -p did not probe the chroot's libc for that process: %.600s", err);
out:
	free(err);
	droid_kill(&srv);
	if (u.pid > 0)
		ups_stop(&u, 9);
}

/* --- sections ------------------------------------------------------------------------------ */

#define ATRACE "/system/bin/target_atrace"

/* What target_atrace does after its go, per thread, as "op:name:depth|cookie|value"
 * (test/e2e/test_sections.py has the same as markers); the end of "before attach"
 * (begun before the attach) is "end?:depth" with no name. */
static const char MAIN_SECTIONS[] =
	"end?:0,begin:outer:1,begin:inner:2,end:inner:2,begin:inner2:2,begin:deep:3,"
	"end:deep:3,end:inner2:2,end:outer:1,async_begin:load:7,async_begin:load:8,"
	"async_end:load:7,async_begin:net:7,async_end:net:7,async_end:load:8,"
	"counter:frames:1,counter:frames:2,counter:frames:3,counter:bytes:5000000000,"
	"begin:left open:1,";
static const char WORKER_SECTIONS[] =
	"begin:worker:1,begin:worker.step:2,end:worker.step:2,end:worker:1,";
static const struct {
	const char *key;
	unsigned long long want;
} SECTION_COUNTS[] = {
	{ "begun", 7 }, { "ended", 6 }, { "end_unbegun", 1 }, { "open_at_exit", 1 },
	{ "async_begun", 3 }, { "async_ended", 3 }, { "async_end_unbegun", 0 },
	{ "async_open_at_exit", 0 }, { "async_untracked", 0 }, { "counters", 4 },
	{ "merged", 0 },
};

void add_section(const struct jdoc *d, const struct jnode *ev, long long pid,
			struct threads *th)
{
	const struct jnode *s = json_get(d, ev, "section");
	const struct jnode *op = json_get(d, s, "op"), *begun = json_get(d, s, "begun");
	unsigned long long tid = 0, num = 0;
	char name[128] = "", item[256], *to;
	size_t size;

	json_u64(json_get(d, ev, "tid"), &tid);
	if (json_u64(json_get(d, s, "depth"), &num) && json_u64(json_get(d, s, "cookie"), &num))
		json_u64(json_get(d, s, "value"), &num);
	json_str_decode(json_get(d, s, "name"), name, sizeof(name));
	if (begun && begun->type == J_BOOL && begun->s[0] == 'f')
		snprintf(item, sizeof(item), "%.*s?:%llu,", op ? (int)op->len : 0,
			 op ? op->s : "", num);
	else
		snprintf(item, sizeof(item), "%.*s:%s:%llu,", op ? (int)op->len : 0,
			 op ? op->s : "", name, num);
	if ((long long)tid == pid) {
		to = th->main;
		size = sizeof(th->main);
	} else {
		if (!th->worker_tid)
			th->worker_tid = (long long)tid;
		if ((long long)tid != th->worker_tid)
			th->other_tids++;
		to = th->worker;
		size = sizeof(th->worker);
	}
	strncat(to, item, size - strlen(to) - 1);
}

static void check_summary_counts(struct tc *t, const struct jdoc *d, const struct jnode *sum)
{
	const struct jnode *s = json_get(d, sum, "sections");

	CHECK(s && s->type == J_OBJ, "the summary has no sections counts");
	for (size_t i = 0; i < sizeof(SECTION_COUNTS) / sizeof(SECTION_COUNTS[0]); i++) {
		unsigned long long v = ~0ULL;
		json_u64(json_get(d, s, SECTION_COUNTS[i].key), &v);
		CHECK(v == SECTION_COUNTS[i].want, "summary sections.%s: %lld, expected %llu",
		      SECTION_COUNTS[i].key, (long long)v, SECTION_COUNTS[i].want);
	}
out:
	return;
}

static void check_sections(struct tc *t, const char *path, pid_t pid)
{
	size_t len;
	char *text = read_file(path, &len);
	struct jdoc d = { 0 };
	struct threads th = { .main_tid = pid };

	for (char *line = text; line < text + len && !t->failed;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t k = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
		const struct jnode *type;

		CHECK(json_parse(&d, line, k) == 0, "an output line is not JSON: %.200s", line);
		type = json_get(&d, &d.n[0], "type");
		if (json_get(&d, &d.n[0], "section"))
			add_section(&d, &d.n[0], pid, &th);
		else if (json_str_is(type, "summary") && ++th.summaries == 1)
			check_summary_counts(t, &d, &d.n[0]);
		line += k + 1;
	}
	if (t->failed)
		goto out;
	EQ(th.summaries, 1, "summary lines");
	EQ(th.other_tids, 0, "sections of threads other than main and one worker");
	CHECK(!strcmp(th.main, MAIN_SECTIONS), "main thread: %s; expected %s", th.main,
	      MAIN_SECTIONS);
	CHECK(!strcmp(th.worker, WORKER_SECTIONS), "worker thread: %s; expected %s", th.worker,
	      WORKER_SECTIONS);
out:
	json_free(&d);
	free(text);
}

/* Until the bionic linker has mapped libcutils (target_atrace waits at its FIFO then). */
static int atrace_mapped(struct tc *t, struct droid *d)
{
	char maps[64];
	long long t0 = now_ms();

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)d->pid);
	for (;;) {
		char *s = read_file(maps, NULL);
		bool mapped = strstr(s, "libcutils.so") != NULL;
		int code;
		free(s);
		if (mapped)
			return 0;
		CHECK(reap_if_exited(d->pid, &code) == 0, "target_atrace exited (%d): %.300s",
		      code, read_file(d->err, NULL));
		CHECK(now_ms() - t0 < IO_MS, "target_atrace never mapped libcutils.so");
		sleep_ms(10);
	}
out:
	return -1;
}

/* libcutils' atrace_*_body in target_atrace (chrooted, -p): every section, its nesting
 * and name, async pair and counter exactly, per thread, and the summary's counts. */
static void sections_native_libcutils(struct tc *t)
{
	static int seq;
	char go[64], fifo[VM_PATH_MAX], done[64] = "";
	struct droid a = { .pid = -1, .in = -1, .out = -1 };
	struct ups u = { .pid = -1 };
	char *err = NULL;
	pid_t atrace_pid = -1;
	int fd;

	snprintf(go, sizeof(go), "/tmp/ups-atrace-%d-%d", (int)getpid(), ++seq);
	snprintf(fifo, sizeof(fifo), ROOT "%s", go);
	CHECK(mkfifo(fifo, 0600) == 0, "mkfifo %s: %s", fifo, strerror(errno));
	char *const argv[] = { ATRACE, go, NULL };
	if (droid_start(t, &a, argv, "atrace.err") < 0 || atrace_mapped(t, &a) < 0)
		goto out;
	atrace_pid = a.pid;
	if (ups_start_on(t, &u, "sections", a.pid) < 0)
		goto out;
	CHECK((fd = open(fifo, O_WRONLY)) >= 0, "open %s: %s", fifo, strerror(errno));
	CHECK(write(fd, "go\n", 3) == 3, "write %s: %s", fifo, strerror(errno));
	close(fd);
	EQ(wait_exit(a.pid, WAIT_MS, NULL), 0, "target_atrace exit code");
	a.pid = -1;
	CHECK(read(a.out, done, sizeof(done) - 1) > 0 && !strcmp(done, "target_atrace: done\n"),
	      "target_atrace wrote '%s'", done);
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "sections exit code") < 0)
		goto out;
	err = ups_stderr(&u);
	CHECK(strstr(err, "libcutils' atrace_*_body: 6 of 6 functions probed"),
	      "stderr does not say all six atrace_*_body were probed: %.400s", err);
	check_sections(t, u.out, atrace_pid);
out:
	free(err);
	droid_kill(&a);
	if (u.pid > 0)
		ups_stop(&u, 9);
}

const struct vmcase vm_traffic_cases[] = {
	{ "bionic_traffic.by_pid_probes_the_chroot_libc", traffic_by_pid_probes_the_chroot_libc },
	{ "bionic_sections.native_libcutils_exact", sections_native_libcutils },
	{ NULL, NULL },
};
