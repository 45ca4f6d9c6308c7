/* vmtest_bionic.c — real Android arm64 processes probed natively: the arm64 Android 11
 * userland (bionic's linker64 and libc.so, toybox; android-userland/arm64-android11,
 * copied into the initramfs at /android by mkinitramfs.sh, with /proc and a small
 * /dev mounted by /init) runs in a chroot, as test/bionic/ runs the x86_64 one on the
 * host (android.py says the same of its processes).
 *
 * `toybox dd if=/dev/zero of=FIFO bs=B count=N status=none` in the chroot blocks
 * opening its FIFO (the open of a FIFO waits for the other end) until the runner opens
 * it, so the tool attaches first; after that dd makes exactly N read(in_fd, buf, B) and
 * N write(out_fd, buf, B), each returning B, with one buf: in_fd is the descriptor of
 * /dev/zero, out_fd the lowest one free while it is held (POSIX open takes the lowest).
 * The runner reads the N * B bytes.  Each scenario checks the counts, arguments, return
 * values and the probed file exactly against that; in the legacy round every run gets
 * --target-kernel too. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmjson.h"
#include "vmproc.h"
#include "vmtest.h"

#define ROOT "/android"
#define TOYBOX "/system/bin/toybox"
#define LIBC "/system/lib64/libc.so"
#define BS 512
#define COUNT 8
#define WAIT_MS 120000
#define HELD_MS 30000
#define NR_OPENAT_ARM64 56

struct dd {
	pid_t pid;                /* -1 once reaped */
	pid_t tgid;               /* what its records say */
	char fifo[VM_PATH_MAX];   /* as the tracer sees it */
	char err[VM_PATH_MAX];
	int in_fd, out_fd;
};

/* Blocked in the open of its FIFO: wchan, or the system call when wchan is hidden. */
static bool held_in_open(pid_t pid)
{
	char path[64], *s;
	bool held = false;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	s = read_file(path, NULL);
	if (strcmp(s, TOYBOX)) {
		free(s);
		return false;
	}
	free(s);
	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)pid);
	s = read_file(path, NULL);
	held = !strcmp(s, "wait_for_partner");
	free(s);
	if (held)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	s = read_file(path, NULL);
	held = atoi(s) == NR_OPENAT_ARM64 && s[0] != '-';
	free(s);
	return held;
}

/* in_fd: the descriptor of /dev/zero; out_fd: the lowest one not open. */
static int dd_fds(struct tc *t, struct dd *d)
{
	char dir[64], link[VM_PATH_MAX], path[VM_PATH_MAX + 80];
	bool open_fd[64] = { false };
	struct dirent *e;
	DIR *dp;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)d->pid);
	CHECK((dp = opendir(dir)) != NULL, "%s: %s", dir, strerror(errno));
	d->in_fd = -1;
	while ((e = readdir(dp))) {
		int fd = atoi(e->d_name);
		ssize_t n;
		if (e->d_name[0] == '.' || fd < 0 || fd >= 64)
			continue;
		open_fd[fd] = true;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		n = readlink(path, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = '\0';
		if (n > 9 && !strcmp(link + n - 9, "/dev/zero"))
			d->in_fd = fd;
	}
	closedir(dp);
	for (d->out_fd = 0; d->out_fd < 64 && open_fd[d->out_fd]; d->out_fd++)
		;
	CHECK(d->in_fd >= 0, "dd (pid %d) holds no /dev/zero", (int)d->pid);
	return 0;
out:
	return -1;
}

/* toybox dd in the chroot, held at the open of its FIFO. */
static int dd_start(struct tc *t, struct dd *d)
{
	static int seq;
	char of[64], bs[32], count[32];
	long long t0 = now_ms();

	memset(d, 0, sizeof(*d));
	snprintf(of, sizeof(of), "/tmp/ups-dd-%d-%d", (int)getpid(), ++seq);
	snprintf(d->fifo, sizeof(d->fifo), ROOT "%s", of);
	snprintf(bs, sizeof(bs), "bs=%d", BS);
	snprintf(count, sizeof(count), "count=%d", COUNT);
	tc_path(t, "dd.err", d->err);
	CHECK(access(ROOT TOYBOX, X_OK) == 0, "no Android userland at " ROOT " (%s)",
	      strerror(errno));
	CHECK(mkfifo(d->fifo, 0600) == 0, "mkfifo %s: %s", d->fifo, strerror(errno));
	char ofarg[80];
	snprintf(ofarg, sizeof(ofarg), "of=%s", of);
	char *const argv[] = { TOYBOX, "dd", "if=/dev/zero", ofarg, bs, count, "status=none",
			       NULL };
	d->pid = fork();
	CHECK(d->pid >= 0, "fork: %s", strerror(errno));
	if (d->pid == 0) {
		int null = open("/dev/null", O_RDWR), err = open(d->err, O_WRONLY | O_CREAT, 0644);
		dup2(null, 0);
		dup2(null, 1);
		dup2(err, 2);
		if (chroot(ROOT) || chdir("/"))
			_exit(126);
		execv(TOYBOX, argv);
		_exit(127);
	}
	d->tgid = d->pid;
	while (!held_in_open(d->pid)) {
		int code;
		CHECK(reap_if_exited(d->pid, &code) == 0, "dd exited (%d) before its FIFO: %.300s",
		      code, read_file(d->err, NULL));
		CHECK(now_ms() - t0 < HELD_MS, "dd (pid %d) never blocked opening its FIFO",
		      (int)d->pid);
		sleep_ms(2);
	}
	return dd_fds(t, d);
out:
	if (d->pid > 0)
		kill_quietly(d->pid, SIGKILL), wait_exit(d->pid, 5000, NULL);
	d->pid = -1;
	return -1;
}

/* Opens the other end (dd goes on), reads everything dd writes, waits for its exit. */
static int dd_go_wait(struct tc *t, struct dd *d)
{
	char buf[65536];
	long total = 0;
	ssize_t n;
	int fd = open(d->fifo, O_RDONLY), rc;

	CHECK(fd >= 0, "open %s: %s", d->fifo, strerror(errno));
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
	rc = wait_exit(d->pid, WAIT_MS, NULL);
	d->pid = -1;
	EQ(rc, 0, "dd's exit code");
	EQ(total, BS * COUNT, "bytes dd wrote to its FIFO");
	return 0;
out:
	return -1;
}

static void dd_kill(struct dd *d)
{
	if (d->pid > 0) {
		kill_quietly(d->pid, SIGKILL);
		wait_exit(d->pid, 5000, NULL);
	}
	d->pid = -1;
}

/* --- the records ---------------------------------------------------------------------- */

struct calls {
	int n[2];                        /* read, write: entry events */
	int rets[2];                     /* return records */
	int other;                       /* records of anything else */
	long long pid_other;             /* a record of another pid */
	unsigned long long fd[2], count[2], buf; /* the first seen; bad_* when one differs */
	int bad_args, bad_ret;
	unsigned long long bad_dur;
	char file[VM_PATH_MAX];
	bool file_differs;
};

static int method_of(const struct jdoc *doc, const struct jnode *root)
{
	const struct jnode *m = json_get(doc, json_get(doc, root, "probe"), "method");

	return json_str_is(m, "read") ? 0 : json_str_is(m, "write") ? 1 : -1;
}

static void note_file(const struct jdoc *doc, const struct jnode *root, struct calls *c)
{
	char f[VM_PATH_MAX];
	const struct jnode *file = json_get(doc, json_get(doc, root, "probe"), "file");

	if (json_str_decode(file, f, sizeof(f)) < 0)
		f[0] = '\0';
	if (!c->file[0])
		snprintf(c->file, sizeof(c->file), "%s", f);
	else if (strcmp(c->file, f))
		c->file_differs = true;
}

/* One entry or return record of pid against what dd does. */
static void add_record(const struct jdoc *doc, const struct dd *d, struct calls *c)
{
	const struct jnode *root = &doc->n[0], *f = json_get(doc, root, "fields");
	unsigned long long pid = 0, r0, r1, r2, v, dur;
	int m = method_of(doc, root);

	if (m < 0) {
		c->other++;
		return;
	}
	if (json_u64(json_get(doc, root, "pid"), &pid) || (long long)pid != d->tgid)
		c->pid_other = (long long)pid;
	note_file(doc, root, c);
	if (json_str_is(json_get(doc, root, "type"), "return")) {
		c->rets[m]++;
		if (json_u64(json_get(doc, f, "return_value"), &v) || v != BS)
			c->bad_ret++;
		if (json_u64(json_get(doc, f, "duration_ns"), &dur) || dur == 0 ||
		    dur >= 1000000000ULL)
			c->bad_dur = dur ? dur : 1;
		return;
	}
	c->n[m]++;
	if (json_u64(json_get(doc, f, "r0"), &r0) || json_u64(json_get(doc, f, "r1"), &r1) ||
	    json_u64(json_get(doc, f, "r2"), &r2)) {
		c->bad_args++;
		return;
	}
	if (!c->buf)
		c->buf = r1;
	if (r0 != (unsigned long long)(m ? d->out_fd : d->in_fd) || r2 != BS || r1 != c->buf)
		c->bad_args++;
}

static int read_calls(struct tc *t, const char *path, const struct dd *d, struct calls *c)
{
	size_t len;
	char *text = read_file(path, &len);
	struct jdoc doc = { 0 };
	int rc = 0;

	memset(c, 0, sizeof(*c));
	for (char *line = text; line < text + len;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
		const struct jnode *type;

		if (json_parse(&doc, line, n) < 0) {
			tc_fail(t, "an output line is not JSON: %.200s", line);
			rc = -1;
			break;
		}
		type = json_get(&doc, &doc.n[0], "type");
		if (json_str_is(type, "event") || json_str_is(type, "return"))
			add_record(&doc, d, c);
		line += n + 1;
	}
	json_free(&doc);
	free(text);
	return rc;
}

/* Exactly COUNT reads and COUNT writes of dd with its arguments (with --ret their
 * returns instead, each BS after a duration > 0), all in ROOT's libc.so. */
static void check_calls(struct tc *t, const struct calls *c, int want_read, bool ret)
{
	EQ(c->other, 0, "records of other functions");
	CHECK(!c->pid_other, "a record of pid %lld, not dd's", c->pid_other);
	/* --ret: a record per return (with its duration), none at the entry */
	EQ(c->n[0], want_read && !ret ? COUNT : 0, "read calls (entry records)");
	EQ(c->n[1], ret ? 0 : COUNT, "write calls (entry records)");
	EQ(c->bad_args, 0, "calls whose (fd, buf, count) differ from dd's");
	EQ(c->rets[0], ret && want_read ? COUNT : 0, "read returns");
	EQ(c->rets[1], ret ? COUNT : 0, "write returns");
	EQ(c->bad_ret, 0, "returns other than the block size");
	CHECK(!c->bad_dur, "a duration of %llu ns", c->bad_dur);
	CHECK(!strcmp(c->file, ROOT LIBC) && !c->file_differs,
	      "probed file %s, expected " ROOT LIBC " (the chroot's libc)", c->file);
out:
	return;
}

/* --- the scenarios -------------------------------------------------------------------- */

/* uprobestats ARGS (legacy round: --target-kernel added) against a held dd; OUT (or
 * NULL) gets the path of its output once the calls in it checked. */
static void traced_dd(struct tc *t, const char *const *args, bool by_pid, int want_read,
		      bool ret, char *out_path)
{
	struct dd d = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct calls c;
	const char *argv[24];
	char pid[16];
	int n = 0;

	if (dd_start(t, &d) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)d.pid);
	argv[n++] = args[0];
	if (t->env->target_kernel && !strcmp(args[0], "trace")) {
		argv[n++] = "--target-kernel";
		argv[n++] = t->env->target_kernel;
	}
	if (by_pid) {
		argv[n++] = "--pid";
		argv[n++] = pid;
	} else {
		argv[n++] = "--duration";
		argv[n++] = "60";
	}
	argv[n++] = "--format";
	argv[n++] = "json";
	for (int i = 1; args[i] && n < 23; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	if (ups_start(t, &u, argv, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    dd_go_wait(t, &d) < 0)
		goto out;
	if (check_rc(t, &u, by_pid ? ups_wait(&u, WAIT_MS, NULL) : ups_stop(&u, 2), 0,
		     "exit code") < 0)
		goto out;
	if (read_calls(t, u.out, &d, &c) == 0)
		check_calls(t, &c, want_read, ret);
	if (out_path)
		snprintf(out_path, VM_PATH_MAX, "%s", u.out);
out:
	dd_kill(&d);
	if (u.pid > 0)
		ups_stop(&u, 9);
}

static void trace_by_library_name(struct tc *t)
{
	const char *args[] = { "trace", "libc.so:read", "libc.so:write", NULL };
	traced_dd(t, args, true, 1, false, NULL);
}

/* bionic's arm64 read and write end in `b.hi __set_errno_internal` (their error path
 * returns from __set_errno_internal's ret): `trace --ret` proves that exit too
 * (plan/exits_tail.c) and puts exit probes on both rets, so every return of dd is
 * there, at the path the tracer sees; with --unsafe-uretprobe (a uretprobe, which
 * native code takes) as well. */
static void trace_ret_by_the_path_the_process_sees(struct tc *t)
{
	const char *args[] = { "trace", "--ret", ROOT LIBC ":read", ROOT LIBC ":write", NULL };
	const char *uret[] = { "trace", "--ret", "--unsafe-uretprobe", LIBC ":read",
			       LIBC ":write", NULL };

	traced_dd(t, args, true, 1, true, NULL);
	traced_dd(t, uret, true, 1, true, NULL);
}

static void run_config_file_paths(struct tc *t)
{
	char cfg[VM_PATH_MAX];
	const char *text =
		"tasks {\n"
		"  probe_configs {\n"
		"    bpf_name: \"prog_GenericInstrumentation_uprobe_call_detail\"\n"
		"    file_paths: \"" LIBC "\"\n"
		"    method_signature: \"write\"\n"
		"  }\n"
		"  bpf_maps: \"map_GenericInstrumentation_call_detail_buf\"\n"
		"}\n";

	if (tc_write(t, tc_path(t, "write.textproto", cfg), text) < 0)
		return;
	const char *args[] = { "run", cfg, NULL };
	traced_dd(t, args, true, 0, false, NULL);
}

/* -n toybox: the process Android's ps calls toybox (argv[0] /system/bin/toybox). */
static void trace_by_process_name(struct tc *t)
{
	const char *args[] = { "trace", "-n", "toybox", LIBC ":write", NULL };
	traced_dd(t, args, false, 0, false, NULL);
}

/* --- --stack at write ------------------------------------------------------------------- */

#define GDB_CHAIN "/vm/testdata/toybox_stack.txt"
#define MAX_FRAMES 24

/* gdb's chain at dd's first write (test/vm/toybox_stack.py at build time: gdb-multiarch
 * on the same toybox under qemu-user), innermost first. */
struct gdb_chain {
	int n;
	char file[MAX_FRAMES][VM_PATH_MAX]; /* as the tracer sees it: under ROOT */
	unsigned long long offset[MAX_FRAMES];
	char sym[MAX_FRAMES][128];
	char folded[MAX_FRAMES * 130];      /* root first, as --stacks writes it */
};

static int read_gdb_chain(struct tc *t, struct gdb_chain *g)
{
	char *text = read_file(GDB_CHAIN, NULL), *line, *save = NULL;
	char path[VM_PATH_MAX];

	memset(g, 0, sizeof(*g));
	for (line = text ? strtok_r(text, "\n", &save) : NULL; line && g->n < MAX_FRAMES;
	     line = strtok_r(NULL, "\n", &save), g->n++) {
		if (sscanf(line, "%511s %llx %127s", path, &g->offset[g->n], g->sym[g->n]) != 3)
			break;
		snprintf(g->file[g->n], VM_PATH_MAX, ROOT "%s", path);
	}
	free(text);
	CHECK(g->n >= 4 && !line, GDB_CHAIN " holds no chain of PATH OFFSET SYMBOL lines");
	for (int i = g->n - 1; i >= 0; i--) {
		size_t len = strlen(g->folded);
		snprintf(g->folded + len, sizeof(g->folded) - len, "%s%s", g->sym[i],
			 i ? ";" : "");
	}
	return 0;
out:
	return -1;
}

/* One event's stack, frame for frame (file, offset, symbol), against gdb's. */
static int check_gdb_frames(struct tc *t, const struct jdoc *d, const struct jnode *ev,
			    const struct gdb_chain *g, long line)
{
	const struct jnode *st = json_get(d, ev, "stack");
	char file[VM_PATH_MAX];

	CHECK(st && st->type == J_ARR, "line %ld: no stack array", line);
	EQ(json_count(d, st), g->n, "frames (gdb's backtrace has as many)");
	for (int i = 0; i < g->n; i++) {
		const struct jnode *f = json_at(d, st, i), *sym = json_get(d, f, "symbol");
		unsigned long long off = 0;
		CHECK(json_str_is(sym, g->sym[i]), "line %ld: frame %d is '%.*s', gdb says %s",
		      line, i, sym ? (int)sym->len : 0, sym ? sym->s : "", g->sym[i]);
		CHECK(json_str_decode(json_get(d, f, "file"), file, sizeof(file)) > 0 &&
		      !strcmp(file, g->file[i]), "line %ld: frame %d (%s) file '%s', gdb says %s",
		      line, i, g->sym[i], file, g->file[i]);
		CHECK(json_u64(json_get(d, f, "offset"), &off) == 0 && off == g->offset[i],
		      "line %ld: frame %d (%s) offset 0x%llx, gdb says 0x%llx", line, i,
		      g->sym[i], off, g->offset[i]);
	}
	CHECK(json_str_is(json_get(d, ev, "stack_end"), "outermost frame"),
	      "line %ld: the stack does not end at the outermost frame", line);
	return 0;
out:
	return -1;
}

static void check_gdb_stacks(struct tc *t, const char *out, const struct gdb_chain *g,
			     int want)
{
	size_t len = 0;
	char *text = read_file(out, &len);
	struct jdoc d = { 0 };
	long line = 0;
	int stacks = 0;

	for (char *p = text; p < text + len;) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
		line++;
		CHECK(json_parse(&d, p, n) == 0, "line %ld is not JSON: %.200s", line, p);
		if (json_get(&d, &d.n[0], "stack")) {
			if (check_gdb_frames(t, &d, &d.n[0], g, line) < 0)
				goto out;
			stacks++;
		}
		p += n + 1;
	}
	EQ(stacks, want, "events with a stack (one per write)");
out:
	json_free(&d);
	free(text);
}

/* --stack at bionic's write in the chrooted toybox dd: every write's chain equals gdb's
 * through toybox's own functions (symbols from its .gnu_debugdata) up to main and
 * bionic's __libc_init, and the folded file is that chain once, COUNT times.  Call
 * stacks have no legacy form: the legacy round checks the refusal. */
static void stack_at_write(struct tc *t, const char *mode)
{
	struct gdb_chain g;
	char folded[VM_PATH_MAX], out[VM_PATH_MAX] = "", want[sizeof(g.folded) + 16];
	char *text = NULL, *err = NULL;
	const char *chain;
	const char *args[] = { "trace", "--stack", "--stack-mode", mode, "--stacks", folded,
			       LIBC ":write", NULL };

	if (read_gdb_chain(t, &g) < 0)
		return;
	tc_path(t, "stacks.folded", folded);
	if (t->env->target_kernel) {
		const char *legacy[] = { "trace", "--target-kernel", t->env->target_kernel,
					 "--stack", "--duration", "1", ROOT LIBC ":write", NULL };
		int rc = ups_run(t, legacy, WAIT_MS, &err);
		CHECK(rc != 0 && err && strstr(err, "no legacy form"),
		      "--stack with --target-kernel: exit %d, stderr: %.300s", rc,
		      err ? err : "");
		goto out;
	}
	traced_dd(t, args, true, 0, false, out);
	if (t->failed)
		goto out;
	check_gdb_stacks(t, out, &g, COUNT);
	snprintf(want, sizeof(want), "%s %d\n", g.folded, COUNT);
	text = read_file(folded, NULL);
	/* under the process's name as the root frame (no ';', no '/') */
	chain = text ? strchr(text, ';') : NULL;
	CHECK(chain && chain > text && !memchr(text, '/', (size_t)(chain - text)) &&
	      !strcmp(chain + 1, want), "folded stacks: '%.600s', want 'PROCESS;%s'",
	      text ? text : "", want);
out:
	free(text);
	free(err);
}

static void stack_at_write_copy_mode(struct tc *t)
{
	stack_at_write(t, "copy");
}

static void stack_at_write_kernel_mode(struct tc *t)
{
	stack_at_write(t, "kernel");
}

/* --- ifuncs ------------------------------------------------------------------------------ */

#define TRACEFS "/sys/kernel/tracing"
#define IFUNC_NAME "upsvm_strlen_default"
#define IFUNC_EVENT "upsvm_ifunc/" IFUNC_NAME

static int tracefs_write(struct tc *t, const char *file, const char *text, bool append)
{
	int fd = open(file, O_WRONLY | (append ? O_APPEND : O_TRUNC));
	ssize_t n = fd < 0 ? -1 : write(fd, text, strlen(text));

	if (fd >= 0)
		close(fd);
	if (n != (ssize_t)strlen(text)) {
		tc_fail(t, "writing '%s' to %s: %s", text, file, strerror(errno));
		return -1;
	}
	return 0;
}

/* The hits of IFUNC_EVENT in uprobe_profile ("  FILE  EVENT  HITS"), or -1. */
static long long raw_hits(void)
{
	char *s = read_file(TRACEFS "/uprobe_profile", NULL), *p = strstr(s, IFUNC_NAME " ");
	long long hits = p ? strtoll(p + strlen(IFUNC_NAME), NULL, 10) : -1;

	free(s);
	return hits;
}

/* `chroot ROOT ARGV` to completion, output to /dev/null. */
static int chrooted_run(struct tc *t, char *const argv[])
{
	pid_t pid = fork();

	CHECK(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (chroot(ROOT) || chdir("/"))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	EQ(wait_exit(pid, WAIT_MS, NULL), 0, "exit code of the chrooted toybox");
	return 0;
out:
	return -1;
}

/* Records of METHOD in a --format json output, or -1 with the failure recorded. */
static int count_method(struct tc *t, const char *path, const char *method)
{
	size_t len;
	char *text = read_file(path, &len);
	struct jdoc doc = { 0 };
	int n = 0;

	for (char *line = text; n >= 0 && line < text + len;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t k = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
		const struct jnode *root;

		if (json_parse(&doc, line, k) < 0) {
			tc_fail(t, "an output line is not JSON: %.200s", line);
			n = -1;
			break;
		}
		root = &doc.n[0];
		if (json_str_is(json_get(&doc, root, "type"), "event") &&
		    json_str_is(json_get(&doc, json_get(&doc, root, "probe"), "method"), method))
			n++;
		line += k + 1;
	}
	json_free(&doc);
	free(text);
	return n;
}

/* `methods --match PATTERN` says the symbol is an ifunc and names its implementation. */
static void check_ifunc_named(struct tc *t, const char *pattern)
{
	struct ups u = { .pid = -1 };
	const char *args[] = { "methods", "--match", pattern, NULL };
	char *listing = NULL;

	if (ups_start(t, &u, args, SPAWN_NONE) < 0 ||
	    check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "methods --match exit code") < 0)
		return;
	listing = read_file(u.out, NULL);
	CHECK(strstr(listing, "GNU ifunc") && strstr(listing, "strlen_default"),
	      "methods --match %s does not say it is an ifunc, with its implementation: %.300s",
	      pattern, listing);
out:
	free(listing);
}

/* bionic's strlen is an ifunc: the tool says so, names strlen_default and leaves it
 * out; its implementation
 * (strlen_default: what the resolver returns, read from the resolver's code by
 * mkinitramfs.sh, /vm/testdata/bionic.env) is probed, and every call through it
 * counted: exactly the hits of a uprobe the runner puts there itself through tracefs,
 * at that file offset (the only bionic processes of the VM are the runner's chrooted
 * ones). */
static void ifunc_implementation_counted(struct tc *t)
{
	struct ups u = { .pid = -1 };
	char *env = read_file("/vm/testdata/bionic.env", NULL), *off;
	char probe[VM_PATH_MAX + 96];
	const char *args[12];
	long long hits = -1;
	int n = 0, events;
	bool raw = false;

	CHECK((off = strstr(env, "STRLEN_DEFAULT_OFF=")) != NULL, "no offset in bionic.env");
	off += strlen("STRLEN_DEFAULT_OFF=");
	off[strcspn(off, "\n")] = '\0';
	check_ifunc_named(t, ROOT LIBC ":strlen");
	if (t->failed)
		goto out;
	args[n++] = "trace";
	if (t->env->target_kernel) {
		args[n++] = "--target-kernel";
		args[n++] = t->env->target_kernel;
	}
	args[n++] = "--duration";
	args[n++] = "120";
	args[n++] = "--format";
	args[n++] = "json";
	args[n++] = ROOT LIBC ":strlen_default";
	args[n] = NULL;
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0)
		goto out;
	snprintf(probe, sizeof(probe), "p:" IFUNC_EVENT " " ROOT LIBC ":%s\n", off);
	if (tracefs_write(t, TRACEFS "/uprobe_events", probe, true) < 0)
		goto out;
	raw = true;
	if (tracefs_write(t, TRACEFS "/events/" IFUNC_EVENT "/enable", "1\n", false) < 0)
		goto out;
	char *const ls[] = { TOYBOX, "ls", "-l", "/system/lib64", NULL };
	if (chrooted_run(t, ls) < 0)
		goto out;
	hits = raw_hits();
	if (check_rc(t, &u, ups_stop(&u, 2), 0, "exit code") < 0 ||
	    (events = count_method(t, u.out, "strlen_default")) < 0)
		goto out;
	CHECK(hits > 0, "the runner's own uprobe on strlen_default counted %lld calls", hits);
	EQ(events, hits, "strlen_default calls recorded (the runner's uprobe counted them)");
out:
	if (raw) {
		tracefs_write(t, TRACEFS "/events/" IFUNC_EVENT "/enable", "0\n", false);
		tracefs_write(t, TRACEFS "/uprobe_events", "-:" IFUNC_EVENT "\n", true);
	}
	if (u.pid > 0)
		ups_stop(&u, 9);
	free(env);
}

/* --- --stack of a dd gone right after its writes ----------------------------------------- */

/* Lines of out with a stack so far. */
static int stacks_so_far(const char *out)
{
	size_t len = 0;
	char *text = read_file(out, &len);
	int n = 0;

	for (char *p = text; p && (p = strstr(p, "\"stack\":")); p++)
		n++;
	free(text);
	return n;
}

/* A system-wide trace --stack of the chroot's libc.so write, then a chrooted toybox dd
 * writing COUNT bytes one at a time to /dev/null that exits at once: by the time its
 * records are read it is gone, and every stack must still be gdb's chain of a dd that
 * lives (the kernel's mapping records, docs/symbolization.md). */
static void stack_of_a_gone_dd(struct tc *t, int count)
{
	struct gdb_chain g;
	struct ups u = { .pid = -1 };
	char folded[VM_PATH_MAX], want[sizeof(g.folded) + 24], n[32];
	char *text = NULL;
	const char *args[] = { "trace", "--stack", "--stacks", folded, "--format", "json",
			       "--duration", "120", ROOT LIBC ":write", NULL };
	long long t0;

	if (t->env->target_kernel)   /* no legacy form: stack_at_write checks the refusal */
		return;
	if (read_gdb_chain(t, &g) < 0)
		return;
	tc_path(t, "stacks.folded", folded);
	snprintf(n, sizeof(n), "count=%d", count);
	char *const dd[] = { TOYBOX, "dd", "if=/dev/zero", "of=/dev/null", "bs=1", n,
			     "status=none", NULL };
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    chrooted_run(t, dd) < 0)
		goto out;
	for (t0 = now_ms(); stacks_so_far(u.out) < count && now_ms() - t0 < WAIT_MS;)
		sleep_ms(10);
	if (check_rc(t, &u, ups_stop(&u, 2), 0, "exit code") < 0)
		goto out;
	check_gdb_stacks(t, u.out, &g, count);
	if (t->failed)
		goto out;
	/* under the process's name as the root frame: the gone dd is toybox
	 * (/system/bin/toybox dd …), named by the comm of its first hit */
	snprintf(want, sizeof(want), "toybox;%s %d\n", g.folded, count);
	text = read_file(folded, NULL);
	CHECK(text && !strcmp(text, want), "folded stacks: '%.600s', want '%s'",
	      text ? text : "", want);
out:
	if (u.pid > 0)
		ups_stop(&u, 9);
	free(text);
}

static void stack_of_a_dd_gone_after_1_write(struct tc *t)
{
	stack_of_a_gone_dd(t, 1);
}

static void stack_of_a_dd_gone_after_50_writes(struct tc *t)
{
	stack_of_a_gone_dd(t, 50);
}

static void stack_of_a_dd_gone_after_200_writes(struct tc *t)
{
	stack_of_a_gone_dd(t, 200);
}

const struct vmcase vm_bionic_cases[] = {
	{ "bionic.trace_dd_read_write_by_library_name", trace_by_library_name },
	{ "bionic.trace_ret_by_the_path_the_process_sees", trace_ret_by_the_path_the_process_sees },
	{ "bionic.run_config_file_paths_as_the_process_sees_them", run_config_file_paths },
	{ "bionic.trace_by_process_name_toybox", trace_by_process_name },
	{ "bionic.ifunc_implementation_counted", ifunc_implementation_counted },
	{ "bionic.stack_at_write_equals_gdb_copy_mode", stack_at_write_copy_mode },
	{ "bionic.stack_at_write_equals_gdb_kernel_mode", stack_at_write_kernel_mode },
	{ "bionic.stack_of_a_dd_gone_after_1_write", stack_of_a_dd_gone_after_1_write },
	{ "bionic.stack_of_a_dd_gone_after_50_writes", stack_of_a_dd_gone_after_50_writes },
	{ "bionic.stack_of_a_dd_gone_after_200_writes", stack_of_a_dd_gone_after_200_writes },
	{ NULL, NULL },
};
