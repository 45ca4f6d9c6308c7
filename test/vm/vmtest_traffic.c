/* vmtest_traffic.c — `uprobestats traffic` and `uprobestats sections` on real arm64
 * Android processes: the arm64 Android 11 userland at /android (vmtest_bionic.c), in a
 * chroot, as test/bionic/test_bionic_traffic.py and test/e2e/test_sections.py run the
 * x86_64 one on the host.
 *
 * traffic: toybox nc, a server (`nc -l`) and a client over TCP on loopback.  The server
 * is blocked in accept() since before the attach, so its connection is a socket of
 * unknown family and peer ("?"), bytes exact; the client starts after the attach and
 * finds the server by a name the chroot's /system/etc/hosts maps (mkinitramfs.sh writes
 * it; bionic resolves it in the process when netd's proxy is not there), so the host
 * name comes from bionic's android_getaddrinfofornet.  toybox nc copies with one read()
 * and one write() per chunk, and each chunk here is one pipe write of less than
 * PIPE_BUF: one call per direction and side; its stdin/stdout pipes are no traffic.
 *
 * sections: target_atrace (test/targets/android/, built for arm64 by mk/vm.mk with
 * clang's Android target against the userland's own libc.so and libcutils.so) in the
 * chroot calls libcutils' atrace_*_body: nesting, names, async pairs, counters and the
 * summary counts exactly as the host test has them.
 *
 * In the legacy round every run gets --target-kernel too. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
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
#define HOST_NAME "upst-nc.test" /* mkinitramfs.sh: 127.0.0.1 in /system/etc/hosts */
#define UP_BYTES 1000            /* client to server */
#define DOWN_BYTES 300           /* server to client */
#define WAIT_MS 120000
#define IO_MS 20000

/* A chrooted Android program with its stdin and stdout on pipes. */
struct droid {
	pid_t pid;
	int in, out; /* our ends: its stdin, its stdout */
	char err[VM_PATH_MAX];
	const char *stdout_path; /* its stdout instead of a pipe (opened here, outside ROOT) */
};

static int droid_start(struct tc *t, struct droid *d, char *const argv[], const char *errname)
{
	int in[2], out[2];

	d->pid = -1;
	d->in = d->out = -1;
	tc_path(t, errname, d->err);
	CHECK(access(ROOT TOYBOX, X_OK) == 0, "no Android userland at " ROOT);
	/* close-on-exec: only the program gets them (a pipe our later children held open
	 * would never break) */
	CHECK(pipe2(in, O_CLOEXEC) == 0 && pipe2(out, O_CLOEXEC) == 0, "pipe: %s",
	      strerror(errno));
	d->pid = fork();
	CHECK(d->pid >= 0, "fork: %s", strerror(errno));
	if (d->pid == 0) {
		int err = open(d->err, O_WRONLY | O_CREAT | O_APPEND, 0644);
		int o = d->stdout_path ? open(d->stdout_path, O_WRONLY) : out[1];
		dup2(in[0], 0);
		dup2(o, 1);
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

/* Exactly N bytes of C from D's stdout within IO_MS. */
static int read_exact(struct tc *t, struct droid *d, long n, char c, const char *who)
{
	char buf[4096];
	long got = 0, t0 = now_ms();

	while (got < n) {
		struct pollfd p = { .fd = d->out, .events = POLLIN };
		ssize_t k;
		CHECK(now_ms() - t0 < IO_MS, "%s (pid %d) wrote %ld of %ld bytes: %.200s", who,
		      (int)d->pid, got, n, read_file(d->err, NULL));
		if (poll(&p, 1, 100) <= 0)
			continue;
		k = read(d->out, buf, sizeof(buf) < (size_t)(n - got) ? sizeof(buf)
								  : (size_t)(n - got));
		CHECK(k > 0, "%s (pid %d) closed its stdout after %ld of %ld bytes: %.200s", who,
		      (int)d->pid, got, n, read_file(d->err, NULL));
		for (ssize_t i = 0; i < k; i++)
			CHECK(buf[i] == c, "%s wrote '%c', expected '%c'", who, buf[i], c);
		got += k;
	}
	return 0;
out:
	return -1;
}

static int write_all(struct tc *t, struct droid *d, long n, char c)
{
	char buf[UP_BYTES];

	memset(buf, c, sizeof(buf));
	CHECK(n <= (long)sizeof(buf) && write(d->in, buf, (size_t)n) == n, "write: %s",
	      strerror(errno));
	return 0;
out:
	return -1;
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

/* --- traffic's rows ---------------------------------------------------------------------- */

/* One JSON Lines row of a pid, as the checks read it. */
struct row {
	char proto[8], peer[64], host[64], iface[16]; /* "null" when JSON null */
	unsigned long long tx_bytes, rx_bytes, tx_calls, rx_calls;
};

static void str_field(const struct jdoc *d, const struct jnode *o, const char *key, char *buf,
		      size_t size)
{
	const struct jnode *n = json_get(d, o, key);

	if (!n)
		snprintf(buf, size, "(absent)");
	else if (n->type == J_NULL)
		snprintf(buf, size, "null");
	else if (json_str_decode(n, buf, size) < 0)
		snprintf(buf, size, "(not a string)");
}

/* The rows (lines beginning {"type":"traffic", but the summary's) of PID in PATH: their
 * count (up to MAX), or -1. */
static int traffic_rows(struct tc *t, const char *path, pid_t pid, struct row *r, int max)
{
	size_t len;
	char *text = read_file(path, &len);
	struct jdoc d = { 0 };
	int n = 0;

	for (char *line = text; line < text + len;) {
		char *nl = memchr(line, '\n', (size_t)(text + len - line));
		size_t k = nl ? (size_t)(nl - line) : (size_t)(text + len - line);
		const struct jnode *o;
		unsigned long long p = 0;

		if (strncmp(line, "{\"type\":\"traffic\"", 17)) {   /* a traffic row */
			line += k + 1;
			continue;
		}
		CHECK(json_parse(&d, line, k) == 0, "a row is not JSON: %.200s", line);
		o = &d.n[0];
		if (!json_get(&d, o, "pid") && (json_get(&d, o, "uncounted_mmsg_calls") ||
						json_get(&d, o, "dropped_map_full"))) {
			line += k + 1;    /* the interval's summary, no row */
			continue;
		}
		CHECK(json_u64(json_get(&d, o, "pid"), &p) == 0, "a row without pid: %.200s",
		      line);
		if ((pid_t)p == pid && n < max) {
			struct row *w = &r[n];
			str_field(&d, o, "proto", w->proto, sizeof(w->proto));
			str_field(&d, o, "peer", w->peer, sizeof(w->peer));
			str_field(&d, o, "host", w->host, sizeof(w->host));
			str_field(&d, o, "iface", w->iface, sizeof(w->iface));
			CHECK(!json_u64(json_get(&d, o, "tx_bytes"), &w->tx_bytes) &&
			      !json_u64(json_get(&d, o, "rx_bytes"), &w->rx_bytes) &&
			      !json_u64(json_get(&d, o, "tx_calls"), &w->tx_calls) &&
			      !json_u64(json_get(&d, o, "rx_calls"), &w->rx_calls),
			      "a row without its counts: %.200s", line);
		}
		if ((pid_t)p == pid)
			n++;
		line += k + 1;
	}
	json_free(&d);
	free(text);
	return n;
out:
	json_free(&d);
	free(text);
	return -1;
}

/* Exactly one row of PID, equal to WANT. */
static int check_row(struct tc *t, const char *path, pid_t pid, const char *who,
		     const struct row *want)
{
	struct row r[4];
	int n = traffic_rows(t, path, pid, r, 4);

	if (n < 0)
		return -1;
	EQ(n, want ? 1 : 0, who);
	if (!want)
		return 0;
	CHECK(!strcmp(r->proto, want->proto) && !strcmp(r->peer, want->peer) &&
	      !strcmp(r->host, want->host) && !strcmp(r->iface, want->iface),
	      "%s: proto %s peer %s host %s iface %s, expected %s %s %s %s", who, r->proto,
	      r->peer, r->host, r->iface, want->proto, want->peer, want->host, want->iface);
	CHECK(r->tx_bytes == want->tx_bytes && r->rx_bytes == want->rx_bytes &&
	      r->tx_calls == want->tx_calls && r->rx_calls == want->rx_calls,
	      "%s: tx %llu bytes %llu calls, rx %llu bytes %llu calls; expected %llu %llu, "
	      "%llu %llu", who, r->tx_bytes, r->tx_calls, r->rx_bytes, r->rx_calls,
	      want->tx_bytes, want->tx_calls, want->rx_bytes, want->rx_calls);
	return 0;
out:
	return -1;
}

/* The exchange: the client sends UP_BYTES 'c', the server answers DOWN_BYTES 's', the
 * client shuts its side down, both exit 0. */
static int exchange(struct tc *t, struct droid *srv, struct droid *cli)
{
	if (write_all(t, cli, UP_BYTES, 'c') < 0 ||
	    read_exact(t, srv, UP_BYTES, 'c', "the server") < 0 ||
	    write_all(t, srv, DOWN_BYTES, 's') < 0 ||
	    read_exact(t, cli, DOWN_BYTES, 's', "the client") < 0)
		return -1;
	droid_close_in(cli);
	EQ(wait_exit(srv->pid, IO_MS, NULL), 0, "server exit code");
	srv->pid = -1;
	EQ(wait_exit(cli->pid, IO_MS, NULL), 0, "client exit code");
	cli->pid = -1;
	return 0;
out:
	return -1;
}

/* BY_LIB: every process that maps the chroot's libc.so (--lib), so the client, started
 * after the attach, is seen from its name lookup on; else -p SERVER only (the client's
 * calls must not count). */
static void toybox_nc(struct tc *t, bool by_lib)
{
	static int seq;
	int port = 26000 + (getpid() * 7 + ++seq) % 3000;
	char sport[16], spid[16], dport[16];
	struct droid srv = { .pid = -1, .in = -1, .out = -1 };
	struct droid cli = { .pid = -1, .in = -1, .out = -1 };
	struct ups u = { .pid = -1 };
	const char *args[16];
	int n = 0;
	long long t0 = now_ms();

	snprintf(sport, sizeof(sport), "%d", port);
	char *const server[] = { TOYBOX, "nc", "-l", "-s", "127.0.0.1", "-p", sport, NULL };
	char *const client[] = { TOYBOX, "nc", HOST_NAME, sport, NULL };
	if (droid_start(t, &srv, server, "server.err") < 0)
		goto out;
	while (!listening(port)) {
		int code;
		CHECK(reap_if_exited(srv.pid, &code) == 0, "nc -l exited (%d): %.300s", code,
		      read_file(srv.err, NULL));
		CHECK(now_ms() - t0 < IO_MS, "nc -l did not listen on 127.0.0.1:%d", port);
		sleep_ms(10);
	}
	snprintf(spid, sizeof(spid), "%d", (int)srv.pid);
	args[n++] = "traffic";
	if (by_lib) {
		args[n++] = "--lib";
		args[n++] = ROOT LIBC;
	} else {
		args[n++] = "-p";
		args[n++] = spid;
	}
	args[n++] = "--format";
	args[n++] = "json";
	if (t->env->target_kernel) {
		args[n++] = "--target-kernel";
		args[n++] = t->env->target_kernel;
	}
	args[n] = NULL;
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    droid_start(t, &cli, client, "client.err") < 0)
		goto out;
	pid_t srv_pid = srv.pid, cli_pid = cli.pid;
	if (exchange(t, &srv, &cli) < 0 ||
	    check_rc(t, &u, ups_stop(&u, 2), 0,
		     "traffic exit code") < 0)
		goto out;
	snprintf(dport, sizeof(dport), "127.0.0.1:%d", port);
	struct row want_cli = { .tx_bytes = UP_BYTES, .rx_bytes = DOWN_BYTES, .tx_calls = 1,
				.rx_calls = 1 };
	snprintf(want_cli.proto, sizeof(want_cli.proto), "tcp");
	snprintf(want_cli.peer, sizeof(want_cli.peer), "%s", dport);
	snprintf(want_cli.host, sizeof(want_cli.host), HOST_NAME);
	snprintf(want_cli.iface, sizeof(want_cli.iface), "lo");
	/* accept() began before the attach: family and peer unknown, bytes exact */
	struct row want_srv = { .proto = "?", .peer = "?", .host = "null", .iface = "null",
				.tx_bytes = DOWN_BYTES, .rx_bytes = UP_BYTES, .tx_calls = 1,
				.rx_calls = 1 };
	struct row any[4];
	if (traffic_rows(t, u.out, srv_pid, any, 4) != 1) {
		char *o = read_file(u.out, NULL), *e = ups_stderr(&u);
		for (char *c = e; c && *c; c++)
			*c = *c == '\n' ? '|' : *c;
		for (char *c = o; c && *c; c++)
			*c = *c == '\n' ? '|' : *c;
		tc_fail(t, "no row of the server (pid %d; client %d): traffic's stderr: %.2500s; "
			"output: %.1500s", (int)srv_pid, (int)cli_pid, e ? e : "", o ? o : "");
		free(o);
		free(e);
		goto out;
	}
	if (check_row(t, u.out, srv_pid, "the server's rows", &want_srv) < 0)
		goto out;
	check_row(t, u.out, cli_pid, "the client's rows (its bytes, calls and looked-up name)",
		  by_lib ? &want_cli : NULL);
out:
	droid_kill(&cli);
	droid_kill(&srv);
	if (u.pid > 0)
		ups_stop(&u, 9);
}

static void traffic_nc_every_process_of_the_lib(struct tc *t)
{
	toybox_nc(t, true);
}

static void traffic_nc_server_by_pid(struct tc *t)
{
	toybox_nc(t, false);
}

/* --- every call that moves bytes (target_traffic_calls) ---------------------------------- */

#define CALLS "/system/bin/target_traffic_calls"

static int by_sig(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	int c = strcmp(a->proto, b->proto);

	if (c)
		return c;
	if (a->tx_bytes != b->tx_bytes)
		return a->tx_bytes < b->tx_bytes ? -1 : 1;
	return a->rx_bytes < b->rx_bytes ? -1 : a->rx_bytes > b->rx_bytes;
}

/* test/targets/target_traffic_calls.c built for arm64 bionic (mk/vm.mk), started after
 * the attach (--lib: every process that maps the chroot's libc.so): sendfile, splice
 * both ways, sendmmsg/recvmmsg and a socketpair, exact bytes and calls as the host's
 * test_traffic.py has them.  Its sendfile reads /system/bin/toybox (over 500 bytes).
 * bionic arm64's sendfile, splice and __sendmmsg end in b.hi __set_errno_internal. */
static void traffic_calls_exact(struct tc *t)
{
	static const struct row want[] = {   /* sorted as by_sig sorts */
		{ "tcp", "", "", "", 700, 2100, 1, 1 }, { "tcp", "", "", "", 2100, 700, 6, 1 },
		{ "udp", "", "", "", 60, 90, 1, 1 },    { "udp", "", "", "", 90, 60, 1, 1 },
		{ "unix", "", "", "", 0, 55, 0, 1 },    { "unix", "", "", "", 55, 0, 1, 0 },
	};
	char *const argv[] = { CALLS, TOYBOX, NULL };
	struct droid d = { .pid = -1, .in = -1, .out = -1 };
	struct ups u = { .pid = -1 };
	const char *args[10] = { "traffic", "--lib", ROOT LIBC, "--format", "json" };
	struct row r[8];
	int n = 5;

	if (t->env->target_kernel) {
		args[n++] = "--target-kernel";
		args[n++] = t->env->target_kernel;
	}
	args[n] = NULL;
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    droid_start(t, &d, argv, "calls.err") < 0)
		goto out;
	pid_t pid = d.pid;
	EQ(wait_exit(d.pid, WAIT_MS, NULL), 0, "target_traffic_calls exit code");
	d.pid = -1;
	if (check_rc(t, &u, ups_stop(&u, 2), 0, "traffic exit code") < 0)
		goto out;
	n = traffic_rows(t, u.out, pid, r, 8);
	EQ(n, 6, "rows of target_traffic_calls");
	qsort(r, 6, sizeof(r[0]), by_sig);
	for (int i = 0; i < 6; i++)
		CHECK(!strcmp(r[i].proto, want[i].proto) && r[i].tx_bytes == want[i].tx_bytes &&
		      r[i].rx_bytes == want[i].rx_bytes && r[i].tx_calls == want[i].tx_calls &&
		      r[i].rx_calls == want[i].rx_calls,
		      "row %d: %s tx %llu/%llu rx %llu/%llu, expected %s tx %llu/%llu rx %llu/%llu",
		      i, r[i].proto, r[i].tx_bytes, r[i].tx_calls, r[i].rx_bytes, r[i].rx_calls,
		      want[i].proto, want[i].tx_bytes, want[i].tx_calls, want[i].rx_bytes,
		      want[i].rx_calls);
out:
	droid_kill(&d);
	if (u.pid > 0)
		ups_stop(&u, 9);
}

/* A row's peer as the --edges checks compare it: "127.0.0.1" for any loopback port. */
static const char *peer_kind(const char *peer)
{
	return !strncmp(peer, "127.0.0.1:", 10) && strcmp(peer, "127.0.0.1:0") ? "127.0.0.1"
									     : peer;
}

static int by_edge(const void *x, const void *y)
{
	const struct row *a = x, *b = y;
	int c = by_sig(a, b);

	return c ? c : strcmp(peer_kind(a->peer), peer_kind(b->peer));
}

/* The summary's uncounted sendmmsg/recvmmsg figures in PATH (0 and 0 when none). */
static void uncounted_mmsg(const char *path, unsigned long long *calls,
			   unsigned long long *msgs)
{
	size_t len;
	char *text = read_file(path, &len);
	const char *at = text;

	*calls = *msgs = 0;
	while (at && (at = strstr(at, "\"uncounted_mmsg_calls\":"))) {
		unsigned long long c = 0, m = 0;
		if (sscanf(at, "\"uncounted_mmsg_calls\":%llu,\"uncounted_mmsg_messages\":%llu",
			   &c, &m) == 2)
			*calls += c, *msgs += m;
		at++;
	}
	free(text);
}

/* target_traffic_calls --edges (test_traffic.py's edge_rows): accept4 and recvfrom with a
 * short addrlen into a buffer holding 10.9.8.7:4321 ("truncated"), sendto and __sendmsg
 * naming it on a connected TCP socket (its real peer; one connected at its start too:
 * here after the attach, as nothing holds it), __sendmmsg and recvmmsg of 40
 * messages of 1..40 bytes (820; the legacy objects: the first 32's, 528, and 2 calls with
 * 16 messages in the summary). */
static void traffic_calls_edges(struct tc *t)
{
	const bool legacy = t->env->target_kernel != NULL;
	const unsigned long long mmsg = legacy ? 528 : 820;
	const struct row want[] = {   /* sorted as by_edge sorts */
		{ "tcp", "127.0.0.1", "", "", 0, 99, 0, 1 },
		{ "tcp", "truncated", "", "", 33, 165, 1, 1 },
		{ "tcp", "127.0.0.1", "", "", 99, 0, 1, 0 },
		{ "tcp", "127.0.0.1", "", "", 165, 33, 2, 1 },
		{ "udp", "truncated", "", "", 0, 66, 0, 2 },
		{ "udp", "127.0.0.1", "", "", 0, mmsg, 0, 1 },
		{ "udp", "127.0.0.1", "", "", 66, 0, 2, 0 },
		{ "udp", "127.0.0.1", "", "", mmsg, 0, 1, 0 },
	};
	char *const argv[] = { CALLS, "--edges", NULL };
	struct droid d = { .pid = -1, .in = -1, .out = -1 };
	struct ups u = { .pid = -1 };
	const char *args[10] = { "traffic", "--lib", ROOT LIBC, "--format", "json" };
	unsigned long long calls, msgs;
	struct row r[12];
	int n = 5;

	if (t->env->target_kernel) {
		args[n++] = "--target-kernel";
		args[n++] = t->env->target_kernel;
	}
	args[n] = NULL;
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    droid_start(t, &d, argv, "edges.err") < 0)
		goto out;
	pid_t pid = d.pid;
	EQ(wait_exit(d.pid, WAIT_MS, NULL), 0, "target_traffic_calls --edges exit code");
	d.pid = -1;
	if (check_rc(t, &u, ups_stop(&u, 2), 0, "traffic exit code") < 0)
		goto out;
	n = traffic_rows(t, u.out, pid, r, 12);
	EQ(n, 8, "rows of target_traffic_calls --edges");
	qsort(r, 8, sizeof(r[0]), by_edge);
	for (int i = 0; i < 8; i++)
		CHECK(!strcmp(r[i].proto, want[i].proto) &&
		      !strcmp(peer_kind(r[i].peer), want[i].peer) &&
		      r[i].tx_bytes == want[i].tx_bytes && r[i].rx_bytes == want[i].rx_bytes &&
		      r[i].tx_calls == want[i].tx_calls && r[i].rx_calls == want[i].rx_calls,
		      "row %d: %s %s tx %llu/%llu rx %llu/%llu, expected %s %s tx %llu/%llu "
		      "rx %llu/%llu", i, r[i].proto, r[i].peer, r[i].tx_bytes, r[i].tx_calls,
		      r[i].rx_bytes, r[i].rx_calls, want[i].proto, want[i].peer,
		      want[i].tx_bytes, want[i].tx_calls, want[i].rx_bytes, want[i].rx_calls);
	uncounted_mmsg(u.out, &calls, &msgs);
	CHECK(calls == (legacy ? 2 : 0) && msgs == (legacy ? 16 : 0),
	      "uncounted sendmmsg/recvmmsg: %llu call(s), %llu message(s)", calls, msgs);
out:
	droid_kill(&d);
	if (u.pid > 0)
		ups_stop(&u, 9);
}

/* --- a system call's error path ---------------------------------------------------------- */

#define ERR_RET 0xffffffffffffffffULL    /* -1 */

/* trace --ret --exit-probes on the chroot libc's write, in a toybox cat whose stdout is
 * /dev/full: bionic's write is `svc; cmn; cneg; b.hi __set_errno_internal; ret`, so
 * the write of what we send cat fails (ENOSPC) and returns -1 at
 * __set_errno_internal's ret, where its exit probe pairs it with the entry by sp.
 * The returns: exactly one -1, the others > 0 (cat's message on stderr before it
 * exits 1); no call left unwound. */
static void trace_ret_write_error_path(struct tc *t)
{
	struct droid cat = { .pid = -1, .in = -1, .out = -1, .stdout_path = "/dev/full" };
	char *const argv[] = { TOYBOX, "cat", NULL };
	struct ups u = { .pid = -1 };
	struct results res = { 0 };
	const char *args[16];
	char spid[16], *err = NULL;
	int n = 0, failed = 0, other = 0;

	if (droid_start(t, &cat, argv, "cat.err") < 0)
		goto out;
	snprintf(spid, sizeof(spid), "%d", (int)cat.pid);
	args[n++] = "trace";
	args[n++] = "-p";
	args[n++] = spid;
	args[n++] = "--format";
	args[n++] = "json";
	args[n++] = "--ret";
	args[n++] = "--exit-probes";
	if (t->env->target_kernel) {
		args[n++] = "--target-kernel";
		args[n++] = t->env->target_kernel;
	}
	args[n++] = ROOT LIBC ":write";
	args[n] = NULL;
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    write_all(t, &cat, 3, 'w') < 0)
		goto out;
	EQ(wait_exit(cat.pid, IO_MS, NULL), 1, "cat's exit code (its write to /dev/full failed)");
	cat.pid = -1;
	if (check_rc(t, &u, ups_stop(&u, 2), 0, "trace exit code") < 0 ||
	    results_read(t, u.out, &res) < 0)
		goto out;
	for (int i = 0; i < res.nev; i++) {
		const struct ev *e = &res.ev[i];
		if (e->kind != EV_RETURN || e->pid != (long long)atoi(spid))
			continue;
		CHECK(e->has & H_RETVAL, "a return without its value");
		if (e->return_value == ERR_RET)
			failed++;
		else if ((long long)e->return_value > 0)
			other++;
		else
			CHECK(0, "return value %lld", (long long)e->return_value);
	}
	err = ups_stderr(&u);
	CHECK(failed == 1, "%d returns of -1 (the failing write, at __set_errno_internal's "
	      "ret), expected 1 (%d others); stderr: %.1500s", failed, other, err);
	CHECK(!strstr(err, "unwound"), "calls left unwound: %.600s", err);
out:
	free(err);
	results_free(&res);
	droid_kill(&cat);
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
	{ "bionic_traffic.toybox_nc_tcp_exact_bytes_and_host", traffic_nc_every_process_of_the_lib },
	{ "bionic_traffic.toybox_nc_server_by_pid", traffic_nc_server_by_pid },
	{ "bionic_traffic.trace_ret_write_error_path", trace_ret_write_error_path },
	{ "bionic_traffic.sendfile_splice_mmsg_socketpair_exact", traffic_calls_exact },
	{ "bionic_traffic.short_addrlen_connected_sendto_and_40_mmsg_exact",
	  traffic_calls_edges },
	{ "bionic_sections.native_libcutils_exact", sections_native_libcutils },
	{ NULL, NULL },
};
