/* symbolize.c — PC -> frame description with per-file caches (see
 * symbolize.h).
 *
 * A file entry is built at most once (on the first maps line naming it): the
 * ELF (or oat file and its dex set), a sorted function-symbol table merged
 * from .dynsym/.symtab/.gnu_debugdata, the compiled Java methods sorted by
 * code address, and libart's interpreter ranges.  CFI tables and per-method
 * CodeInfo are built on their first query. */
#include "stack/symbolize.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "formats/codeinfo.h"
#include "formats/dex.h"
#include "formats/dex_debug.h"
#include "formats/elf.h"
#include "formats/minidebug.h"
#include "formats/oat.h"
#include "formats/oat_dexfile.h"
#include "formats/oat_methods.h"

#define MAX_MAPS_BYTES (64u << 20)

struct fsym {
	uint64_t start, size;
	const char *name;       /* points into the ELF or the minidebug buffer */
};

struct jcache {             /* per Java method, decoded on first use */
	bool done;
	int rc;
	struct art_frame_info fi;
	struct art_stack_map *rows;
	uint32_t n_rows;
};

struct range {
	uint64_t start, end;
};

struct file_ent {
	char *path;             /* as opened (root + maps path) */
	dev_t dev;
	ino_t ino;
	int64_t mtime_ns;
	int rc;                 /* <0: failed to open (msg says why) */
	char msg[256];
	struct elf_file *elf;   /* owned unless oat (then oat_elf) */
	struct oat_file *oat;
	struct oat_dexset *ds;
	struct oat_method_list ml;
	uint32_t *jidx;         /* ml indexes with code, sorted by vaddr */
	size_t n_j;
	struct jcache *jc;      /* by ml index */
	struct minidebug md;
	bool has_md;
	struct fsym *syms;
	size_t n_syms, cap_syms;
	struct range interp[4];
	size_t n_interp;
	bool cfi_tried;
	struct cfi_table *cfi, *md_cfi;
	uint16_t machine;
	struct file_ent *next;
};

struct symbolizer {
	char *root;
	struct file_ent *files;
	struct sym_stats st;
};

struct smap {
	uint64_t start, end, off;
	char *path;
	bool jit;
	struct file_ent *f;     /* NULL: no readable file */
};

struct sym_maps {
	struct smap *v;
	size_t n;
};

/* --- symbols ---------------------------------------------------------------------- */

struct sym_ctx {
	struct file_ent *f;
	bool oom;
};

static int add_sym(void *ctx, const char *name, const struct elf_symbol *s)
{
	struct sym_ctx *c = ctx;
	struct file_ent *f = c->f;

	if ((s->type != STT_FUNC && s->type != STT_GNU_IFUNC) || !name[0] || !s->value)
		return 0;
	if (f->n_syms == f->cap_syms) {
		size_t cap = f->cap_syms ? f->cap_syms * 2 : 256;
		struct fsym *v = realloc(f->syms, cap * sizeof(*v));
		if (!v) {
			c->oom = true;
			return 1;
		}
		f->syms = v;
		f->cap_syms = cap;
	}
	uint64_t start = f->machine == EM_ARM ? s->value & ~1ull : s->value;
	f->syms[f->n_syms++] = (struct fsym){ .start = start, .size = s->size, .name = name };
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->size < y->size) - (x->size > y->size);   /* larger first */
}

/* The symbol covering vaddr: sized symbols by their size, unsized ones up to
 * the next symbol. */
static const struct fsym *sym_find(const struct file_ent *f, uint64_t vaddr)
{
	size_t lo = 0, hi = f->n_syms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i > 0 && lo - i < 16; i--) {
		const struct fsym *s = &f->syms[i - 1];
		if (s->size ? vaddr - s->start < s->size : i == lo)
			return s;
	}
	return NULL;
}

static void find_interp(struct file_ent *f)
{
	static const char *const pairs[][2] = {
		{ "ExecuteNterpImpl", "EndExecuteNterpImpl" },
		{ "artNterpAsmInstructionStart", "artNterpAsmInstructionEnd" },
		{ "ExecuteMterpImpl", "EndExecuteMterpImpl" },
		{ "artMterpAsmInstructionStart", "artMterpAsmInstructionEnd" },
	};
	for (size_t i = 0; i < 4; i++) {
		uint64_t a = 0, b = 0;
		for (size_t k = 0; k < f->n_syms; k++) {
			if (!strcmp(f->syms[k].name, pairs[i][0]))
				a = f->syms[k].start;
			else if (!strcmp(f->syms[k].name, pairs[i][1]))
				b = f->syms[k].start;
		}
		if (a && b > a)
			f->interp[f->n_interp++] = (struct range){ a, b };
	}
}

static int build_symbols(struct file_ent *f)
{
	struct sym_ctx c = { .f = f };
	struct err e = { 0 };

	elf_foreach_symbol(f->elf, add_sym, &c);
	if (!minidebug_open(f->elf, &f->md, &e)) {
		f->has_md = true;
		elf_foreach_symbol(f->md.elf, add_sym, &c);
	}
	if (c.oom)
		return -ENOMEM;
	if (f->n_syms)
		qsort(f->syms, f->n_syms, sizeof(*f->syms), cmp_sym);
	/* Keep one symbol per start address (the largest, sorted first). */
	size_t w = 0;
	for (size_t i = 0; i < f->n_syms; i++)
		if (!w || f->syms[w - 1].start != f->syms[i].start)
			f->syms[w++] = f->syms[i];
	f->n_syms = w;
	find_interp(f);
	return 0;
}

/* --- Java methods ------------------------------------------------------------------ */

struct jkey {
	uint64_t vaddr;
	uint32_t idx;
};

static int cmp_jkey(const void *a, const void *b)
{
	const struct jkey *x = a, *y = b;

	if (x->vaddr != y->vaddr)
		return x->vaddr < y->vaddr ? -1 : 1;
	return (x->idx > y->idx) - (x->idx < y->idx);
}

static int build_java(struct file_ent *f, struct err *err)
{
	int rc;

	if ((rc = oat_dexset_new(f->oat, f->path, NULL, 0, &f->ds, err)))
		return rc;
	if ((rc = oat_list_methods(f->oat, f->ds, &f->ml, err)))
		return rc;
	f->jidx = calloc(f->ml.n ? f->ml.n : 1, sizeof(*f->jidx));
	f->jc = calloc(f->ml.n ? f->ml.n : 1, sizeof(*f->jc));
	if (!f->jidx || !f->jc)
		return err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < f->ml.n; i++) {
		const struct oat_method *m = &f->ml.v[i];
		if (m->dedup_first == i && m->code.code_size)
			f->jidx[f->n_j++] = (uint32_t)i;
	}
	/* Sort by code address (profile-guided layouts put code out of class order). */
	struct jkey *k = malloc((f->n_j ? f->n_j : 1) * sizeof(*k));
	if (!k)
		return err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < f->n_j; i++)
		k[i] = (struct jkey){ f->ml.v[f->jidx[i]].code.vaddr, f->jidx[i] };
	if (f->n_j)
		qsort(k, f->n_j, sizeof(*k), cmp_jkey);
	for (size_t i = 0; i < f->n_j; i++)
		f->jidx[i] = k[i].idx;
	free(k);
	return 0;
}

/* The compiled method holding vaddr (ml index), or -1. */
static long java_find(const struct file_ent *f, uint64_t vaddr)
{
	size_t lo = 0, hi = f->n_j;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->ml.v[f->jidx[mid]].code.vaddr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -1;
	const struct oat_method *m = &f->ml.v[f->jidx[lo - 1]];
	return vaddr - m->code.vaddr < m->code.code_size ? (long)f->jidx[lo - 1] : -1;
}

static struct jcache *java_cache(struct file_ent *f, size_t mi, struct err *err)
{
	struct jcache *j = &f->jc[mi];

	if (!j->done) {
		j->done = true;
		j->rc = oat_code_frame_info(f->oat, &f->ml.v[mi].code, &j->fi, &j->rows, &j->n_rows,
					    err);
	} else if (j->rc) {
		err_set(err, j->rc, "%s: CodeInfo of the method at code offset 0x%x is unreadable",
			f->path, f->ml.v[mi].code.code_offset);
	}
	return j;
}

/* --- files ------------------------------------------------------------------------- */

static void file_free(struct file_ent *f)
{
	if (f->jc)
		for (size_t i = 0; i < f->ml.n; i++)
			free(f->jc[i].rows);
	free(f->jc);
	free(f->jidx);
	cfi_close(f->cfi);
	cfi_close(f->md_cfi);
	free(f->syms);
	if (f->has_md)
		minidebug_close(&f->md);
	oat_method_list_free(&f->ml);
	oat_dexset_free(f->ds);
	if (f->oat)
		oat_close(f->oat);
	else
		elf_close(f->elf);
	free(f->path);
	free(f);
}

static int file_load(struct symbolizer *s, struct file_ent *f, struct err *err)
{
	struct elf_symbol os;
	int rc;

	if ((rc = elf_open(f->path, &f->elf, err)))
		return rc;
	f->machine = elf_machine(f->elf);
	if (!elf_find_symbol(f->elf, "oatdata", &os)) {
		elf_close(f->elf);
		f->elf = NULL;
		if ((rc = oat_open(f->path, &f->oat, err)))
			return rc;
		f->elf = (struct elf_file *)oat_elf(f->oat);
		if ((rc = build_java(f, err)))
			return rc;
		s->st.method_tables_built++;
	}
	if ((rc = build_symbols(f)))
		return err_set(err, rc, "%s: out of memory reading symbols", f->path);
	return 0;
}

/* The entry for path (opened at most once; failures are cached too). */
static struct file_ent *file_get(struct symbolizer *s, const char *path)
{
	char full[4096];
	struct stat stb;
	struct file_ent *f;
	struct err e = { 0 };

	snprintf(full, sizeof(full), "%s%s", s->root ? s->root : "", path);
	if (stat(full, &stb))
		memset(&stb, 0, sizeof(stb));
	for (f = s->files; f; f = f->next) {
		if (stb.st_ino ? (f->dev == stb.st_dev && f->ino == stb.st_ino &&
				  f->mtime_ns == (int64_t)stb.st_mtim.tv_sec * 1000000000 +
						 stb.st_mtim.tv_nsec)
			       : !strcmp(f->path, full))
			return f;
	}
	if (!(f = calloc(1, sizeof(*f))) || !(f->path = strdup(full))) {
		free(f);
		return NULL;
	}
	f->dev = stb.st_dev;
	f->ino = stb.st_ino;
	f->mtime_ns = (int64_t)stb.st_mtim.tv_sec * 1000000000 + stb.st_mtim.tv_nsec;
	f->rc = file_load(s, f, &e);
	if (f->rc) {
		snprintf(f->msg, sizeof(f->msg), "%s", e.msg);
		s->st.files_failed++;
	} else {
		s->st.files_opened++;
	}
	f->next = s->files;
	s->files = f;
	return f;
}

int sym_new(const char *root, struct symbolizer **out, struct err *err)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	*out = NULL;
	if (!s || (root && root[0] && !(s->root = strdup(root)))) {
		free(s);
		return err_set(err, -ENOMEM, "out of memory");
	}
	*out = s;
	return 0;
}

void sym_free(struct symbolizer *s)
{
	if (!s)
		return;
	while (s->files) {
		struct file_ent *f = s->files;
		s->files = f->next;
		file_free(f);
	}
	free(s->root);
	free(s);
}

void sym_get_stats(const struct symbolizer *s, struct sym_stats *out)
{
	*out = s->st;
}

/* --- maps -------------------------------------------------------------------------- */

static bool is_jit_name(const char *p)
{
	return strstr(p, "jit-cache") || strstr(p, "jit-code-cache") ||
	       strstr(p, "jit-zygote-cache");
}

static int parse_line(struct symbolizer *s, const char *line, struct smap *m)
{
	unsigned long long a, b, off;
	char perms[8];
	int pos = 0;

	if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &a, &b, perms, &off, &pos) != 4 ||
	    !pos || b <= a)
		return 0;
	if (strlen(perms) < 3 || perms[2] != 'x')
		return 0;
	const char *p = line + pos;
	while (*p == ' ' || *p == '\t')
		p++;
	memset(m, 0, sizeof(*m));
	m->start = a, m->end = b, m->off = off;
	if (!(m->path = strdup(p)))
		return -ENOMEM;
	m->jit = is_jit_name(p);
	if (p[0] == '/' && !m->jit && !strstr(p, " (deleted)"))
		m->f = file_get(s, p);
	return 1;
}

static int cmp_map(const void *a, const void *b)
{
	const struct smap *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

int sym_maps_parse(struct symbolizer *s, const char *text, size_t len, struct sym_maps **out,
		   struct err *err)
{
	struct sym_maps *m = calloc(1, sizeof(*m));
	size_t cap = 0, i = 0;
	char line[4200];

	*out = NULL;
	if (!m)
		return err_set(err, -ENOMEM, "out of memory");
	while (i < len) {
		size_t j = i;
		while (j < len && text[j] != '\n')
			j++;
		size_t n = j - i < sizeof(line) - 1 ? j - i : sizeof(line) - 1;
		memcpy(line, text + i, n);
		line[n] = 0;
		i = j + 1;
		if (m->n == cap) {
			cap = cap ? cap * 2 : 64;
			struct smap *v = realloc(m->v, cap * sizeof(*v));
			if (!v) {
				sym_maps_free(m);
				return err_set(err, -ENOMEM, "out of memory");
			}
			m->v = v;
		}
		int rc = parse_line(s, line, &m->v[m->n]);
		if (rc < 0) {
			sym_maps_free(m);
			return err_set(err, rc, "out of memory");
		}
		m->n += (size_t)rc;
	}
	if (m->n)
		qsort(m->v, m->n, sizeof(*m->v), cmp_map);
	*out = m;
	return 0;
}

int sym_maps_read(struct symbolizer *s, const char *proc_dir, pid_t pid, struct sym_maps **out,
		  struct err *err)
{
	char path[512];
	FILE *f;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int rc;

	snprintf(path, sizeof(path), "%s/%d/maps", proc_dir ? proc_dir : "/proc", (int)pid);
	if (!(f = fopen(path, "r")))
		return err_set(err, -errno, "%s: cannot open: %s", path, strerror(errno));
	for (;;) {
		if (n + 4096 > cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			char *nb = cap >= MAX_MAPS_BYTES ? NULL : realloc(buf, ncap);
			if (!nb) {
				free(buf);
				fclose(f);
				return err_set(err, -ENOMEM, "%s: too large or out of memory",
					       path);
			}
			buf = nb;
			cap = cap ? cap * 2 : 65536;
		}
		size_t k = fread(buf + n, 1, cap - n, f);
		if (!k)
			break;
		n += k;
	}
	fclose(f);
	rc = sym_maps_parse(s, buf ? buf : "", n, out, err);
	free(buf);
	return rc;
}

void sym_maps_free(struct sym_maps *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	free(m);
}

static const struct smap *map_find(const struct sym_maps *m, uint64_t pc)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->v[mid].start <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < m->v[lo - 1].end ? &m->v[lo - 1] : NULL;
}

/* File offset -> ELF vaddr through the PT_LOAD headers. */
static int off_to_vaddr(const struct elf_file *e, uint64_t off, uint64_t *vaddr)
{
	const struct elf_segment *segs;
	size_t n = elf_load_segments(e, &segs);

	for (size_t i = 0; i < n; i++) {
		if (off >= segs[i].offset && off - segs[i].offset < segs[i].filesz) {
			*vaddr = segs[i].vaddr + (off - segs[i].offset);
			return 0;
		}
	}
	return -ERANGE;
}

/* --- lookups ----------------------------------------------------------------------- */

struct where {
	const struct smap *map;
	struct file_ent *f;
	uint64_t foff, vaddr, bias;
};

/* Resolves pc to its mapping and file; 0, or -ENOENT (no mapping / no file,
 * err says which) with w->map possibly set. */
static int locate(const struct sym_maps *m, uint64_t pc, struct where *w, struct err *err)
{
	memset(w, 0, sizeof(*w));
	if (!(w->map = map_find(m, pc)))
		return err_set(err, -ENOENT, "0x%llx is in no executable mapping",
			       (unsigned long long)pc);
	w->foff = pc - w->map->start + w->map->off;
	if (!(w->f = w->map->f))
		return err_set(err, -ENOENT, "0x%llx: %s is not a readable file",
			       (unsigned long long)pc, w->map->path);
	if (w->f->rc)
		return err_set(err, w->f->rc, "%s", w->f->msg);
	if (off_to_vaddr(w->f->elf, w->foff, &w->vaddr))
		return err_set(err, -ENOENT, "%s+0x%llx is outside every PT_LOAD segment",
			       w->f->path, (unsigned long long)w->foff);
	w->bias = pc - w->vaddr;
	return 0;
}

/* Marks a symbol that did not fit. */
static void mark_truncated(struct sym_frame *out)
{
	size_t n = strlen(out->symbol);

	if (n == sizeof(out->symbol) - 1)
		memcpy(out->symbol + n - 3, "...", 3);
}

static void java_describe(struct file_ent *f, long mi, uint64_t vaddr, uint64_t exact,
			  struct sym_frame *out)
{
	const struct oat_method *m = &f->ml.v[mi];
	const struct dex_file *d = NULL;
	struct err e = { 0 };

	out->kind = SYM_JAVA;
	if (!m->has_dex || oat_dexset_get(f->ds, m->dex_i, &d, &e) ||
	    dex_pretty_method(d, m->method_idx, out->symbol, sizeof(out->symbol)) < 0) {
		/* No dex: dex2oat's .gnu_debugdata name ("pkg.Class.method"), if any. */
		const struct fsym *s = sym_find(f, m->code.vaddr);
		if (s && s->start == m->code.vaddr && strncmp(s->name, "[DEDUPED]", 9))
			snprintf(out->symbol, sizeof(out->symbol), "%s", s->name);
		else
			snprintf(out->symbol, sizeof(out->symbol),
				 "<dex #%u class_def %u method %u>", m->dex_i, m->cdi,
				 m->index_in_class);
		d = NULL;
	}
	mark_truncated(out);
	(void)vaddr;
	struct jcache *j = java_cache(f, (size_t)mi, &e);
	for (uint32_t i = 0; !j->rc && i < j->n_rows; i++) {
		if (m->code.vaddr + j->rows[i].native_pc == exact && j->rows[i].kind != 1 &&
		    j->rows[i].dex_pc != 0xffffffffu) {
			out->dex_pc = j->rows[i].dex_pc;
			break;
		}
	}
	if (!d)
		return;
	out->source_file = dex_class_source_file(d, m->cdi);
	if (out->dex_pc == SYM_NO_DEX_PC)
		return;
	struct dex_class_iter it;
	struct dex_method dm;
	if (dex_class_iter_init(d, m->cdi, &it, &e))
		return;
	while (dex_class_iter_next(&it, &dm, &e) == 1) {
		if (dm.index_in_class == m->index_in_class) {
			if (dex_method_line(d, &dm, out->dex_pc, &out->line, &e))
				out->line = 0;
			return;
		}
	}
}

/* vaddr: where to look (pc-1 for return addresses); at: the pc itself, which
 * the +0xOFF is measured to. */
static void native_describe(const struct file_ent *f, uint64_t vaddr, uint64_t at,
			    struct sym_frame *out)
{
	const struct fsym *s = sym_find(f, vaddr);

	out->kind = SYM_NATIVE;
	for (size_t i = 0; i < f->n_interp; i++)
		if (vaddr >= f->interp[i].start && vaddr < f->interp[i].end)
			out->kind = SYM_INTERPRETED;
	if (!s)
		return;
	if (!strncmp(s->name, "_ZN3art11interpreter", 20))
		out->kind = SYM_INTERPRETED;
	if (at == s->start)
		snprintf(out->symbol, sizeof(out->symbol), "%s", s->name);
	else
		snprintf(out->symbol, sizeof(out->symbol), "%s+0x%llx", s->name,
			 (unsigned long long)(at - s->start));
	mark_truncated(out);
}

int sym_lookup(struct symbolizer *s, const struct sym_maps *m, uint64_t pc, unsigned flags,
	       struct sym_frame *out, struct err *err)
{
	uint64_t q = (flags & SYM_RETURN_ADDRESS) && pc ? pc - 1 : pc;
	struct where w;
	struct err e = { 0 };

	s->st.lookups++;
	memset(out, 0, sizeof(*out));
	out->pc = pc;
	out->dex_pc = SYM_NO_DEX_PC;
	int rc = locate(m, q, &w, &e);
	if (w.map) {
		out->file = w.map->path;
		out->file_offset = pc - w.map->start + w.map->off;
		if (w.map->jit) {
			out->kind = SYM_JIT;
			return 0;
		}
	}
	if (rc) {
		if (err)
			*err = e;
		return 0;
	}
	long mi = w.f->oat ? java_find(w.f, w.vaddr) : -1;
	if (mi >= 0)
		java_describe(w.f, mi, w.vaddr, pc - w.bias, out);
	else
		native_describe(w.f, w.vaddr, pc - w.bias, out);
	if (err)
		err->code = 0;
	return 0;
}

int sym_java_method_at(struct symbolizer *s, const struct sym_maps *m, uint64_t pc,
		       unsigned flags, struct sym_java_method *out, struct err *err)
{
	uint64_t q = (flags & SYM_RETURN_ADDRESS) && pc ? pc - 1 : pc;
	struct where w;
	int rc;

	s->st.lookups++;
	if ((rc = locate(m, q, &w, err)))
		return rc;
	long mi = w.f->oat ? java_find(w.f, w.vaddr) : -1;
	if (mi < 0)
		return err_set(err, -ENOENT, "0x%llx (%s+0x%llx) is not in a compiled Java method",
			       (unsigned long long)pc, w.f->path, (unsigned long long)w.foff);
	struct jcache *j = java_cache(w.f, (size_t)mi, err);
	if (j->rc)
		return j->rc;
	const struct oat_method *om = &w.f->ml.v[mi];
	*out = (struct sym_java_method){
		.code_start = om->code.vaddr + w.bias, .code_size = om->code.code_size,
		.frame_size = j->fi.frame_size, .core_spill_mask = j->fi.core_spill_mask,
		.fp_spill_mask = j->fi.fp_spill_mask, .e_machine = w.f->machine,
	};
	return 0;
}

int sym_cfi_at(struct symbolizer *s, const struct sym_maps *m, uint64_t pc, unsigned flags,
	       struct cfi_row *row, uint64_t *bias, struct err *err)
{
	uint64_t q = (flags & SYM_RETURN_ADDRESS) && pc ? pc - 1 : pc;
	struct where w;
	struct err e2 = { 0 };
	int rc;

	s->st.lookups++;
	if ((rc = locate(m, q, &w, err)))
		return rc;
	struct file_ent *f = w.f;
	if (!f->cfi_tried) {
		f->cfi_tried = true;
		cfi_open(f->elf, &f->cfi, &e2);
		if (f->has_md)
			cfi_open(f->md.elf, &f->md_cfi, &e2);
	}
	if (bias)
		*bias = w.bias;
	rc = -ENOENT;
	if (f->cfi && (rc = cfi_row_at(f->cfi, w.vaddr, row, err)) != -ENOENT)
		return rc;
	if (f->md_cfi && (rc = cfi_row_at(f->md_cfi, w.vaddr, row, err)) != -ENOENT)
		return rc;
	return err_set(err, -ENOENT, "%s+0x%llx: no CFI covers it (%s)", f->path,
		       (unsigned long long)w.foff,
		       f->cfi || f->md_cfi ? "no FDE" : "no .eh_frame/.debug_frame");
}

const char *sym_kind_name(enum sym_kind k)
{
	static const char *const names[] = { "unknown", "native", "java", "interpreted", "jit" };
	return (unsigned)k < 5 ? names[k] : "unknown";
}
