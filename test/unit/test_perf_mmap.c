/* test_perf_mmap.c — the kernel's mapping records (sys/perf_mmap.h): the parser
 * over hand-made records, the code cache's table fed by them (code/codecache.h:
 * times, exec, fork, a gone chrooted process's files by device/inode, the bound),
 * and a real ring seeing this process map a file. */
#include "ut.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "code/codecache.h"
#include "sys/perf_mmap.h"

/* A record as the ring holds it: header, body, sample_id {pid, tid, time}. */
struct rec {
	uint8_t b[512];
	size_t n;
};

static void put(struct rec *r, const void *p, size_t n)
{
	memcpy(r->b + r->n, p, n);
	r->n += n;
}

static void put32(struct rec *r, uint32_t v) { put(r, &v, 4); }
static void put64(struct rec *r, uint64_t v) { put(r, &v, 8); }

static void begin(struct rec *r, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = { .type = type, .misc = misc };

	memset(r, 0, sizeof(*r));
	put(r, &h, sizeof(h));
}

static void end(struct rec *r, uint32_t pid, uint64_t time)
{
	struct perf_event_header h;

	put32(r, pid);
	put32(r, pid);
	put64(r, time);
	memcpy(&h, r->b, sizeof(h));
	h.size = (uint16_t)r->n;
	memcpy(r->b, &h, sizeof(h));
}

static void mmap2_rec(struct rec *r, uint32_t pid, uint64_t time, uint64_t start, uint64_t len,
		      uint64_t pgoff, dev_t dev, uint64_t ino, const char *path)
{
	size_t pl = (strlen(path) + 1 + 7) & ~(size_t)7;

	begin(r, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	put32(r, pid);
	put32(r, pid);
	put64(r, start);
	put64(r, len);
	put64(r, pgoff);
	put32(r, major(dev));
	put32(r, minor(dev));
	put64(r, ino);
	put64(r, 7);               /* ino_generation */
	put32(r, PROT_READ | PROT_EXEC);
	put32(r, MAP_PRIVATE);
	memset(r->b + r->n, 0, pl);
	memcpy(r->b + r->n, path, strlen(path));
	r->n += pl;
	end(r, pid, time);
}

static void task_rec(struct rec *r, uint32_t type, uint32_t pid, uint32_t ppid, uint32_t tid,
		     uint64_t time)
{
	begin(r, type, 0);
	put32(r, pid);
	put32(r, ppid);
	put32(r, tid);
	put32(r, ppid);
	put64(r, time);
	end(r, pid, time);
}

static void comm_rec(struct rec *r, uint32_t pid, uint64_t time, bool exec)
{
	begin(r, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	put32(r, pid);
	put32(r, pid);
	put(r, "toybox\0\0", 8);
	end(r, pid, time);
}

UT_TEST(perf_mmap_parses_each_record_kind)
{
	struct rec r;
	struct perf_mmap_rec p;

	mmap2_rec(&r, 42, 1000, 0x7000, 0x3000, 0x1000, makedev(253, 1), 99, "/system/bin/toybox");
	UT_EQ_INT(perf_mmap_parse(r.b, r.n, &p), 0);
	UT_EQ_INT(p.kind, PERF_MMAP_MAP);
	UT_EQ_INT(p.pid, 42);
	UT_EQ_U64(p.time_ns, 1000);
	UT_EQ_U64(p.start, 0x7000);
	UT_EQ_U64(p.len, 0x3000);
	UT_EQ_U64(p.pgoff, 0x1000);
	UT_EQ_INT(p.maj, 253);
	UT_EQ_INT(p.min, 1);
	UT_EQ_U64(p.ino, 99);
	UT_EQ_U64(p.ino_generation, 7);
	UT_EQ_STR(p.path, "/system/bin/toybox");

	comm_rec(&r, 42, 5, true);
	UT_EQ_INT(perf_mmap_parse(r.b, r.n, &p), 0);
	UT_EQ_INT(p.kind, PERF_MMAP_EXEC);
	comm_rec(&r, 42, 5, false);   /* a rename (prctl): nothing to do */
	UT_EQ_INT(perf_mmap_parse(r.b, r.n, &p), 0);
	UT_EQ_INT(p.kind, PERF_MMAP_OTHER);

	task_rec(&r, PERF_RECORD_FORK, 43, 42, 43, 6);
	UT_EQ_INT(perf_mmap_parse(r.b, r.n, &p), 0);
	UT_EQ_INT(p.kind, PERF_MMAP_FORK);
	UT_EQ_INT(p.pid, 43);
	UT_EQ_INT(p.ppid, 42);
	task_rec(&r, PERF_RECORD_FORK, 42, 42, 44, 6);   /* a thread */
	UT_EQ_INT(perf_mmap_parse(r.b, r.n, &p), 0);
	UT_EQ_INT(p.kind, PERF_MMAP_OTHER);
	task_rec(&r, PERF_RECORD_EXIT, 42, 1, 42, 7);
	UT_EQ_INT(perf_mmap_parse(r.b, r.n, &p), 0);
	UT_EQ_INT(p.kind, PERF_MMAP_EXIT);
	task_rec(&r, PERF_RECORD_EXIT, 42, 42, 44, 7);   /* a thread's */
	UT_EQ_INT(perf_mmap_parse(r.b, r.n, &p), 0);
	UT_EQ_INT(p.kind, PERF_MMAP_OTHER);

	begin(&r, PERF_RECORD_LOST, 0);
	put64(&r, 1);
	put64(&r, 12345);
	end(&r, 0, 8);
	UT_EQ_INT(perf_mmap_parse(r.b, r.n, &p), 0);
	UT_EQ_INT(p.kind, PERF_MMAP_LOST);
	UT_EQ_U64(p.lost, 12345);

	begin(&r, PERF_RECORD_SAMPLE, 0);   /* not one of ours: passed over */
	put64(&r, 1);
	end(&r, 0, 8);
	UT_EQ_INT(perf_mmap_parse(r.b, r.n, &p), 0);
	UT_EQ_INT(p.kind, PERF_MMAP_OTHER);
}

UT_TEST(perf_mmap_refuses_malformed_records)
{
	struct rec r;
	struct perf_mmap_rec p;

	mmap2_rec(&r, 42, 1000, 0x7000, 0x3000, 0, makedev(8, 1), 99, "/a");
	/* every truncation: the header's size no longer matches, or too short */
	for (size_t n = 0; n < r.n; n++)
		UT_EQ_INT(perf_mmap_parse(r.b, n, &p), -EINVAL);
	/* the header says fewer bytes than there are */
	UT_EQ_INT(perf_mmap_parse(r.b, r.n + 8, &p), -EINVAL);
	/* a path without its NUL inside the record */
	mmap2_rec(&r, 42, 1000, 0x7000, 0x3000, 0, makedev(8, 1), 99, "/abcdefg");
	memset(r.b + sizeof(struct perf_event_header) + 64, 'x', 16);
	UT_EQ_INT(perf_mmap_parse(r.b, r.n, &p), -EINVAL);
	UT_EQ_INT(p.kind, PERF_MMAP_OTHER);
	/* a range that wraps */
	mmap2_rec(&r, 42, 1000, UINT64_MAX - 0xfff, 0x3000, 0, makedev(8, 1), 99, "/a");
	UT_EQ_INT(perf_mmap_parse(r.b, r.n, &p), -EINVAL);
	/* a build-id mmap2 (no device/inode) */
	mmap2_rec(&r, 42, 1000, 0x7000, 0x3000, 0, makedev(8, 1), 99, "/a");
	((struct perf_event_header *)r.b)->misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
	UT_EQ_INT(perf_mmap_parse(r.b, r.n, &p), -EINVAL);
	/* a fork record cut short, a comm without its NUL */
	task_rec(&r, PERF_RECORD_FORK, 43, 42, 43, 6);
	memmove(r.b + 16, r.b + 24, r.n - 24);
	r.n -= 8;
	((struct perf_event_header *)r.b)->size = (uint16_t)r.n;
	UT_EQ_INT(perf_mmap_parse(r.b, r.n, &p), -EINVAL);
	comm_rec(&r, 42, 5, true);
	memset(r.b + 16, 'x', 8);
	UT_EQ_INT(perf_mmap_parse(r.b, r.n, &p), -EINVAL);
}

/* ---- the code cache fed by records ---- */

static __attribute__((noinline)) int pm_probe_target(int x)
{
	return x * 5 + 1;
}

/* This binary's executable mapping holding pm_probe_target: start, end, offset. */
static bool own_text(uint64_t *start, uint64_t *end, uint64_t *off, char *path, size_t size)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128];
	uint64_t pc = (uint64_t)(uintptr_t)&pm_probe_target;
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, o;
		char perms[5], p[PATH_MAX];
		if (sscanf(line, "%llx-%llx %4s %llx %*s %*s %4095s", &s, &e, perms, &o, p) == 5 &&
		    perms[2] == 'x' && pc >= s && pc < e) {
			*start = s, *end = e, *off = o;
			snprintf(path, size, "%s", p);
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

#define GONE 2147483000u   /* above any pid_max: never a live process */

static void note(struct code_cache *c, struct rec *r)
{
	struct perf_mmap_rec p;

	if (perf_mmap_parse(r->b, r->n, &p) == 0)
		code_cache_note(c, &p);
}

static const char *sym_at(struct code_cache *c, uint32_t pid, uint64_t t, uint64_t pc)
{
	static struct code_info ci;

	code_cache_lookup_at(c, pid, t, pc, false, &ci);
	return ci.kind == FRAME_NATIVE && ci.symbol ? ci.symbol : ci.why ? ci.why : "?";
}

UT_TEST(codecache_records_times_exec_fork)
{
	uint64_t s, e, off, pc = (uint64_t)(uintptr_t)&pm_probe_target;
	char exe[PATH_MAX];
	struct stat st;
	struct rec r;
	const char *proc = ut_tmpfile("pm-empty-proc");
	struct code_cache *c;

	UT_ASSERT(pm_probe_target(1) == 6);
	UT_ASSERT(own_text(&s, &e, &off, exe, sizeof(exe)));
	UT_EQ_INT(stat(exe, &st), 0);
	mkdir(proc, 0755);
	UT_ASSERT((c = code_cache_new(proc)) != NULL);
	code_cache_follow_all(c);
	mmap2_rec(&r, GONE, 1000, s, e - s, off, st.st_dev, st.st_ino, exe);
	note(c, &r);
	/* mapped at 1000: not before */
	UT_CONTAINS(sym_at(c, GONE, 999, pc), "no mapping");
	UT_EQ_STR(sym_at(c, GONE, 1000, pc), "pm_probe_target");
	/* a child forked at 1500 has it too; the parent's exec at 2000 ends the parent's */
	task_rec(&r, PERF_RECORD_FORK, GONE + 1, GONE, GONE + 1, 1500);
	note(c, &r);
	comm_rec(&r, GONE, 2000, true);
	note(c, &r);
	UT_EQ_STR(sym_at(c, GONE, 1999, pc), "pm_probe_target");
	UT_CONTAINS(sym_at(c, GONE, 2000, pc), "no mapping");
	UT_CONTAINS(sym_at(c, GONE + 1, 1499, pc), "no mapping");
	UT_EQ_STR(sym_at(c, GONE + 1, 2500, pc), "pm_probe_target");
	/* the answers cache knows the times too: again, in the other order */
	UT_CONTAINS(sym_at(c, GONE, 2001, pc), "no mapping");
	UT_EQ_STR(sym_at(c, GONE, 1001, pc), "pm_probe_target");
	/* a newer mapping of the same addresses (anonymous) wins from its time on */
	mmap2_rec(&r, GONE + 1, 3000, s, e - s, 0, 0, 0, "//anon");
	note(c, &r);
	UT_EQ_STR(sym_at(c, GONE + 1, 2999, pc), "pm_probe_target");
	UT_CONTAINS(sym_at(c, GONE + 1, 3000, pc), "anonymous");
	/* exited: kept until forgotten */
	task_rec(&r, PERF_RECORD_EXIT, GONE + 1, 1, GONE + 1, 4000);
	note(c, &r);
	UT_EQ_STR(sym_at(c, GONE + 1, 2999, pc), "pm_probe_target");
	code_cache_forget_before(c, 3500);
	UT_EQ_STR(sym_at(c, GONE + 1, 2999, pc), "pm_probe_target");
	code_cache_forget_before(c, 5000);
	UT_CONTAINS(sym_at(c, GONE + 1, 2999, pc), "no mapping");
	/* the parent's ended mapping goes once nothing can need it */
	UT_CONTAINS(sym_at(c, GONE, 1999, pc), "no mapping");
	code_cache_free(c);
}

static bool copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0755);
	char buf[65536];
	ssize_t n;
	bool ok = in >= 0 && out >= 0;

	while (ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, (size_t)n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ok;
}

/* A chrooted process gone before its records are read: its program's path is
 * its own (/bin/prog), which names nothing here; once a file it maps is one
 * the run knows (the probed library, at <root>/lib/known.so), <root> is a root
 * and the program is found under it, by device and inode. */
UT_TEST(codecache_records_of_a_gone_chrooted_process)
{
	uint64_t s, e, off, pc = (uint64_t)(uintptr_t)&pm_probe_target;
	char exe[PATH_MAX], root[PATH_MAX], prog[PATH_MAX + 16], known[PATH_MAX + 16];
	struct stat sp, sk;
	struct rec r;
	struct code_cache *c;
	struct code_info ci;
	struct code_cache_track_stats ts;

	UT_ASSERT(own_text(&s, &e, &off, exe, sizeof(exe)));
	snprintf(root, sizeof(root), "%s", ut_tmpfile("pm-root"));
	mkdir(root, 0755);
	snprintf(prog, sizeof(prog), "%s/bin", root);
	mkdir(prog, 0755);
	snprintf(known, sizeof(known), "%s/lib", root);
	mkdir(known, 0755);
	snprintf(prog, sizeof(prog), "%s/bin/prog", root);
	snprintf(known, sizeof(known), "%s/lib/known.so", root);
	UT_ASSERT(copy_file(exe, prog) && copy_file(exe, known));
	UT_EQ_INT(stat(prog, &sp), 0);
	UT_EQ_INT(stat(known, &sk), 0);
	UT_ASSERT((c = code_cache_new(ut_tmpfile("pm-empty-proc"))) != NULL);
	code_cache_follow_all(c);
	UT_ASSERT(code_cache_file(c, known) != NULL);   /* the planner's */
	mmap2_rec(&r, GONE, 1000, s, e - s, off, sp.st_dev, sp.st_ino, "/bin/prog");
	note(c, &r);
	mmap2_rec(&r, GONE, 1001, 0x10000000, e - s, off, sk.st_dev, sk.st_ino, "/lib/known.so");
	note(c, &r);
	code_cache_lookup_at(c, GONE, 2000, pc, false, &ci);
	UT_EQ_INT(ci.kind, FRAME_NATIVE);
	UT_EQ_STR(ci.symbol, "pm_probe_target");
	UT_EQ_STR(ci.file, prog);   /* as this process sees it */
	code_cache_lookup_at(c, GONE, 2000, 0x10000000 + (pc - s), false, &ci);
	UT_EQ_STR(ci.symbol, "pm_probe_target");
	UT_EQ_STR(ci.file, known);
	/* a file no root holds: unknown, said, and counted once */
	mmap2_rec(&r, GONE, 1002, 0x20000000, 0x1000, 0, sp.st_dev, sp.st_ino + 999999,
		  "/bin/gone");
	note(c, &r);
	code_cache_lookup_at(c, GONE, 2000, 0x20000010, false, &ci);
	UT_EQ_INT(ci.kind, FRAME_UNKNOWN);
	UT_CONTAINS(ci.why, "gone before its mapped file could be opened");
	code_cache_lookup_at(c, GONE, 2000, 0x20000020, false, &ci);
	code_cache_get_track_stats(c, &ts);
	UT_EQ_INT(ts.files_unopened, 1);
	code_cache_free(c);
}

/* Processes x mappings are bounded: what is over is counted, never a crash. */
UT_TEST(codecache_records_bounded)
{
	struct code_cache *c = code_cache_new(ut_tmpfile("pm-empty-proc"));
	struct code_cache_track_stats ts;
	struct rec r;

	UT_ASSERT(c != NULL);
	code_cache_follow_all(c);
	for (uint32_t p = 0; p < 1100; p++)
		for (uint32_t m = 0; m < 130; m++) {
			mmap2_rec(&r, GONE - p, 1000 + m, 0x100000 + m * 0x1000ull, 0x1000, 0, 0, 0,
				  "//anon");
			note(c, &r);
		}
	code_cache_get_track_stats(c, &ts);
	UT_ASSERT(ts.mappings_not_kept > 0 || ts.procs_forgotten > 0);
	UT_EQ_U64(ts.mappings, 1100 * 130);
	code_cache_free(c);
}

static int pm_seen(void *ctx, const struct perf_mmap_rec *r);

struct seen {
	uint64_t start;
	bool found;
	char path[PATH_MAX];
};

static void on_rec(void *ctx, const struct perf_mmap_rec *r)
{
	pm_seen(ctx, r);
}

static int pm_seen(void *ctx, const struct perf_mmap_rec *r)
{
	struct seen *s = ctx;

	if (r->kind == PERF_MMAP_MAP && r->pid == (uint32_t)getpid() && r->start == s->start &&
	    !strcmp(r->path, s->path))
		s->found = true;
	return 0;
}

/* The kernel's records themselves: this process maps a file executable, the
 * ring says so (its address, its path). */
UT_TEST(perf_mmap_ring_sees_an_executable_mapping)
{
	struct perf_mmap *pm;
	struct err e = { 0 };
	struct seen s = { 0 };
	int fd;
	void *m;

	UT_EQ_INT(perf_mmap_open(8, &pm, &e), 0);
	snprintf(s.path, sizeof(s.path), "%s", ut_tmpfile("pm-mapped.bin"));
	fd = open(s.path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	UT_ASSERT(fd >= 0);
	UT_EQ_INT(ftruncate(fd, 4096), 0);
	m = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	UT_ASSERT(m != MAP_FAILED);
	s.start = (uint64_t)(uintptr_t)m;
	perf_mmap_drain(pm, on_rec, &s);
	munmap(m, 4096);
	UT_ASSERT(s.found);
	perf_mmap_close(pm);
}
