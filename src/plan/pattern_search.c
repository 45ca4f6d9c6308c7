/* pattern_search.c — patterns against what a process maps (and the default
 * roots), the guardrail pass, the single-method form (`resolve`) and the
 * explanation of an empty match (nearest names by edit distance). */
#include "plan/pattern.h"
#include "plan/pattern_impl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/codecache.h"
#include "code/codefile.h"
#include "common/edit_distance.h"
#include "config/guardrail.h"
#include "formats/dex.h"
#include "formats/elf.h"
#include "formats/oat.h"
#include "formats/oat_dexfile.h"
#include "resolve/class_index.h"
#include "sys/proc_path.h"

#define N_NEAREST 5

/* A literal, non-simple class glob: only files whose class index has the class. */
static bool worth_opening(const struct trace_pattern *p, const struct oat_search_opts *o,
			  const char *path)
{
	char desc[1100], cache[4096];
	struct class_index *ci;
	struct err e;
	size_t n = strlen(p->cls_text);
	bool has;

	if (p->cls.has_wild || p->cls.simple || strchr(p->cls_text, '\\') || n + 3 > sizeof(desc))
		return true;
	desc[0] = 'L';
	for (size_t i = 0; i < n; i++)
		desc[i + 1] = p->cls_text[i] == '.' ? '/' : p->cls_text[i];
	memcpy(desc + n + 1, ";", 2);
	if (o->cache_dir)
		snprintf(cache, sizeof(cache), "%s", o->cache_dir);
	else
		oat_search_default_cache_dir(cache, sizeof(cache));
	if (class_index_load(o->code, path, o->no_cache ? NULL : cache, o->dex_files,
			     o->n_dex_files, &ci, &e))
		return true;   /* let the full open report it */
	has = class_index_has(ci, desc) && (!o->isa || !strcmp(class_index_isa(ci), o->isa));
	class_index_free(ci);
	return has;
}

static int search_java(const struct trace_pattern *p, const struct oat_search_opts *opts,
		       size_t max, struct pattern_matches *out, struct err *err)
{
	struct oat_search_opts with_code = *opts;
	const struct oat_search_opts *o = &with_code;
	char **paths;
	size_t n;
	int rc;

	/* the class indexes read the files through the same code cache */
	if (!with_code.code)
		with_code.code = out->code;
	if ((rc = oat_search_candidates(o, &paths, &n, err)))
		return rc;
	for (size_t i = 0; i < n && rc != -ENOMEM; i++) {
		struct err fe = { 0 };
		if (!worth_opening(p, o, paths[i])) {
			rc = pattern_note_searched(out, paths[i]);
			continue;
		}
		rc = pattern_match_file(p, paths[i], max, out, &fe);
		if (rc == -ENOMEM)
			err_set(err, rc, "%s", fe.msg);
	}
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	if (rc == -ENOMEM)
		return rc;
	if (!n)
		return err_set(err, -ENOENT, "pattern '%.200s': no oat/odex file %sto search "
			       "(give FILE:%s)", p->text, o->pid > 0 ? "mapped by the process or "
			       "under the default roots " : "under the default roots ", p->text);
	return 0;
}

/* A path as process pid sees it (its root, its mounts) as one that names the
 * same file here: sys/proc_path.h. */
static int in_process_view(const char *proc_dir, const char *file, int pid, char *buf,
			   size_t size, struct err *err)
{
	if (proc_path_resolve(proc_dir ? proc_dir : "/proc", pid, file, buf, size))
		return err_set(err, -ENAMETOOLONG, "%.200s: path too long", file);
	return 0;
}

int pattern_match_search(const struct trace_pattern *p, const struct oat_search_opts *o,
			 size_t max, struct pattern_matches *out, struct err *err)
{
	char path[4096], found[4096];
	int rc;

	if (!max)
		max = PATTERN_DEFAULT_MAX;
	if (o->root && *o->root && p->file && p->file[0] == '/') {
		snprintf(path, sizeof(path), "%s%s", o->root, p->file);
		return pattern_match_file(p, path, max, out, err);
	}
	if (o->root && *o->root && p->file && !p->java && !strchr(p->file, '/'))
		return pattern_find_library_under(o->root, p->file, found, sizeof(found), err) ?:
		       pattern_native_file(p, found, max, out, err);
	if (p->file && (p->java || strchr(p->file, '/')))
		return in_process_view(o->proc_dir, p->file, o->pid, path, sizeof(path), err) ?:
		       pattern_match_file(p, path, max, out, err);
	if (p->java)
		return search_java(p, o, max, out, err);
	if ((rc = pattern_find_library(o->proc_dir, out->code, p->file, o->pid, found, sizeof(found),
					err)) ||
	    (rc = in_process_view(o->proc_dir, found, o->pid, path, sizeof(path), err)))
		return rc;
	return pattern_native_file(p, path, max, out, err);
}

int pattern_match_pid(const struct trace_pattern *p, int pid, size_t max,
		      struct pattern_matches *out, struct err *err)
{
	return pattern_match_rooted(p, pid, NULL, max, out, err);
}

int pattern_library_path(const char *root, const char *name, char *buf, size_t size,
			 struct err *e)
{
	return root && *root ? pattern_find_library_under(root, name, buf, size, e)
			     : pattern_find_library(NULL, NULL, name, 0, buf, size, e);
}

int pattern_match_rooted(const struct trace_pattern *p, int pid, const char *root, size_t max,
			 struct pattern_matches *out, struct err *err)
{
	struct oat_search_opts o = { .pid = pid, .root = root };
	return pattern_match_search(p, &o, max, out, err);
}

void pattern_matches_guardrail(struct pattern_matches *m, int guardrail_list)
{
	for (size_t i = 0; i < m->n; i++) {
		struct pattern_match *x = &m->v[i];
		char name[2048];
		const char *s = x->name, *open, *sp;
		if (x->left_out != MATCH_OK)
			continue;
		if (x->is_java) {
			/* "ret a.B.c(params)" -> "a.B.c" */
			open = strchr(s, '(');
			sp = memchr(s, ' ', open ? (size_t)(open - s) : strlen(s));
			s = sp ? sp + 1 : s;
			int len = open ? (int)(open - s) : (int)strlen(s);
			snprintf(name, sizeof(name), "%.*s", len, s);
			if (guardrail_allows((enum guardrail_list)guardrail_list, name,
					     strlen(name)))
				continue;
		}
		x->left_out = MATCH_GUARDRAIL;
		m->by_reason[MATCH_OK]--;
		m->by_reason[MATCH_GUARDRAIL]++;
		for (size_t f = 0; f < m->n_files; f++)
			if (!strcmp(m->files[f].path, x->path))
				m->files[f].ok--;
	}
}

/* ---- nearest names ------------------------------------------------------------------ */

struct nearest {
	char name[N_NEAREST][256];
	size_t dist[N_NEAREST];
	size_t n;
};

static void offer(struct nearest *nr, const char *want, const char *key, const char *shown)
{
	size_t d = edit_distance(want, strlen(want), key, strlen(key));
	size_t at;

	for (size_t i = 0; i < nr->n; i++)
		if (!strcmp(nr->name[i], shown))
			return;
	for (at = nr->n; at > 0 && nr->dist[at - 1] > d; at--)
		;
	if (at >= N_NEAREST)
		return;
	size_t last = nr->n < N_NEAREST ? nr->n : N_NEAREST - 1;
	memmove(&nr->name[at + 1], &nr->name[at], (last - at) * sizeof(nr->name[0]));
	memmove(&nr->dist[at + 1], &nr->dist[at], (last - at) * sizeof(nr->dist[0]));
	snprintf(nr->name[at], sizeof(nr->name[at]), "%s", shown);
	nr->dist[at] = d;
	if (nr->n < N_NEAREST)
		nr->n++;
}

static void nearest_in_class(const struct trace_pattern *p, const struct dex_file *d,
			     uint32_t cdi, const char *cls, struct nearest *methods)
{
	struct dex_class_iter it;
	struct dex_method dm;
	struct err e;

	if (dex_class_iter_init(d, cdi, &it, &e))
		return;
	while (dex_class_iter_next(&it, &dm, &e) == 1) {
		struct dex_method_id id;
		const char *name;
		char shown[300];
		if (dex_method_id_at(d, dm.method_idx, &id) || !(name = dex_string(d, id.name_idx)))
			continue;
		snprintf(shown, sizeof(shown), "%s.%s", cls, name);
		offer(methods, p->method_text, name, shown);
	}
}

static void nearest_java(const struct trace_pattern *p, struct code_file *f, struct nearest *cls,
			 struct nearest *methods, bool *class_hit)
{
	const struct oat_file *o;
	struct oat_dexset *ds;
	struct err e;

	if (code_file_oat(f, &o, &e) || code_file_dexset(f, &ds, &e))
		return;
	for (uint32_t di = 0; di < oat_dex_count(o); di++) {
		const struct dex_file *d;
		if (oat_dexset_get(ds, di, &d, &e))
			continue;
		for (uint32_t cdi = 0; cdi < dex_class_def_count(d); cdi++) {
			struct dex_class_def cd;
			const char *desc;
			char dotted[1024];
			size_t n;
			if (dex_class_def_at(d, cdi, &cd) ||
			    !(desc = dex_type_descriptor(d, cd.class_idx)) ||
			    (n = strlen(desc)) < 3 || n - 2 >= sizeof(dotted))
				continue;
			for (size_t i = 1; i + 1 < n; i++)
				dotted[i - 1] = desc[i] == '/' ? '.' : desc[i];
			dotted[n - 2] = 0;
			const char *simple = strrchr(dotted, '.');
			const char *key = p->cls.simple && simple ? simple + 1 : dotted;
			if (glob_match(&p->cls, key, strlen(key))) {
				*class_hit = true;
				nearest_in_class(p, d, cdi, dotted, methods);
			} else {
				offer(cls, p->cls_text, key, dotted);
			}
		}
	}
}

struct sym_near {
	struct nearest *nr;
	const char *want;
};

static int near_sym(void *ctx, const char *name, const struct elf_symbol *sym)
{
	struct sym_near *s = ctx;
	if ((sym->type == 2 /* STT_FUNC */ || sym->type == 10) && sym->shndx && *name)
		offer(s->nr, s->want, name, name);
	return 0;
}

/* A stripped file: which symbol tables it lacks, appended to buf once. */
static void symbol_tables_note(const struct elf_file *f, const char *path, char *buf,
			       size_t size)
{
	struct elf_section sec;
	bool symtab = elf_find_section(f, ".symtab", &sec) == 0;
	bool dynsym = elf_find_section(f, ".dynsym", &sec) == 0;
	bool mini = elf_find_section(f, ".gnu_debugdata", &sec) == 0;
	const char *base = strrchr(path, '/');
	size_t l = strlen(buf);

	if (symtab || l + 8 > size)
		return;
	snprintf(buf + l, size - l, " (%s is stripped: %s)", base ? base + 1 : path,
		 mini ? "no .symtab; .dynsym and the mini debug info (.gnu_debugdata) were "
			"searched"
		 : dynsym ? "no .symtab, only the exported functions of .dynsym were searched"
			  : "no symbol table at all, neither .symtab nor .dynsym");
}

static void list_nearest(char *buf, size_t size, const struct nearest *nr)
{
	size_t l = strlen(buf);
	for (size_t i = 0; i < nr->n && l + 8 < size; i++)
		l += (size_t)snprintf(buf + l, size - l, "%s%s", i ? ", " : "", nr->name[i]);
}

int pattern_explain_no_match(const struct trace_pattern *p, const struct pattern_matches *m,
			     struct err *err)
{
	struct nearest cls = { 0 }, methods = { 0 };
	bool class_hit = false;
	char near[1024] = "", tables[300] = "";

	for (size_t i = 0; i < m->n_searched; i++) {
		/* the files as the matching read them */
		struct code_file *cf = code_cache_file(m->code, m->searched_paths[i]);
		const struct elf_file *f, *md;
		struct err e;
		if (!cf)
			break;
		if (p->java) {
			nearest_java(p, cf, &cls, &methods, &class_hit);
		} else {
			const char *want = p->text + strlen(p->file) + 1;
			struct sym_near s = { &methods, want };
			if (!(f = code_file_elf(cf, &e)))
				continue;
			elf_foreach_symbol(f, near_sym, &s);
			if ((md = code_file_minidebug(cf)))   /* the names matching searched */
				elf_foreach_symbol(md, near_sym, &s);
			symbol_tables_note(f, m->searched_paths[i], tables, sizeof(tables));
		}
	}
	if (p->java && !class_hit) {
		snprintf(near, sizeof(near), "no class matches '%s'%s", p->cls_text,
			 cls.n ? "; nearest classes: " : "");
		list_nearest(near, sizeof(near), &cls);
	} else {
		snprintf(near, sizeof(near), "%s%s%s", p->java ? "classes match but no method does" :
			 "no function symbol matches", tables, methods.n ? "; nearest: " : "");
		list_nearest(near, sizeof(near), &methods);
	}
	return err_set(err, -ENOENT, "pattern '%.200s' matched nothing in %zu file%s (%s): %s",
		       p->text, m->n_searched, m->n_searched == 1 ? "" : "s",
		       m->n_searched ? m->searched : "none searched", near);
}

int pattern_single(const struct trace_pattern *p, const struct pattern_matches *m, size_t *idx,
		   struct err *err)
{
	char list[800] = "";
	size_t l = 0;

	if (!m->n)
		return pattern_explain_no_match(p, m, err);
	if (m->n > 1) {
		for (size_t i = 0; i < m->n && l + 8 < sizeof(list); i++)
			l += (size_t)snprintf(list + l, sizeof(list) - l, "%s%s", i ? "; " : "",
					      m->v[i].name);
		return err_set(err, -EINVAL, "pattern '%.200s' is ambiguous: %zu methods match "
			       "(give the parameter list, or use `methods --match`): %s", p->text,
			       m->n, list);
	}
	*idx = 0;
	switch (m->v[0].left_out) {
	case MATCH_NOT_COMPILED:
	case MATCH_ABSTRACT_OR_NATIVE:
	case MATCH_UNPROBEABLE:
		return err_set(err, -ENODATA, "%s in %s: %s%s%s", m->v[0].name, m->v[0].path,
			       match_left_out_name(m->v[0].left_out),
			       m->v[0].left_out_detail ? ": " : "",
			       m->v[0].left_out_detail ? m->v[0].left_out_detail : "");
	default:
		return 0;
	}
}
