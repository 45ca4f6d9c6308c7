/* perf_mmap.c — the rings of mapping records and their parser (perf_mmap.h). */
#include "sys/perf_mmap.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/grow.h"

#define SAMPLE_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME)

/* The sample_id trailer SAMPLE_TYPE gives every record: { u32 pid, tid; u64 time }. */
#define TRAILER 16

/* MMAP2 after the header: pid, tid; addr, len, pgoff; maj, min, ino, ino_generation;
 * prot, flags; then the path (NUL-padded to 8). */
#define MMAP2_FIXED 64

static uint32_t rd32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static uint64_t rd64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static int parse_mmap2(const uint8_t *b, size_t n, uint16_t misc, struct perf_mmap_rec *out)
{
	const char *path = (const char *)b + MMAP2_FIXED;

	if (n < MMAP2_FIXED + 1 || (misc & PERF_RECORD_MISC_MMAP_BUILD_ID) ||
	    !memchr(path, '\0', n - MMAP2_FIXED))
		return -EINVAL;
	out->kind = PERF_MMAP_MAP;
	out->pid = rd32(b);
	out->tid = rd32(b + 4);
	out->start = rd64(b + 8);
	out->len = rd64(b + 16);
	out->pgoff = rd64(b + 24);
	out->maj = rd32(b + 32);
	out->min = rd32(b + 36);
	out->ino = rd64(b + 40);
	out->ino_generation = rd64(b + 48);
	out->prot = rd32(b + 56);
	out->flags = rd32(b + 60);
	out->path = path;
	if (out->start + out->len < out->start)
		return -EINVAL;
	return 0;
}

int perf_mmap_parse(const void *data, size_t size, struct perf_mmap_rec *out)
{
	const uint8_t *p = data;
	struct perf_event_header h;
	const uint8_t *b;
	size_t n;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (size < sizeof(h) + TRAILER)
		return -EINVAL;
	memcpy(&h, p, sizeof(h));
	if (h.size != size)
		return -EINVAL;
	b = p + sizeof(h);
	n = size - sizeof(h) - TRAILER;
	out->time_ns = rd64(p + size - 8);
	switch (h.type) {
	case PERF_RECORD_MMAP2:
		rc = parse_mmap2(b, n, h.misc, out);
		break;
	case PERF_RECORD_COMM:
		if (n < 9 || !memchr(b + 8, '\0', n - 8))
			return -EINVAL;
		out->pid = rd32(b);
		out->tid = rd32(b + 4);
		if (h.misc & PERF_RECORD_MISC_COMM_EXEC)
			out->kind = PERF_MMAP_EXEC;
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		if (n < 24)
			return -EINVAL;
		out->pid = rd32(b);
		out->ppid = rd32(b + 4);
		out->tid = rd32(b + 8);
		/* a new thread shares its process's mappings; a thread's exit is not its
		 * process's */
		if (h.type == PERF_RECORD_FORK && out->pid != out->ppid)
			out->kind = PERF_MMAP_FORK;
		else if (h.type == PERF_RECORD_EXIT && out->pid == out->tid)
			out->kind = PERF_MMAP_EXIT;
		break;
	case PERF_RECORD_LOST:
		if (n < 16)
			return -EINVAL;
		out->kind = PERF_MMAP_LOST;
		out->lost = rd64(b + 8);
		break;
	default:
		break;
	}
	if (rc < 0)
		memset(out, 0, sizeof(*out));
	return rc;
}

/* ---- the rings ---- */

struct ring {
	int fd;
	struct perf_event_mmap_page *meta;
	uint8_t *data;
	size_t size;              /* data bytes, a power of two */
};

struct perf_mmap {
	struct ring *rings;
	int *fds;
	size_t n, cap;
	size_t map_bytes;
	uint8_t *copy;            /* a record that wraps the ring's end */
	/* one drain's records of every ring, put in time order before they are handed
	 * on (a process moves between CPUs: its fork on one ring, its parent's last
	 * mapping on another) */
	struct pending *pend;
	size_t n_pend, cap_pend;
	char *paths;
	size_t n_paths, cap_paths;
	struct perf_mmap_stats stats;
};

struct pending {
	struct perf_mmap_rec r;
	size_t path_at;           /* in paths */
	uint64_t seq;             /* read order: ties keep it */
};

static int open_event(int cpu, size_t data_bytes)
{
	struct perf_event_attr a = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(a),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = SAMPLE_TYPE,
		.sample_id_all = 1,
		.mmap = 1,
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		.watermark = 1,
		.wakeup_watermark = (uint32_t)(data_bytes / 2),
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};

	return (int)syscall(__NR_perf_event_open, &a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

static int add_ring(struct perf_mmap *pm, int cpu, size_t pages, struct err *err)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct ring r = { .size = pages * page };
	void *m;

	r.fd = open_event(cpu, r.size);
	if (r.fd < 0) {
		if (errno == ENODEV)   /* an offline CPU */
			return 0;
		return err_set(err, -errno, "perf_event_open (mapping records, cpu %d): %s", cpu,
			       strerror(errno));
	}
	m = mmap(NULL, r.size + page, PROT_READ | PROT_WRITE, MAP_SHARED, r.fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;
		close(r.fd);
		return err_set(err, -e, "mmap of the mapping records' ring (cpu %d): %s", cpu,
			       strerror(e));
	}
	r.meta = m;
	r.data = (uint8_t *)m + page;
	if (grow_array(&pm->rings, &pm->cap, pm->n + 1, 8) < 0) {
		munmap(m, r.size + page);
		close(r.fd);
		return err_set(err, -ENOMEM, "out of memory");
	}
	pm->rings[pm->n++] = r;
	pm->map_bytes = r.size + page;
	return 0;
}

int perf_mmap_open(size_t data_pages, struct perf_mmap **out, struct err *err)
{
	struct perf_mmap *pm = calloc(1, sizeof(*pm));
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	int rc = 0;

	*out = NULL;
	if (!pm || !(pm->copy = malloc(65536)))
		rc = err_set(err, -ENOMEM, "out of memory");
	for (long cpu = 0; !rc && cpu < ncpu; cpu++)
		rc = add_ring(pm, (int)cpu, data_pages, err);
	if (!rc && !pm->n)
		rc = err_set(err, -ENODEV, "perf_event_open (mapping records): no CPU online");
	if (!rc && !(pm->fds = calloc(pm->n, sizeof(*pm->fds))))
		rc = err_set(err, -ENOMEM, "out of memory");
	if (rc) {
		perf_mmap_close(pm);
		return rc;
	}
	for (size_t i = 0; i < pm->n; i++)
		pm->fds[i] = pm->rings[i].fd;
	*out = pm;
	return 0;
}

void perf_mmap_close(struct perf_mmap *pm)
{
	if (!pm)
		return;
	for (size_t i = 0; i < pm->n; i++) {
		munmap(pm->rings[i].meta, pm->map_bytes);
		close(pm->rings[i].fd);
	}
	free(pm->rings);
	free(pm->fds);
	free(pm->copy);
	free(pm->pend);
	free(pm->paths);
	free(pm);
}

size_t perf_mmap_fds(const struct perf_mmap *pm, const int **fds)
{
	*fds = pm->fds;
	return pm->n;
}

static void one_record(struct perf_mmap *pm, const void *rec, size_t size)
{
	struct perf_mmap_rec r;
	size_t plen;

	pm->stats.records++;
	if (perf_mmap_parse(rec, size, &r) < 0) {
		pm->stats.malformed++;
		return;
	}
	if (r.kind == PERF_MMAP_LOST)
		pm->stats.lost += r.lost;
	if (r.kind == PERF_MMAP_OTHER)
		return;
	plen = r.path ? strlen(r.path) + 1 : 0;
	if (grow_array(&pm->pend, &pm->cap_pend, pm->n_pend + 1, 64) < 0 ||
	    grow_array(&pm->paths, &pm->cap_paths, pm->n_paths + plen, 4096) < 0) {
		pm->stats.dropped++;
		return;
	}
	if (plen)
		memcpy(pm->paths + pm->n_paths, r.path, plen);
	pm->pend[pm->n_pend] = (struct pending){ .r = r, .path_at = pm->n_paths,
						 .seq = pm->n_pend };
	pm->n_pend++;
	pm->n_paths += plen;
}

static size_t drain_ring(struct perf_mmap *pm, struct ring *r)
{
	uint64_t head = __atomic_load_n(&r->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->meta->data_tail;
	size_t n = 0;

	while (tail < head) {
		size_t at = (size_t)(tail & (r->size - 1));
		struct perf_event_header h;
		const uint8_t *rec;

		if (head - tail < sizeof(h))
			break;
		/* a header never wraps: records are 8-byte aligned, the ring a power of two */
		memcpy(&h, r->data + at, sizeof(h));
		if (h.size < sizeof(h) || h.size > head - tail) {
			pm->stats.malformed++;
			tail = head;   /* out of step with the kernel: give the rest up */
			break;
		}
		if (at + h.size <= r->size) {
			rec = r->data + at;
		} else {
			size_t first = r->size - at;
			memcpy(pm->copy, r->data + at, first);
			memcpy(pm->copy + first, r->data, h.size - first);
			rec = pm->copy;
		}
		one_record(pm, rec, h.size);
		tail += h.size;
		n++;
	}
	__atomic_store_n(&r->meta->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

static int by_time(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->r.time_ns != y->r.time_ns)
		return x->r.time_ns < y->r.time_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

size_t perf_mmap_drain(struct perf_mmap *pm, perf_mmap_fn fn, void *ctx)
{
	size_t n = 0;

	pm->n_pend = pm->n_paths = 0;
	for (size_t i = 0; i < pm->n; i++)
		n += drain_ring(pm, &pm->rings[i]);
	qsort(pm->pend, pm->n_pend, sizeof(*pm->pend), by_time);
	for (size_t i = 0; i < pm->n_pend; i++) {
		struct perf_mmap_rec *r = &pm->pend[i].r;
		if (r->path)
			r->path = pm->paths + pm->pend[i].path_at;
		fn(ctx, r);
	}
	return n;
}

void perf_mmap_get_stats(const struct perf_mmap *pm, struct perf_mmap_stats *out)
{
	*out = pm->stats;
}
