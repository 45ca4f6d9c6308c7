/* pattern_match.c — a parsed pattern against oat/odex files (every dex method,
 * compiled or not, so left-out methods are counted with their reason) and ELF
 * files (function symbols in executable sections); the search over a process's
 * maps and the default roots; the results list.  See pattern.h. */
#include "plan/pattern.h"
#include "plan/pattern_impl.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/codecache.h"
#include "code/codefile.h"
#include "common/grow.h"
#include "formats/dex.h"
#include "formats/dex_debug.h"
#include "formats/oat.h"
#include "formats/oat_dexfile.h"
#include "formats/oat_methods.h"

/* ---- the result list ---------------------------------------------------------------- */

void pattern_match_clear(struct pattern_match *x)
{
	free(x->path);
	free(x->name);
	free(x->raw_name);
	free(x->ret_desc);
	for (uint32_t k = 0; k < x->n_params; k++)
		free(x->param_descs[k]);
	free(x->param_descs);
	free(x->left_out_detail);
	free(x->source_file);
	memset(x, 0, sizeof(*x));
}

void pattern_matches_free(struct pattern_matches *m)
{
	for (size_t i = 0; i < m->n; i++)
		pattern_match_clear(&m->v[i]);
	free(m->v);
	for (size_t i = 0; i < m->n_files; i++)
		free(m->files[i].path);
	free(m->files);
	for (size_t i = 0; i < m->n_searched; i++)
		free(m->searched_paths[i]);
	free(m->searched_paths);
	pattern_dedup_free(m);
	memset(m, 0, sizeof(*m));
}

static struct pattern_file_count *file_slot(struct pattern_matches *m, const char *path)
{
	for (size_t i = 0; i < m->n_files; i++)
		if (!strcmp(m->files[i].path, path))
			return &m->files[i];
	if (grow_array(&m->files, &m->cap_files, m->n_files + 1, 8) < 0)
		return NULL;
	struct pattern_file_count *f = &m->files[m->n_files];
	*f = (struct pattern_file_count){ .path = strdup(path) };
	if (!f->path)
		return NULL;
	m->n_files++;
	return f;
}

int pattern_note_searched(struct pattern_matches *m, const char *path)
{
	size_t l = strlen(m->searched);
	const char *base = strrchr(path, '/');

	for (size_t i = 0; i < m->n_searched; i++)
		if (!strcmp(m->searched_paths[i], path))
			return 0;
	if (grow_array(&m->searched_paths, &m->cap_searched, m->n_searched + 1, 8) < 0)
		return -ENOMEM;
	if (!(m->searched_paths[m->n_searched] = strdup(path)))
		return -ENOMEM;
	m->n_searched++;
	if (l + 40 < sizeof(m->searched))
		snprintf(m->searched + l, sizeof(m->searched) - l, "%s%s", l ? ", " : "",
			 base ? base + 1 : path);
	else if (!strstr(m->searched, ", ..."))
		snprintf(m->searched + l, sizeof(m->searched) - l, ", ...");
	return 0;
}

/* Appends x (taking its strings) with reason; max counts MATCH_OK entries.  A
 * repeat of a listed match is dropped (its strings freed), an alias marked. */
int pattern_push(struct pattern_matches *m, struct pattern_match *x, size_t max)
{
	struct pattern_file_count *f;
	int rc;

	m->n_found++;
	pattern_identify(x);
	if ((rc = pattern_dedup_check(m, x)) < 0)
		return rc;
	if (rc) {
		pattern_match_clear(x);
		return 0;
	}
	if (x->left_out == MATCH_OK && m->by_reason[MATCH_OK] >= max)
		x->left_out = MATCH_OVER_MAX;
	if (grow_array(&m->v, &m->cap, m->n + 1, 64) < 0)
		return -ENOMEM;
	if (!(f = file_slot(m, x->path)))
		return -ENOMEM;
	f->matched++;
	f->ok += x->left_out == MATCH_OK;
	m->by_reason[x->left_out]++;
	m->v[m->n++] = *x;
	memset(x, 0, sizeof(*x));   /* taken: the caller's clear on error is a no-op */
	return pattern_dedup_add(m, m->n - 1);
}

/* ---- Java --------------------------------------------------------------------------- */

struct slot_key {
	uint32_t dex_i, cdi, k;
	size_t list_i;
};

static int by_slot(const void *a, const void *b)
{
	const struct slot_key *x = a, *y = b;
	if (x->dex_i != y->dex_i)
		return x->dex_i < y->dex_i ? -1 : 1;
	if (x->cdi != y->cdi)
		return x->cdi < y->cdi ? -1 : 1;
	return x->k < y->k ? -1 : x->k > y->k;
}

struct group_key {
	size_t first, i;
};

static int by_group(const void *a, const void *b)
{
	const struct group_key *x = a, *y = b;
	if (x->first != y->first)
		return x->first < y->first ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

struct java_ctx {
	const struct trace_pattern *p;
	const char *path;
	const struct oat_file *o;       /* the code cache's, as ds and l */
	struct oat_dexset *ds;
	const struct oat_method_list *l;
	struct slot_key *slots;         /* compiled methods by slot */
	struct group_key *groups;       /* compiled methods by de-dup group */
	bool *in_pat;                   /* per compiled method: matched by the pattern */
	struct cand { uint32_t dex_i, cdi, k, midx, flags; size_t list_i; } *c;
	size_t n_c, cap_c;
};

/* "Lcom/foo/Bar;" -> "com.foo.Bar" in buf; false when not a class descriptor. */
static bool class_dotted(const char *desc, char *buf, size_t size)
{
	size_t n = desc ? strlen(desc) : 0;

	if (n < 3 || desc[0] != 'L' || desc[n - 1] != ';' || n - 1 > size)
		return false;
	for (size_t i = 1; i < n - 1; i++)
		buf[i - 1] = desc[i] == '/' ? '.' : desc[i];
	buf[n - 2] = 0;
	return true;
}

static bool match_name(const struct glob *g, const char *dotted)
{
	const char *s = dotted;
	if (g->simple) {
		const char *d = strrchr(dotted, '.');
		s = d ? d + 1 : dotted;
	}
	return glob_match(g, s, strlen(s));
}

static bool param_ok(const struct glob *g, const struct dex_file *d, uint32_t type_idx)
{
	char buf[1024];
	const char *desc = dex_type_descriptor(d, type_idx);

	if (!desc || dex_pretty_descriptor(desc, buf, sizeof(buf)) < 0)
		return false;
	return match_name(g, buf);
}

/* The parameter list against the globs; "**" matches any run of parameters
 * (the wildcard algorithm with one backtrack point, O(globs x params)). */
static bool params_ok(const struct trace_pattern *p, const struct dex_file *d,
		      const struct dex_proto *pr)
{
	size_t gi = 0, ti = 0, star = (size_t)-1, mark = 0;

	if (!p->params_given)
		return true;
	while (ti < pr->n_params) {
		if (gi < p->n_params && p->params[gi].any_params) {
			star = gi++;
			mark = ti;
		} else if (gi < p->n_params &&
			   param_ok(&p->params[gi], d, dex_proto_param(d, pr, (uint32_t)ti))) {
			gi++;
			ti++;
		} else if (star != (size_t)-1) {
			gi = star + 1;
			ti = ++mark;
		} else {
			return false;
		}
	}
	while (gi < p->n_params && p->params[gi].any_params)
		gi++;
	return gi == p->n_params;
}

static bool method_ok(const struct trace_pattern *p, const struct dex_file *d, uint32_t midx)
{
	struct dex_method_id id;
	struct dex_proto pr;
	const char *name;

	if (dex_method_id_at(d, midx, &id) || !(name = dex_string(d, id.name_idx)))
		return false;
	if (!glob_match(&p->method, name, strlen(name)))
		return false;
	return !p->params_given || (!dex_proto_at(d, id.proto_idx, &pr) && params_ok(p, d, &pr));
}

static size_t compiled_at(const struct java_ctx *x, uint32_t dex_i, uint32_t cdi, uint32_t k)
{
	struct slot_key key = { dex_i, cdi, k, 0 };
	const struct slot_key *s = bsearch(&key, x->slots, x->l->n, sizeof(key), by_slot);
	return s ? s->list_i : (size_t)-1;
}

static int add_cand(struct java_ctx *x, const struct cand *c)
{
	if (grow_array(&x->c, &x->cap_c, x->n_c + 1, 64) < 0)
		return -ENOMEM;
	x->c[x->n_c++] = *c;
	if (c->list_i != (size_t)-1)
		x->in_pat[c->list_i] = true;
	return 0;
}

static int scan_class(struct java_ctx *x, const struct dex_file *d, uint32_t di, uint32_t cdi,
		      struct err *err)
{
	struct dex_class_def cd;
	struct dex_class_iter it;
	struct dex_method dm;
	char cls[1024];
	int r;

	if (dex_class_def_at(d, cdi, &cd) ||
	    !class_dotted(dex_type_descriptor(d, cd.class_idx), cls, sizeof(cls)) ||
	    !match_name(&x->p->cls, cls))
		return 0;
	if (dex_class_iter_init(d, cdi, &it, err))
		return 0;   /* a damaged class is skipped, as `methods` does */
	while ((r = dex_class_iter_next(&it, &dm, err)) == 1) {
		if (!method_ok(x->p, d, dm.method_idx))
			continue;
		struct cand c = { di, cdi, dm.index_in_class, dm.method_idx, dm.access_flags,
				  compiled_at(x, di, cdi, dm.index_in_class) };
		if (add_cand(x, &c))
			return err_set(err, -ENOMEM, "out of memory");
	}
	return 0;
}

static int index_compiled(struct java_ctx *x, struct err *err)
{
	size_t n = x->l->n ? x->l->n : 1;

	x->slots = malloc(n * sizeof(*x->slots));
	x->groups = malloc(n * sizeof(*x->groups));
	x->in_pat = calloc(n, sizeof(*x->in_pat));
	if (!x->slots || !x->groups || !x->in_pat)
		return err_set(err, -ENOMEM, "out of memory");
	for (size_t i = 0; i < x->l->n; i++) {
		const struct oat_method *m = &x->l->v[i];
		x->slots[i] = (struct slot_key){ m->dex_i, m->cdi, m->index_in_class, i };
		x->groups[i] = (struct group_key){ m->dedup_first, i };
	}
	qsort(x->slots, x->l->n, sizeof(*x->slots), by_slot);
	qsort(x->groups, x->l->n, sizeof(*x->groups), by_group);
	return 0;
}

/* The de-dup group of compiled method li: reason and detail for it. */
static enum match_left_out group_reason(struct java_ctx *x, size_t li, char **detail)
{
	const struct oat_method *m = &x->l->v[li];
	struct group_key key = { m->dedup_first, 0 };
	size_t lo = 0, hi = x->l->n, first_in = (size_t)-1, outside = 0;
	char buf[1024], sig[512];
	size_t bl = 0;

	*detail = NULL;
	if (m->dedup_n <= 1)
		return MATCH_OK;
	while (lo < hi) {   /* lower bound of the group */
		size_t mid = (lo + hi) / 2;
		if (by_group(&x->groups[mid], &key) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	buf[0] = 0;
	for (size_t i = lo; i < x->l->n && x->groups[i].first == m->dedup_first; i++) {
		size_t gi = x->groups[i].i;
		if (x->in_pat[gi]) {
			if (first_in == (size_t)-1)
				first_in = gi;
			continue;
		}
		oat_method_signature(x->ds, &x->l->v[gi], sig, sizeof(sig));
		if (outside++ < 4 && bl + 8 < sizeof(buf))
			bl += (size_t)snprintf(buf + bl, sizeof(buf) - bl, "%s%s",
					       outside > 1 ? "; " : "", sig);
	}
	if (outside) {
		char d[1200];
		snprintf(d, sizeof(d), "shares code with %zu method%s outside the pattern: %s%s",
			 outside, outside > 1 ? "s" : "", buf, outside > 4 ? "; ..." : "");
		*detail = strdup(d);
		return MATCH_SHARED_CODE;
	}
	if (first_in != li) {
		oat_method_signature(x->ds, &x->l->v[first_in], sig, sizeof(sig));
		char d[600];
		snprintf(d, sizeof(d), "same code as %s", sig);
		*detail = strdup(d);
		return MATCH_SAME_CODE;
	}
	return MATCH_OK;
}

static int fill_descs(const struct dex_file *d, uint32_t midx, struct pattern_match *pm)
{
	struct dex_method_id id;
	struct dex_proto pr;
	const char *s;

	if (dex_method_id_at(d, midx, &id) || dex_proto_at(d, id.proto_idx, &pr))
		return 0;
	s = dex_type_descriptor(d, pr.return_type_idx);
	if (!(pm->ret_desc = strdup(s ? s : "")))
		return -ENOMEM;
	if (!pr.n_params)
		return 0;
	if (!(pm->param_descs = calloc(pr.n_params, sizeof(char *))))
		return -ENOMEM;
	for (uint32_t i = 0; i < pr.n_params; i++) {
		s = dex_type_descriptor(d, dex_proto_param(d, &pr, i));
		if (!(pm->param_descs[i] = strdup(s ? s : "")))
			return -ENOMEM;
		pm->n_params = i + 1;
	}
	return 0;
}

static int emit_cand(struct java_ctx *x, const struct cand *c, size_t max,
		     struct pattern_matches *out)
{
	const struct oat_info *in = oat_info(x->o);
	const struct dex_file *d;
	struct err e;
	char sig[2048];
	struct pattern_match pm = {
		.is_java = true, .access_flags = c->flags, .dex_method_idx = c->midx,
		.is_static = c->flags & DEX_ACC_STATIC, .e_machine = in->e_machine,
	};

	snprintf(pm.isa, sizeof(pm.isa), "%s", in->isa);
	if (oat_dexset_get(x->ds, c->dex_i, &d, &e) ||
	    dex_pretty_method(d, c->midx, sig, sizeof(sig)) < 0)
		return 0;
	if (c->flags & (DEX_ACC_ABSTRACT | DEX_ACC_NATIVE)) {
		pm.left_out = MATCH_ABSTRACT_OR_NATIVE;
	} else if (c->list_i == (size_t)-1) {
		pm.left_out = MATCH_NOT_COMPILED;
	} else {
		const struct oat_method *m = &x->l->v[c->list_i];
		pm.file_offset = m->code.file_offset;
		pm.code_size = m->code.code_size;
		pm.left_out = group_reason(x, c->list_i, &pm.left_out_detail);
		if (pm.left_out == MATCH_OK && m->code.thumb) {
			pm.left_out = MATCH_UNPROBEABLE;
			pm.left_out_detail = strdup("arm32 Thumb code: the kernel cannot uprobe "
						    "Thumb instructions");
		}
	}
	pm.path = strdup(x->path);
	pm.name = strdup(sig);
	const char *src = dex_class_source_file(d, c->cdi);
	if (src && !(pm.source_file = strdup(src))) {
		pattern_match_clear(&pm);
		return -ENOMEM;
	}
	if (!pm.path || !pm.name || fill_descs(d, c->midx, &pm) || pattern_push(out, &pm, max)) {
		pattern_match_clear(&pm);
		return -ENOMEM;
	}
	return 0;
}

static void java_ctx_free(struct java_ctx *x)
{
	free(x->slots);
	free(x->groups);
	free(x->in_pat);
	free(x->c);
}

static int match_oat(const struct trace_pattern *p, const char *path, size_t max,
		     struct pattern_matches *out, struct err *err)
{
	struct java_ctx x = { .p = p, .path = path };
	struct code_file *f;
	int rc;

	if (pattern_note_searched(out, path) || !(f = code_cache_file(out->code, path)))
		return err_set(err, -ENOMEM, "out of memory");
	if ((rc = code_file_oat(f, &x.o, err)) || (rc = code_file_dexset(f, &x.ds, err)) ||
	    (rc = code_file_methods(f, &x.l, err)) || (rc = index_compiled(&x, err))) {
		java_ctx_free(&x);
		return rc;
	}
	for (uint32_t di = 0; di < oat_dex_count(x.o) && !rc; di++) {
		const struct dex_file *d;
		struct err de;
		if (oat_dexset_get(x.ds, di, &d, &de))
			continue;   /* no dex: no names to match (methods lists it) */
		for (uint32_t cdi = 0; cdi < dex_class_def_count(d) && !rc; cdi++)
			rc = scan_class(&x, d, di, cdi, err);
	}
	for (size_t i = 0; i < x.n_c && !rc; i++)
		if ((rc = emit_cand(&x, &x.c[i], max, out)))
			err_set(err, rc, "out of memory");
	java_ctx_free(&x);
	return rc;
}

/* ---- entry points ------------------------------------------------------------------- */

int pattern_match_file(const struct trace_pattern *p, const char *path, size_t max,
		       struct pattern_matches *out, struct err *err)
{
	char found[4096];
	int rc;

	if (!max)
		max = PATTERN_DEFAULT_MAX;
	if (!path)
		path = p->file;
	if (!path)
		return err_set(err, -EDESTADDRREQ, "pattern '%.200s' names no file: give one "
			       "(FILE:CLASS.METHOD, or a file argument) or a process (--pid)",
			       p->text);
	if (p->java)
		return match_oat(p, path, max, out, err);
	if (!strchr(path, '/')) {
		if ((rc = pattern_find_library(NULL, out->code, path, 0, found, sizeof(found), err)))
			return rc;
		path = found;
	}
	return pattern_native_file(p, path, max, out, err);
}
