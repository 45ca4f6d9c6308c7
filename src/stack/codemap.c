#include "stack/codemap.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "formats/codeinfo.h"
#include "formats/dex.h"
#include "formats/dex_debug.h"
#include "formats/elf.h"
#include "formats/minidebug.h"
#include "formats/oat.h"
#include "formats/oat_dexfile.h"
#include "formats/oat_methods.h"

#define MAX_PIDS 64
#define MAX_FILES 256
#define REREAD_NS 50000000ll     /* maps are read again on a miss at most every 50 ms */

struct sym {
	uint64_t start, size;
	const char *name;
};

struct jmethod {
	uint64_t start;               /* code vaddr */
	uint32_t size;
	uint32_t list_i;              /* in methods.v */
	bool decoded, frame_decoded, frame_ok, has_dm;
	const struct dex_file *dex;   /* for line numbers, when has_dm */
	struct dex_method dm;
	struct art_frame_info fi;
	struct art_stack_map *rows;
	uint32_t n_rows;
	char *name;
};

struct file {
	char *path;
	bool bad;                     /* could not be read */
	char why[160];
	struct elf_file *elf;
	struct minidebug md;          /* .gnu_debugdata's ELF (md.elf NULL: none) */
	struct cfi_table *cfi;
	bool has_cfi;                 /* the file has CFI sections (maybe unreadable) */
	struct sym *syms;
	size_t n_syms;
	uint64_t nterp_start, nterp_end;
	struct oat_file *oat;
	struct oat_dexset *dexes;
	struct oat_method_list methods;
	struct jmethod *jm;
	size_t n_jm;
};

struct mapping {
	uint64_t start, end, off;
	struct file *file;            /* NULL: anonymous */
	char *name;                   /* the maps path column ("" when none) */
};

struct proc {
	uint32_t pid;
	uint32_t gen;                 /* bumped at each read of the maps */
	struct mapping *v;
	size_t n;
	int64_t read_ns;
	uint64_t used;
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

struct codemap {
	char proc_dir[256];
	struct answer answers[ANSWER_SLOTS];
	uint32_t next_gen;
	struct proc procs[MAX_PIDS];
	struct file *files[MAX_FILES];
	size_t n_files;
	uint64_t tick;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

struct codemap *codemap_new(const char *proc_dir)
{
	struct codemap *m = calloc(1, sizeof(*m));

	if (m)
		snprintf(m->proc_dir, sizeof(m->proc_dir), "%s", proc_dir ? proc_dir : "/proc");
	return m;
}

static void file_free(struct file *f)
{
	for (size_t i = 0; i < f->n_jm; i++) {
		free(f->jm[i].rows);
		free(f->jm[i].name);
	}
	free(f->jm);
	oat_method_list_free(&f->methods);
	if (f->dexes)
		oat_dexset_free(f->dexes);
	if (f->oat)
		oat_close(f->oat);
	if (f->cfi)
		cfi_close(f->cfi);
	free(f->syms);
	if (f->md.elf)
		minidebug_close(&f->md);
	if (f->elf)
		elf_close(f->elf);
	free(f->path);
	free(f);
}

static void proc_clear(struct proc *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].name);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

void codemap_free(struct codemap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < MAX_PIDS; i++)
		proc_clear(&m->procs[i]);
	for (size_t i = 0; i < m->n_files; i++)
		file_free(m->files[i]);
	free(m);
}

/* ---- ELF symbols ---- */

struct sym_vec {
	struct sym *v;
	size_t n, cap;
	struct file *f;
};

static int add_sym(void *ctx, const char *name, const struct elf_symbol *s)
{
	struct sym_vec *sv = ctx;

	if (s->type != 2 /* STT_FUNC */ || !s->value || !name || !*name)
		return 0;
	if (!strcmp(name, "ExecuteNterpImpl"))
		sv->f->nterp_start = s->value;
	else if (!strcmp(name, "EndExecuteNterpImpl"))
		sv->f->nterp_end = s->value;
	if (sv->n == sv->cap) {
		size_t cap = sv->cap ? sv->cap * 2 : 256;
		struct sym *v = realloc(sv->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		sv->v = v;
		sv->cap = cap;
	}
	sv->v[sv->n++] = (struct sym){ s->value, s->size, name };
	return 0;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* .symtab/.dynsym, and the .symtab of .gnu_debugdata (mini debug info:
 * most Android libraries and oat files built with it keep their local
 * function symbols only there). */
static void load_symbols(struct file *f)
{
	struct sym_vec sv = { .f = f };
	struct err e = { 0 };

	if (elf_foreach_symbol(f->elf, add_sym, &sv) < 0) {
		free(sv.v);
		return;
	}
	if (minidebug_open(f->elf, &f->md, &e) == 0) {
		if (elf_foreach_symbol(f->md.elf, add_sym, &sv) < 0) {
			free(sv.v);
			return;
		}
	} else {
		f->md.elf = NULL;
	}
	if (sv.n)
		qsort(sv.v, sv.n, sizeof(*sv.v), sym_cmp);
	f->syms = sv.v;
	f->n_syms = sv.n;
}

static const struct sym *find_sym(const struct file *f, uint64_t vaddr)
{
	size_t lo = 0, hi = f->n_syms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the last symbol starting at or before vaddr whose range holds it */
	for (size_t i = lo; i-- > 0 && lo - i <= 8;) {
		const struct sym *s = &f->syms[i];
		if (vaddr >= s->start && vaddr - s->start < (s->size ? s->size : 1))
			return s;
	}
	return NULL;
}

/* ---- oat methods ---- */

static int jm_cmp(const void *a, const void *b)
{
	const struct jmethod *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static void load_oat(struct file *f)
{
	struct err e = { 0 };

	if (oat_open(f->path, &f->oat, &e) < 0) {
		f->oat = NULL;
		return;
	}
	if (oat_dexset_new(f->oat, f->path, NULL, 0, &f->dexes, &e) < 0)
		f->dexes = NULL;
	if (oat_list_methods(f->oat, f->dexes, &f->methods, &e) < 0)
		return;
	f->jm = calloc(f->methods.n ? f->methods.n : 1, sizeof(*f->jm));
	if (!f->jm)
		return;
	for (size_t i = 0; i < f->methods.n; i++) {
		const struct oat_method *om = &f->methods.v[i];
		if (om->dedup_first != i || !om->code.code_size)
			continue;
		f->jm[f->n_jm++] = (struct jmethod){ .start = om->code.vaddr,
						      .size = om->code.code_size,
						      .list_i = (uint32_t)i };
	}
	qsort(f->jm, f->n_jm, sizeof(*f->jm), jm_cmp);
}

static struct jmethod *find_jm(struct file *f, uint64_t vaddr)
{
	size_t lo = 0, hi = f->n_jm;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->jm[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && vaddr - f->jm[lo - 1].start < f->jm[lo - 1].size)
		return &f->jm[lo - 1];
	return NULL;
}

/* The class_data entry of om, for its debug info (line numbers). */
static void find_dex_method(struct jmethod *j, const struct dex_file *d,
			    const struct oat_method *om)
{
	struct dex_class_iter it;
	struct err e = { 0 };

	if (dex_class_iter_init(d, om->cdi, &it, &e) < 0)
		return;
	while (dex_class_iter_next(&it, &j->dm, &e) > 0) {
		if (j->dm.index_in_class == om->index_in_class) {
			j->has_dm = j->dm.method_idx == om->method_idx;
			j->dex = d;
			return;
		}
	}
}

/* The CodeInfo alone (frame info, stack maps): the kernel walk's table
 * needs no names. */
static void decode_frame(struct file *f, struct jmethod *j)
{
	const struct oat_method *om = &f->methods.v[j->list_i];
	struct err e = { 0 };

	j->frame_decoded = true;
	j->frame_ok = oat_code_frame_info(f->oat, &om->code, &j->fi, &j->rows, &j->n_rows,
					  &e) == 0;
}

static void decode_jm(struct file *f, struct jmethod *j)
{
	const struct oat_method *om = &f->methods.v[j->list_i];
	const struct dex_file *d;
	struct err e = { 0 };
	char buf[512];

	j->decoded = true;
	if (!j->frame_decoded)
		decode_frame(f, j);
	if (om->has_dex && f->dexes && oat_dexset_get(f->dexes, om->dex_i, &d, &e) == 0 &&
	    dex_pretty_method(d, om->method_idx, buf, sizeof(buf)) >= 0) {
		j->name = strdup(buf);
		find_dex_method(j, d, om);
	}
	else if (om->has_dex)
		snprintf(buf, sizeof(buf), "<dex #%u method %u>", om->dex_i, om->method_idx),
		j->name = strdup(buf);
}

/* ---- files ---- */

static struct file *file_get(struct codemap *m, const char *path)
{
	struct err e = { 0 };
	struct file *f;
	int rc;

	for (size_t i = 0; i < m->n_files; i++)
		if (!strcmp(m->files[i]->path, path))
			return m->files[i];
	if (m->n_files == MAX_FILES)
		return NULL;
	f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	m->files[m->n_files++] = f;
	rc = elf_open(path, &f->elf, &e);
	if (rc < 0) {
		f->elf = NULL;
		f->bad = true;
		snprintf(f->why, sizeof(f->why), "unknown in %s", path);
		return f;
	}
	load_symbols(f);
	rc = cfi_open(f->elf, &f->cfi, &e);
	if (rc < 0)
		f->cfi = NULL;
	f->has_cfi = rc != -ENOENT;
	if (elf_find_symbol(f->elf, "oatdata", &(struct elf_symbol){ 0 }) == 0)
		load_oat(f);
	return f;
}

/* ---- processes ---- */

static int parse_maps_line(struct codemap *m, const char *line, struct mapping *out)
{
	unsigned long long start, end, off;
	char perms[8], path[4096];
	int n = 0;

	path[0] = '\0';
	if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &start, &end, perms, &off, &n) < 4)
		return -1;
	if (!strchr(perms, 'x'))
		return -1;
	if (n > 0)
		sscanf(line + n, "%4095[^\n]", path);
	*out = (struct mapping){ .start = start, .end = end, .off = off, .name = strdup(path) };
	if (!out->name)
		return -1;
	if (path[0] == '/' && !strstr(path, " (deleted)") && strncmp(path, "/memfd:", 7))
		out->file = file_get(m, path);
	return 0;
}

static void free_mappings(struct mapping *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

/* Replaces p's mappings with what /proc/PID/maps says now.  A process that
 * is gone, or has exited and not been reaped (its maps read empty), keeps
 * what was read before: its records may still be waiting to be drained. */
static int read_maps(struct codemap *m, struct proc *p)
{
	char path[300], line[4352];
	struct mapping *v = NULL;
	size_t n = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%u/maps", m->proc_dir, p->pid);
	fp = fopen(path, "re");
	p->read_ns = now_ns();
	if (!fp)
		return -errno;
	while (fgets(line, sizeof(line), fp)) {
		struct mapping mp;
		struct mapping *nv;

		if (parse_maps_line(m, line, &mp) < 0)
			continue;
		nv = realloc(v, (n + 1) * sizeof(*nv));
		if (!nv) {
			free(mp.name);
			break;
		}
		v = nv;
		v[n++] = mp;
	}
	fclose(fp);
	if (!n) {
		free(v);
		return -ESRCH;
	}
	free_mappings(p->v, p->n);
	p->v = v;
	p->n = n;
	p->gen = ++m->next_gen;
	return 0;
}

static struct proc *proc_get(struct codemap *m, uint32_t pid)
{
	struct proc *victim = &m->procs[0];

	m->tick++;
	for (size_t i = 0; i < MAX_PIDS; i++) {
		if (m->procs[i].pid == pid && m->procs[i].read_ns) {
			m->procs[i].used = m->tick;
			return &m->procs[i];
		}
		if (m->procs[i].used < victim->used)
			victim = &m->procs[i];
	}
	proc_clear(victim);
	victim->pid = pid;
	victim->used = m->tick;
	read_maps(m, victim);
	return victim;
}

static const struct mapping *find_mapping(struct codemap *m, struct proc *p, uint64_t pc)
{
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < p->n; i++)
			if (pc >= p->v[i].start && pc < p->v[i].end)
				return &p->v[i];
		if (pass || now_ns() - p->read_ns < REREAD_NS)
			break;
		read_maps(m, p);
	}
	return NULL;
}

void codemap_prime(struct codemap *m, uint32_t pid)
{
	struct proc *p = proc_get(m, pid);

	if (now_ns() - p->read_ns > 0)
		read_maps(m, p);
}

/* ---- lookup ---- */

/* Whether the instruction at vaddr is a return (x86_64 c3, arm64 ret): the
 * places exit probes use (art-frames.md §6), where no frame exists. */
static bool is_ret_insn(const struct file *f, uint64_t vaddr)
{
	const struct elf_segment *seg;
	size_t n = elf_load_segments(f->elf, &seg), size;
	const uint8_t *data = elf_data(f->elf, &size);

	for (size_t i = 0; data && i < n; i++) {
		uint64_t off;
		uint32_t w;

		if (vaddr < seg[i].vaddr || vaddr - seg[i].vaddr >= seg[i].filesz)
			continue;
		off = seg[i].offset + (vaddr - seg[i].vaddr);
		if (elf_machine(f->elf) == 62 /* EM_X86_64 */)
			return off < size && data[off] == 0xc3;
		if (off > size || size - off < 4)
			return false;
		memcpy(&w, data + off, 4);
		return w == 0xd65f03c0u;
	}
	return false;
}

static void lookup_java(struct file *f, struct jmethod *j, uint64_t pc_vaddr,
			struct code_info *out)
{
	if (!j->decoded)
		decode_jm(f, j);
	out->kind = FRAME_JAVA;
	out->symbol = j->name;
	out->symbol_off = pc_vaddr - j->start;
	out->at_start = pc_vaddr == j->start;
	if (!j->frame_ok) {
		out->kind = FRAME_UNKNOWN;
		out->why = "Java method without readable CodeInfo";
		return;
	}
	out->frame_size = j->fi.frame_size;
	out->core_spill_mask = j->fi.core_spill_mask;
	out->at_exit = is_ret_insn(f, pc_vaddr);
	out->frameless = j->fi.frameless_leaf;
	for (uint32_t r = 0; r < j->n_rows; r++) {
		const struct art_stack_map *s = &j->rows[r];
		if ((s->kind == -1 || s->kind == 1) && s->native_pc == pc_vaddr - j->start) {
			out->stack_map_hit = true;
			out->dex_pc = s->dex_pc;
			break;
		}
	}
	if (out->stack_map_hit && out->dex_pc != UINT32_MAX && j->has_dm) {
		struct err e = { 0 };
		uint32_t line;
		if (dex_method_line(j->dex, &j->dm, out->dex_pc, &line, &e) == 0 && line &&
		    line <= INT32_MAX)
			out->line = (int32_t)line;
	}
}

static void lookup_native(struct file *f, uint64_t vaddr, uint64_t pc_vaddr,
			  struct code_info *out)
{
	const struct sym *s = find_sym(f, vaddr);
	struct err e = { 0 };

	out->kind = FRAME_NATIVE;
	if (s) {
		out->symbol = s->name;
		out->symbol_off = pc_vaddr - s->start;
		out->at_start = pc_vaddr == s->start;
	}
	if (f->nterp_start && vaddr >= f->nterp_start && vaddr < f->nterp_end)
		out->kind = FRAME_INTERPRETED;
	else if (s && !strncmp(s->name, "_ZN3art11interpreter", 21))
		out->kind = FRAME_INTERPRETED;
	out->file_has_cfi = f->has_cfi;
	out->cfi_error = -ENOENT;
	if (f->cfi) {
		out->cfi_error = cfi_row_at(f->cfi, vaddr, &out->cfi, &e);
		out->has_cfi = out->cfi_error == 0;
	}
}

/* File offset -> ELF vaddr through the PT_LOAD headers. */
static bool off_to_vaddr(const struct file *f, uint64_t off, uint64_t *vaddr)
{
	const struct elf_segment *seg;
	size_t n = elf_load_segments(f->elf, &seg);

	for (size_t i = 0; i < n; i++) {
		if (off >= seg[i].offset && off - seg[i].offset < seg[i].filesz) {
			*vaddr = seg[i].vaddr + (off - seg[i].offset);
			return true;
		}
	}
	return false;
}

static int lookup_uncached(struct codemap *m, struct proc *p, uint64_t pc, bool is_return,
			   struct code_info *out);

int codemap_lookup(struct codemap *m, uint32_t pid, uint64_t pc, bool is_return,
		   struct code_info *out)
{
	struct proc *p = proc_get(m, pid);
	uint64_t h = (pc ^ (pc >> 17) ^ ((uint64_t)pid << 7) ^ is_return) * 0x9e3779b97f4a7c15ull;
	struct answer *a = &m->answers[(h >> 40) % ANSWER_SLOTS];
	uint32_t gen = p->gen;
	int rc;

	if (a->used && a->pc == pc && a->pid == pid && a->gen == gen &&
	    a->is_return == is_return) {
		*out = a->ci;
		return 0;
	}
	rc = lookup_uncached(m, p, pc, is_return, out);
	/* a miss that read the maps again has a new generation: keyed by it */
	if (rc == 0 && out->kind != FRAME_UNKNOWN) {
		*a = (struct answer){ .pc = pc, .pid = pid, .gen = p->gen, .used = true,
				      .is_return = is_return, .ci = *out };
	}
	return rc;
}

static int lookup_uncached(struct codemap *m, struct proc *p, uint64_t pc, bool is_return,
			   struct code_info *out)
{
	const struct mapping *mp = find_mapping(m, p, pc);
	uint64_t q = is_return && pc ? pc - 1 : pc; /* a return address: its call */
	uint64_t off, vaddr, pc_vaddr;
	struct jmethod *j;

	if (!mp) {
		out->kind = FRAME_UNKNOWN;
		out->why = "unknown (no mapping)";
		return 0;
	}
	out->file = mp->name;
	out->offset = pc - mp->start + mp->off;
	if (strstr(mp->name, "jit-cache") || strstr(mp->name, "jit-code-cache")) {
		out->kind = FRAME_JIT;
		return 0;
	}
	if (!mp->file || mp->file->bad || !mp->file->elf) {
		out->kind = FRAME_UNKNOWN;
		out->why = mp->file ? mp->file->why : "unknown (anonymous code)";
		return 0;
	}
	off = q - mp->start + mp->off;
	if (!off_to_vaddr(mp->file, off, &vaddr)) {
		out->kind = FRAME_UNKNOWN;
		out->why = mp->file->why[0] ? mp->file->why : "unknown (outside the file's segments)";
		return 0;
	}
	pc_vaddr = vaddr + (pc - q);
	if (mp->file->oat && (j = find_jm(mp->file, vaddr)) != NULL)
		lookup_java(mp->file, j, pc_vaddr, out);
	else
		lookup_native(mp->file, vaddr, pc_vaddr, out);
	return 0;
}

/* ---- compiled Java methods of a process (the kernel walk's table) ---- */

/* The process address of vaddr through mapping mp, if mp maps it. */
static bool vaddr_to_addr(const struct mapping *mp, uint64_t vaddr, uint64_t *addr)
{
	const struct elf_segment *seg;
	size_t n = elf_load_segments(mp->file->elf, &seg);

	for (size_t i = 0; i < n; i++) {
		uint64_t off;

		if (vaddr < seg[i].vaddr || vaddr - seg[i].vaddr >= seg[i].filesz)
			continue;
		off = seg[i].offset + (vaddr - seg[i].vaddr);
		if (off < mp->off || off - mp->off >= mp->end - mp->start)
			return false;
		*addr = mp->start + (off - mp->off);
		return true;
	}
	return false;
}

static int mapping_java_ranges(const struct mapping *mp, codemap_java_fn cb, void *ctx)
{
	struct file *f = mp->file;

	for (size_t i = 0; i < f->n_jm; i++) {
		struct jmethod *j = &f->jm[i];
		uint64_t addr;
		int rc;

		if (!vaddr_to_addr(mp, j->start, &addr))
			continue;
		if (!j->frame_decoded)
			decode_frame(f, j);
		if (!j->frame_ok)
			continue;
		rc = cb(ctx, addr, addr + j->size, j->fi.frameless_leaf ? 0 : j->fi.frame_size);
		if (rc)
			return rc;
	}
	return 0;
}

int codemap_java_ranges(struct codemap *m, uint32_t pid, codemap_java_fn cb, void *ctx)
{
	struct proc *p = proc_get(m, pid);

	for (size_t i = 0; i < p->n; i++) {
		const struct mapping *mp = &p->v[i];
		int rc;

		if (!mp->file || !mp->file->oat || !mp->file->elf)
			continue;
		rc = mapping_java_ranges(mp, cb, ctx);
		if (rc)
			return rc;
	}
	return 0;
}
