/* vmtest_stack.c — call stacks (--stack) on arm64, as test/e2e/test_stack.py checks them
 * on the host, in both capture modes, on two known native chains:
 *   - target_vmlibs, a dynamically linked glibc program: main -> vlib_1 (libvlib_a.so,
 *     frame pointers) -> vlib_2 (libvlib_b.so, no frame pointers, x29 clobbered) ->
 *     vlib_3 (a) -> vlib_4 (b) -> vlib_5 (a, probed), every call through a PLT;
 *   - target_vmstack, one static program: main -> vstk_1 -> vstk_2 -> vstk_3 (no frame
 *     pointer, x29 clobbered) -> vstk_4 -> vstk_5 (probed).
 * Every frame of every hit is checked exactly: its symbol, kind, file, and its pc against
 * the return addresses the target recorded itself (__builtin_return_address), and the
 * folded stacks of --stacks.  Then a real compiled Java frame in the middle of a stack.
 * Call stacks have no legacy form (the normal BPF objects only): the legacy round checks
 * the refusal. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmjson.h"
#include "vmproc.h"
#include "vmtest.h"

#define WAIT_MS 300000
#define CALLS 50
#define DEPTH 6

/* A known chain: the program, the probed leaf's file and symbol, and each frame's symbol
 * and file (NULL: the program), leaf first. */
struct chain {
	const char *exe;
	const char *sym[DEPTH];
	const char *lib[DEPTH];
	const char *folded; /* root first, as --stacks writes it */
};

static const struct chain static_chain = {
	"target_vmstack",
	{ "vstk_5", "vstk_4", "vstk_3", "vstk_2", "vstk_1", "main" },
	{ NULL, NULL, NULL, NULL, NULL, NULL },
	"main;vstk_1;vstk_2;vstk_3;vstk_4;vstk_5 ",
};

static const struct chain libs_chain = {
	"target_vmlibs",
	{ "vlib_5", "vlib_4", "vlib_3", "vlib_2", "vlib_1", "main" },
	{ "libvlib_a.so", "libvlib_b.so", "libvlib_a.so", "libvlib_b.so", "libvlib_a.so",
	  NULL },
	"main;vlib_1;vlib_2;vlib_3;vlib_4;vlib_5 ",
};

/* Frame I's file: the program or the library beside it. */
static const char *frame_file(struct tc *t, const struct chain *c, int i, char *buf)
{
	return target_path(t, c->lib[i] ? c->lib[i] : c->exe, buf);
}

static const char *stack_config(struct tc *t, const struct chain *c)
{
	static char path[VM_PATH_MAX];
	char text[1024], file[VM_PATH_MAX];

	snprintf(text, sizeof(text),
		 "tasks {\n"
		 "  probe_configs {\n"
		 "    bpf_name: \"prog_GenericInstrumentation_uprobe_call_detail\"\n"
		 "    file_paths: \"%s\"\n"
		 "    method_signature: \"%s\"\n"
		 "  }\n"
		 "  bpf_maps: \"map_GenericInstrumentation_call_detail_buf\"\n"
		 "}\n", frame_file(t, c, 0, file), c->sym[0]);
	tc_path(t, "stack.textproto", path);
	return tc_write(t, path, text) == 0 ? path : NULL;
}

/* Waits until PID has mapped PATH executable (the unwinder reads the mappings when
 * uprobestats attaches; the loader maps a library read-only first). */
static int wait_mapped(struct tc *t, pid_t pid, const char *path)
{
	char maps[64];

	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	for (int i = 0; i < 3000; i++) {
		char *text = read_file(maps, NULL), *line, *save = NULL;
		bool found = false;
		for (line = text ? strtok_r(text, "\n", &save) : NULL; line && !found;
		     line = strtok_r(NULL, "\n", &save)) {
			size_t n = strlen(line), m = strlen(path);
			char perms[8] = "";
			found = n > m && !strcmp(line + n - m, path) &&
				sscanf(line, "%*s %7s", perms) == 1 && strchr(perms, 'x');
		}
		free(text);
		if (found)
			return 0;
		usleep(10000);
	}
	tc_fail(t, "target %d never mapped %s", (int)pid, path);
	return -1;
}

/* The pcs the frames must have, from the target's own record. */
static int read_pcs(struct tc *t, const char *path, unsigned long long pc[DEPTH])
{
	char *text = read_file(path, NULL);
	int n = text ? sscanf(text, "{\"leaf\": %llu, \"ra\": [%llu, %llu, %llu, %llu, %llu]}",
			      &pc[0], &pc[1], &pc[2], &pc[3], &pc[4], &pc[5]) : 0;

	free(text);
	if (n != DEPTH)
		tc_fail(t, "the target's %s does not hold its %d addresses", path, DEPTH);
	return n == DEPTH ? 0 : -1;
}

/* One event's stack against the chain; 0 or -1 with the failure recorded. */
static int check_frames(struct tc *t, const struct jdoc *d, const struct jnode *st,
			const unsigned long long pc[DEPTH], const struct chain *c, long line)
{
	char file[VM_PATH_MAX] = "", want[VM_PATH_MAX];

	CHECK(st && st->type == J_ARR, "line %ld: no stack array", line);
	CHECK(json_count(d, st) >= DEPTH, "line %ld: %d frames, want at least %d", line,
	      json_count(d, st), DEPTH);
	for (int i = 0; i < DEPTH; i++) {
		const struct jnode *f = json_at(d, st, i);
		const struct jnode *sym = json_get(d, f, "symbol");
		unsigned long long got = 0;
		CHECK(json_str_is(sym, c->sym[i]), "line %ld: frame %d is '%.*s', want %s", line,
		      i, sym ? (int)sym->len : 0, sym ? sym->s : "", c->sym[i]);
		CHECK(json_str_is(json_get(d, f, "kind"), "native"), "line %ld: frame %d kind",
		      line, i);
		frame_file(t, c, i, want);
		CHECK(json_str_decode(json_get(d, f, "file"), file, sizeof(file)) > 0 &&
		      !strcmp(file, want), "line %ld: frame %d file is '%s', want %s", line, i,
		      file, want);
		CHECK(json_u64(json_get(d, f, "pc"), &got) == 0 && got == pc[i],
		      "line %ld: frame %d (%s) pc 0x%llx, the target recorded 0x%llx", line, i,
		      c->sym[i], got, pc[i]);
		CHECK(!json_get(d, f, "note"), "line %ld: frame %d is marked", line, i);
	}
	return 0;
out:
	return -1;
}

/* Every event of the JSON Lines file OUT: CALLS events, each with the exact chain. */
static void check_events(struct tc *t, const char *out, const unsigned long long pc[DEPTH],
			 const struct chain *c)
{
	size_t len = 0;
	char *text = read_file(out, &len);
	struct jdoc d = { 0 };
	long line = 0;
	int events = 0;

	CHECK(text, "cannot read %s", out);
	for (char *p = text; p < text + len;) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
		line++;
		CHECK(json_parse(&d, p, n) == 0, "line %ld is not JSON: %.200s", line, p);
		const struct jnode *st = json_get(&d, &d.n[0], "stack");
		if (st) {
			if (check_frames(t, &d, st, pc, c, line) < 0)
				goto out;
			events++;
		}
		p += n + 1;
	}
	EQ(events, CALLS, "events with a stack");
out:
	json_free(&d);
	free(text);
}

/* The folded file: every stack ends root-first in the chain (main;..._5), counts adding
 * up to CALLS. */
static void check_folded(struct tc *t, const char *path, const char *want)
{
	char *text = read_file(path, NULL), *line, *save = NULL;
	long total = 0;

	CHECK(text, "cannot read %s", path);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *end = strstr(line, want);
		CHECK(end && (end == line || end[-1] == ';'), "folded line without the chain: %.200s",
		      line);
		total += atol(end + strlen(want));
	}
	EQ(total, CALLS, "folded counts");
out:
	free(text);
}

/* The legacy objects have no stack copy: --stack is refused, saying why, never run
 * without the stacks asked for. */
static void check_refused(struct tc *t, const char *const args[])
{
	char *err = NULL;
	int rc = ups_run(t, args, WAIT_MS, &err);

	CHECK(rc != 0 && err && strstr(err, "no legacy form"),
	      "--stack with --target-kernel %s: exit %d, stderr: %.300s", t->env->target_kernel,
	      rc, err ? err : "");
out:
	free(err);
}

static void native_chain(struct tc *t, const struct chain *c, const char *mode)
{
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	char pid[16], n[16], rec[VM_PATH_MAX], folded[VM_PATH_MAX], leaf[VM_PATH_MAX];
	unsigned long long pc[DEPTH];
	const char *cfg = stack_config(t, c);

	CHECK(cfg, "config");
	snprintf(n, sizeof(n), "%d", CALLS);
	tc_path(t, "target.json", rec);
	tc_path(t, "stacks.folded", folded);
	const char *targs[] = { n, rec, NULL };
	if (target_start(t, &a, c->exe, NULL, targs) < 0 ||
	    wait_mapped(t, a.pid, frame_file(t, c, 0, leaf)) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	const char *args[] = { "run", cfg, "--format", "json", "--pid", pid, "--stack=16",
			       "--stack-mode", mode, "--stacks", folded, NULL };
	if (t->env->target_kernel) {
		check_refused(t, args);
		goto out;
	}
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    target_go(t, &a) < 0 || target_wait(t, &a, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0)
		goto out;
	if (read_pcs(t, rec, pc) < 0)
		goto out;
	check_events(t, u.out, pc, c);
	if (!t->failed)
		check_folded(t, folded, c->folded);
out:
	ups_stop(&u, SIGKILL);
	target_kill(&a);
}

static void stack_native_chain_every_frame_exact(struct tc *t)
{
	native_chain(t, &static_chain, "copy");
}

/* Kernel mode: the probe PC is native, nothing for the program to walk; the record
 * carries the registers and the slice as copy mode does, every frame as exact. */
static void stack_kernel_native_chain_every_frame_exact(struct tc *t)
{
	native_chain(t, &static_chain, "kernel");
}

static void stack_shared_libs_chain_every_frame_exact(struct tc *t)
{
	native_chain(t, &libs_chain, "copy");
}

static void stack_kernel_shared_libs_chain_every_frame_exact(struct tc *t)
{
	native_chain(t, &libs_chain, "kernel");
}

/* --- a real compiled Java frame in the middle ----------------------------------------- */

/* Method A of the odex, as mkinitramfs.sh found it with binutils' disassembly. */
struct java_a {
	char sig[256];
	unsigned long off, frame, ret;
};

static int read_java_a(struct tc *t, struct java_a *a)
{
	char path[VM_PATH_MAX], *text, *nl;
	const char *slash = t->env->art_odex ? strrchr(t->env->art_odex, '/') : NULL;
	int ok = 0;

	CHECK(slash, "no --art ODEX given");
	snprintf(path, sizeof(path), "%.*s/art_stack.txt", (int)(slash - t->env->art_odex),
		 t->env->art_odex);
	text = read_file(path, NULL);
	nl = text ? strchr(text, '\n') : NULL;
	if (nl && nl - text < (long)sizeof(a->sig)) {
		memcpy(a->sig, text, (size_t)(nl - text));
		a->sig[nl - text] = '\0';
		ok = sscanf(nl + 1, "%lu %lu %lu", &a->off, &a->frame, &a->ret) == 3;
	}
	free(text);
	CHECK(ok, "%s does not hold SIGNATURE then FILE_OFFSET FRAME RET", path);
	return 0;
out:
	return -1;
}

/* How target_art_stack is run: B's entry probe (A is frame 1), or B's uretprobe with
 * --return-into-a (the PC is the return PC into A: frame 0), in a --stack-mode. */
struct art_run {
	const char *mode;
	bool uret;
};

/* One event's frames: B (the probed stub), A (Java, by its CodeInfo), the harness, main;
 * with the return address into A off by DELTA (no stack map there), B and A only, A
 * marked.  At B's uretprobe: A, the harness, main. */
static int check_java_frames(struct tc *t, const struct jdoc *d, const struct jnode *ev,
			     const struct java_a *a, int delta, long line, bool uret)
{
	static const char *const entry[] = { "stk_java_callee", NULL, "stk_art_harness",
					     "main" };
	const char *const *native = uret ? entry + 1 : entry;
	const struct jnode *st = json_get(d, ev, "stack"), *f1;
	unsigned long long off = 0;
	int want = delta ? 2 : 4 - uret;

	CHECK(st && st->type == J_ARR, "line %ld: no stack array", line);
	CHECK(delta ? json_count(d, st) == 2 : json_count(d, st) >= want,
	      "line %ld: %d frames, want %s%d", line, json_count(d, st), delta ? "" : ">= ",
	      want);
	for (int i = 0; i < want; i++) {
		const struct jnode *f = json_at(d, st, i), *sym = json_get(d, f, "symbol");
		const char *kind = native[i] ? "native" : "java", *name = native[i] ? native[i]
										  : a->sig;
		CHECK(json_str_is(sym, name), "line %ld: frame %d is '%.*s', want %s", line, i,
		      sym ? (int)sym->len : 0, sym ? sym->s : "", name);
		CHECK(json_str_is(json_get(d, f, "kind"), kind), "line %ld: frame %d kind", line,
		      i);
	}
	f1 = json_at(d, st, uret ? 0 : 1);
	CHECK(json_u64(json_get(d, f1, "offset"), &off) == 0 && off == a->off + a->ret + delta,
	      "line %ld: frame 1 offset %llu, want %lu", line, off, a->off + a->ret + delta);
	if (delta) {
		CHECK(json_str_is(json_get(d, f1, "note"), "return PC matches no stack map"),
		      "line %ld: frame 1 not marked as matching no stack map", line);
		CHECK(json_str_is(json_get(d, ev, "stack_end"), "return PC matches no stack map"),
		      "line %ld: stack_end", line);
	} else {
		CHECK(json_get(d, f1, "dex_pc"), "line %ld: frame 1 has no dex_pc", line);
		CHECK(!json_get(d, f1, "note"), "line %ld: frame 1 is marked", line);
	}
	return 0;
out:
	return -1;
}

static void check_java_events(struct tc *t, const char *out, const struct java_a *a, int delta,
			      int calls, bool uret)
{
	size_t len = 0;
	char *text = read_file(out, &len);
	struct jdoc d = { 0 };
	long line = 0;
	int events = 0;

	CHECK(text, "cannot read %s", out);
	for (char *p = text; p < text + len;) {
		char *nl = memchr(p, '\n', (size_t)(text + len - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
		line++;
		CHECK(json_parse(&d, p, n) == 0, "line %ld is not JSON: %.200s", line, p);
		if (json_get(&d, &d.n[0], "stack")) {
			if (check_java_frames(t, &d, &d.n[0], a, delta, line, uret) < 0)
				goto out;
			events++;
		}
		p += n + 1;
	}
	EQ(events, calls, "events with a stack");
out:
	json_free(&d);
	free(text);
}

/* target_art_stack ODEX A_OFF RET+DELTA FRAME 5 under run --stack; the events checked. */
static void run_art_stack(struct tc *t, const struct java_a *a, int delta, struct art_run r)
{
	struct target tg = { .pid = -1 };
	struct ups u = { .pid = -1 };
	char pid[16], aoff[24], ret[24], frame[24], cfgp[VM_PATH_MAX], text[1024],
		exe[VM_PATH_MAX];

	snprintf(text, sizeof(text),
		 "tasks {\n"
		 "  probe_configs {\n"
		 "    bpf_name: \"%s\"\n"
		 "    file_paths: \"%s\"\n"
		 "    method_signature: \"stk_java_callee%s\"\n%s"
		 "  }\n"
		 "%s"
		 "}\n",
		 r.uret ? "prog_Uprobestats_uretprobe_call_return"
			: "prog_GenericInstrumentation_uprobe_call_detail",
		 target_path(t, "target_art_stack", exe), r.uret ? "_ret" : "",
		 r.uret ? "    exit_probes: false\n" : "",
		 r.uret ? "" : "  bpf_maps: \"map_GenericInstrumentation_call_detail_buf\"\n");
	tc_path(t, "art_stack.textproto", cfgp);
	CHECK(tc_write(t, cfgp, text) == 0, "config");
	snprintf(aoff, sizeof(aoff), "%lu", a->off);
	snprintf(ret, sizeof(ret), "%lu", a->ret + (unsigned long)delta);
	snprintf(frame, sizeof(frame), "%lu", a->frame);
	const char *targs[] = { "--return-into-a", t->env->art_odex, aoff, ret, frame, "5",
				NULL };
	if (target_start(t, &tg, "target_art_stack", NULL, targs + !r.uret) < 0 ||
	    wait_mapped(t, tg.pid, t->env->art_odex) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)tg.pid);
	const char *args[] = { "run", cfgp, "--format", "json", "--pid", pid, "--stack",
			       "--stack-mode", r.mode, r.uret ? "--unsafe-uretprobe" : NULL, NULL };
	if (t->env->target_kernel) {
		check_refused(t, args);
		goto out;
	}
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    target_go(t, &tg) < 0 || target_wait(t, &tg, WAIT_MS) < 0)
		goto out;
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0)
		goto out;
	check_java_events(t, u.out, a, delta, 5, r.uret);
out:
	ups_stop(&u, SIGKILL);
	target_kill(&tg);
}

static void stack_art_frame_through_compiled_method(struct tc *t)
{
	struct java_a a;

	if (read_java_a(t, &a) < 0)
		return;
	run_art_stack(t, &a, 0, (struct art_run){ "copy", false });
	if (!t->failed && !t->env->target_kernel)
		run_art_stack(t, &a, 1, (struct art_run){ "copy", false });
}

/* Kernel mode: at B's entry (native) as in copy mode; at B's uretprobe the program
 * steps A by its frame size from the map and stops at the harness, and user space
 * unwinds the harness and main from the slice taken just below there. */
static void stack_kernel_art_frame_through_compiled_method(struct tc *t)
{
	struct java_a a;

	if (read_java_a(t, &a) < 0)
		return;
	run_art_stack(t, &a, 0, (struct art_run){ "kernel", false });
	if (!t->failed && !t->env->target_kernel)
		run_art_stack(t, &a, 0, (struct art_run){ "kernel", true });
}

const struct vmcase vm_stack_cases[] = {
	{ "stack.native_chain_every_frame_exact", stack_native_chain_every_frame_exact },
	{ "stack.art_frame_through_compiled_method", stack_art_frame_through_compiled_method },
	{ "stack.kernel_native_chain_every_frame_exact",
	  stack_kernel_native_chain_every_frame_exact },
	{ "stack.kernel_art_frame_through_compiled_method",
	  stack_kernel_art_frame_through_compiled_method },
	{ "stack.shared_libs_chain_every_frame_exact", stack_shared_libs_chain_every_frame_exact },
	{ "stack.kernel_shared_libs_chain_every_frame_exact",
	  stack_kernel_shared_libs_chain_every_frame_exact },
	{ NULL, NULL },
};
