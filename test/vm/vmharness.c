/* vmharness.c — the harness of vmtest.h: test context, targets, uprobestats runs and
 * the reduction of their JSON Lines output. */
#include "vmtest.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vmjson.h"

#define ATTACH_TIMEOUT_MS 120000
#define GO_TIMEOUT_MS 60000
#define EXIT_TIMEOUT_MS 300000

void tc_fail(struct tc *t, const char *fmt, ...)
{
	va_list ap;

	if (t->failed)
		return;
	t->failed = true;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
}

void tc_skip(struct tc *t, const char *fmt, ...)
{
	va_list ap;

	if (t->failed || t->skipped)
		return;
	t->skipped = true;
	va_start(ap, fmt);
	vsnprintf(t->msg, sizeof(t->msg), fmt, ap);
	va_end(ap);
}

const char *tc_path(struct tc *t, const char *base, char *buf)
{
	snprintf(buf, VM_PATH_MAX, "%s/%s-%d", t->dir, base, t->nfiles++);
	return buf;
}

int tc_write(struct tc *t, const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		tc_fail(t, "cannot write %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int tc_proc_name(struct tc *t, const char *name)
{
	const char *n = name ? name : t->env->argv0_orig;
	size_t len = strlen(n);

	if (len + 1 > t->env->argv0_size) {
		tc_fail(t, "cannot show '%s' as argv[0]: only %zu bytes", n, t->env->argv0_size);
		return -1;
	}
	memset(t->env->argv0, 0, t->env->argv0_size);
	memcpy(t->env->argv0, n, len);
	return 0;
}

const char *target_path(struct tc *t, const char *exe, char *buf)
{
	snprintf(buf, VM_PATH_MAX, "%s/%s", t->env->targets, exe);
	return buf;
}

/* --- targets ------------------------------------------------------------------------------ */

/* Waits until /proc/PID/cmdline shows ARGV0, as a lookup by name sees it: fork()
 * returns before the child has exec'd, and until exec lays out the new arguments the
 * cmdline is the harness's own (or empty), so a run started now could miss the target. */
static int wait_named(struct tc *t, pid_t pid, const char *argv0)
{
	long long deadline = now_ms() + GO_TIMEOUT_MS;
	char path[64];
	int code;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	for (;;) {
		char *cmdline = read_file(path, NULL);
		bool named = !strcmp(cmdline, argv0); /* argv[0] ends at the first NUL */

		free(cmdline);
		if (named)
			return 0;
		if (reap_if_exited(pid, &code) != 0 || now_ms() > deadline) {
			tc_fail(t, "target %d never showed argv[0] '%s'", (int)pid, argv0);
			return -1;
		}
		sleep_ms(1);
	}
}

int target_start(struct tc *t, struct target *tg, const char *exe, const char *argv0,
		 const char *const args[])
{
	char path[VM_PATH_MAX];
	const char *argv[16];
	int n = 0;

	tg->pid = -1;
	target_path(t, exe, path);
	tc_path(t, "go", tg->fifo);
	tc_path(t, "target.out", tg->out);
	tc_path(t, "target.err", tg->err);
	if (mkfifo(tg->fifo, 0600) < 0) {
		tc_fail(t, "mkfifo %s: %s", tg->fifo, strerror(errno));
		return -1;
	}
	argv[n++] = argv0 ? argv0 : path;
	argv[n++] = "--go-fifo";
	argv[n++] = tg->fifo;
	for (int i = 0; args[i] && n < 15; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	tg->pid = spawn(path, (char *const *)argv, tg->out, tg->err, SPAWN_NONE);
	if (tg->pid < 0) {
		tc_fail(t, "cannot start %s: %s", path, strerror(errno));
		return -1;
	}
	return wait_named(t, tg->pid, argv[0]);
}

int native_start(struct tc *t, struct target *tg, long count, long base, int threads,
		 const char *argv0)
{
	char c[32], b[32], th[16];

	snprintf(c, sizeof(c), "%ld", count);
	snprintf(b, sizeof(b), "%ld", base);
	snprintf(th, sizeof(th), "%d", threads);
	const char *args[] = { "--threads", th, c, b, NULL };
	return target_start(t, tg, "target_native", argv0, args);
}

int target_go(struct tc *t, struct target *tg)
{
	long long deadline = now_ms() + GO_TIMEOUT_MS;
	int fd;

	/* Non-blocking: a target that died never opens its end (ENXIO until then). */
	while ((fd = open(tg->fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
		if (errno != ENXIO || now_ms() > deadline) {
			tc_fail(t, "target %d never opened its go FIFO: %s", (int)tg->pid,
				strerror(errno));
			return -1;
		}
		sleep_ms(5);
	}
	ssize_t w = write(fd, "go\n", 3);
	close(fd);
	if (w != 3) {
		tc_fail(t, "cannot tell target %d to go", (int)tg->pid);
		return -1;
	}
	return 0;
}

int target_wait(struct tc *t, struct target *tg, int timeout_ms)
{
	int rc = wait_exit(tg->pid, timeout_ms, NULL);
	pid_t pid = tg->pid;

	tg->pid = -1;
	if (rc == 0)
		return 0;
	char *err = read_file(tg->err, NULL);
	if (rc < 0)
		tc_fail(t, "target %d did not finish in %d s (killed)", (int)pid,
			timeout_ms / 1000);
	else
		tc_fail(t, "target exit code: expected 0, got %d; its stderr: %.300s", rc, err);
	free(err);
	return -1;
}

void target_kill(struct target *tg)
{
	if (tg->pid > 0) {
		kill_quietly(tg->pid, SIGKILL);
		wait_exit(tg->pid, 5000, NULL);
		tg->pid = -1;
	}
}

/* --- uprobestats ------------------------------------------------------------------------- */

int ups_start(struct tc *t, struct ups *u, const char *const args[], enum spawn_flags flags)
{
	const char *argv[32];
	int n = 0;

	u->rc = -1;
	tc_path(t, "ups.out", u->out);
	tc_path(t, "ups.err", u->err);
	argv[n++] = t->env->bin;
	for (int i = 0; args[i] && n < 29; i++)
		argv[n++] = args[i];
	/* `run` (or a bare CONFIG) takes --target-kernel; check, methods, … do not. */
	if (t->env->target_kernel && args[0] && (!strcmp(args[0], "run") || args[0][0] == '/')) {
		argv[n++] = "--target-kernel";
		argv[n++] = t->env->target_kernel;
	}
	argv[n] = NULL;
	u->pid = spawn(t->env->bin, (char *const *)argv, u->out, u->err, flags);
	if (u->pid < 0) {
		tc_fail(t, "cannot start %s: %s", t->env->bin, strerror(errno));
		return -1;
	}
	return 0;
}

char *ups_stderr(struct ups *u)
{
	return read_file(u->err, NULL);
}

const char *ups_stderr_tail(struct ups *u)
{
	static char tail[1600];
	char *err = ups_stderr(u);
	size_t len = strlen(err);
	const char *from = len > sizeof(tail) - 1 ? err + len - (sizeof(tail) - 1) : err;
	size_t j = 0;

	for (const char *p = from; *p && j < sizeof(tail) - 4; p++) {
		if (*p == '\n') {
			if (p[1] != '\0') {
				memcpy(tail + j, " | ", 3);
				j += 3;
			}
		} else {
			tail[j++] = *p;
		}
	}
	tail[j] = '\0';
	free(err);
	return tail;
}

int ups_wait_for(struct tc *t, struct ups *u, const char *needle, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;

	for (;;) {
		char *err = ups_stderr(u);
		bool found = strstr(err, needle) != NULL;
		free(err);
		if (found)
			return 0;
		if (reap_if_exited(u->pid, &u->rc) == 1) {
			u->pid = -1;
			tc_fail(t, "uprobestats exited before '%s' (exit code %d): %s", needle,
				u->rc, ups_stderr_tail(u));
			return -1;
		}
		if (now_ms() > deadline)
			break;
		sleep_ms(10);
	}
	ups_stop(u, SIGINT);
	tc_fail(t, "no '%s' from uprobestats within %d s: %s", needle, timeout_ms / 1000,
		ups_stderr_tail(u));
	return -1;
}

int ups_wait_attached(struct tc *t, struct ups *u)
{
	return ups_wait_for(t, u, "attached", ATTACH_TIMEOUT_MS);
}

int ups_wait(struct ups *u, int timeout_ms, struct statsd_rx *rx)
{
	if (u->pid <= 0)
		return u->rc;
	u->rc = wait_exit(u->pid, timeout_ms, rx);
	u->pid = -1;
	return u->rc;
}

int ups_stop(struct ups *u, int sig)
{
	if (u->pid > 0)
		kill_quietly(u->pid, sig ? sig : SIGINT);
	return ups_wait(u, EXIT_TIMEOUT_MS, NULL);
}

int check_rc(struct tc *t, struct ups *u, int rc, int want, const char *what)
{
	if (rc == want)
		return 0;
	if (rc < 0)
		tc_fail(t, "%s: uprobestats did not exit in time (killed); stderr: %s", what,
			ups_stderr_tail(u));
	else
		tc_fail(t, "%s: expected %d, got %d; stderr: %s", what, want, rc,
			ups_stderr_tail(u));
	return -1;
}

int ups_run(struct tc *t, const char *const args[], int timeout_ms, char **err)
{
	struct ups u;

	*err = NULL;
	if (ups_start(t, &u, args, SPAWN_NONE) < 0)
		return -1;
	int rc = ups_wait(&u, timeout_ms, NULL);
	*err = ups_stderr(&u);
	return rc;
}

int ups_run_held(struct tc *t, struct ups *u, struct target *tg, const char *const args[],
		 int timeout_ms)
{
	if (ups_start(t, u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, u) < 0 ||
	    target_go(t, tg) < 0 || target_wait(t, tg, timeout_ms) < 0)
		return -1;
	return check_rc(t, u, ups_wait(u, timeout_ms, NULL), 0, "exit code");
}

/* --- results -------------------------------------------------------------------------------- */

static int get_u64(const struct jdoc *d, const struct jnode *obj, const char *key,
		   unsigned long long *out)
{
	return json_u64(json_get(d, obj, key), out);
}

/* The fields of one event or return record; -1 when a field its kind has is missing. */
static int read_event(const struct jdoc *d, const struct jnode *root, struct ev *e)
{
	const struct jnode *f = json_get(d, root, "fields");
	unsigned long long pid, tid;
	char reg[4];

	if (get_u64(d, root, "pid", &pid) < 0 || get_u64(d, root, "tid", &tid) < 0 || !f)
		return -1;
	e->pid = (long long)pid;
	e->tid = (long long)tid;
	if (get_u64(d, root, "task_index", &e->task_index) < 0 ||
	    get_u64(d, root, "probe_index", &e->probe_index) < 0)
		return -1;
	e->has = 0;
	int nregs = 0;
	for (int i = 0; i < 6; i++) {
		snprintf(reg, sizeof(reg), "r%d", i);
		nregs += get_u64(d, f, reg, &e->r[i]) == 0;
	}
	if (nregs == 6)
		e->has |= H_REGS;
	if (get_u64(d, f, "event", &e->event_id) == 0)
		e->has |= H_EVENT_ID;
	if (get_u64(d, f, "timestamp_ns", &e->timestamp_ns) == 0)
		e->has |= H_TIMESTAMP;
	if (get_u64(d, f, "return_value", &e->return_value) == 0)
		e->has |= H_RETVAL;
	if (get_u64(d, f, "duration_ns", &e->duration_ns) == 0)
		e->has |= H_DURATION;
	if (get_u64(d, root, "duration_ns", &e->top_duration_ns) == 0)
		e->has |= H_TOP_DURATION;
	if (get_u64(d, root, "boot_ns", &e->boot_ns) < 0)
		return -1;
	if (e->kind == EV_RETURN && !(e->has & H_RETVAL))
		return -1;
	return 0;
}

static int read_summary(const struct jdoc *d, const struct jnode *root, struct results *res)
{
	const struct jnode *probes = json_get(d, root, "probes");
	int n = json_count(d, probes);

	if (!probes || probes->type != J_ARR || n > MAX_PROBES)
		return -1;
	for (int i = 0; i < n; i++) {
		const struct jnode *p = json_at(d, probes, i);
		struct probe_sum *s = &res->sum[i];
		if (get_u64(d, p, "hits", &s->hits) < 0 ||
		    get_u64(d, p, "delivered", &s->delivered) < 0 ||
		    get_u64(d, p, "dropped_kernel", &s->dropped_kernel) < 0 ||
		    get_u64(d, p, "dropped_sink", &s->dropped_sink) < 0)
			return -1;
	}
	res->nprobes = n;
	res->nsummary++;
	return 0;
}

static int add_line(struct results *res, struct jdoc *d, const char *line, size_t len)
{
	if (json_parse(d, line, len) < 0)
		return -1;
	const struct jnode *root = &d->n[0];
	const struct jnode *type = json_get(d, root, "type");
	if (!type || type->type != J_STR)
		return -1;
	if (json_str_is(type, "summary"))
		return read_summary(d, root, res);
	if (res->nev == res->cap) {
		res->cap = res->cap ? res->cap * 2 : 1024;
		res->ev = realloc(res->ev, (size_t)res->cap * sizeof(*res->ev));
		if (!res->ev)
			abort();
	}
	struct ev *e = &res->ev[res->nev];
	memset(e, 0, sizeof(*e));
	e->kind = json_str_is(type, "event") ? EV_EVENT :
		  json_str_is(type, "return") ? EV_RETURN : EV_OTHER;
	if (e->kind != EV_OTHER && read_event(d, root, e) < 0)
		return -1;
	res->nev++;
	return 0;
}

int results_read(struct tc *t, const char *path, struct results *res)
{
	size_t len;
	char *text = read_file(path, &len);
	struct jdoc d = { 0 };
	int rc = 0;

	memset(res, 0, sizeof(*res));
	for (char *line = text; line < text + len;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
		res->lines++;
		if (add_line(res, &d, line, n) < 0) {
			tc_fail(t, "line %ld of the output is not a record the tests know: %.200s",
				res->lines, line);
			rc = -1;
			break;
		}
		line += n + 1;
	}
	json_free(&d);
	free(text);
	return rc;
}

void results_free(struct results *res)
{
	free(res->ev);
	memset(res, 0, sizeof(*res));
}

int results_count(const struct results *res, enum ev_kind kind, long long pid)
{
	int n = 0;

	for (int i = 0; i < res->nev; i++)
		n += res->ev[i].kind == kind && (pid == 0 || res->ev[i].pid == pid);
	return n;
}

int check_summary(struct tc *t, const struct results *res, const struct probe_sum *want, int n)
{
	if (res->nsummary != 1) {
		tc_fail(t, "expected one summary line, found %d", res->nsummary);
		return -1;
	}
	if (res->nprobes != n) {
		tc_fail(t, "summary: expected %d probe rows, got %d", n, res->nprobes);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const struct probe_sum *g = &res->sum[i], *w = &want[i];
		if (g->hits != w->hits || g->delivered != w->delivered ||
		    g->dropped_kernel != w->dropped_kernel || g->dropped_sink != w->dropped_sink) {
			tc_fail(t,
				"summary probe %d (hits, delivered, dropped in kernel, at sinks): "
				"expected (%llu, %llu, %llu, %llu), got (%llu, %llu, %llu, %llu)",
				i, w->hits, w->delivered, w->dropped_kernel, w->dropped_sink,
				g->hits, g->delivered, g->dropped_kernel, g->dropped_sink);
			return -1;
		}
	}
	return 0;
}

/* --- configs ---------------------------------------------------------------------------------- */

int native_task(struct tc *t, char *text, size_t size, const char *symbol, const char *prog,
		const char *target_name, int duration, const char *extra)
{
	char exe[VM_PATH_MAX];
	const char *map =
		strcmp(prog, "call_detail") == 0 ? "call_detail_buf" : "call_timestamp_buf";
	int n = snprintf(text, size,
			 "tasks {\n"
			 "  probe_configs {\n"
			 "    bpf_name: \"prog_GenericInstrumentation_uprobe_%s\"\n"
			 "    file_paths: \"%s\"\n"
			 "    method_signature: \"%s\"\n"
			 "  }\n"
			 "  bpf_maps: \"map_GenericInstrumentation_%s\"\n",
			 prog, target_path(t, "target_native", exe), symbol, map);
	if (target_name)
		n += snprintf(text + n, size - (size_t)n, "  target_process_name: \"%s\"\n",
			      target_name);
	if (duration)
		n += snprintf(text + n, size - (size_t)n, "  duration_seconds: %d\n", duration);
	if (extra)
		n += snprintf(text + n, size - (size_t)n, "%s\n", extra);
	n += snprintf(text + n, size - (size_t)n, "}\n");
	if ((size_t)n >= size) {
		tc_fail(t, "config text longer than %zu bytes", size);
		return -1;
	}
	return n;
}

const char *native_config(struct tc *t, const char *symbol, const char *prog,
			  const char *target_name, int duration, const char *extra)
{
	static char path[VM_PATH_MAX];
	char text[4096];

	if (native_task(t, text, sizeof(text), symbol, prog, target_name, duration, extra) < 0)
		return NULL;
	tc_path(t, "config.textproto", path);
	return tc_write(t, path, text) == 0 ? path : NULL;
}
