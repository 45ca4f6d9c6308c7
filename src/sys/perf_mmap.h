/* perf_mmap.h — the executable mappings the kernel makes, as it makes them:
 * perf's way of knowing a process's code after the process is gone.
 *
 * One dummy software perf event (PERF_COUNT_SW_DUMMY: it counts nothing) per
 * CPU, system-wide, with mmap2 (executable mappings only: mmap_data 0),
 * comm (an exec sets PERF_RECORD_MISC_COMM_EXEC) and task (fork, exit)
 * records, each stamped with its pid/tid and CLOCK_MONOTONIC time
 * (sample_id_all, use_clockid) — the clock of bpf_ktime_get_ns(), which
 * stamps the BPF records, so a record is matched with the mappings as they
 * were at its time.  A mapping record is written into the ring when the
 * kernel makes the mapping, before the process can run code in it, so
 * reading these rings to their head before reading the BPF buffers gives
 * every mapping a record read after could need.  What the kernel could not
 * store (a full ring) comes as PERF_RECORD_LOST and is counted.
 *
 * The parser (perf_mmap_parse) is separate from the rings so that tests and
 * the fuzzer feed it bytes. */
#ifndef UPROBESTATS_SYS_PERF_MMAP_H
#define UPROBESTATS_SYS_PERF_MMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

enum perf_mmap_kind {
	PERF_MMAP_OTHER = 0,      /* a record of no interest (or malformed: see parse) */
	PERF_MMAP_MAP,            /* an executable mapping */
	PERF_MMAP_EXEC,           /* the process exec'd: its old mappings are gone */
	PERF_MMAP_FORK,           /* a new process (not a thread): a copy of the parent's */
	PERF_MMAP_EXIT,           /* the process exited */
	PERF_MMAP_LOST,           /* the kernel dropped `lost` records */
};

struct perf_mmap_rec {
	enum perf_mmap_kind kind;
	uint32_t pid, tid;        /* MAP, EXEC, EXIT: the process; FORK: the child */
	uint32_t ppid;            /* FORK: the parent process */
	uint64_t time_ns;         /* CLOCK_MONOTONIC */
	uint64_t start, len, pgoff;
	uint32_t maj, min;        /* the file's device */
	uint64_t ino, ino_generation;
	uint32_t prot, flags;
	uint64_t lost;            /* LOST */
	const char *path;         /* MAP: as the process sees it (its root); points into
				   * the record: NUL-terminated within it */
};

/* One record (struct perf_event_header first, size bytes, as the ring holds
 * it, with the sample_id trailer of PERF_SAMPLE_TID | PERF_SAMPLE_TIME) into out.  0; -EINVAL when it is shorter than its type's layout, its
 * header's size is not size, or a path is not NUL-terminated inside it
 * (out->kind is then PERF_MMAP_OTHER). */
int perf_mmap_parse(const void *data, size_t size, struct perf_mmap_rec *out);

struct perf_mmap;

/* Opens the rings: one event per online CPU, data_pages pages each (a power
 * of two).  An error names what the kernel refused. */
int perf_mmap_open(size_t data_pages, struct perf_mmap **out, struct err *err);
void perf_mmap_close(struct perf_mmap *pm);

/* The descriptors to poll (one per CPU), their count. */
size_t perf_mmap_fds(const struct perf_mmap *pm, const int **fds);

typedef void (*perf_mmap_fn)(void *ctx, const struct perf_mmap_rec *r);

/* Reads every ring to the head it sees now, then calls fn for each record of
 * interest in time order (a malformed one is counted, never handed on; r and
 * its path live until fn returns).  Returns the records read. */
size_t perf_mmap_drain(struct perf_mmap *pm, perf_mmap_fn fn, void *ctx);

struct perf_mmap_stats {
	uint64_t records;         /* read */
	uint64_t malformed;       /* read but not of a record's shape */
	uint64_t lost;            /* dropped by the kernel (PERF_RECORD_LOST) */
	uint64_t dropped;         /* read but not handed on: out of memory */
};
void perf_mmap_get_stats(const struct perf_mmap *pm, struct perf_mmap_stats *out);

#endif
