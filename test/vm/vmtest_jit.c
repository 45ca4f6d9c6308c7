/* vmtest_jit.c — --stack through JIT-compiled and interpreted Java frames on arm64, as
 * test/e2e/test_jit.py checks them on the host: target_jit over the test libart.so
 * (test/targets/art_jit/: ART's Android2 debugger interface, no real ART), built for
 * arm64.  Its "compiler" writes arm64 code at run time into a memfd "jit-cache" mapped
 * twice, each method's symfile carrying a .debug_frame for it; its two "interpreters"
 * keep the dex pc in x22 (as nterp does) and in x19 (as the switch interpreter does),
 * with ART's DEX1 CFI rule over that register, into the camera jar's classes.dex.
 *
 * write() (glibc's libc.so.6) is probed; each event's chain is told by its length
 * argument (target_jit.c's header):
 *   1: write, JitC.callsWrite, JitB.second, JitA.first, [art_quick_invoke], main
 *   2: write, JitC, JitB, [art_nterp_entry], A (interpreted), [art_interpret], main
 *   3: write, JitC, [art_switch_entry], B (interpreted), [art_interpret], main
 * ([...]: libart's frames, only with --show-art-frames).  Every frame of every event is
 * checked exactly: JIT frames by the names and return offsets the target's compiler gave
 * them, interpreted frames by dexdump's method name, dex pc and line, main by binutils'
 * return offsets (all from /vm/testdata/jit.txt: test/vm/jit_expect.py at build time).
 * Copy mode, copy mode with --show-art-frames, kernel mode.  The legacy round checks the
 * refusal (call stacks have no legacy form). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmjson.h"
#include "vmproc.h"
#include "vmtest.h"

#define WAIT_MS 300000
#define ROUNDS 10
#define MAX_FRAMES 8
#define MAX_OFFS 4
#define JIT_TXT "/vm/testdata/jit.txt"
#define JIT_DEX "/vm/testdata/jit.dex"

/* libart.c's arm64 code: the offset after each method's blr */
#define RET_CALLS_NEXT 0xc
#define RET_CALLS_WRITE 0x18
#define JIT_A "com.example.JitA.first"
#define JIT_B "com.example.JitB.second"
#define JIT_C "com.example.JitC.callsWrite"

struct jit_expect {
	char a_name[512], b_name[512];
	unsigned long a_insns, a_pc, a_line, b_insns, b_line;
	unsigned long invoke_ret[MAX_OFFS], interp_ret[MAX_OFFS];
	int n_invoke, n_interp;
};

enum fkind { F_WRITE, F_JIT, F_INTERP, F_ART, F_MAIN };

struct want {
	enum fkind kind;
	const char *name;
	unsigned long off;          /* JIT: return offset; interpreted: dex pc */
	unsigned long line;         /* interpreted */
	const unsigned long *offs;  /* main: its return offsets */
	int n_offs;
};

struct chain {
	struct want f[MAX_FRAMES];
	int n;
};

static int read_offs(const char *s, unsigned long *o)
{
	int n = 0;
	char *end;

	while (n < MAX_OFFS) {
		unsigned long v = strtoul(s, &end, 10);
		if (end == s)
			break;
		o[n++] = v;
		s = end;
	}
	return n;
}

static int read_expect(struct tc *t, struct jit_expect *e)
{
	char *text = read_file(JIT_TXT, NULL), *save = NULL;
	char *l[6];
	int n = 0;

	memset(e, 0, sizeof(*e));
	for (char *p = text ? strtok_r(text, "\n", &save) : NULL; p && n < 6;
	     p = strtok_r(NULL, "\n", &save))
		l[n++] = p;
	if (n == 6) {
		snprintf(e->a_name, sizeof(e->a_name), "%s", l[0]);
		snprintf(e->b_name, sizeof(e->b_name), "%s", l[2]);
		e->n_invoke = read_offs(l[4], e->invoke_ret);
		e->n_interp = read_offs(l[5], e->interp_ret);
	}
	if (n != 6 || sscanf(l[1], "%lu %lu %lu", &e->a_insns, &e->a_pc, &e->a_line) != 3 ||
	    sscanf(l[3], "%lu %lu", &e->b_insns, &e->b_line) != 2 || !e->n_invoke ||
	    !e->n_interp) {
		tc_fail(t, "%s does not hold the scenario's expectations", JIT_TXT);
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

static void add(struct chain *c, struct want w)
{
	if (c->n < MAX_FRAMES)
		c->f[c->n++] = w;
}

static void add_art(struct chain *c, bool show_art, const char *name)
{
	if (show_art)
		add(c, (struct want){ F_ART, name, 0, 0, NULL, 0 });
}

/* The three chains, by write's length (index 1..3). */
static void expected(const struct jit_expect *e, bool show_art, struct chain c[4])
{
	const struct want w = { F_WRITE, "write", 0, 0, NULL, 0 };
	const struct want jc = { F_JIT, JIT_C, RET_CALLS_WRITE, 0, NULL, 0 };
	const struct want jb = { F_JIT, JIT_B, RET_CALLS_NEXT, 0, NULL, 0 };
	const struct want ja = { F_JIT, JIT_A, RET_CALLS_NEXT, 0, NULL, 0 };
	const struct want ia = { F_INTERP, e->a_name, e->a_pc, e->a_line, NULL, 0 };
	const struct want ib = { F_INTERP, e->b_name, 0, e->b_line, NULL, 0 };
	const struct want m_inv = { F_MAIN, "main", 0, 0, e->invoke_ret, e->n_invoke };
	const struct want m_int = { F_MAIN, "main", 0, 0, e->interp_ret, e->n_interp };

	memset(c, 0, 4 * sizeof(*c));
	add(&c[1], w), add(&c[1], jc), add(&c[1], jb), add(&c[1], ja);
	add_art(&c[1], show_art, "art_quick_invoke");
	add(&c[1], m_inv);
	add(&c[2], w), add(&c[2], jc), add(&c[2], jb);
	add_art(&c[2], show_art, "art_nterp_entry");
	add(&c[2], ia);
	add_art(&c[2], show_art, "art_interpret");
	add(&c[2], m_int);
	add(&c[3], w), add(&c[3], jc);
	add_art(&c[3], show_art, "art_switch_entry");
	add(&c[3], ib);
	add_art(&c[3], show_art, "art_interpret");
	add(&c[3], m_int);
}

static bool str_decoded(const struct jnode *n, char *buf, size_t size)
{
	return json_str_decode(n, buf, size) >= 0;
}

/* One frame against W; 0 or -1 with the failure recorded. */
static int check_frame(struct tc *t, const struct jdoc *d, const struct jnode *f,
		       const struct want *w, const char *what)
{
	char sym[512] = "", kind[32] = "", file[VM_PATH_MAX] = "";
	unsigned long long off = 0, v = 0;

	str_decoded(json_get(d, f, "symbol"), sym, sizeof(sym));
	str_decoded(json_get(d, f, "kind"), kind, sizeof(kind));
	str_decoded(json_get(d, f, "file"), file, sizeof(file));
	CHECK(!json_get(d, f, "note"), "%s: marked", what);
	switch (w->kind) {
	case F_WRITE:
		CHECK(!strcmp(kind, "native") && (!strcmp(sym, "write") || !strcmp(sym, "__write") ||
						  !strcmp(sym, "__libc_write")),
		      "%s: %s %s, want native write", what, kind, sym);
		break;
	case F_JIT:
		CHECK(!strcmp(kind, "jit") && !strcmp(sym, w->name), "%s: %s '%s', want jit %s",
		      what, kind, sym, w->name);
		CHECK(json_u64(json_get(d, f, "symbol_offset"), &off) == 0 && off == w->off,
		      "%s: return offset 0x%llx, want 0x%lx", what, off, w->off);
		CHECK(strstr(file, "jit-cache"), "%s: file '%s' is not the JIT cache's memfd",
		      what, file);
		break;
	case F_INTERP:
		CHECK(!strcmp(kind, "interpreted") && !strcmp(sym, w->name),
		      "%s: %s '%s', want interpreted %s", what, kind, sym, w->name);
		CHECK(json_u64(json_get(d, f, "dex_pc"), &v) == 0 && v == w->off,
		      "%s: dex pc %llu, want %lu", what, v, w->off);
		CHECK(json_u64(json_get(d, f, "line"), &v) == 0 && v == w->line,
		      "%s: line %llu, want %lu", what, v, w->line);
		break;
	case F_ART: {
		const char *b = strrchr(file, '/');
		CHECK(!strcmp(kind, "native") && !strcmp(sym, w->name) && b &&
		      !strcmp(b + 1, "libart.so"), "%s: %s '%s' in %s, want libart's %s", what,
		      kind, sym, file, w->name);
		break;
	}
	case F_MAIN: {
		bool hit = false;
		CHECK(!strcmp(sym, "main") &&
		      json_u64(json_get(d, f, "symbol_offset"), &off) == 0,
		      "%s: '%s', want main", what, sym);
		for (int i = 0; i < w->n_offs; i++)
			hit |= off == w->offs[i];
		CHECK(hit, "%s: main+0x%llx is after no call of the chain's entry", what, off);
		break;
	}
	}
	return 0;
out:
	return -1;
}

/* Every event of OUT: ROUNDS per chain, every frame exact. */
static void check_events(struct tc *t, const char *out, const struct chain c[4])
{
	size_t len = 0;
	char *text = read_file(out, &len);
	struct jdoc d = { 0 };
	int per[4] = { 0 };
	long line = 0;

	CHECK(text, "cannot read %s", out);
	for (char *p = text; p < text + len;) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
		unsigned long long r2 = 0;
		char what[64];
		line++;
		CHECK(json_parse(&d, p, n) == 0, "line %ld is not JSON: %.200s", line, p);
		p += n + 1;
		const struct jnode *st = json_get(&d, &d.n[0], "stack");
		if (!st)
			continue;
		CHECK(json_u64(json_get(&d, json_get(&d, &d.n[0], "fields"), "r2"), &r2) == 0 &&
		      r2 >= 1 && r2 <= 3, "line %ld: write's length is none of the target's",
		      line);
		CHECK(st->type == J_ARR && json_count(&d, st) >= c[r2].n,
		      "line %ld (chain %llu): %d frames, want at least %d", line, r2,
		      st->type == J_ARR ? json_count(&d, st) : -1, c[r2].n);
		for (int i = 0; i < c[r2].n; i++) {
			snprintf(what, sizeof(what), "line %ld chain %llu frame %d", line, r2, i);
			if (check_frame(t, &d, json_at(&d, st, i), &c[r2].f[i], what) < 0)
				goto out;
		}
		per[r2]++;
	}
	EQ(per[1], ROUNDS, "events of chain 1");
	EQ(per[2], ROUNDS, "events of chain 2");
	EQ(per[3], ROUNDS, "events of chain 3");
out:
	json_free(&d);
	free(text);
}

/* The folded stacks name every Java method, and libart's frames only when shown. */
static void check_folded(struct tc *t, const char *path, const struct jit_expect *e,
			 bool show_art)
{
	char *text = read_file(path, NULL);
	const char *names[] = { JIT_A, JIT_B, JIT_C, e->a_name, e->b_name };

	CHECK(text, "cannot read %s", path);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		CHECK(strstr(text, names[i]), "the folded stacks do not name %s", names[i]);
	CHECK(!strstr(text, "art_nterp_entry") == !show_art,
	      "libart's frames %s in the folded stacks", show_art ? "missing" : "shown");
out:
	free(text);
}

/* Waits until PID maps executable a file whose path contains NEEDLE. */
static int wait_mapping(struct tc *t, pid_t pid, const char *needle, char *path, size_t size)
{
	char maps[64];

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	for (int i = 0; i < 3000; i++) {
		char *text = read_file(maps, NULL), *line, *save = NULL;
		bool found = false;
		for (line = text ? strtok_r(text, "\n", &save) : NULL; line && !found;
		     line = strtok_r(NULL, "\n", &save)) {
			char perms[8] = "", *p = strchr(line, '/');
			found = p && strstr(p, needle) && sscanf(line, "%*s %7s", perms) == 1 &&
				strchr(perms, 'x');
			if (found && path)
				snprintf(path, size, "%s", p);
		}
		free(text);
		if (found)
			return 0;
		usleep(10000);
	}
	tc_fail(t, "target %d never mapped %s", (int)pid, needle);
	return -1;
}

static const char *write_config(struct tc *t, const char *libc)
{
	static char path[VM_PATH_MAX];
	char text[1024];

	snprintf(text, sizeof(text),
		 "tasks {\n"
		 "  probe_configs {\n"
		 "    bpf_name: \"prog_GenericInstrumentation_uprobe_call_detail\"\n"
		 "    file_paths: \"%s\"\n"
		 "    method_signature: \"write\"\n"
		 "  }\n"
		 "  bpf_maps: \"map_GenericInstrumentation_call_detail_buf\"\n"
		 "}\n", libc);
	tc_path(t, "jit.textproto", path);
	return tc_write(t, path, text) == 0 ? path : NULL;
}

static void run_jit(struct tc *t, const char *mode, bool show_art)
{
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct jit_expect e;
	struct chain c[4];
	char pid[16], rounds[16], a_insns[24], a_pc[24], b_insns[24];
	char folded[VM_PATH_MAX], libc[VM_PATH_MAX];
	const char *cfg;

	if (read_expect(t, &e) < 0)
		return;
	expected(&e, show_art, c);
	snprintf(rounds, sizeof(rounds), "%d", ROUNDS);
	snprintf(a_insns, sizeof(a_insns), "0x%lx", e.a_insns);
	snprintf(a_pc, sizeof(a_pc), "0x%lx", e.a_pc);
	snprintf(b_insns, sizeof(b_insns), "0x%lx", e.b_insns);
	const char *targs[] = { rounds, JIT_DEX, a_insns, a_pc, b_insns, NULL };
	if (target_start(t, &a, "target_jit", NULL, targs) < 0 ||
	    wait_mapping(t, a.pid, "/libart.so", NULL, 0) < 0 ||
	    wait_mapping(t, a.pid, "/libc.so.6", libc, sizeof(libc)) < 0 ||
	    wait_mapping(t, a.pid, "jit-cache", NULL, 0) < 0)
		goto out;
	cfg = write_config(t, libc);
	CHECK(cfg, "config");
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	tc_path(t, "stacks.folded", folded);
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, "--stack=16",
			       "--stack-mode", mode, "--stacks", folded,
			       show_art ? "--show-art-frames" : NULL, NULL };
	if (t->env->target_kernel) {
		char *err = NULL;
		int rc = ups_run(t, args, WAIT_MS, &err);
		bool refused = rc != 0 && err && strstr(err, "no legacy form");
		free(err);
		CHECK(refused, "--stack with --target-kernel %s: exit %d", t->env->target_kernel,
		      rc);
		goto out;
	}
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    target_go(t, &a) < 0 || target_wait(t, &a, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0)
		goto out;
	check_events(t, u.out, c);
	if (!t->failed)
		check_folded(t, folded, &e, show_art);
out:
	ups_stop(&u, SIGKILL);
	target_kill(&a);
}

static void stack_jit_and_interpreted_frames(struct tc *t)
{
	run_jit(t, "copy", false);
}

static void stack_jit_and_interpreted_frames_show_art_frames(struct tc *t)
{
	run_jit(t, "copy", true);
}

/* A native probe in kernel mode hands the registers and the slice over as copy mode
 * does: the same frames. */
static void stack_kernel_jit_and_interpreted_frames(struct tc *t)
{
	run_jit(t, "kernel", false);
}

const struct vmcase vm_jit_cases[] = {
	{ "stack.jit_and_interpreted_frames", stack_jit_and_interpreted_frames },
	{ "stack.jit_and_interpreted_frames_show_art_frames",
	  stack_jit_and_interpreted_frames_show_art_frames },
	{ "stack.kernel_jit_and_interpreted_frames", stack_kernel_jit_and_interpreted_frames },
	{ NULL, NULL },
};
