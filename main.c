/* main.c — the command line: parse argv, dispatch subcommands, print errors,
 * choose exit codes.  Everything else lives in src/. */
#include <bpf/libbpf.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/err.h"
#include "config/config.h"
#include "probe/catalog.h"
#include "probe/loop.h"
#include "probe/session.h"
#include "resolve/plan.h"

/* Exit codes (README "Exit codes" and --help list the same). */
enum exit_code {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1,    /* kernel refused a load/attach, I/O failed mid-run */
	EXIT_USAGE = 2,      /* bad command line */
	EXIT_CONFIG = 3,     /* config unreadable, malformed, invalid or refused by guardrail */
	EXIT_RESOLVE = 4,    /* a probe's file, symbol or method could not be resolved */
	EXIT_PRIVILEGE = 5,  /* not allowed to use BPF/perf events */
	EXIT_NO_TARGET = 6,  /* target process not found */
};

#define ANDROID_CONFIG_DIR "/data/misc/uprobestats-configs/"
#define MAX_PIDS 256

static bool verbose;

static void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void p_err(const char *fmt, ...)
{
	va_list ap;
	fputs("uprobestats: error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void p_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void p_info(const char *fmt, ...)
{
	va_list ap;
	fputs("uprobestats: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG && !verbose)
		return 0;
	if (level == LIBBPF_INFO && !verbose)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static const char usage_text[] =
	"usage: uprobestats CONFIG                      run a config (Android service style)\n"
	"       uprobestats run CONFIG [options]        run a config\n"
	"       uprobestats check CONFIG [options]      parse, validate and resolve; attach nothing\n"
	"       uprobestats --version | --help\n"
	"\n"
	"CONFIG is a UprobestatsConfig, textproto or binary.  A bare name (no '/') that is\n"
	"not a file here is read from " ANDROID_CONFIG_DIR "NAME.\n"
	"\n"
	"run options:\n"
	"  --format text|json     event output on stdout (default text)\n"
	"  --duration S           run S seconds (overrides duration_seconds)\n"
	"  --pid N                probe this process (repeatable; overrides target_process_name)\n"
	"  --all-matches          every process whose cmdline matches, not just the first\n"
	"  --ringbuf-size BYTES   per ring buffer (default 4 MiB, power of two)\n"
	"  --flush-ms MS          drain period: bounds event latency (default 100)\n"
	"  --bpf-pid-filter       also filter by pid inside the BPF program\n"
	"  --force-perfbuf        perf event array output even where ring buffers exist\n"
	"  --force-ringbuf        ring buffer output or fail (kernels before 5.8 have none)\n"
	"  --quiet                no summary on stderr\n"
	"  -v, --verbose          debug logging on stderr (libbpf, verifier)\n"
	"\n"
	"check options:\n"
	"  --no-resolve           do not look at probed files (check a phone config anywhere)\n"
	"\n"
	"exit codes: 0 ok, 1 runtime error, 2 usage, 3 config, 4 resolve, 5 privilege,\n"
	"            6 target process not found\n";

static int usage(FILE *f, int code)
{
	fputs(usage_text, f);
	return code;
}

struct run_opts {
	const char *config;
	const char *format;
	int32_t duration;
	pid_t pids[MAX_PIDS];
	size_t n_pids;
	bool all_matches;
	uint32_t ringbuf_size;
	uint32_t flush_ms;
	bool bpf_pid_filter;
	bool quiet;
	bool no_resolve;
	enum output_mode output;
};

static bool parse_u32(const char *s, uint32_t *out, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v > UINT32_MAX) {
		p_err("can't parse '%s' as %s", s, what);
		return false;
	}
	*out = (uint32_t)v;
	return true;
}

enum { OPT_FORMAT = 256, OPT_DURATION, OPT_PID, OPT_ALL_MATCHES, OPT_RINGBUF, OPT_FLUSH,
       OPT_BPF_PID_FILTER, OPT_QUIET, OPT_NO_RESOLVE, OPT_FORCE_PERFBUF, OPT_FORCE_RINGBUF };

static const struct option run_long_opts[] = {
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "pid", required_argument, NULL, OPT_PID },
	{ "all-matches", no_argument, NULL, OPT_ALL_MATCHES },
	{ "ringbuf-size", required_argument, NULL, OPT_RINGBUF },
	{ "flush-ms", required_argument, NULL, OPT_FLUSH },
	{ "bpf-pid-filter", no_argument, NULL, OPT_BPF_PID_FILTER },
	{ "quiet", no_argument, NULL, OPT_QUIET },
	{ "no-resolve", no_argument, NULL, OPT_NO_RESOLVE },
	{ "force-perfbuf", no_argument, NULL, OPT_FORCE_PERFBUF },
	{ "force-ringbuf", no_argument, NULL, OPT_FORCE_RINGBUF },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static int parse_run_opts(int argc, char **argv, struct run_opts *o)
{
	int c;
	uint32_t v;

	optind = 1;
	while ((c = getopt_long(argc, argv, "vh", run_long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			if (strcmp(optarg, "text") && strcmp(optarg, "json")) {
				p_err("--format takes text or json, not '%s'", optarg);
				return EXIT_USAGE;
			}
			o->format = optarg;
			break;
		case OPT_DURATION:
			if (!parse_u32(optarg, &v, "seconds") || v == 0 || v > INT32_MAX) {
				p_err("--duration needs a positive number of seconds");
				return EXIT_USAGE;
			}
			o->duration = (int32_t)v;
			break;
		case OPT_PID:
			if (!parse_u32(optarg, &v, "a pid") || v == 0 || o->n_pids == MAX_PIDS)
				return EXIT_USAGE;
			o->pids[o->n_pids++] = (pid_t)v;
			break;
		case OPT_ALL_MATCHES: o->all_matches = true; break;
		case OPT_RINGBUF:
			if (!parse_u32(optarg, &o->ringbuf_size, "bytes"))
				return EXIT_USAGE;
			break;
		case OPT_FLUSH:
			if (!parse_u32(optarg, &o->flush_ms, "milliseconds") || o->flush_ms == 0)
				return EXIT_USAGE;
			break;
		case OPT_BPF_PID_FILTER: o->bpf_pid_filter = true; break;
		case OPT_QUIET: o->quiet = true; break;
		case OPT_NO_RESOLVE: o->no_resolve = true; break;
		case OPT_FORCE_PERFBUF: o->output = OUTPUT_PERFBUF; break;
		case OPT_FORCE_RINGBUF: o->output = OUTPUT_RINGBUF; break;
		case 'v': verbose = true; break;
		case 'h': return usage(stdout, -1);
		default: return usage(stderr, EXIT_USAGE);
		}
	}
	if (optind != argc - 1) {
		p_err(optind >= argc ? "missing CONFIG" : "unexpected argument '%s'",
		      optind < argc ? argv[optind + 1] : "");
		return EXIT_USAGE;
	}
	o->config = argv[optind];
	return EXIT_OK;
}

/* A bare name that is not a file here is an Android config name. */
static const char *config_path(const char *arg, char *buf, size_t size)
{
	if (strchr(arg, '/') || access(arg, F_OK) == 0)
		return arg;
	snprintf(buf, size, "%s%s", ANDROID_CONFIG_DIR, arg);
	return buf;
}

static int load_config(const char *arg, struct uprobestats_config **cfg)
{
	struct config_load_opts lo = { 0 };
	struct err e = { 0 };
	char buf[4096];

	if (config_load_file(config_path(arg, buf, sizeof(buf)), &lo, cfg, &e) < 0) {
		p_err("%s", e.msg);
		return EXIT_CONFIG;
	}
	return EXIT_OK;
}

static int plan_exit_code(const struct err *e)
{
	return e->code == -ESRCH ? EXIT_NO_TARGET : EXIT_RESOLVE;
}

static int session_exit_code(const struct err *e)
{
	return (e->code == -EPERM || e->code == -EACCES) ? EXIT_PRIVILEGE : EXIT_RUNTIME;
}

/* ---- temporary event output (replaced by the sink set) ---- */

struct output {
	bool json;
	FILE *f;
};

static void print_field_text(FILE *f, const struct field *fl)
{
	switch (fl->type) {
	case FIELD_INT32: fprintf(f, " %s=%" PRId32, fl->name, fl->v.i32); break;
	case FIELD_INT64: fprintf(f, " %s=%" PRId64, fl->name, fl->v.i64); break;
	case FIELD_UINT64: fprintf(f, " %s=0x%" PRIx64, fl->name, fl->v.u64); break;
	case FIELD_BOOL: fprintf(f, " %s=%s", fl->name, fl->v.b ? "true" : "false"); break;
	case FIELD_STRING:
		fprintf(f, " %s=\"%.*s\"", fl->name, (int)fl->v.str.len, fl->v.str.ptr);
		break;
	default: fprintf(f, " %s=?", fl->name); break;
	}
}

/* A JSON string: the decoders hand over valid UTF-8; control characters,
 * quotes and backslashes are escaped. */
static void print_json_string(FILE *f, const char *s, uint32_t len)
{
	fputc('"', f);
	for (uint32_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void output_event(void *ctx, const struct event *ev)
{
	struct output *o = ctx;

	if (o->json) {
		fprintf(o->f, "{\"boot_ns\":%" PRIu64 ",\"pid\":%u,\"tid\":%u,\"probe\":\"%s\","
			"\"offset\":%" PRIu64 ",\"fields\":{", ev->boot_ns, ev->pid, ev->tid,
			ev->probe->method, ev->probe->offset);
		for (size_t i = 0; i < ev->n_fields; i++) {
			const struct field *fl = &ev->fields[i];
			fprintf(o->f, "%s\"%s\":", i ? "," : "", fl->name);
			if (fl->type == FIELD_UINT64)
				fprintf(o->f, "%" PRIu64, fl->v.u64);
			else if (fl->type == FIELD_STRING)
				print_json_string(o->f, fl->v.str.ptr, fl->v.str.len);
			else if (fl->type == FIELD_BOOL)
				fputs(fl->v.b ? "true" : "false", o->f);
			else if (fl->type == FIELD_INT64)
				fprintf(o->f, "%" PRId64, fl->v.i64);
			else
				fprintf(o->f, "%" PRId32, fl->v.i32);
		}
		fputs("}}\n", o->f);
		return;
	}
	fprintf(o->f, "%" PRIu64 " %u/%u %s", ev->boot_ns, ev->pid, ev->tid, ev->probe->method);
	for (size_t i = 0; i < ev->n_fields; i++)
		print_field_text(o->f, &ev->fields[i]);
	fputc('\n', o->f);
}

static void loop_notice(void *ctx, const char *msg)
{
	p_info("%s", msg);
}

static void print_summary(const struct plan *plan, struct session *s, const struct loop_stats *st)
{
	fprintf(stderr, "%-6s %-40s %10s %10s %10s\n", "task", "probe", "hits", "delivered",
		"dropped");
	for (size_t i = 0; i < plan->n_probes; i++) {
		const struct plan_probe *p = plan->probe_by_id[i];
		struct ups_probe_counters c;
		session_probe_counters(s, (uint32_t)i, &c);
		fprintf(stderr, "%-6u %-40s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n",
			p->desc.task_index, p->desc.method, (uint64_t)c.hits, st->delivered[i],
			(uint64_t)c.drops);
	}
	if (st->malformed)
		fprintf(stderr, "malformed records: %" PRIu64 "\n", st->malformed);
	if (st->lost)
		fprintf(stderr, "lost in perf buffers: %" PRIu64 "\n", st->lost);
}

/* ---- run ---- */

static void block_signals(void)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static void raise_memlock(void)
{
	/* Kernels before 5.11 charge BPF maps to RLIMIT_MEMLOCK. */
	struct rlimit r = { RLIM_INFINITY, RLIM_INFINITY };
	setrlimit(RLIMIT_MEMLOCK, &r);
}

static int run_plan(struct plan *plan, const struct run_opts *o)
{
	struct session_opts so = { .ringbuf_bytes = o->ringbuf_size,
				   .bpf_pid_filter = o->bpf_pid_filter, .output = o->output };
	struct output out = { .json = o->format && !strcmp(o->format, "json"), .f = stdout };
	struct loop_output lo = { .event = output_event, .ctx = &out };
	struct loop_opts lopts = { .flush_ms = o->flush_ms, .notice = loop_notice };
	struct loop_stats st;
	struct session *s;
	struct err e = { 0 };
	int rc;

	raise_memlock();
	block_signals();
	rc = session_open(plan, &so, &s, &e);
	if (rc < 0) {
		p_err("%s", e.msg);
		return session_exit_code(&e);
	}
	p_info("attached %zu probe(s) in %zu place(s), %s output", plan->n_probes,
	       session_attachment_count(s), output_mode_name(session_output_mode(s)));
	rc = loop_run(plan, s, &lopts, &lo, &st, &e);
	fflush(stdout);
	if (rc == 0 && !o->quiet)
		print_summary(plan, s, &st);
	session_close(s);
	loop_stats_free(&st);
	if (rc < 0) {
		p_err("%s", e.msg);
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

static int cmd_run(int argc, char **argv)
{
	struct run_opts o = { 0 };
	struct uprobestats_config *cfg;
	struct plan *plan;
	struct err e = { 0 };
	int rc = parse_run_opts(argc, argv, &o);

	if (rc != EXIT_OK)
		return rc < 0 ? EXIT_OK : rc;
	rc = load_config(o.config, &cfg);
	if (rc != EXIT_OK)
		return rc;
	struct plan_opts po = { .pids = o.pids, .n_pids = o.n_pids, .all_matches = o.all_matches,
				.duration_override = o.duration };
	if (plan_build(cfg, &po, &plan, &e) < 0) {
		p_err("%s", e.msg);
		config_free(cfg);
		return plan_exit_code(&e);
	}
	rc = run_plan(plan, &o);
	plan_free(plan);
	config_free(cfg);
	return rc;
}

static int cmd_version(int argc, char **argv)
{
	printf("uprobestats %s (%s)\n", UPROBESTATS_VERSION, UPROBESTATS_GITREV);
	return EXIT_OK;
}

static int cmd_help(int argc, char **argv)
{
	return usage(stdout, EXIT_OK);
}

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
};

static const struct cmd commands[] = {
	{ "run", cmd_run },
	{ "--version", cmd_version },
	{ "version", cmd_version },
	{ "--help", cmd_help },
	{ "-h", cmd_help },
	{ "help", cmd_help },
	{ NULL, NULL },
};

int main(int argc, char **argv)
{
	libbpf_set_print(libbpf_print);
	if (argc < 2)
		return usage(stderr, EXIT_USAGE);
	for (const struct cmd *c = commands; c->name; c++)
		if (strcmp(argv[1], c->name) == 0)
			return c->fn(argc - 1, argv + 1);
	if (argv[1][0] == '-' && strcmp(argv[1], "-v") != 0) {
		p_err("unknown option '%s'", argv[1]);
		return usage(stderr, EXIT_USAGE);
	}
	/* `uprobestats CONFIG`: the Android service's way. */
	return cmd_run(argc, argv);
}
