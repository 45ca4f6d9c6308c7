/* codecache.c — the per-process layer of the code cache (see codecache.h):
 * mappings, answers, lookups; the files are codefile.c's. */
#include "code/codecache.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "code/artdebug.h"
#include "code/codefile.h"
#include "common/grow.h"
#include "common/zip_path.h"
#include "formats/elf.h"
#include "sys/maps.h"
#include "sys/proc_path.h"
#include "sys/procmem.h"

#define MAX_PIDS 64
#define REREAD_NS 50000000ll     /* maps are read again on a miss at most every 50 ms */

struct mapping {
	uint64_t start, end, off;
	struct code_file *file;       /* NULL: anonymous, deleted or a memfd */
	char *name;                   /* the maps path column ("" when none) */
	dev_t dev;                    /* the file's, from the maps */
	uint64_t ino;
};

struct proc {
	uint32_t pid;
	uint32_t gen;                 /* bumped at each read of the maps */
	struct mapping *v;
	size_t n;
	int64_t read_ns;
	uint64_t used;
	struct art_debug *art;        /* ART's debugger interface (code/artdebug.h) */
	bool art_tried;               /* looked for libart's descriptors since the maps read */
};

/* Answers already given: a repeated PC (the common case, a probe's callers
 * repeat) costs a hash and a copy.  Keyed by pid, the maps generation, pc and
 * whether it is a return address. */
#define ANSWER_SLOTS 1024
struct answer {
	uint64_t pc;
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
	uint64_t tick, maps_read;
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

static void free_mappings(struct mapping *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

static void proc_clear(struct proc *p)
{
	art_debug_free(p->art);
	free_mappings(p->v, p->n);
	memset(p, 0, sizeof(*p));
}

void code_cache_free(struct code_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < MAX_PIDS; i++)
		proc_clear(&c->procs[i]);
	code_files_free(c->files);
	free(c->proc_dir);
	free(c);
}

void code_cache_get_stats(const struct code_cache *c, struct code_cache_stats *out)
{
	code_files_stats(c->files, out);
	out->maps_read = c->maps_read;
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

/* ---- processes ---- */

struct maps_read {
	struct code_cache *c;
	pid_t pid;
	const struct mapping *old;    /* the previous read's, and where to look first */
	size_t n_old, next_old;
	struct mapping *v;
	size_t n, cap;
};

/* Whether o (a mapping the previous read kept) is of pm's file: the same maps
 * path, or for a zip's member the path it is named after and an offset in its
 * entry's data. */
static bool same_name(const struct mapping *o, const struct proc_mapping *pm)
{
	const char *entry = code_file_member(o->file);
	size_t n = strlen(pm->path);

	if (!entry)
		return !strcmp(o->name, pm->path);
	return !strncmp(o->name, pm->path, n) && !strncmp(o->name + n, "!/", 2) &&
	       !strcmp(o->name + n + 2, entry) && code_file_holds(o->file, pm->offset);
}

/* The file the previous read opened for the same file (maps path, device and inode):
 * read once, and still known when the process's view of it is gone (it is exiting, its
 * /proc/PID/root with it). */
static struct code_file *known_file(struct maps_read *r, const struct proc_mapping *pm)
{
	for (size_t k = 0; k < r->n_old; k++) {
		size_t i = (r->next_old + k) % r->n_old;
		const struct mapping *o = &r->old[i];
		if (o->file && !code_file_why(o->file) && o->ino == pm->inode &&
		    o->dev == pm->dev && same_name(o, pm)) {
			r->next_old = i + 1;
			return o->file;
		}
	}
	return NULL;
}

/* A mapping of a zip (an APK's library, mapped from its entry's data): named
 * "PATH!/ENTRY" and its offset counted from the ELF's start, as the frames
 * and the kernel walk speak of the embedded file. */
static int as_member(struct mapping *m, const char *path)
{
	const char *entry = m->file ? code_file_member(m->file) : NULL;
	char name[PATH_MAX];

	if (!entry || !*entry)
		return 0;
	if (zip_path_join(name, sizeof(name), path, strlen(path), entry, strlen(entry)))
		return 0;
	free(m->name);
	if (!(m->name = strdup(name)))
		return -ENOMEM;
	m->off -= code_file_base(m->file);
	return 0;
}

static bool is_jit_name(const char *p)
{
	return strstr(p, "jit-cache") || strstr(p, "jit-code-cache") ||
	       strstr(p, "jit-zygote-cache");
}

static int add_mapping(void *ctx, const struct proc_mapping *pm)
{
	struct maps_read *r = ctx;
	struct mapping *m;
	const char *path = pm->path;

	if (!proc_mapping_exec(pm))
		return 0;
	if (grow_array(&r->v, &r->cap, r->n + 1, 64) < 0)
		return -ENOMEM;
	m = &r->v[r->n];
	*m = (struct mapping){ .start = pm->start, .end = pm->end, .off = pm->offset,
			       .name = strdup(path), .dev = pm->dev, .ino = pm->inode };
	if (!m->name)
		return -ENOMEM;
	r->n++;
	if (path[0] != '/' || strstr(path, " (deleted)") || !strncmp(path, "/memfd:", 7) ||
	    is_jit_name(path))
		return 0;
	/* a file's lines follow each other: one look-up for all of them */
	if (r->n >= 2 && m[-1].file && !strcmp(m[-1].name, path)) {
		m->file = m[-1].file;
		return 0;
	}
	if ((m->file = known_file(r, pm)))
		return as_member(m, path);
	/* the file the process mapped, never the tracer's namesake at its path (a chroot,
	 * a mount namespace: sys/proc_path.h) */
	char mapped[PATH_MAX];
	if (!pm->inode ||   /* no inode to tell the files apart by */
	    proc_path_of_mapping(r->c->proc_dir, r->pid, pm, mapped, sizeof(mapped)))
		snprintf(mapped, sizeof(mapped), "%s", path);
	m->file = code_file_get_mapped(r->c->files, mapped, path, pm->offset);
	return as_member(m, path);
}

/* Replaces p's mappings with what the maps say now.  A process that is gone,
 * or has exited and not been reaped (its maps read empty), keeps what was
 * read before: its records may still be waiting to be drained. */
static int read_maps(struct code_cache *c, struct proc *p)
{
	struct maps_read r = { .c = c, .pid = (pid_t)p->pid, .old = p->v, .n_old = p->n };
	struct err e = { 0 };
	int rc;

	p->read_ns = now_ns();
	c->maps_read++;
	rc = proc_maps_read(c->proc_dir, (pid_t)p->pid, add_mapping, &r, &e);
	if (rc < 0 || !r.n) {
		free_mappings(r.v, r.n);
		return rc < 0 ? rc : -ESRCH;
	}
	free_mappings(p->v, p->n);
	p->v = r.v;
	p->n = r.n;
	p->gen = ++c->next_gen;
	if (!p->art)
		p->art_tried = false;   /* libart may be mapped now */
	return 0;
}

static struct proc *proc_get(struct code_cache *c, uint32_t pid)
{
	struct proc *victim = &c->procs[0];

	c->tick++;
	for (size_t i = 0; i < MAX_PIDS; i++) {
		if (c->procs[i].pid == pid && c->procs[i].read_ns) {
			c->procs[i].used = c->tick;
			return &c->procs[i];
		}
		if (c->procs[i].used < victim->used)
			victim = &c->procs[i];
	}
	proc_clear(victim);
	victim->pid = pid;
	victim->used = c->tick;
	read_maps(c, victim);
	return victim;
}

static const struct mapping *find_mapping(struct code_cache *c, struct proc *p, uint64_t pc)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < p->n; i++)
			if (pc >= p->v[i].start && pc < p->v[i].end)
				return &p->v[i];
		if (pass || now_ns() - p->read_ns < REREAD_NS)
			break;
		read_maps(c, p);
	}
	return NULL;
}

static struct art_debug *proc_art(struct proc *p);

void code_cache_prime(struct code_cache *c, uint32_t pid)
{
	struct proc *p = proc_get(c, pid);
	struct art_debug *a;

	if (now_ns() - p->read_ns > 0)
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

		if (!m->file || code_file_why(m->file) || !is_libart(m->name) ||
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
		if (!c->procs[i].art)
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

/* ---- lookups ---- */

static void lookup_uncached(struct code_cache *c, struct proc *p, uint64_t pc, bool is_return,
			    struct code_info *out)
{
	const struct mapping *mp = find_mapping(c, p, pc);
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
		out->why = mp->file ? code_file_why(mp->file) : "unknown (anonymous code)";
		return;
	}
	if (!code_file_vaddr(mp->file, q - mp->start + mp->off, &vaddr)) {
		out->kind = FRAME_UNKNOWN;
		out->why = "unknown (outside the file's segments)";
		return;
	}
	code_file_describe(mp->file, vaddr, vaddr + (pc - q), out);
}

int code_cache_lookup(struct code_cache *c, uint32_t pid, uint64_t pc, bool is_return,
		      struct code_info *out)
{
	struct proc *p = proc_get(c, pid);
	uint64_t h = (pc ^ (pc >> 17) ^ ((uint64_t)pid << 7) ^ is_return) * 0x9e3779b97f4a7c15ull;
	struct answer *a = &c->answers[(h >> 40) % ANSWER_SLOTS];

	if (a->used && a->pc == pc && a->pid == pid && a->gen == p->gen &&
	    a->is_return == is_return) {
		*out = a->ci;
		return 0;
	}
	memset(out, 0, sizeof(*out));
	out->dex_pc = UINT32_MAX;
	lookup_uncached(c, p, pc, is_return, out);
	/* a miss that read the maps again has a new generation: keyed by it; JIT
	 * code is not kept: ART reuses its addresses for other methods */
	if (out->kind != FRAME_UNKNOWN && out->kind != FRAME_JIT)
		*a = (struct answer){ .pc = pc, .pid = pid, .gen = p->gen, .used = true,
				      .is_return = is_return, .ci = *out };
	return 0;
}

int code_cache_java_ranges(struct code_cache *c, uint32_t pid, code_cache_java_fn cb, void *ctx)
{
	struct proc *p = proc_get(c, pid);

	for (size_t i = 0; i < p->n; i++) {
		const struct mapping *mp = &p->v[i];
		int rc;

		if (!mp->file || code_file_why(mp->file))
			continue;
		rc = code_file_java_ranges(mp->file, mp->start, mp->end, mp->off, cb, ctx);
		if (rc)
			return rc;
	}
	return 0;
}
