#include "resolve/oat_lookup.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "formats/dex.h"
#include "formats/dex_debug.h"
#include "formats/oat_methods.h"

#define COMPILE_HINT                                                                    \
	"; it runs interpreted or JIT-compiled, so it has no file offset "              \
	"(to get AOT code: `cmd package compile -m speed -f <package>`, or for "        \
	"system_server jars set dalvik.vm.systemservercompilerfilter=speed and reboot)"

/* Appends "; "-separated text with truncation. */
static void append(char *buf, size_t size, const char *s)
{
	size_t n = strlen(buf);
	if (n + 1 < size)
		snprintf(buf + n, size - n, "%s%s", n ? "; " : "", s);
}

/* The method of class cdi matching sig; index_in_class etc. filled.
 * Returns 0, -ENOENT (none), -ENOTUNIQ (ambiguous) or -EINVAL (damaged). */
static int find_in_class(const struct dex_file *d, uint32_t cdi, const struct java_sig *sig,
			 struct oat_lookup_result *r, uint32_t *n_methods, char *others,
			 size_t others_size, struct err *err)
{
	struct dex_class_iter it;
	struct dex_method m;
	int rc, hits = 0;
	const char *const *params = (const char *const *)sig->params;

	if ((rc = dex_class_iter_init(d, cdi, &it, err)))
		return rc;
	*n_methods = it.n_direct + it.n_virtual;
	while ((rc = dex_class_iter_next(&it, &m, err)) > 0) {
		char pretty[1024];
		struct dex_method_id mid;
		const char *name;
		if (dex_method_id_at(d, m.method_idx, &mid) ||
		    !(name = dex_string(d, mid.name_idx)) || strcmp(name, sig->name) != 0)
			continue;
		dex_pretty_method(d, m.method_idx, pretty, sizeof(pretty));
		bool match = sig->params_given
				     ? dex_method_matches(d, m.method_idx, sig->name, sig->ret_desc,
							  params, sig->n_params)
				     : true;
		if (!match) {
			append(others, others_size, pretty);
			continue;
		}
		if (hits++) {
			append(others, others_size, pretty);
			continue;
		}
		r->method_idx = m.method_idx;
		r->access_flags = m.access_flags;
		r->index_in_class = m.index_in_class;
		snprintf(r->signature, sizeof(r->signature), "%s", pretty);
	}
	if (rc < 0)
		return rc;
	if (hits > 1)
		return err_set(err, -ENOTUNIQ,
			       "%s.%s has %d overloads; give the parameter list "
			       "(candidates: %s; %s)",
			       sig->class_name, sig->name, hits, r->signature, others);
	return hits ? 0 : -ENOENT;
}

/* Fills the descriptor fields of r from the dex. */
static void describe(const struct dex_file *d, struct oat_lookup_result *r)
{
	struct dex_method_id mid;
	struct dex_proto pr;
	size_t used = 0;

	if (dex_method_id_at(d, r->method_idx, &mid) || dex_proto_at(d, mid.proto_idx, &pr))
		return;
	snprintf(r->ret_desc, sizeof(r->ret_desc), "%s",
		 dex_type_descriptor(d, pr.return_type_idx)
			 ? dex_type_descriptor(d, pr.return_type_idx)
			 : "?");
	for (uint32_t i = 0; i < pr.n_params; i++) {
		const char *t = dex_type_descriptor(d, dex_proto_param(d, &pr, i));
		size_t l = t ? strlen(t) : 0;
		if (!t || used + l + 1 >= sizeof(r->params))
			break;
		memcpy(r->params + used, t, l + 1);
		used += l + 1;
		r->n_params++;
	}
}

static const char *filter_reason(const char *filter)
{
	if (!filter)
		return NULL;
	if (!strcmp(filter, "verify") || !strcmp(filter, "extract") ||
	    !strcmp(filter, "assume-verified") || !strcmp(filter, "interpret-only") ||
	    !strcmp(filter, "verify-none"))
		return "which compiles no methods";
	if (!strcmp(filter, "quicken"))
		return "which compiles only JNI stubs of native methods";
	if (strstr(filter, "profile"))
		return "which compiles only methods in the profile";
	return NULL;
}

static int not_compiled(const struct oat_file *o, const struct oat_class *c, enum oat_miss why,
			struct oat_lookup_result *r, struct err *err)
{
	const char *filter = oat_kv_get(o, "compiler-filter"), *fr = filter_reason(filter);
	char reason[512];

	r->kind = OAT_LOOKUP_NOT_COMPILED;
	if (r->access_flags & DEX_ACC_ABSTRACT)
		snprintf(reason, sizeof(reason), "it is abstract: there is no code of its own; "
			 "probe the implementing class's method");
	else if (r->access_flags & DEX_ACC_NATIVE)
		snprintf(reason, sizeof(reason),
			 "it is native and has no compiled JNI stub (calls go "
			 "through the generic JNI trampoline); probe the native function instead");
	else if (fr)
		snprintf(reason, sizeof(reason),
			 "the oat file was compiled with compiler-filter '%s', %s", filter, fr);
	else if (why == OAT_MISS_CLASS_NONE)
		snprintf(reason, sizeof(reason),
			 "its class is not compiled (OatClass NoneCompiled, "
			 "class status %u%s)",
			 c->status,
			 c->status < 10 ? ": verification failed or was deferred to run time" : "");
	else if (why == OAT_MISS_BITMAP)
		snprintf(reason, sizeof(reason), "its class is only partly compiled and the "
			 "compiled-methods bitmap excludes it");
	else
		snprintf(reason, sizeof(reason), "its code offset is 0");
	return err_set(err, -ENODATA, "%s in %s is not AOT-compiled: %s%s", r->signature,
		       oat_name(o), reason,
		       (r->access_flags & (DEX_ACC_ABSTRACT | DEX_ACC_NATIVE)) ? "" : COMPILE_HINT);
}

struct sharer_ctx {
	const struct oat_file *o;
	struct oat_dexset *ds;
	struct oat_lookup_result *r;
};

static int on_sharer(void *vctx, uint32_t di, uint32_t cdi, uint32_t idx)
{
	struct sharer_ctx *c = vctx;
	struct oat_lookup_result *r = c->r;
	const struct dex_file *d;
	struct dex_class_iter it;
	struct dex_method m;
	struct err e;
	char buf[1024];

	if (di == r->dex_i && cdi == r->cdi && idx == r->index_in_class)
		return 0;
	r->n_sharers++;
	snprintf(buf, sizeof(buf), "dex #%u class_def %u method %u", di, cdi, idx);
	if (!oat_dexset_get(c->ds, di, &d, &e) && !dex_class_iter_init(d, cdi, &it, &e))
		while (dex_class_iter_next(&it, &m, &e) > 0)
			if (m.index_in_class == idx)
				dex_pretty_method(d, m.method_idx, buf, sizeof(buf));
	append(r->sharers, sizeof(r->sharers), buf);
	return 0;
}

static int finish(const struct oat_file *o, struct oat_dexset *ds, const struct dex_file *d,
		  uint32_t n_methods, struct oat_lookup_result *r, struct err *err)
{
	struct oat_class c;
	enum oat_miss why;
	int rc;

	describe(d, r);
	if ((rc = oat_class_get(o, r->dex_i, r->cdi, n_methods, &c, err)) ||
	    (rc = oat_class_method(o, &c, r->index_in_class, NULL, &r->raw_code_offset, &why, err)))
		return r->kind = OAT_LOOKUP_BROKEN, rc;
	if (!r->raw_code_offset)
		return not_compiled(o, &c, why, r, err);
	if ((rc = oat_code_at(o, r->raw_code_offset, &r->code, err)))
		return r->kind = OAT_LOOKUP_BROKEN, rc;
	struct sharer_ctx sc = { o, ds, r };
	if ((rc = oat_for_each_code_user(o, ds, r->code.code_offset, on_sharer, &sc, err)) < 0)
		return r->kind = OAT_LOOKUP_BROKEN, rc;
	r->kind = OAT_LOOKUP_FOUND;
	return 0;
}

/* Finds the class in dex d, trying canonical-name variants ("Outer.Inner"). */
static int find_class(const struct dex_file *d, const struct java_sig *sig, struct arena *a,
		      uint32_t *cdi)
{
	if (!dex_find_class_def(d, sig->class_desc, cdi))
		return 0;
	for (unsigned k = 1;; k++) {
		char *v = java_sig_class_variant(sig, k, a);
		if (!v)
			return -ENOENT;
		if (!dex_find_class_def(d, v, cdi))
			return 0;
	}
}

int oat_lookup_method(const struct oat_file *o, struct oat_dexset *ds, const struct java_sig *sig,
		      struct oat_lookup_result *out, struct err *err)
{
	struct err dex_err = { 0 };
	struct arena *a = arena_new();
	char *want = a ? java_sig_pretty(sig, a) : NULL;
	int rc = -ENOENT;

	memset(out, 0, sizeof(*out));
	if (!want) {
		arena_free(a);
		return err_set(err, -ENOMEM, "out of memory");
	}
	out->kind = OAT_LOOKUP_NO_CLASS;
	for (uint32_t di = 0; di < oat_dex_count(o); di++) {
		const struct dex_file *d;
		char others[1024] = "";
		uint32_t nm;
		if (oat_dexset_get(ds, di, &d, &dex_err)) {
			out->kind = OAT_LOOKUP_DEX_MISSING;
			continue;
		}
		if (find_class(d, sig, a, &out->cdi))
			continue;
		out->dex_i = di;
		const char *src = dex_class_source_file(d, out->cdi);
		snprintf(out->source_file, sizeof(out->source_file), "%s", src ? src : "");
		rc = find_in_class(d, out->cdi, sig, out, &nm, others, sizeof(others), err);
		if (rc == -ENOENT) {
			out->kind = OAT_LOOKUP_NO_METHOD;
			err_set(err, -ENOENT,
				"%s: class %s (dex #%u) has no method %s%s%s; if it is "
				"inherited, probe the declaring class",
				oat_name(o), sig->class_name, di, want,
				*others ? "; same-named: " : "", others);
		} else if (rc == -ENOTUNIQ) {
			out->kind = OAT_LOOKUP_AMBIGUOUS;
			rc = err->code = -EINVAL;
		} else if (rc) {
			out->kind = OAT_LOOKUP_BROKEN;
		} else {
			rc = finish(o, ds, d, nm, out, err);
		}
		arena_free(a);
		return rc;
	}
	if (out->kind == OAT_LOOKUP_DEX_MISSING)
		err_set(err, -ENOENT, "%s: class %s not found in the dex files that could be read, "
			"and %s", oat_name(o), sig->class_name, dex_err.msg);
	else
		err_set(err, -ENOENT, "%s: no dex file of this oat defines class %s", oat_name(o),
			sig->class_name);
	arena_free(a);
	return -ENOENT;
}
