/* codecache.c — the per-process layer of the code cache (see codecache.h):
 * mappings, answers, lookups; the files are codefile.c's. */
#include "code/codecache.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "code/artdebug.h"
#include "code/codefile.h"
#include "common/grow.h"
#include "common/zip_path.h"
#include "formats/elf.h"
#include "sys/maps.h"
#include "sys/proc_path.h"
#include "sys/procmem.h"

#define MAX_PIDS 1024
#define MAX_MAPPINGS 131072      /* every process's together (about 16 MiB at most) */
#define MAX_ROOTS 16
#define REREAD_NS 50000000ll     /* maps are read again on a miss at most every 50 ms */
#define FOREVER UINT64_MAX

struct mapping {
	uint64_t start, end, off;     /* off: from the ELF's start (an APK's entry: from its data) */
	uint64_t map_off;             /* the offset as the maps or the record gave it */
	struct code_file *file;       /* NULL: anonymous, deleted, a memfd or not openable */
	const char *why;              /* file NULL: why there is none (static text) */
	bool pending;                 /* a file not found yet: tried again on a new root */
	bool told;                    /* pending at a lookup: counted in files_unopened */
	char *own;                    /* the path as the maps or the record gave it */
	bool own_view;                /* own is the process's view (a record's), not ours */
	char *name;                   /* the path as this process sees it ("" when none) */
	dev_t dev;                    /* the file's, from the maps */
	uint64_t ino;
	/* CLOCK_MONOTONIC window in which the process had it: [from, until); from 0
	 * for what it had when its maps were read, until FOREVER while it lasts (an
	 * exec or a fork's copy ends it; the kernel says nothing of munmap, so a
	 * newer mapping over the same addresses wins from its time on) */
	uint64_t from, until;
};

struct proc {
	uint32_t pid;
	uint32_t gen;                 /* bumped at each change of the mappings */
	struct mapping *v;
	size_t n, cap;
	int64_t read_ns;              /* last /proc read (0: never) */
	uint64_t used;
	bool live;                    /* a slot in use */
	bool fed;                     /* the kernel's records say how its mappings change */
	uint64_t exec_ns;             /* its last exec (0: none seen) */
	uint64_t exit_ns;             /* its exit (0: not seen) */
	struct art_debug *art;        /* ART's debugger interface (code/artdebug.h) */
	bool art_tried;               /* looked for libart's descriptors since the mappings changed */
};

/* Answers already given: a repeated PC (the common case, a probe's callers
 * repeat) costs a hash and a copy.  Keyed by pid, the maps generation, pc and
 * whether it is a return address; good for times in [lo, hi). */
#define ANSWER_SLOTS 1024
struct answer {
	uint64_t pc, lo, hi;
	uint32_t pid, gen;
	bool used, is_return;
	struct code_info ci;
};

struct code_cache {
	char *proc_dir;
	struct code_files *files;
	struct answer answers[ANSWER_SLOTS];
	uint32_t next_gen;
	struct proc procs[MAX_PIDS];
	struct proc *last;            /* the last one looked up */
	size_t n_mappings;            /* over every process */
	uint64_t tick, maps_read;
	bool follow_all;              /* records of every process are kept */
	char *roots[MAX_ROOTS];       /* where chroots are, as this process sees them */
	size_t n_roots;
	struct code_cache_track_stats track;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct code_cache *code_cache_new(const char *proc_dir)
{
	struct code_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->proc_dir = strdup(proc_dir ? proc_dir : "/proc");
	c->files = code_files_new();
	if (!c->proc_dir || !c->files) {
		code_cache_free(c);
		return NULL;
	}
	return c;
}

static void proc_clear(struct code_cache *c, struct proc *p)
{
	for (size_t i = 0; i < p->n; i++) {
		free(p->v[i].name);
		free(p->v[i].own);
	}
	free(p->v);
	art_debug_free(p->art);
	c->n_mappings -= p->n;
	if (c->last == p)
		c->last = NULL;
	memset(p, 0, sizeof(*p));
}

void code_cache_free(struct code_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < MAX_PIDS; i++)
		proc_clear(c, &c->procs[i]);
	for (size_t i = 0; i < c->n_roots; i++)
		free(c->roots[i]);
	code_files_free(c->files);
	free(c->proc_dir);
	free(c);
}

void code_cache_get_stats(const struct code_cache *c, struct code_cache_stats *out)
{
	code_files_stats(c->files, out);
	out->maps_read = c->maps_read;
}

void code_cache_get_track_stats(const struct code_cache *c, struct code_cache_track_stats *out)
{
	*out = c->track;
}

struct code_file *code_cache_file(struct code_cache *c, const char *path)
{
	return code_file_get(c->files, path, path);
}

struct code_file *code_cache_file_mapped(struct code_cache *c, const char *path,
					 const char *shown, uint64_t map_off)
{
	return code_file_get_mapped(c->files, path, shown, map_off);
}

static bool is_jit_name(const char *p)
{
	return strstr(p, "jit-cache") || strstr(p, "jit-code-cache") ||
	       strstr(p, "jit-zygote-cache");
}

/* ---- the roots of chroots: to open a gone process's files ---- */

static void add_root(struct code_cache *c, const char *root, size_t len)
{
	if (!len || len >= PATH_MAX)   /* "" is the tracer's own root */
		return;
	for (size_t i = 0; i < c->n_roots; i++)
		if (strlen(c->roots[i]) == len && !memcmp(c->roots[i], root, len))
			return;
	if (c->n_roots == MAX_ROOTS)
		return;
	if ((c->roots[c->n_roots] = strndup(root, len)))
		c->n_roots++;
}

/* pid's root as this process sees it, while pid lives (a chroot): its
 * length in root (0: "/" or unknown). */
static size_t root_of(struct code_cache *c, uint32_t pid, char *root, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "%s/%u/root", c->proc_dir, pid);
	n = readlink(link, root, size - 1);
	if (n <= 1 || root[0] != '/')
		return 0;
	root[n] = '\0';
	add_root(c, root, (size_t)n);
	return (size_t)n;
}

/* A file known at `known` that the process calls `path`: the part of known
 * before path is a root (the planner's <chroot>/system/lib64/libc.so for a
 * chrooted process's /system/lib64/libc.so). */
static bool learn_root_from(struct code_cache *c, const char *known, const char *path)
{
	size_t kl = strlen(known), pl = strlen(path);

	if (kl <= pl || strcmp(known + kl - pl, path) || known[kl - pl - 1] == '/')
		return false;
	add_root(c, known, kl - pl);
	return true;
}

static bool same_file(const char *path, dev_t dev, uint64_t ino)
{
	struct stat st;

	return stat(path, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* ---- mappings ---- */

static bool plain_file(const char *path)
{
	return path[0] == '/' && path[1] != '/' && !strstr(path, " (deleted)") &&
	       strncmp(path, "/memfd:", 7) &&
	       !is_jit_name(path);
}

#define GONE_WHY "unknown (the process was gone before its mapped file could be opened)"

/* The file of a mapping the process has or had: the one it mapped (its
 * device and inode), never a namesake.  While the process lives: as
 * sys/proc_path.h finds it; after: a file already open with that device and
 * inode, or the path under a root known to hold that file.  shown gets the
 * path as this process sees it (a chroot's root before the process's path)
 * when it differs from the process's. */
static struct code_file *open_mapped(struct code_cache *c, uint32_t pid,
				     const struct proc_mapping *pm, bool own_view, bool alive,
				     char *shown, size_t size)
{
	char mapped[PATH_MAX];
	struct code_file *f;

	shown[0] = '\0';
	if (!pm->inode)   /* no inode to tell the files apart by */
		return code_file_get_mapped(c->files, pm->path, pm->path, pm->offset);
	if (same_file(pm->path, pm->dev, pm->inode))
		return code_file_get_mapped(c->files, pm->path, pm->path, pm->offset);
	if (alive &&
	    !proc_path_of_mapping(c->proc_dir, (pid_t)pid, pm, mapped, sizeof(mapped)) &&
	    same_file(mapped, pm->dev, pm->inode)) {
		char root[PATH_MAX];
		size_t n = own_view ? root_of(c, pid, root, sizeof(root)) : 0;
		if (n && (size_t)snprintf(shown, size, "%s%s", root, pm->path) >= size)
			shown[0] = '\0';
		return code_file_get_mapped(c->files, mapped, shown[0] ? shown : pm->path, pm->offset);
	}
	if (!own_view) {   /* the maps' path, this process's view: as the maps said */
		if ((f = code_files_find(c->files, pm->dev, pm->inode)))
			return f;
		return code_file_get_mapped(c->files, pm->path, pm->path, pm->offset);
	}
	if ((f = code_files_find(c->files, pm->dev, pm->inode))) {
		const char *known = code_file_path(f);
		if (learn_root_from(c, known, pm->path))
			snprintf(shown, size, "%s", known);
		return f;
	}
	for (size_t i = 0; i < c->n_roots; i++) {
		if ((size_t)snprintf(mapped, sizeof(mapped), "%s%s", c->roots[i], pm->path) <
			    sizeof(mapped) &&
		    same_file(mapped, pm->dev, pm->inode)) {
			snprintf(shown, size, "%s", mapped);
			return code_file_get_mapped(c->files, mapped, mapped, pm->offset);
		}
	}
	return NULL;
}

/* A mapping of a zip (an APK's library, mapped from its entry's data): named
 * "PATH!/ENTRY" and its offset counted from the ELF's start, as the frames
 * and the kernel walk speak of the embedded file. */
static void as_member(struct mapping *m)
{
	const char *entry = m->file ? code_file_member(m->file) : NULL;
	char name[PATH_MAX];
	char *dup;

	m->off = m->map_off - (m->file ? code_file_base(m->file) : 0);
	if (!entry || !*entry || strstr(m->name, "!/"))
		return;
	if (zip_path_join(name, sizeof(name), m->name, strlen(m->name), entry, strlen(entry)))
		return;
	if ((dup = strdup(name))) {
		free(m->name);
		m->name = dup;
	}
}

/* m's file, opened now if it is not yet (a mapping noted before the root that
 * holds its file was known); true when it has one. */
static bool resolve_mapping(struct code_cache *c, struct proc *p, struct mapping *m,
			    bool alive)
{
	struct proc_mapping pm = { .start = m->start, .end = m->end, .offset = m->map_off,
				   .perms = "r-xp", .dev = m->dev, .inode = m->ino,
				   .path = m->own, .path_len = strlen(m->own) };
	char shown[PATH_MAX];
	size_t roots = c->n_roots;

	if (!m->pending)
		return m->file != NULL;
	m->file = open_mapped(c, p->pid, &pm, m->own_view, alive, shown, sizeof(shown));
	if (!m->file)
		return false;
	m->pending = false;
	m->why = NULL;
	if (shown[0]) {
		char *name = strdup(shown);
		if (name) {
			free(m->name);
			m->name = name;
		}
	}
	as_member(m);
	p->gen = ++c->next_gen;
	/* a root learned: the process's other files may be under it */
	if (c->n_roots != roots)
		for (size_t i = 0; i < p->n; i++)
			if (p->v[i].pending && &p->v[i] != m)
				resolve_mapping(c, p, &p->v[i], false);
	return true;
}

/* The window of times from..until a newer mapping of the same addresses in p
 * cuts: ended where another one begins later. */
static bool same_mapping(const struct mapping *m, const struct proc_mapping *pm)
{
	return m->start == pm->start && m->end == pm->end && m->map_off == pm->offset &&
	       m->dev == pm->dev && m->ino == pm->inode && !strcmp(m->own, pm->path);
}

/* Adds pm to p from time `from` on, unless p has it already then. */
static int add_to_proc(struct code_cache *c, struct proc *p, const struct proc_mapping *pm,
		       uint64_t from, bool own_view, bool alive)
{
	struct mapping *m;

	for (size_t i = p->n; i-- > 0;) {
		const struct mapping *o = &p->v[i];
		if (o->until == FOREVER && same_mapping(o, pm))
			return 0;   /* again (an mprotect, a read of the maps) */
	}
	if (c->n_mappings >= MAX_MAPPINGS) {
		c->track.mappings_not_kept++;
		return -ENOSPC;
	}
	if (grow_array(&p->v, &p->cap, p->n + 1, 32) < 0) {
		c->track.mappings_not_kept++;
		return -ENOMEM;
	}
	m = &p->v[p->n];
	*m = (struct mapping){ .start = pm->start, .end = pm->end, .off = pm->offset,
			       .map_off = pm->offset, .name = strdup(pm->path), .own = strdup(pm->path), .dev = pm->dev,
			       .ino = pm->inode, .from = from, .until = FOREVER,
			       .own_view = own_view };
	if (!m->name || !m->own) {
		free(m->name);
		free(m->own);
		c->track.mappings_not_kept++;
		return -ENOMEM;
	}
	p->n++;
	c->n_mappings++;
	p->gen = ++c->next_gen;
	if (!p->art)
		p->art_tried = false;   /* libart may be mapped now */
	if (!plain_file(pm->path))
		return 0;
	/* a file's lines follow each other: one look-up for all of them */
	for (size_t i = p->n - 1; i-- > 0;) {
		const struct mapping *o = &p->v[i];
		if (o->file && o->dev == pm->dev && o->ino == pm->inode &&
		    o->own_view == own_view && !strcmp(o->own, pm->path) &&
		    code_file_holds(o->file, pm->offset)) {
			char *name = strdup(o->name);
			m->file = o->file;
			if (name) {
				free(m->name);
				m->name = name;
			}
			m->off = pm->offset - code_file_base(o->file);
			return 0;
		}
	}
	m->pending = true;
	if (!resolve_mapping(c, p, m, alive))
		m->why = GONE_WHY;
	return 0;
}

struct maps_read {
	struct code_cache *c;
	struct proc *p;
};

static int add_read_mapping(void *ctx, const struct proc_mapping *pm)
{
	struct maps_read *r = ctx;

	if (!proc_mapping_exec(pm))
		return 0;
	return add_to_proc(r->c, r->p, pm, r->p->exec_ns, false, true) == -ENOMEM ? -ENOMEM : 0;
}

/* Adds what the maps say now to p's mappings.  A process that is gone, or has
 * exited and not been reaped (its maps read empty), keeps what it had: its
 * records may still be waiting to be drained. */
static int read_maps(struct code_cache *c, struct proc *p)
{
	struct maps_read r = { .c = c, .p = p };
	struct err e = { 0 };

	p->read_ns = now_ns();
	c->maps_read++;
	return proc_maps_read(c->proc_dir, (pid_t)p->pid, add_read_mapping, &r, &e);
}

/* pid's slot, NULL when it has none. */
static struct proc *proc_find(struct code_cache *c, uint32_t pid)
{
	if (c->last && c->last->live && c->last->pid == pid)
		return c->last;
	for (size_t i = 0; i < MAX_PIDS; i++)
		if (c->procs[i].live && c->procs[i].pid == pid)
			return c->last = &c->procs[i];
	return NULL;
}

/* A new slot for pid: a free one, else the one of the process that exited
 * first, else the least recently used; one that records fed and that still
 * had mappings is counted as forgotten. */
static struct proc *proc_new(struct code_cache *c, uint32_t pid)
{
	struct proc *victim = NULL;

	for (size_t i = 0; i < MAX_PIDS; i++) {
		struct proc *p = &c->procs[i];
		if (!p->live) {
			victim = p;
			break;
		}
		if (!victim || (p->exit_ns && (!victim->exit_ns || p->exit_ns < victim->exit_ns)) ||
		    (!p->exit_ns && !victim->exit_ns && p->used < victim->used))
			victim = p;
	}
	if (victim->live && victim->fed && victim->n)
		c->track.procs_forgotten++;
	proc_clear(c, victim);
	victim->pid = pid;
	victim->live = true;
	victim->used = ++c->tick;
	return c->last = victim;
}

/* pid's slot for a lookup: a process never seen has its maps read (it ran
 * before the attach, or nothing tells its mappings). */
static struct proc *proc_get(struct code_cache *c, uint32_t pid)
{
	struct proc *p = proc_find(c, pid);

	if (p) {
		p->used = ++c->tick;
		return p;
	}
	p = proc_new(c, pid);
	read_maps(c, p);
	return p;
}

/* The mapping of pc at time t, and the times [lo, hi) it is the answer for. */
static const struct mapping *mapping_at(const struct proc *p, uint64_t pc, uint64_t t,
					uint64_t *lo, uint64_t *hi)
{
	const struct mapping *best = NULL;

	for (size_t i = 0; i < p->n; i++) {
		const struct mapping *m = &p->v[i];
		if (pc < m->start || pc >= m->end || m->from > t || t >= m->until)
			continue;
		if (!best || m->from >= best->from)
			best = m;
	}
	*lo = best ? best->from : 0;
	*hi = best ? best->until : FOREVER;
	for (size_t i = 0; i < p->n; i++) {   /* a newer one of the same addresses */
		const struct mapping *m = &p->v[i];
		if (pc >= m->start && pc < m->end && m->from > t && m->from < *hi)
			*hi = m->from;
	}
	return best;
}

static const struct mapping *find_mapping(struct code_cache *c, struct proc *p, uint64_t pc,
					  uint64_t t, uint64_t *lo, uint64_t *hi)
{
	const struct mapping *m = mapping_at(p, pc, t, lo, hi);

	/* a library loaded since the read, where no record tells it */
	if (!m && !p->fed && now_ns() - p->read_ns >= REREAD_NS) {
		read_maps(c, p);
		m = mapping_at(p, pc, t, lo, hi);
	}
	return m;
}

static struct art_debug *proc_art(struct proc *p);

void code_cache_prime(struct code_cache *c, uint32_t pid)
{
	struct proc *p = proc_find(c, pid);
	struct art_debug *a;

	if (!p)
		p = proc_new(c, pid);
	read_maps(c, p);
	/* ART's published code and dex files now, while the process surely
	 * runs: its records may be drained after it exited */
	if ((a = proc_art(p)))
		art_debug_refresh(a);
}
/* ---- ART's debugger interface ---- */

static int read_mem(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return proc_mem_read((pid_t)(uintptr_t)ctx, addr, buf, len);
}

static bool is_libart(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strcmp(b, "libart.so") || !strcmp(b, "libartd.so");
}

/* A symbol's address in the process: its vaddr plus the load bias of the
 * file's executable mapping m (the segments keep their distances). */
static uint64_t symbol_addr(const struct mapping *m, const struct elf_file *elf, const char *name)
{
	struct elf_symbol sym;
	uint64_t va;

	if (elf_find_symbol(elf, name, &sym) || !sym.value || !code_file_vaddr(m->file, m->off, &va))
		return 0;
	return m->start - va + sym.value;
}

/* The process's __jit_debug_descriptor and __dex_debug_descriptor, from
 * libart's symbols in its maps; NULL without libart (or either symbol). */
static struct art_debug *proc_art(struct proc *p)
{
	if (p->art || p->art_tried)
		return p->art;
	p->art_tried = true;
	for (size_t i = 0; i < p->n; i++) {
		const struct mapping *m = &p->v[i];
		const struct elf_file *elf;
		struct err e = { 0 };
		uint64_t jit, dex;

		if (m->until != FOREVER || !m->file || code_file_why(m->file) || !is_libart(m->name) ||
		    !(elf = code_file_elf(m->file, &e)))
			continue;
		jit = symbol_addr(m, elf, "__jit_debug_descriptor");
		dex = symbol_addr(m, elf, "__dex_debug_descriptor");
		if (!jit && !dex)
			continue;
#if defined(__aarch64__)
		p->art = art_debug_new(jit, dex, true, read_mem, (void *)(uintptr_t)p->pid);
#else
		p->art = art_debug_new(jit, dex, false, read_mem, (void *)(uintptr_t)p->pid);
#endif
		break;
	}
	return p->art;
}

int code_cache_dex(struct code_cache *c, uint32_t pid, uint64_t addr, struct code_info *out)
{
	struct proc *p = proc_get(c, pid);
	struct art_debug *a = proc_art(p);

	memset(out, 0, sizeof(*out));
	out->dex_pc = UINT32_MAX;
	return a && art_debug_dex(a, addr, out) ? 0 : -ENOENT;
}

void code_cache_art_stats(const struct code_cache *c, struct art_debug_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < MAX_PIDS; i++) {
		struct art_debug_stats s;
		if (!c->procs[i].live || !c->procs[i].art)
			continue;
		art_debug_get_stats(c->procs[i].art, &s);
		out->reads += s.reads;
		out->races += s.races;
		out->entries += s.entries;
		out->bad += s.bad;
		out->loops += s.loops;
		out->gave_up += s.gave_up;
	}
}


/* ---- what the kernel's records say (sys/perf_mmap.h) ---- */

void code_cache_follow_all(struct code_cache *c)
{
	c->follow_all = true;
}

void code_cache_follow(struct code_cache *c, uint32_t pid)
{
	struct proc *p = proc_find(c, pid);
	struct art_debug *a;

	if (!p) {
		p = proc_new(c, pid);
		read_maps(c, p);
	}
	p->fed = true;
	/* ART's published code and dex files now, while the process surely runs
	 * (as code_cache_prime) */
	if ((a = proc_art(p)))
		art_debug_refresh(a);
}

/* The slot of a process records are kept for; NULL for one not followed. */
static struct proc *fed_proc(struct code_cache *c, uint32_t pid)
{
	struct proc *p = proc_find(c, pid);

	if (p && p->fed)
		return p;
	if (!c->follow_all)
		return NULL;
	if (!p) {
		/* first heard of: what it had before, while it may still live */
		p = proc_new(c, pid);
		read_maps(c, p);
	}
	p->fed = true;
	return p;
}

/* Every mapping p has at t ends there. */
static void end_all(struct code_cache *c, struct proc *p, uint64_t t)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].until == FOREVER && p->v[i].from < t)
			p->v[i].until = t;
	p->gen = ++c->next_gen;
}

static void note_map(struct code_cache *c, const struct perf_mmap_rec *r)
{
	struct proc *p = fed_proc(c, r->pid);
	struct proc_mapping pm = {
		.start = r->start, .end = r->start + r->len, .offset = r->pgoff,
		.perms = "r-xp", .dev = makedev(r->maj, r->min), .inode = r->ino,
		.path = r->path ? r->path : "", .path_len = r->path ? strlen(r->path) : 0,
	};

	if (!p)
		return;
	/* the kernel's name of anonymous memory in records; the maps leave it blank */
	if (!strncmp(pm.path, "//anon", 6)) {
		pm.path = "";
		pm.path_len = 0;
	}
	c->track.mappings++;
	add_to_proc(c, p, &pm, r->time_ns, true, !p->exit_ns);
}

static void note_fork(struct code_cache *c, const struct perf_mmap_rec *r)
{
	struct proc *parent = fed_proc(c, r->ppid), *child;

	if (!parent)
		return;
	child = proc_find(c, r->pid);
	if (!child)
		child = proc_new(c, r->pid);
	end_all(c, child, r->time_ns);   /* a pid used again */
	child->fed = true;
	child->exec_ns = r->time_ns;
	child->exit_ns = 0;
	c->track.forks++;
	for (size_t i = 0; i < parent->n; i++) {
		const struct mapping *m = &parent->v[i];
		struct mapping *n;
		if (m->from > r->time_ns || r->time_ns >= m->until)
			continue;
		if (c->n_mappings >= MAX_MAPPINGS ||
		    grow_array(&child->v, &child->cap, child->n + 1, 32) < 0) {
			c->track.mappings_not_kept++;
			continue;
		}
		n = &child->v[child->n];
		*n = *m;
		n->from = r->time_ns;
		n->until = FOREVER;
		n->name = strdup(m->name);
		n->own = strdup(m->own);
		if (!n->name || !n->own) {
			free(n->name);
			free(n->own);
			c->track.mappings_not_kept++;
			continue;
		}
		child->n++;
		c->n_mappings++;
	}
	child->gen = ++c->next_gen;
}

void code_cache_note(struct code_cache *c, const struct perf_mmap_rec *r)
{
	struct proc *p;

	switch (r->kind) {
	case PERF_MMAP_MAP:
		note_map(c, r);
		break;
	case PERF_MMAP_EXEC:
		if ((p = fed_proc(c, r->pid))) {
			end_all(c, p, r->time_ns);
			p->exec_ns = r->time_ns;
			c->track.execs++;
		}
		break;
	case PERF_MMAP_FORK:
		note_fork(c, r);
		break;
	case PERF_MMAP_EXIT:
		if ((p = proc_find(c, r->pid)) && p->fed)
			p->exit_ns = r->time_ns;
		break;
	default:
		break;
	}
}

void code_cache_forget_before(struct code_cache *c, uint64_t t)
{
	for (size_t i = 0; i < MAX_PIDS; i++) {
		struct proc *p = &c->procs[i];
		size_t k = 0;
		if (!p->live || !p->fed)
			continue;
		if (p->exit_ns && p->exit_ns < t) {
			proc_clear(c, p);
			continue;
		}
		for (size_t j = 0; j < p->n; j++) {
			if (p->v[j].until < t) {
				free(p->v[j].name);
				free(p->v[j].own);
				c->n_mappings--;
				continue;
			}
			p->v[k++] = p->v[j];
		}
		if (k != p->n)
			p->gen = ++c->next_gen;
		p->n = k;
	}
}

/* ---- lookups ---- */

static void lookup_uncached(struct code_cache *c, struct proc *p, uint64_t pc, uint64_t t,
			    bool is_return, struct code_info *out, uint64_t *lo, uint64_t *hi)
{
	struct mapping *mp = (struct mapping *)find_mapping(c, p, pc, t, lo, hi);

	/* a file not found when noted: under a root learned since? */
	if (mp && mp->pending && !resolve_mapping(c, p, mp, !p->exit_ns) && !mp->told) {
		mp->told = true;
		c->track.files_unopened++;
	}
	uint64_t q = is_return && pc ? pc - 1 : pc; /* a return address: its call */
	uint64_t vaddr;

	if (!mp) {
		out->kind = FRAME_UNKNOWN;
		out->why = "unknown (no mapping)";
		return;
	}
	out->file = mp->name;
	out->offset = pc - mp->start + mp->off;
	/* JIT code: the code cache's memfd, or any code with no file behind it,
	 * named by the symfiles ART published for it */
	if (is_jit_name(mp->name) || !mp->file) {
		struct art_debug *a = proc_art(p);
		if (a && art_debug_jit(a, pc, q, out))
			return;
	}
	if (is_jit_name(mp->name)) {
		out->kind = FRAME_JIT;
		return;
	}
	if (!mp->file || code_file_why(mp->file)) {
		out->kind = FRAME_UNKNOWN;
		out->why = mp->file ? code_file_why(mp->file)
				    : mp->why ? mp->why : "unknown (anonymous code)";
		return;
	}
	if (!code_file_vaddr(mp->file, q - mp->start + mp->off, &vaddr)) {
		out->kind = FRAME_UNKNOWN;
		out->why = "unknown (outside the file's segments)";
		return;
	}
	code_file_describe(mp->file, vaddr, vaddr + (pc - q), out);
}

int code_cache_lookup_at(struct code_cache *c, uint32_t pid, uint64_t time_ns, uint64_t pc,
			 bool is_return, struct code_info *out)
{
	struct proc *p = proc_get(c, pid);
	uint64_t h = (pc ^ (pc >> 17) ^ ((uint64_t)pid << 7) ^ is_return) * 0x9e3779b97f4a7c15ull;
	struct answer *a = &c->answers[(h >> 40) % ANSWER_SLOTS];
	uint64_t lo = 0, hi = FOREVER;

	if (a->used && a->pc == pc && a->pid == pid && a->gen == p->gen &&
	    a->is_return == is_return && a->lo <= time_ns && time_ns < a->hi) {
		*out = a->ci;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	out->dex_pc = UINT32_MAX;
	lookup_uncached(c, p, pc, time_ns, is_return, out, &lo, &hi);
	/* a miss that read the maps again has a new generation: keyed by it; JIT
	 * code is not kept: ART reuses its addresses for other methods */
	if (out->kind != FRAME_UNKNOWN && out->kind != FRAME_JIT)
		*a = (struct answer){ .pc = pc, .pid = pid, .gen = p->gen, .used = true,
				      .is_return = is_return, .lo = lo, .hi = hi, .ci = *out };
	return 0;
}

int code_cache_lookup(struct code_cache *c, uint32_t pid, uint64_t pc, bool is_return,
		      struct code_info *out)
{
	return code_cache_lookup_at(c, pid, FOREVER - 1, pc, is_return, out);
}

int code_cache_java_ranges(struct code_cache *c, uint32_t pid, code_cache_java_fn cb, void *ctx)
{
	struct proc *p = proc_get(c, pid);

	for (size_t i = 0; i < p->n; i++) {
		const struct mapping *mp = &p->v[i];
		int rc;

		if (mp->until != FOREVER || !mp->file || code_file_why(mp->file))
			continue;
		rc = code_file_java_ranges(mp->file, mp->start, mp->end, mp->off, cb, ctx);
		if (rc)
			return rc;
	}
	return 0;
}
