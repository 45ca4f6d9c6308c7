/* cmd_misc.c — `--help` and `--version`; which option rows each command
 * parses with, which test_help checks the help text against. */
#include <stdio.h>

#include "cli/cli.h"
#include "cli/cmd_run.h"
#include "sink/sink_args.h"
#include "stack/stack_args.h"
#include "ups_version.h" /* gen/, by mk/static.mk: the only user of the git revision */

static const char usage_text[] =
	"usage: uprobestats [run options] CONFIG      run a config (as the Android service does)\n"
	"       uprobestats run CONFIG [options]      run a config\n"
	"       uprobestats trace [options] PATTERN...   trace matching methods, no config\n"
	"       uprobestats sections [-p PID|-n NAME] [options]   an app's trace sections\n"
	"                          (android.os.Trace, ATrace_*, atrace_*_body), tags or not\n"
	"       uprobestats traffic [-p PID]... [-n NAME] [--uid U]   bytes per socket and peer\n"
	"       uprobestats check CONFIG [options]    parse, validate and resolve; attach nothing\n"
	"       uprobestats methods OAT [--filter TEXT] [--json]   compiled methods and offsets\n"
	"       uprobestats resolve OAT|- 'SIGNATURE' [--json]    one method's file offset\n"
	"       uprobestats methods --match PATTERN [FILE|--pid N] [--json]  what a pattern "
	"matches\n"
	"       uprobestats resolve FILE|- PATTERN [--pid N]  a pattern naming one method\n"
	"       uprobestats doctor [--json]            what this device offers, "
	"what path is taken\n"
	"       uprobestats check-objects [--kernel V] [FILE.o...]   the legacy BPF objects\n"
	"                          (or FILE.o) against kernel V (default the oldest, 4.14)\n"
	"       uprobestats --version | --help\n"
	"\n"
	"CONFIG is a UprobestatsConfig, textproto or binary.  A bare name (no '/') that is\n"
	"not a file here is read from " ANDROID_CONFIG_DIR "NAME.\n"
	"\n"
	"run options:\n"
	"  --format text|json|text-raw  events on stdout, one line per call, or JSON Lines\n"
	"                          (--json); text-raw: every register (default: text)\n"
	"  --json                  the same as --format json\n"
	"  --output FILE           write those events to FILE instead of stdout\n"
	"  --statsd[=PATH]         send atoms to statsd (default when /dev/socket/statsdw exists)\n"
	"  --no-statsd             never send atoms\n"
	"  --statsd-wait MS        when statsd's queue is full, wait up to MS (0..10000) per\n"
	"                          atom for room instead of dropping it (default 100; 0:\n"
	"                          drop at once, like libstatssocket)\n"
	"  --atom-mapping newest|cpp   call_detail atom fields as Int64 (newest, Rust) or\n"
	"                          Int32 (the C++ handlers)\n"
	"  --polled-atom ID        at exit, one \"map polled\" atom per task and map (map code,\n"
	"                          duration ms, events, task id), like upstream's self-metric\n"
	"  --attached-atom ID      after attaching, one \"probe attached\" atom per probe\n"
	"                          (program code, class, method, process, task id)\n"
	"  --error-atom ID         an \"internal error\" atom per task when attaching or\n"
	"                          polling fails (type, task id, program, map, failure point)\n"
	"  --trace FILE            also write a trace (Perfetto UI, chrome://tracing)\n"
	"  --trace-format json|systrace\n"
	"  --stack[=FRAMES]        the call stack of every hit, up to FRAMES (32; max 64),\n"
	"                          unwound from a copy of the user stack (Java, CFI, fp)\n"
	"  --stack-mode copy|kernel  copy: as above; kernel: compiled Java frames walked in\n"
	"                          BPF, the native callers above them unwound from a copy\n"
	"  --stack-bytes N         user stack bytes copied per hit (2048; 8..16384)\n"
	"  --stacks FILE           at exit, the stacks counted in folded form (speedscope)\n"
	"  --duration T            run T from attach: 10 (s), 500ms, 10s, 5m, 1h (overrides\n"
	"                          duration_seconds)\n"
	"  --pid N                 probe this process (repeatable; overrides target_process_name)\n"
	"  -c, --command 'CMD ARGS'  start CMD held before exec, attach, then run it; ends and\n"
	"                          exits with it (no shell; `chroot ROOT PROG` traces PROG)\n"
	"  -n, --name NAME         run: the process to probe by name (overrides the config's)\n"
	"  --all-matches           every process whose cmdline matches, not just the first\n"
	"  --ringbuf-size BYTES    per output buffer (default 4 MiB, 16 MiB with stacks;\n"
	"                          a power of two)\n"
	"  --flush-ms MS           drain period: bounds event latency (1..10000, default 100)\n"
	"  --bpf-pid-filter        also filter by pid inside the BPF program\n"
	"  --force-perfbuf         perf event array output even where ring buffers exist\n"
	"  --force-ringbuf         ring buffer output or fail (kernels before 5.8 have none)\n"
	"  --force-pmu             attach through uprobe PMU perf events, not uprobe_multi links\n"
	"                          (the path for kernels before 6.6; slower to detach)\n"
	"  --force-tracefs         attach through tracefs uprobe_events, not the uprobe PMU\n"
	"  --unsafe-any-symbol     (also check) probe ELF symbols that are not functions, or\n"
	"                          not proven instruction starts: may corrupt the target\n"
	"  --exit-probes           call_return/call_latency on ELF functions: plain uprobes at\n"
	"                          the entry and every return instruction instead of a\n"
	"                          uretprobe (always so for Java methods); a function whose\n"
	"                          exits cannot be proven (tail call, jump out) is refused\n"
	"  --unsafe-uretprobe      allow a uretprobe on ART (Java) code where exit probes are\n"
	"                          off or impossible. DANGEROUS: the uretprobe rewrites the\n"
	"                          return address ART walks its stack by (GC, exceptions, stack\n"
	"                          dumps): the runtime aborts (\"Failed to find Dex offset for\n"
	"                          PC offset\") or the GC visits wrong roots; in system_server\n"
	"                          that restarts the phone\n"
	"  --target-kernel VERSION load only what a kernel of VERSION (like 4.19) accepts:\n"
	"                          its objects (legacy before 5.5), output, attach path\n"
	"  --guardrail auto|off|user   the user-build method allowlist (auto: on on Android\n"
	"                          user builds)\n"
	"  --guardrail-list newest|cpp-v1|cpp-v2|rust\n"
	"  --config-format text|binary|auto, --config-era b|current|auto\n"
	"  --interval S            print and clear the config's aggregations every S seconds\n"
	"  --quiet                 no summary on stderr\n"
	"  -v, --verbose           debug logging on stderr (libbpf, verifier, resolution)\n"
	"\n"
	"  --profile FILE|-        at exit, the flat profile per method (calls, total, self,\n"
	"                          mean, p50, p99, max, unwound) to FILE ('-': stderr)\n"
	"  --profile-format text|json\n"
	"\n"
	"trace options (and every run option):\n"
	"  PATTERN                 Java: [FILE:]Class.method[(params)] with globs in package,\n"
	"                          class, method, params; native: LIB_OR_PATH:symbol-glob\n"
	"  -p, --pid N             trace this process (repeatable); -n, --name NAME: by name\n"
	"  --ret                   exit probes too: return value and duration per call\n"
	"                          (Java and native: never a uretprobe unless\n"
	"                          --unsafe-uretprobe, which then applies to native only)\n"
	"  --args LIST             argument positions to record: 0,2; POS:str reads a String\n"
	"                          (Java) or char * (native) argument, up to 127 bytes\n"
	"  --atom ID               the atom id for --statsd (trace sends no atoms otherwise)\n"
	"  --max-probes N          trace at most N methods (default 20000)\n"
	"  --emit-config FILE      write the equivalent config (textproto; binary for .pb or\n"
	"                          --config-format binary) and exit; `run FILE` runs it\n"
	"                          The profile goes to stderr unless --profile says otherwise.\n"
	"  --count, --by pid|tid|uid|arg N|ret[,...], --sum arg N|ret|latency,\n"
	"  --hist arg N|ret|latency   count in the kernel instead of a record per call;\n"
	"                          --interval S prints and clears per interval, --agg-keys N\n"
	"\n"
	"traffic options (and every run option):\n"
	"  -p PID (repeatable), -n NAME, --all-matches, --uid U   whose sockets (none: every\n"
	"                          process that maps the library)\n"
	"  --lib PATH              the libc to probe (default: the one the process maps)\n"
	"  --interval S            print and clear every S seconds (and at exit)\n"
	"  --agg-keys N            the kernel's table holds N keys (default 10240)\n"
	"  --atom ID               each row of each interval also as statsd atom ID\n"
	"\n"
	"sections options (and every run option; --trace FILE --trace-format systrace\n"
	"writes what atrace would have):\n"
	"  -p, --pid N, -n NAME    the process (its boot image and libraries are searched)\n"
	"  --boot-image FILE       the oat/odex holding android.os.Trace (default: the\n"
	"                          process's maps, then the boot image directories)\n"
	"  --libandroid PATH, --libcutils PATH   the libraries (default: the process's)\n"
	"  --no-java, --no-native  leave out android.os.Trace, or the native functions\n"
	"  --emit-config FILE      write the equivalent config and exit\n"
	"\n"
	"methods/resolve options:\n"
	"  --format json|text      --format json is --json (as for run)\n"
	"  --dex-file JAR          where to find the dex when it is not next to the oat\n"
	"  --resolver auto|builtin|oatdump   built-in reader, oatdump, or built-in first\n"
	"  --oatdump PATH          the oatdump binary (default: oatdump on PATH)\n"
	"  --pid N                 resolve: with OAT '-', search what process N has mapped\n"
	"  --no-cache, --cache-dir DIR   the class -> file index cache of the search\n"
	"\n"
	"check options:\n"
	"  --no-resolve            do not open probed files (check a phone's config anywhere)\n"
	"  --to-binary FILE        write the config as binary proto (what statsd pushes)\n"
	"  --to-text               print the config as textproto\n"
	"  --exit-probes, --unsafe-uretprobe   as for run: the same probes are refused\n"
	"\n"
	"doctor options:\n"
	"  -j, --json              the report as one JSON object (also --format json)\n"
	"  --guardrail auto|off|user   the allowlist the report assumes (auto: the device's)\n"
	"\n"
	"exit codes: 0 ok, 1 runtime error, 2 usage, 3 config, 4 resolve, 5 privilege,\n"
	"            6 target process not found\n";

/* RUN_TABLES: cmd_run.h, what run_opts_parse_cmd parses with */
static const struct cli_command_rows command_rows[] = {
	{ "run", { "run" }, { RUN_TABLES, &run_only_rows } },
	{ "trace", { "trace", "run" }, { RUN_TABLES, &trace_rows } },
	{ "sections", { "sections", "run" }, { RUN_TABLES, &sections_rows } },
	{ "traffic", { "traffic", "run" }, { RUN_TABLES, &traffic_rows } },
	{ "check", { "check", "run" }, { &check_rows, &cli_verbose_rows, &cli_help_rows } },
	{ "methods", { "methods/resolve" }, { &oat_rows, &cli_verbose_rows, &cli_help_rows } },
	{ "doctor", { "doctor" }, { &doctor_rows, &cli_help_rows } },
	{ "check-objects", { "usage" }, { &check_objects_rows, &cli_help_rows } },
};

const struct cli_command_rows *cli_command_rows(size_t *n)
{
	*n = sizeof(command_rows) / sizeof(command_rows[0]);
	return command_rows;
}

const char *cli_help_text(void)
{
	return usage_text;
}

int cmd_help(int argc, char **argv)
{
	fputs(usage_text, stdout);
	return EXIT_OK;
}

int cmd_version(int argc, char **argv)
{
	printf("uprobestats %s (%s)\n", UPROBESTATS_VERSION, UPROBESTATS_GITREV);
	return EXIT_OK;
}
