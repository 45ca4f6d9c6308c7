/* cmd_misc.c — `--help` and `--version`. */
#include <stdio.h>

#include "cli/cli.h"

static const char usage_text[] =
	"usage: uprobestats [run options] CONFIG      run a config (as the Android service does)\n"
	"       uprobestats run CONFIG [options]      run a config\n"
	"       uprobestats check CONFIG [options]    parse, validate and resolve; attach nothing\n"
	"       uprobestats methods OAT [--filter TEXT] [--json]   compiled methods and offsets\n"
	"       uprobestats resolve OAT|- 'SIGNATURE' [--json]    one method's file offset\n"
	"       uprobestats doctor [--json]            what this device offers, "
	"what path is taken\n"
	"       uprobestats --version | --help\n"
	"\n"
	"CONFIG is a UprobestatsConfig, textproto or binary.  A bare name (no '/') that is\n"
	"not a file here is read from " ANDROID_CONFIG_DIR "NAME.\n"
	"\n"
	"run options:\n"
	"  --format text|json      events on stdout as aligned text or JSON Lines (default:\n"
	"                          text, unless statsd takes the events)\n"
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
	"  --duration S            run S seconds from attach (overrides duration_seconds)\n"
	"  --pid N                 probe this process (repeatable; overrides target_process_name)\n"
	"  --all-matches           every process whose cmdline matches, not just the first\n"
	"  --ringbuf-size BYTES    per output buffer (default 4 MiB, a power of two)\n"
	"  --flush-ms MS           drain period: bounds event latency (default 100)\n"
	"  --bpf-pid-filter        also filter by pid inside the BPF program\n"
	"  --force-perfbuf         perf event array output even where ring buffers exist\n"
	"  --force-ringbuf         ring buffer output or fail (kernels before 5.8 have none)\n"
	"  --force-pmu             attach through uprobe PMU perf events, not uprobe_multi links\n"
	"                          (the path for kernels before 6.6; slower to detach)\n"
	"  --force-tracefs         attach through tracefs uprobe_events, not the uprobe PMU\n"
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
	"  --guardrail auto|off|user   the user-build method allowlist (auto: on on Android\n"
	"                          user builds)\n"
	"  --guardrail-list newest|cpp-v1|cpp-v2|rust\n"
	"  --config-format text|binary|auto, --config-era b|current|auto\n"
	"  --quiet                 no summary on stderr\n"
	"  -v, --verbose           debug logging on stderr (libbpf, verifier, resolution)\n"
	"\n"
	"methods/resolve options:\n"
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
	"exit codes: 0 ok, 1 runtime error, 2 usage, 3 config, 4 resolve, 5 privilege,\n"
	"            6 target process not found\n";

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
