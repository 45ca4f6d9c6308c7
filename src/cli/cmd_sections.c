/* cmd_sections.c — `uprobestats sections [-p PID | -n NAME] [options]`:
 * entry probes on the trace-marker functions an app calls (android.os.Trace
 * in the boot image the process maps, the NDK's ATrace_* in libandroid.so,
 * libcutils' atrace_*_body), whatever the atrace tags say, turned by the
 * sinks into sections (sink/sections.h): systrace text or a Chrome JSON
 * trace with --trace, text and JSON Lines.  Each function found becomes a
 * call_args probe carrying its section, name and value arguments
 * (config.h), so --emit-config writes a config `run` executes the same way.
 * What cannot be probed (a method not compiled in this boot image, a
 * library not mapped) is said, function by function. */
#include <errno.h>
#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "cli/held_cmd.h"
#include "common/arena.h"
#include "plan/exits.h"
#include "plan/pattern.h"
#include "plan/trace_plan.h"
#include "sys/proc.h"
#include "sys/properties.h"

/* One trace-marker function: its pattern (Java without FILE: searched in
 * the process's maps, then the boot image), what a call does, and the
 * argument positions of its name and value (-1: none).  Listed from the
 * Java API down to libcutils, the order of the calls when a tag is on. */
struct marker_fn {
	const char *pattern;
	int32_t section;
	int8_t name_arg, value_arg;
};

#define TRACE "android.os.Trace."
#define STR "java.lang.String"
static const struct marker_fn java_fns[] = {
	{ TRACE "beginSection(" STR ")", TRACE_SECTION_BEGIN, 0, -1 },
	{ TRACE "endSection()", TRACE_SECTION_END, -1, -1 },
	{ TRACE "beginAsyncSection(" STR ", int)", TRACE_SECTION_ASYNC_BEGIN, 0, 1 },
	{ TRACE "endAsyncSection(" STR ", int)", TRACE_SECTION_ASYNC_END, 0, 1 },
	{ TRACE "setCounter(" STR ", long)", TRACE_SECTION_COUNTER64, 0, 1 },
	{ TRACE "traceBegin(long, " STR ")", TRACE_SECTION_BEGIN, 1, -1 },
	{ TRACE "traceEnd(long)", TRACE_SECTION_END, -1, -1 },
	{ TRACE "asyncTraceBegin(long, " STR ", int)", TRACE_SECTION_ASYNC_BEGIN, 1, 2 },
	{ TRACE "asyncTraceEnd(long, " STR ", int)", TRACE_SECTION_ASYNC_END, 1, 2 },
	{ TRACE "traceCounter(long, " STR ", int)", TRACE_SECTION_COUNTER, 1, 2 },
};

static const struct marker_fn ndk_fns[] = {
	{ "ATrace_beginSection", TRACE_SECTION_BEGIN, 0, -1 },
	{ "ATrace_endSection", TRACE_SECTION_END, -1, -1 },
	{ "ATrace_beginAsyncSection", TRACE_SECTION_ASYNC_BEGIN, 0, 1 },
	{ "ATrace_endAsyncSection", TRACE_SECTION_ASYNC_END, 0, 1 },
	{ "ATrace_setCounter", TRACE_SECTION_COUNTER64, 0, 1 },
};

static const struct marker_fn cutils_fns[] = {
	{ "atrace_begin_body", TRACE_SECTION_BEGIN, 0, -1 },
	{ "atrace_end_body", TRACE_SECTION_END, -1, -1 },
	{ "atrace_async_begin_body", TRACE_SECTION_ASYNC_BEGIN, 0, 1 },
	{ "atrace_async_end_body", TRACE_SECTION_ASYNC_END, 0, 1 },
	{ "atrace_int_body", TRACE_SECTION_COUNTER, 0, 1 },
	{ "atrace_int64_body", TRACE_SECTION_COUNTER64, 0, 1 },
};

struct marker_group {
	const char *what;              /* for the report */
	const char *lib;               /* native: the library; Java: NULL */
	const struct marker_fn *fns;
	size_t n;
};

#define GROUP(w, l, f) { w, l, f, sizeof(f) / sizeof(f[0]) }
static const struct marker_group groups[] = {
	GROUP("android.os.Trace", NULL, java_fns),
	GROUP("the NDK's ATrace_*", "libandroid.so", ndk_fns),
	GROUP("libcutils' atrace_*_body", "libcutils.so", cutils_fns),
};
#define N_GROUPS (sizeof(groups) / sizeof(groups[0]))
#define MAX_FNS 32

struct sections_opts {
	struct run_opts run;
	const char *name;              /* -n */
	const char *emit;              /* --emit-config FILE */
	const char *boot_image;        /* --boot-image FILE: where android.os.Trace is */
	const char *libs[N_GROUPS];    /* --libandroid / --libcutils PATH */
	bool no_java, no_native;
};

#define KEEP_STR(member) OPT_STR(struct sections_opts, member)
#define SET_TRUE(member) OPT_TRUE(struct sections_opts, member)

static const struct opt_row sections_row_v[] = {
	{ "name", 'n', required_argument, KEEP_STR(name),
	  OPT_DOC(TRACE, "NAME", "the process named NAME (its boot image and libraries are searched)") },
	{ "emit-config", 0, required_argument, KEEP_STR(emit),
	  OPT_DOC(OUTPUT, "FILE", "write the equivalent config and exit") },
	{ "boot-image", 0, required_argument, KEEP_STR(boot_image),
	  OPT_DOC(TRACE, "FILE", "the oat/odex holding android.os.Trace (default: the process's maps, then the boot image directories)") },
	{ "libandroid", 0, required_argument, KEEP_STR(libs[1]),
	  OPT_DOC(TRACE, "PATH", "the libandroid.so with ATrace_* (default: the process's)") },
	{ "libcutils", 0, required_argument, KEEP_STR(libs[2]),
	  OPT_DOC(TRACE, "PATH", "the libcutils.so with atrace_*_body (default: the process's)") },
	{ "no-java", 0, no_argument, SET_TRUE(no_java),
	  OPT_DOC(TRACE, "", "leave out android.os.Trace") },
	{ "no-native", 0, no_argument, SET_TRUE(no_native),
	  OPT_DOC(TRACE, "", "leave out the native ATrace_*/atrace_* functions") },
};

const struct opt_rows sections_rows = OPT_ROWS(sections_row_v);

static int parse_opts(int argc, char **argv, struct sections_opts *o)
{
	int rc = run_opts_parse_cmd(argc, argv, &sections_rows, o, CLI_SHORTS_PROCS, &o->run);

	if (rc != EXIT_OK)
		return rc;
	if (optind < argc) {
		p_err("sections takes no PATTERN ('%s'): it probes the trace-marker functions "
		      "itself; `uprobestats trace` takes patterns", argv[optind]);
		return EXIT_USAGE;
	}
	if (o->no_java && o->no_native) {
		p_err("--no-java and --no-native leave nothing to probe");
		return EXIT_USAGE;
	}
	return EXIT_OK;
}

/* The process whose maps are searched: the first -p, else the first -n. */
static int find_pid(const struct sections_opts *o, pid_t *pid)
{
	struct err e = { 0 };
	pid_t *found = NULL;
	size_t n = 0;

	*pid = o->run.n_pids ? o->run.pids[0] : 0;
	for (size_t i = 0; i < o->run.n_pids; i++)
		if (proc_check_traceable("/proc", o->run.pids[i], &e) < 0) {
			/* gone, a zombie or a kernel thread: as trace says it, exit 6 */
			p_err("sections: %s", e.msg);
			return EXIT_NO_TARGET;
		}
	if (*pid || !o->name)
		return EXIT_OK;
	if (proc_find_by_name("/proc", o->name, &found, &n, &e) < 0) {
		p_err("%s", e.msg);
		return EXIT_RUNTIME;
	}
	if (!n && !o->emit) {
		free(found);
		p_err("sections: no running process named '%s' (matched against /proc/*/cmdline "
		      "argv[0])", o->name);
		return EXIT_NO_TARGET;
	}
	*pid = n ? found[0] : 0;
	free(found);
	return EXIT_OK;
}

/* What became of one group, for its report line. */
struct group_result {
	size_t probed, not_compiled, missing;
	const char *file;              /* where the probed ones are */
	char missing_names[256];
};

static void note_missing(struct group_result *r, const char *pattern)
{
	size_t len = strlen(r->missing_names);
	const char *name = strrchr(pattern, '.');

	name = name && strchr(pattern, '(') ? name + 1 : pattern;
	if (len < sizeof(r->missing_names) - 2)
		snprintf(r->missing_names + len, sizeof(r->missing_names) - len, "%s%.*s",
			 len ? ", " : "", (int)strcspn(name, "("), name);
}

static int match_one(const char *text, pid_t pid, const char *root, struct pattern_matches *m)
{
	struct trace_pattern *p;
	struct err e = { 0 };
	int rc = pattern_parse(text, &p, &e);

	if (rc == 0) {
		rc = pattern_match_rooted(p, pid, root, 0, m, &e);
		pattern_free(p);
	}
	if (rc < 0 && rc != -ENOENT && rc != -ESRCH)
		p_warn("sections: %s: %s", text, e.msg);
	return rc;
}

static void add_method(struct trace_method *out, const struct pattern_match *x,
		       const struct marker_fn *f)
{
	*out = (struct trace_method){
		.path = x->path, .offset = x->file_offset, .code_size = x->code_size,
		.machine = x->e_machine, .java = x->is_java, .is_static = x->is_static,
		.signature = x->is_java ? x->name : NULL,
		.param_descs = (const char *const *)x->param_descs, .n_params = x->n_params,
		.symbol = x->raw_name ? x->raw_name : x->name, .display = x->name,
		.section = f->section, .section_name_arg = f->name_arg,
		.section_value_arg = f->value_arg,
	};
}

/* Matches one group's functions; the probeable ones are appended to
 * methods[*n]. */
static void match_group(const struct marker_group *g, const struct sections_opts *o,
			pid_t pid, struct pattern_matches *m, struct trace_method *methods,
			size_t *n, struct group_result *r)
{
	const char *file = g->lib ? o->libs[g - groups] : o->boot_image;

	for (size_t i = 0; i < g->n; i++) {
		char text[512];
		size_t before = m->n;

		if (file || g->lib)
			snprintf(text, sizeof(text), "%s:%s", file ? file : g->lib, g->fns[i].pattern);
		else
			snprintf(text, sizeof(text), "%s", g->fns[i].pattern);
		if (match_one(text, pid, o->run.held ? o->run.held->root : NULL, m) < 0 ||
		    m->n == before) {
			r->missing++;
			note_missing(r, g->fns[i].pattern);
			continue;
		}
		for (size_t k = before; k < m->n; k++) {
			const struct pattern_match *x = &m->v[k];
			if (x->left_out != MATCH_OK) {
				r->not_compiled += x->left_out == MATCH_NOT_COMPILED;
				if (x->left_out != MATCH_NOT_COMPILED)
					p_info("sections: %s: left out: %s%s%s", x->name,
					       match_left_out_name(x->left_out),
					       x->left_out_detail ? ": " : "",
					       x->left_out_detail ? x->left_out_detail : "");
				else
					note_missing(r, g->fns[i].pattern);
				continue;
			}
			if (*n == MAX_FNS)
				break;
			add_method(&methods[(*n)++], x, &g->fns[i]);
			r->probed++;
			r->file = x->path;
		}
	}
}

static void report_group(const struct marker_group *g, const struct group_result *r, pid_t pid)
{
	if (r->probed)
		p_info("sections: %s: %zu of %zu functions probed in %s%s%s", g->what, r->probed,
		       g->n, r->file, r->missing_names[0] ? "; not probed: " : "",
		       r->missing_names);
	else if (r->not_compiled)
		p_info("sections: %s: not compiled in this boot image (it runs interpreted or "
		       "JIT-compiled; its calls are seen only through libcutils when the atrace "
		       "tag is on): %s", g->what, r->missing_names);
	else if (g->lib && pid)
		p_info("sections: %s: pid %d maps no %s with them", g->what, (int)pid, g->lib);
	else if (g->lib)
		p_info("sections: %s: no %s with them in the system library directories",
		       g->what, g->lib);
	else
		p_info("sections: %s: no compiled android.os.Trace found (%s)", g->what,
		       pid ? "no boot image with Trace compiled in the process's maps or the "
			     "boot image directories" : "no boot image with Trace compiled in "
			     "the boot image directories");
}

static int build_source(struct sections_opts *o, struct trace_method *m, size_t n,
			struct android_info *android)
{
	struct trace_spec spec = { .sections = true, .process_name = o->name,
				   .duration = o->run.duration };
	struct trace_source src;
	struct err e = { 0 };
	int rc;

	if (trace_source_build(&spec, m, n, &src, &e) < 0) {
		p_err("%s", e.msg);
		return EXIT_RUNTIME;
	}
	src.cfg->source_name = arena_strdup(src.cfg->arena, "sections") ?: src.cfg->source_name;
	rc = cli_validate(src.cfg, &o->run.guardrail, true);
	if (rc == EXIT_OK)
		rc = o->emit ? trace_emit_config(src.cfg, o->emit, o->run.load.format)
			     : trace_build_and_run(&o->run, &src, android);
	trace_source_free(&src);
	return rc;
}

static int sections_run(struct sections_opts *o, pid_t pid, struct android_info *android)
{
	struct pattern_matches m = { .code = o->run.code };
	struct trace_method methods[MAX_FNS];
	size_t n = 0;
	int rc;

	for (size_t g = 0; g < N_GROUPS; g++) {
		struct group_result r = { 0 };
		if ((g == 0 && o->no_java) || (g > 0 && o->no_native))
			continue;
		match_group(&groups[g], o, pid, &m, methods, &n, &r);
		report_group(&groups[g], &r, pid);
	}
	if (!n) {
		p_err("sections: nothing to probe%s%d: no compiled android.os.Trace, no "
		      "libandroid.so and no libcutils.so with the atrace functions",
		      pid ? " in pid " : "", (int)pid);
		pattern_matches_free(&m);
		return EXIT_RESOLVE;
	}
	rc = build_source(o, methods, n, android);
	pattern_matches_free(&m);
	return rc;
}

int cmd_sections(int argc, char **argv)
{
	struct sections_opts o = { 0 };
	struct android_info android;
	pid_t pid = 0;
	int rc = parse_opts(argc, argv, &o);

	if (rc != EXIT_OK)
		return rc < 0 ? EXIT_OK : rc;
	if (o.run.sinks.statsd == SINKS_STATSD_ON) {
		p_err("sections sends no statsd atoms (--statsd): use --trace, --format json "
		      "or the text output");
		return EXIT_USAGE;
	}
	o.run.sinks.statsd = SINKS_STATSD_OFF;
	cli_android_guardrail(&android, &o.run.guardrail);
	o.run.on_android = android.on_android;
	struct held_cmd held;
	rc = run_start_command(&o.run, o.name, &held);
	if (rc == EXIT_OK && !o.run.held)
		rc = find_pid(&o, &pid);
	/* one code cache for the matching, the plan and the session */
	if (rc == EXIT_OK && !(o.run.code = cli_code_cache_new()))
		rc = EXIT_RUNTIME;
	if (rc == EXIT_OK)
		rc = sections_run(&o, pid, &android);
	cli_code_cache_free(o.run.code);
	return held_cmd_finish(o.run.held, rc);
}
