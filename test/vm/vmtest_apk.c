/* vmtest_apk.c — an app's native library mapped straight from its APK by bionic's arm64
 * linker, probed natively: test/bionic/test_bionic_apk.py's scenario on arm64 (issue 33).
 *
 * mkinitramfs.sh puts test/bionic/apk_src/'s apk_loader (built for arm64 bionic by
 * mk/vm.mk) at /data/local/tmp in the chroot (/android, vmtest_bionic.c) and libdemo.so
 * stored in two APKs under /data/app, written at build time by test/vm/mkapk.py: one
 * zipaligned for 4 KiB pages, one (another app, the library linked for 16 KiB pages) for
 * 16 KiB.  apk_loader dlopen()s "…/base.apk!/lib/arm64-v8a/libdemo.so" (the linker's own
 * spelling: it maps the stored entry from the APK at its data offset), blocks opening its
 * FIFO until the tool has attached, then calls demo_fn(i) for i = 0..299 through
 * main -> apk_run_calls -> apk_call_one and prints the sum of the returns; demo_fn(i)
 * returns 3 * i + 8.  Every check is exact: 300 calls, each argument once, each return
 * value once, the file named as the APK's entry (`/android/…/base.apk!/lib/…`), and the
 * stack's frames.  In the legacy round every run gets --target-kernel too; --stack, which
 * has no legacy form, is checked to be refused there. */
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
#define LOADER "/data/local/tmp/apk_loader"
#define ENTRY "lib/arm64-v8a/libdemo.so"
#define APK_ENV "/vm/testdata/apk.env"
#define COUNT 300
#define WAIT_MS 120000
#define HELD_MS 60000
#define NR_OPENAT_ARM64 56

/* One of mkinitramfs.sh's APKs (APK_ENV). */
struct apk {
	char lib[VM_PATH_MAX - 64]; /* APK!/ENTRY as the app names it (chroot paths) */
	char apk[VM_PATH_MAX];     /* the APK as the runner sees it: under ROOT */
	char member[VM_PATH_MAX];  /* ROOT APK!/ENTRY: how the tool names the file */
	unsigned long long fn_off; /* demo_fn's file offset in the stored ELF */
};

static int env_value(struct tc *t, const char *env, const char *key, char *buf,
		     size_t size)
{
	const char *p = strstr(env, key);
	size_t n;

	CHECK(p && (p == env || p[-1] == '\n'), APK_ENV " has no %s", key);
	p += strlen(key);
	n = strcspn(p, "\n");
	CHECK(n > 0 && n < size, APK_ENV ": %s is empty or too long", key);
	memcpy(buf, p, n);
	buf[n] = '\0';
	return 0;
out:
	return -1;
}

static int apk_info(struct tc *t, int page, struct apk *a)
{
	char *env = read_file(APK_ENV, NULL), key[64], off[VM_PATH_MAX];
	int rc = -1;

	memset(a, 0, sizeof(*a));
	snprintf(key, sizeof(key), "APK_%d=", page);
	if (env_value(t, env, key, a->lib, sizeof(a->lib)) < 0)
		goto out;
	snprintf(key, sizeof(key), "APK_DEMO_FN_OFF_%d=", page);
	if (env_value(t, env, key, off, sizeof(off)) < 0)
		goto out;
	a->fn_off = strtoull(off, NULL, 0);
	snprintf(a->member, sizeof(a->member), ROOT "%s", a->lib);
	snprintf(a->apk, sizeof(a->apk), "%s", a->member);
	*strstr(a->apk, "!/") = '\0';
	rc = 0;
out:
	free(env);
	return rc;
}

/* apk_loader in the chroot, held at the open of its FIFO. */
struct loader {
	pid_t pid;                /* -1 once reaped */
	char fifo[VM_PATH_MAX];   /* as the runner sees it */
	char out[VM_PATH_MAX], err[VM_PATH_MAX];
};

/* Held: the APK mapped, and blocked in the open of its FIFO (wchan, or the system call
 * when wchan is hidden). */
static bool held(const struct loader *ld, const struct apk *a)
{
	char path[64], *s;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)ld->pid);
	s = read_file(path, NULL);
	ok = strstr(s, a->apk) != NULL;
	free(s);
	if (!ok)
		return false;
	snprintf(path, sizeof(path), "/proc/%d/wchan", (int)ld->pid);
	s = read_file(path, NULL);
	ok = !strcmp(s, "wait_for_partner");
	free(s);
	if (ok)
		return true;
	snprintf(path, sizeof(path), "/proc/%d/syscall", (int)ld->pid);
	s = read_file(path, NULL);
	ok = atoi(s) == NR_OPENAT_ARM64 && s[0] != '-';
	free(s);
	return ok;
}

static int loader_start(struct tc *t, struct loader *ld, const struct apk *a)
{
	static int seq;
	char fifo[64], count[16];
	long long t0 = now_ms();
	int code;

	ld->pid = -1;
	snprintf(fifo, sizeof(fifo), "/tmp/ups-apk-%d-%d", (int)getpid(), ++seq);
	snprintf(ld->fifo, sizeof(ld->fifo), ROOT "%s", fifo);
	snprintf(count, sizeof(count), "%d", COUNT);
	tc_path(t, "loader.out", ld->out);
	tc_path(t, "loader.err", ld->err);
	CHECK(access(ROOT LOADER, X_OK) == 0, "no " ROOT LOADER " (%s)", strerror(errno));
	CHECK(access(a->apk, R_OK) == 0, "no APK %s (%s)", a->apk, strerror(errno));
	CHECK(mkfifo(ld->fifo, 0600) == 0, "mkfifo %s: %s", ld->fifo, strerror(errno));
	char *const argv[] = { LOADER, (char *)a->lib, fifo, count, NULL };
	ld->pid = fork();
	CHECK(ld->pid >= 0, "fork: %s", strerror(errno));
	if (ld->pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		int o = open(ld->out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(ld->err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(null, 0);
		dup2(o, 1);
		dup2(e, 2);
		for (int fd = 3; fd < 64; fd++)
			close(fd);
		if (chroot(ROOT) || chdir("/"))
			_exit(126);
		execv(LOADER, argv);
		_exit(127);
	}
	while (!held(ld, a)) {
		CHECK(reap_if_exited(ld->pid, &code) == 0,
		      "apk_loader exited (%d) before its FIFO: %.300s", code,
		      read_file(ld->err, NULL));
		CHECK(now_ms() - t0 < HELD_MS, "apk_loader (pid %d) never mapped %s and blocked "
		      "opening its FIFO", (int)ld->pid, a->apk);
		sleep_ms(5);
	}
	return 0;
out:
	if (ld->pid > 0)
		kill_quietly(ld->pid, SIGKILL), wait_exit(ld->pid, 5000, NULL);
	ld->pid = -1;
	return -1;
}

/* Lets it go on, waits for its exit; it must print the sum of demo_fn's returns. */
static int loader_go_wait(struct tc *t, struct loader *ld)
{
	long want = 0;
	char *text = NULL;
	int fd = open(ld->fifo, O_WRONLY), rc;

	CHECK(fd >= 0, "open %s: %s", ld->fifo, strerror(errno));
	close(fd);
	rc = wait_exit(ld->pid, WAIT_MS, NULL);
	ld->pid = -1;
	CHECK(rc == 0, "apk_loader's exit code %d: %.300s", rc, read_file(ld->err, NULL));
	for (int i = 0; i < COUNT; i++)
		want += 3 * i + 8;
	text = read_file(ld->out, NULL);
	CHECK(strtol(text, NULL, 10) == want, "apk_loader printed '%.100s', want %ld", text, want);
	free(text);
	return 0;
out:
	free(text);
	return -1;
}

static void loader_kill(struct loader *ld)
{
	if (ld->pid > 0) {
		kill_quietly(ld->pid, SIGKILL);
		wait_exit(ld->pid, 5000, NULL);
	}
	ld->pid = -1;
}

/* --- the records ---------------------------------------------------------------------- */

struct seen {
	int events, returns, other, with_stack;
	char arg[COUNT], ret[COUNT];  /* how often each i / each 3 * i + 8 was seen */
	int bad_arg, bad_ret;
	char file[VM_PATH_MAX];
	bool file_differs;
};

static void note_file(const struct jdoc *d, const struct jnode *probe, struct seen *s)
{
	char f[VM_PATH_MAX];

	if (json_str_decode(json_get(d, probe, "file"), f, sizeof(f)) < 0)
		f[0] = '\0';
	if (!s->file[0])
		snprintf(s->file, sizeof(s->file), "%s", f);
	else if (strcmp(s->file, f))
		s->file_differs = true;
}

/* One frame's symbol, file (NULL: not checked) and offset (~0: not checked). */
static int check_frame(struct tc *t, const struct jdoc *d, const struct jnode *st, int i,
		       const char *sym, const char *file, unsigned long long off, long line)
{
	const struct jnode *f = json_at(d, st, i), *s = json_get(d, f, "symbol");
	char got[VM_PATH_MAX] = "";
	unsigned long long o = 0;

	CHECK(f, "line %ld: no frame %d (want %s)", line, i, sym);
	CHECK(json_str_is(s, sym), "line %ld: frame %d is '%.*s', want %s", line, i,
	      s ? (int)s->len : 0, s ? s->s : "", sym);
	json_str_decode(json_get(d, f, "file"), got, sizeof(got));
	CHECK(!file || !strcmp(got, file), "line %ld: frame %d (%s) in '%s', want %s", line, i,
	      sym, got, file);
	CHECK(off == ~0ULL || (json_u64(json_get(d, f, "offset"), &o) == 0 && o == off),
	      "line %ld: frame %d (%s) at offset 0x%llx, want 0x%llx", line, i, sym, o, off);
	return 0;
out:
	return -1;
}

/* demo_fn in the APK's entry, called by apk_loader's apk_call_one, apk_run_calls, main. */
static int check_stack(struct tc *t, const struct jdoc *d, const struct jnode *st,
		       const struct apk *a, long line)
{
	CHECK(st->type == J_ARR, "line %ld: the stack is no array", line);
	if (check_frame(t, d, st, 0, "demo_fn", a->member, a->fn_off, line) < 0 ||
	    check_frame(t, d, st, 1, "apk_call_one", ROOT LOADER, ~0ULL, line) < 0 ||
	    check_frame(t, d, st, 2, "apk_run_calls", ROOT LOADER, ~0ULL, line) < 0 ||
	    check_frame(t, d, st, 3, "main", ROOT LOADER, ~0ULL, line) < 0)
		goto out;
	return 0;
out:
	return -1;
}

static void add_record(struct tc *t, const struct jdoc *d, const struct apk *a,
		       struct seen *s, long line)
{
	const struct jnode *root = &d->n[0], *probe = json_get(d, root, "probe");
	const struct jnode *f = json_get(d, root, "fields"), *st = json_get(d, root, "stack");
	unsigned long long v;

	if (!json_str_is(json_get(d, probe, "method"), "demo_fn")) {
		s->other++;
		return;
	}
	note_file(d, probe, s);
	if (st) {
		s->with_stack++;
		if (check_stack(t, d, st, a, line) < 0)
			return;
	}
	if (json_str_is(json_get(d, root, "type"), "return")) {
		s->returns++;
		if (json_u64(json_get(d, f, "return_value"), &v) || v < 8 || (v - 8) % 3 ||
		    (v - 8) / 3 >= COUNT)
			s->bad_ret++;
		else
			s->ret[(v - 8) / 3]++;
		return;
	}
	s->events++;
	if (json_u64(json_get(d, f, "r0"), &v) || v >= COUNT)
		s->bad_arg++;
	else
		s->arg[v]++;
}

static int read_seen(struct tc *t, const char *path, const struct apk *a, struct seen *s)
{
	size_t len;
	char *text = read_file(path, &len);
	struct jdoc doc = { 0 };
	long line = 0;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	for (char *p = text; p < text + len && !t->failed;) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
		const struct jnode *type;

		line++;
		if (json_parse(&doc, p, n) < 0) {
			tc_fail(t, "line %ld is not JSON: %.200s", line, p);
			break;
		}
		type = json_get(&doc, &doc.n[0], "type");
		if (json_str_is(type, "event") || json_str_is(type, "return"))
			add_record(t, &doc, a, s, line);
		p += n + 1;
	}
	if (t->failed)
		rc = -1;
	json_free(&doc);
	free(text);
	return rc;
}

/* Each of 0..COUNT-1 seen exactly once in V. */
static int once_each(const char *v)
{
	for (int i = 0; i < COUNT; i++)
		if (v[i] != 1)
			return i;
	return -1;
}

enum want { W_CALLS = 1, W_RETURNS = 2, W_STACKS = 4 };

static void check_seen(struct tc *t, const struct seen *s, const struct apk *a, unsigned want)
{
	int i;

	EQ(s->other, 0, "records of other functions");
	EQ(s->events, want & W_CALLS ? COUNT : 0, "demo_fn calls (entry records)");
	EQ(s->returns, want & W_RETURNS ? COUNT : 0, "demo_fn returns");
	EQ(s->with_stack, want & W_STACKS ? COUNT : 0, "records with a stack");
	EQ(s->bad_arg, 0, "calls whose argument is no i of 0..299");
	EQ(s->bad_ret, 0, "returns that are no 3 * i + 8");
	CHECK(!(want & W_CALLS) || (i = once_each(s->arg)) < 0,
	      "demo_fn(%d) seen %d times, not once", i, s->arg[i]);
	CHECK(!(want & W_RETURNS) || (i = once_each(s->ret)) < 0,
	      "return value %d seen %d times, not once", 3 * i + 8, s->ret[i]);
	CHECK(!strcmp(s->file, a->member) && !s->file_differs,
	      "probed file '%s', expected %s (the APK's entry)", s->file, a->member);
out:
	return;
}

/* --- the scenarios -------------------------------------------------------------------- */

/* `uprobestats trace --pid P --format json ARGS… PATTERN` (legacy round: --target-kernel)
 * on a held apk_loader of the PAGE APK; PATTERN's "%s" is the app's APK!/ENTRY. */
static void traced(struct tc *t, int page, const char *const *args, const char *pattern,
		   unsigned want)
{
	struct apk a;
	struct loader ld = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct seen s;
	char pid[16], pat[VM_PATH_MAX + 64];
	const char *argv[24];
	int n = 0;

	if (apk_info(t, page, &a) < 0 || loader_start(t, &ld, &a) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)ld.pid);
	snprintf(pat, sizeof(pat), pattern, a.lib);
	argv[n++] = "trace";
	if (t->env->target_kernel) {
		argv[n++] = "--target-kernel";
		argv[n++] = t->env->target_kernel;
	}
	argv[n++] = "--pid";
	argv[n++] = pid;
	argv[n++] = "--format";
	argv[n++] = "json";
	for (int i = 0; args[i] && n < 22; i++)
		argv[n++] = args[i];
	argv[n++] = pat;
	argv[n] = NULL;
	if (ups_start(t, &u, argv, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    loader_go_wait(t, &ld) < 0)
		goto out;
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0)
		goto out;
	if (read_seen(t, u.out, &a, &s) == 0)
		check_seen(t, &s, &a, want);
out:
	loader_kill(&ld);
	if (u.pid > 0)
		ups_stop(&u, 9);
}

static const char *const NO_ARGS[] = { NULL };

static void every_call_by_apk_path(struct tc *t)
{
	traced(t, 4096, NO_ARGS, "%s:demo_fn", W_CALLS);
}

/* APK!ENTRY: the same entry without the '/' after the '!' (issue 33 item 1). */
static void every_call_by_apk_path_without_slash(struct tc *t)
{
	struct apk a;
	char pat[VM_PATH_MAX + 16];

	if (apk_info(t, 4096, &a) < 0)
		return;
	snprintf(pat, sizeof(pat), "%s", a.lib);
	memmove(strstr(pat, "!/") + 1, strstr(pat, "!/") + 2, strlen(strstr(pat, "!/") + 1));
	strcat(pat, ":demo_fn");
	traced(t, 4096, NO_ARGS, pat, W_CALLS);
}

/* APK!NAME: a tombstone's spelling, the entry by its file name only; the records name
 * the entry by its whole name. */
static void every_call_by_tombstone_spelling(struct tc *t)
{
	struct apk a;
	char pat[VM_PATH_MAX + 16];

	if (apk_info(t, 4096, &a) < 0)
		return;
	snprintf(pat, sizeof(pat), "%s", a.lib);
	snprintf(strstr(pat, "!/") + 1, sizeof(pat) - (size_t)(strstr(pat, "!/") + 1 - pat),
		 "libdemo.so:demo_fn");
	traced(t, 4096, NO_ARGS, pat, W_CALLS);
}

static void every_call_by_library_name(struct tc *t)
{
	traced(t, 4096, NO_ARGS, "libdemo.so:demo_fn", W_CALLS);
}

static void ret_values_exact(struct tc *t)
{
	const char *const args[] = { "--ret", NULL };

	traced(t, 4096, args, "%s:demo_fn", W_RETURNS);
}

/* --stack at demo_fn's entry: demo_fn in the APK's entry at its file offset in the
 * stored ELF (readelf's, mkinitramfs.sh), then apk_loader's apk_call_one, apk_run_calls
 * and main, through CFI (the library's) and the program's frames. */
static void stack_names_demo_fn_and_its_callers(struct tc *t)
{
	const char *const args[] = { "--stack", NULL };
	char *err = NULL;
	struct apk a;

	if (!t->env->target_kernel) {
		traced(t, 4096, args, "libdemo.so:demo_fn", W_CALLS | W_STACKS);
		return;
	}
	if (apk_info(t, 4096, &a) < 0)
		return;
	char pat[VM_PATH_MAX + 16];
	snprintf(pat, sizeof(pat), "%s:demo_fn", a.member);
	const char *legacy[] = { "trace", "--target-kernel", t->env->target_kernel, "--stack",
				 "--duration", "1", pat, NULL };
	int rc = ups_run(t, legacy, WAIT_MS, &err);
	CHECK(rc != 0 && err && strstr(err, "no legacy form"),
	      "--stack with --target-kernel: exit %d, stderr: %.300s", rc, err ? err : "");
out:
	free(err);
}

/* zipalign -P 16 (Android 15+ on 16 KiB page devices): the library linked for 16 KiB
 * pages stored at a 16 KiB aligned offset; by its name, with --ret. */
static void aligned_16k_ret_values_by_library_name(struct tc *t)
{
	const char *const args[] = { "--ret", NULL };

	traced(t, 16384, args, "libdemo.so:demo_fn", W_RETURNS);
}

const struct vmcase vm_apk_cases[] = {
	{ "apk.every_call_by_apk_path", every_call_by_apk_path },
	{ "apk.every_call_by_apk_path_without_slash", every_call_by_apk_path_without_slash },
	{ "apk.every_call_by_tombstone_spelling", every_call_by_tombstone_spelling },
	{ "apk.every_call_by_library_name", every_call_by_library_name },
	{ "apk.ret_values_exact", ret_values_exact },
	{ "apk.stack_names_demo_fn_and_its_callers", stack_names_demo_fn_and_its_callers },
	{ "apk.aligned_16k_ret_values_by_library_name", aligned_16k_ret_values_by_library_name },
	{ NULL, NULL },
};
