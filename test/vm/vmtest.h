/* vmtest.h — the VM runner's test harness: one test context, checks that record the
 * first failure, the probed targets and uprobestats as child processes, and the JSON
 * Lines output of a run reduced to what the checks read.  The scenarios themselves
 * are in vmtest_*.c; vmtest.c runs them and prints the results. */
#ifndef UPS_VMTEST_H
#define UPS_VMTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "vmproc.h"

/* Where things are (command line of the runner). */
struct vmenv {
	const char *bin;      /* the uprobestats binary under test */
	const char *targets;  /* directory of target_native, target_latency, target_art */
	const char *art_odex; /* the arm64 odex the ART test probes (NULL: test skipped) */
	unsigned long art_init_off, art_get_off; /* expected offsets, from the oatdump table */
	/* LocationProviderBase.isEnabled() and setAllowed(boolean), same table (0: not given) */
	unsigned long art_is_enabled_off, art_set_allowed_off;
	unsigned long art_lone_off; /* FusedProvider.<init>(): a lone `ret` (0: not given) */
	char *argv0;          /* the runner's own argv[0] bytes (its /proc/PID/cmdline) */
	size_t argv0_size;    /* their size, the NUL included */
	const char *argv0_orig; /* a copy of what they said at start */
	/* The legacy round (--legacy-pass 4.14): every run gets --target-kernel this, and
	 * must give the same results through the legacy objects, perf buffer and tracefs. */
	const char *target_kernel;
};

struct tc {
	const struct vmenv *env;
	const char *name;
	char dir[VM_PATH_MAX]; /* a fresh directory for this test's files */
	bool failed;
	bool skipped;          /* tc_skip(): neither passed nor failed, saying why */
	char msg[4096];
	int nfiles;            /* for unique file names in DIR */
};

__attribute__((format(printf, 2, 3))) void tc_fail(struct tc *t, const char *fmt, ...);
/* The scenario cannot run on this machine: MSG says precisely why (printed as
 * "skip NAME: MSG"; counted neither passed nor failed). */
__attribute__((format(printf, 2, 3))) void tc_skip(struct tc *t, const char *fmt, ...);
/* A path in the test's directory named after BASE, unique in the test. */
const char *tc_path(struct tc *t, const char *base, char *buf);
int tc_write(struct tc *t, const char *path, const char *text);

/* Shows NAME (NULL: the original) as the runner's argv[0] in /proc/PID/cmdline, as
 * Android's zygote names itself; what it forks carries that name until it execs.
 * 0, or -1 with the failure recorded when NAME is longer than the original. */
int tc_proc_name(struct tc *t, const char *name);

/* CHECK/EQ record the first failure and jump to the test's `out:` label. */
#define CHECK(cond, ...)                                                                   \
	do {                                                                               \
		if (!(cond)) {                                                             \
			tc_fail(t, __VA_ARGS__);                                           \
			goto out;                                                          \
		}                                                                          \
	} while (0)
#define EQ(got, want, what)                                                                \
	CHECK((unsigned long long)(got) == (unsigned long long)(want),                     \
	      "%s: expected %lld, got %lld", (what), (long long)(want), (long long)(got))

/* --- targets: a probed program held at its start until go() --------------------------- */
struct target {
	pid_t pid;
	char fifo[VM_PATH_MAX];
	char out[VM_PATH_MAX]; /* its stdout */
	char err[VM_PATH_MAX];
};

/* Starts targets/EXE as ARGV0 (NULL: its path) with "--go-fifo FIFO" then ARGS
 * (NULL-terminated).  0, or -1 with the failure recorded. */
int target_start(struct tc *t, struct target *tg, const char *exe, const char *argv0,
		 const char *const args[]);
/* target_native [--threads T] COUNT BASE */
int native_start(struct tc *t, struct target *tg, long count, long base, int threads,
		 const char *argv0);
int target_go(struct tc *t, struct target *tg);
/* Waits for a clean exit (code 0); -1 with the failure recorded otherwise. */
int target_wait(struct tc *t, struct target *tg, int timeout_ms);
void target_kill(struct target *tg);

/* --- uprobestats ----------------------------------------------------------------------- */
struct ups {
	pid_t pid;
	char out[VM_PATH_MAX];
	char err[VM_PATH_MAX];
	int rc;
};

/* Runs `uprobestats ARGS...` (NULL-terminated), stdout and stderr to files. */
int ups_start(struct tc *t, struct ups *u, const char *const args[], enum spawn_flags flags);
/* Waits until stderr contains NEEDLE; -1 (failure recorded, process stopped) if it
 * exits first or TIMEOUT_MS passes. */
int ups_wait_for(struct tc *t, struct ups *u, const char *needle, int timeout_ms);
int ups_wait_attached(struct tc *t, struct ups *u);
/* Waits for its exit (RX drained meanwhile); the exit code, -1 on timeout (killed). */
int ups_wait(struct ups *u, int timeout_ms, struct statsd_rx *rx);
/* SIGINT (or SIG) then ups_wait(). */
int ups_stop(struct ups *u, int sig);
/* stderr, whole; free() it. */
char *ups_stderr(struct ups *u);
/* The last lines of stderr, joined with " | ", for failure messages (static buffer). */
const char *ups_stderr_tail(struct ups *u);
/* RC (an exit code from ups_wait/ups_stop) is WANT, else the failure is recorded with
 * WHAT and the end of stderr; 0 or -1. */
int check_rc(struct tc *t, struct ups *u, int rc, int want, const char *what);
/* Runs to completion: the exit code, stderr in *ERR (free() it). */
int ups_run(struct tc *t, const char *const args[], int timeout_ms, char **err);
/* Runs `uprobestats ARGS...` on the held target TG: starts it, releases TG once attached,
 * waits for TG's clean exit and for uprobestats' exit code 0; 0, or -1 with the failure
 * recorded. */
int ups_run_held(struct tc *t, struct ups *u, struct target *tg, const char *const args[],
		 int timeout_ms);

/* --- results of a --format json run ------------------------------------------------------ */
enum ev_kind { EV_EVENT, EV_RETURN, EV_OTHER };
enum ev_has { H_REGS = 1, H_EVENT_ID = 2, H_TIMESTAMP = 4, H_RETVAL = 8, H_DURATION = 16,
	      H_TOP_DURATION = 32 };

struct ev {
	enum ev_kind kind;
	unsigned has;
	long long pid, tid;
	unsigned long long task_index, probe_index;
	unsigned long long r[6];
	unsigned long long event_id, timestamp_ns, return_value, duration_ns, top_duration_ns;
	unsigned long long boot_ns;    /* the event's time: a return record's is its exit */
};

struct probe_sum {
	unsigned long long hits, delivered, dropped_kernel, dropped_sink;
};

#define MAX_PROBES 8
struct results {
	struct ev *ev;
	int nev, cap;
	int nsummary;
	struct probe_sum sum[MAX_PROBES];
	int nprobes;
	long lines;
};

/* Reads the JSON Lines file PATH; -1 (failure recorded) on a line that is not JSON or
 * an event without the fields its kind has. */
int results_read(struct tc *t, const char *path, struct results *res);
void results_free(struct results *res);
/* Events of KIND, of PID (0: any pid). */
int results_count(const struct results *res, enum ev_kind kind, long long pid);
/* The summary, checked: exactly one summary line whose probe rows equal WANT[0..N). */
int check_summary(struct tc *t, const struct results *res, const struct probe_sum *want, int n);

/* --- configs ---------------------------------------------------------------------------- */
/* One native task's config text into TEXT (as e2e.py's native_config() returns it); its
 * length, or -1 with the failure recorded. */
int native_task(struct tc *t, char *text, size_t size, const char *symbol, const char *prog,
		const char *target_name, int duration, const char *extra);
/* A one-probe native config, as e2e.py's native_config() writes it.  PROG is
 * "call_detail" or "call_timestamp_3"; TARGET_NAME, EXTRA may be NULL; DURATION 0: none. */
const char *native_config(struct tc *t, const char *symbol, const char *prog,
			  const char *target_name, int duration, const char *extra);
const char *target_path(struct tc *t, const char *exe, char *buf);

/* --- sections' JSON Lines events (vmtest_traffic.c) ------------------------------------- */
struct threads {
	long long main_tid, worker_tid; /* worker: the first other tid */
	char main[1024], worker[256];
	int other_tids, summaries;
};
struct jdoc;
struct jnode;
/* Appends event EV's section as "op:name:depth|cookie|value," ("op?:num," when its
 * begin was not seen) to TH's main (tid PID) or worker list. */
void add_section(const struct jdoc *d, const struct jnode *ev, long long pid,
		 struct threads *th);

/* --- target_art_exits' own record of its calls (vmtest_art.c) ----------------------------- */
struct art_call {
	int is_enabled;                /* else setAllowed */
	unsigned ret, exit;            /* isEnabled's return value; setAllowed's return taken */
	unsigned long long inner, outer; /* ns in its callees; ns around the call */
	unsigned long long t0;         /* when its caller started it (CLOCK_BOOTTIME) */
};

/* Reads up to MAX calls from target_art_exits' OUT file, in call order; the count, or -1
 * with the failure recorded. */
int read_art_calls(struct tc *t, const char *path, struct art_call *c, int max);

/* --- the scenarios ----------------------------------------------------------------------- */
struct vmcase {
	const char *name;
	void (*run)(struct tc *t);
};
extern const struct vmcase vm_native_cases[];
extern const struct vmcase vm_kernel_cases[];
extern const struct vmcase vm_art_cases[];
extern const struct vmcase vm_programs_cases[];
extern const struct vmcase vm_exits_cases[];
extern const struct vmcase vm_stack_cases[];
extern const struct vmcase vm_jit_cases[];
extern const struct vmcase vm_trace_cases[];
extern const struct vmcase vm_bionic_cases[];
extern const struct vmcase vm_traffic_cases[];
extern const struct vmcase vm_apk_cases[];
extern const struct vmcase vm_suspend_cases[];

#endif
