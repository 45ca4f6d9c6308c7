#include "resolve/java_resolve.h"

#include <elf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/codecache.h"
#include "code/codefile.h"
#include "common/arena.h"
#include "formats/dex.h"
#include "resolve/java_sig.h"
#include "formats/oat.h"
#include "formats/oat_dexfile.h"
#include "resolve/oat_lookup.h"
#include "resolve/oatdump.h"

static void note(struct java_resolution *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(struct java_resolution *r, const char *fmt, ...)
{
	size_t n = strlen(r->notes);
	va_list ap;

	if (n + 2 >= sizeof(r->notes))
		return;
	if (n)
		r->notes[n++] = '\n';
	va_start(ap, fmt);
	vsnprintf(r->notes + n, sizeof(r->notes) - n, fmt, ap);
	va_end(ap);
}

static void warn(struct java_resolution *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void warn(struct java_resolution *r, const char *fmt, ...)
{
	size_t n = strlen(r->warning);
	va_list ap;

	if (n + 3 >= sizeof(r->warning))
		return;
	if (n) {
		memcpy(r->warning + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(r->warning + n, sizeof(r->warning) - n, fmt, ap);
	va_end(ap);
}

const char *java_resolver_mode_name(enum java_resolver_mode m)
{
	return m == JAVA_RESOLVER_BUILTIN ? "builtin" : m == JAVA_RESOLVER_OATDUMP ? "oatdump"
										    : "auto";
}

int java_resolver_mode_parse(const char *s, enum java_resolver_mode *out)
{
	if (!strcmp(s, "auto"))
		*out = JAVA_RESOLVER_AUTO;
	else if (!strcmp(s, "builtin"))
		*out = JAVA_RESOLVER_BUILTIN;
	else if (!strcmp(s, "oatdump"))
		*out = JAVA_RESOLVER_OATDUMP;
	else
		return -EINVAL;
	return 0;
}

const char *java_resolution_param(const struct java_resolution *r, uint32_t i)
{
	const char *p = r->params;

	if (i >= r->n_params)
		return NULL;
	while (i--)
		p += strlen(p) + 1;
	return p;
}

static void thumb_warning(struct java_resolution *r)
{
	if (r->thumb)
		warn(r, "arm32 Thumb-2 code: the offset is computed, but the kernel cannot place a "
		     "uprobe on Thumb code (and arm64 kernels refuse uprobes in 32-bit processes)");
}

static void fill_from_lookup(const struct oat_lookup_result *lr, struct java_resolution *r)
{
	r->file_offset = lr->code.file_offset;
	r->code_size = lr->code.code_size;
	r->thumb = lr->code.thumb;
	r->flags_known = true;
	r->access_flags = lr->access_flags;
	r->is_static = lr->access_flags & DEX_ACC_STATIC;
	r->dex_method_idx = lr->method_idx;
	memcpy(r->signature, lr->signature, sizeof(r->signature));
	memcpy(r->source_file, lr->source_file, sizeof(r->source_file));
	memcpy(r->ret_desc, lr->ret_desc, sizeof(r->ret_desc));
	memcpy(r->params, lr->params, sizeof(r->params));
	r->n_params = lr->n_params;
	r->n_sharers = lr->n_sharers;
	note(r, "method header: %s; code at oat offset 0x%x, vaddr 0x%llx", lr->code.header_kind,
	     lr->code.code_offset, (unsigned long long)lr->code.vaddr);
	if (lr->n_sharers)
		warn(r, "the code at this offset is shared (de-duplicated) with %u other method%s, "
		     "so a probe there fires for them too: %s", lr->n_sharers,
		     lr->n_sharers > 1 ? "s" : "", lr->sharers);
	thumb_warning(r);
}

static void describe_oat(const struct oat_file *o, struct java_resolution *r)
{
	const struct oat_info *in = oat_info(o);
	const char *f = oat_kv_get(o, "compiler-filter");

	snprintf(r->isa, sizeof(r->isa), "%s", in->isa);
	r->e_machine = in->e_machine;
	note(r, "%s: oat v%u, %s, oatdata at file offset 0x%llx, compiler-filter %s", oat_name(o),
	     in->version, in->isa, (unsigned long long)in->oatdata_off, f ? f : "(none)");
	note(r, "%s; %s", in->header_layout, in->record_layout);
}

/* The dotted class name of a descriptor ("Lcom/a/B$C;" -> "com.a.B$C"). */
static void dotted(const char *desc, char *buf, size_t size)
{
	dex_pretty_descriptor(desc, buf, size);
}

/* oatdump path for one file.  lr (may be NULL) supplies flags when the
 * built-in reader found the method's dex but not its code. */
static int via_oatdump(const struct java_resolve_opts *opts, const char *path,
		       const struct java_sig *sig, const char *want, struct java_resolution *r,
		       struct err *err)
{
	struct oatdump_run_opts ro = { .oatdump = opts->oatdump_path, .oat_path = path,
				       .timeout_ms = opts->oatdump_timeout_ms,
				       .method_filter = sig->name };
	struct oatdump_output out;
	struct elf_file *elf;
	struct elf_symbol s;
	uint64_t oatdata_off = 0;
	char cls[1024];
	unsigned version = 0;
	int rc;

	dotted(sig->class_desc, cls, sizeof(cls));
	ro.class_filter = cls;
	if (opts->n_dex_files)
		ro.dex_file = opts->dex_files[0];
	if (!elf_open(path, &elf, err)) {
		if (!elf_find_symbol(elf, "oatdata", &s) &&
		    !elf_vaddr_to_offset(elf, s.value, &oatdata_off, NULL)) {
			size_t len;
			const uint8_t *d = elf_data(elf, &len);
			if (oatdata_off + 8 <= len && !memcmp(d + oatdata_off, "oat\n", 4))
				version = (unsigned)((d[oatdata_off + 4] - '0') * 100 +
						     (d[oatdata_off + 5] - '0') * 10 +
						     (d[oatdata_off + 6] - '0'));
		}
		const char *isa = oat_isa_name(elf_machine(elf));
		snprintf(r->isa, sizeof(r->isa), "%s", isa ? isa : "?");
		r->e_machine = elf_machine(elf);
		elf_close(elf);
	}
	ro.oat_version = version;
	if ((rc = oatdump_run(&ro, &out, err)))
		return rc;
	if (out.version)
		version = out.version;
	const struct oatdump_method *m = oatdump_find(&out, want);
	if (!m || !m->code_offset) {
		rc = err_set(err, m ? -ENODATA : -ENOENT, "%s: oatdump %s %s", path,
			     m ? "shows no compiled code for" : "lists no method", want);
		oatdump_output_free(&out);
		return rc;
	}
	r->file_offset = oatdump_file_offset(version, oatdata_off, m->code_offset);
	r->code_size = m->has_size ? m->code_size : 0;
	r->thumb = r->e_machine == EM_ARM && (m->code_offset & 1);
	r->dex_method_idx = m->dex_method_idx >= 0 ? (uint32_t)m->dex_method_idx : DEX_NO_INDEX;
	snprintf(r->signature, sizeof(r->signature), "%s", m->signature);
	r->found_by = JAVA_FOUND_OATDUMP;
	note(r, "oatdump (%s output, oat v%u: offsets %s)", out.json ? "JSON" : "text", version,
	     version >= 247 ? "ELF-relative" : "oatdata-relative");
	thumb_warning(r);
	oatdump_output_free(&out);
	return 0;
}

/* Errors the built-in reader cannot settle, so auto mode asks oatdump. */
static bool reader_gave_up(int rc, const struct oat_lookup_result *lr)
{
	if (lr && lr->kind == OAT_LOOKUP_DEX_MISSING)
		return true;
	if (lr && (lr->kind == OAT_LOOKUP_NO_CLASS || lr->kind == OAT_LOOKUP_NO_METHOD ||
		   lr->kind == OAT_LOOKUP_AMBIGUOUS || lr->kind == OAT_LOOKUP_NOT_COMPILED))
		return false;
	return rc == -ENOTSUP || rc == -EINVAL;
}

/* The pretty signature oatdump would print for sig (needs a return type). */
static void oatdump_sig(const struct java_sig *sig, const struct oat_lookup_result *lr,
			char *buf, size_t size, struct arena *a)
{
	if (lr && lr->signature[0])
		snprintf(buf, size, "%s", lr->signature);
	else
		snprintf(buf, size, "%s", java_sig_pretty(sig, a));
}

/* The oat file and its dex files: the command's code cache's (*own_ds NULL;
 * extra dex archives get a dex set of their own). */
static int open_oat(const struct java_resolve_opts *opts, const char *path,
		    const struct oat_file **o, struct oat_dexset **ds,
		    struct oat_dexset **own_ds, struct err *err)
{
	struct code_file *f = code_cache_file(opts->code, path);
	int rc;

	*own_ds = NULL;
	if (!f)
		return err_set(err, -ENOMEM, "out of memory");
	if ((rc = code_file_oat(f, o, err)))
		return rc;
	if (!opts->n_dex_files)
		return code_file_dexset(f, ds, err);
	rc = oat_dexset_new(*o, path, opts->dex_files, opts->n_dex_files, own_ds, err);
	*ds = *own_ds;
	return rc;
}

/* Resolves in one file; *no_class is set when the file does not define the
 * class at all (so the caller may try the next file). */
static int in_file(const struct java_resolve_opts *opts, const char *path,
		   const struct java_sig *sig, struct arena *a, struct java_resolution *r,
		   bool *no_class, struct err *err)
{
	const struct oat_file *o = NULL;
	struct oat_dexset *ds = NULL, *own_ds = NULL;
	struct oat_lookup_result lr;
	bool have_lr = false;
	char want[1024];
	int rc;

	snprintf(r->path, sizeof(r->path), "%s", path);
	char builtin_err[ERR_MSG_MAX] = "";

	if (opts->mode != JAVA_RESOLVER_OATDUMP) {
		rc = open_oat(opts, path, &o, &ds, &own_ds, err);
		if (!rc) {
			describe_oat(o, r);
			rc = oat_lookup_method(o, ds, sig, &lr, err);
			have_lr = true;
			*no_class = lr.kind == OAT_LOOKUP_NO_CLASS;
			if (!rc)
				fill_from_lookup(&lr, r);
		}
		if (!rc || opts->mode == JAVA_RESOLVER_BUILTIN ||
		    !reader_gave_up(rc, have_lr ? &lr : NULL)) {
			oat_dexset_free(own_ds);
			return rc;
		}
		note(r, "built-in reader could not handle %s (%s); falling back to oatdump", path,
		     err->msg);
		snprintf(builtin_err, sizeof(builtin_err), "%s", err->msg);
	}
	oatdump_sig(sig, have_lr ? &lr : NULL, want, sizeof(want), a);
	if (!sig->ret_desc && !(have_lr && lr.signature[0]))
		rc = err_set(err, -EINVAL, "oatdump matches full signatures: give method_signature "
			     "with its return type for %s", want);
	else
		rc = via_oatdump(opts, path, sig, want, r, err);
	/* When the fallback fails too, say first why it was needed. */
	if (rc < 0 && builtin_err[0])
		err_prefix(err, "%s; the oatdump fallback failed too", builtin_err);
	if (!rc && have_lr && lr.signature[0]) {    /* the dex was readable: keep its facts */
		r->flags_known = true;
		r->access_flags = lr.access_flags;
		r->is_static = lr.access_flags & DEX_ACC_STATIC;
		memcpy(r->params, lr.params, sizeof(r->params));
		memcpy(r->ret_desc, lr.ret_desc, sizeof(r->ret_desc));
		r->n_params = lr.n_params;
	}
	oat_dexset_free(own_ds);
	return rc;
}

static int parse_sig(const struct java_resolve_opts *opts, struct arena *a, struct java_sig *sig,
		     struct err *err)
{
	if (opts->method_signature && *opts->method_signature)
		return java_sig_parse(opts->method_signature, a, sig, err);
	return java_sig_from_parts(opts->class_name, opts->method_name, opts->params,
				   opts->n_params, opts->params_given, a, sig, err);
}

/* Tries the listed files in order; a file that lacks the class is skipped. */
static int in_files(const struct java_resolve_opts *opts, const struct java_sig *sig,
		    struct arena *a, struct java_resolution *r, struct err *err)
{
	struct err first = { 0 };
	int rc = -ENOENT;

	for (size_t i = 0; i < opts->n_file_paths; i++) {
		struct err e = { 0 };
		bool no_class = false;
		memset(r, 0, sizeof(*r));
		r->dex_method_idx = DEX_NO_INDEX;
		rc = in_file(opts, opts->file_paths[i], sig, a, r, &no_class, &e);
		if (!rc)
			return 0;
		if (!no_class) {
			*err = e;
			return rc;
		}
		if (!first.code)
			first = e;
	}
	*err = first;
	if (opts->n_file_paths > 1)
		err_prefix(err, "none of the %zu files defines %s (first)", opts->n_file_paths,
			   sig->class_name);
	return rc;
}

/* No file given: find the one that defines the class, then resolve there. */
static int by_search(const struct java_resolve_opts *opts, const struct java_sig *sig,
		     struct arena *a, struct java_resolution *out, struct err *err)
{
	struct oat_search_hit hit;
	struct oat_search_opts so = opts->search;
	char notes[sizeof(out->notes)];
	bool no_class = false;
	int rc;

	so.code = opts->code;   /* the class indexes read the files through it too */
	if (!so.dex_files) {
		so.dex_files = opts->dex_files;
		so.n_dex_files = opts->n_dex_files;
	}
	if ((rc = oat_search_class(&so, sig->class_desc, &hit, err)))
		return rc;
	rc = in_file(opts, hit.path, sig, a, out, &no_class, err);
	out->searched = true;
	snprintf(notes, sizeof(notes), "%s", out->notes);
	out->notes[0] = 0;
	note(out, "file chosen by search: %s (%s)", hit.path, hit.why);
	note(out, "%s", notes);
	return rc;
}

static int resolve_sig(const struct java_resolve_opts *opts, const struct java_sig *sig,
		       struct arena *a, struct java_resolution *out, struct err *err)
{
	return opts->n_file_paths ? in_files(opts, sig, a, out, err)
				  : by_search(opts, sig, a, out, err);
}

static bool same_params(const struct java_sig *x, const struct java_sig *y)
{
	if (x->n_params != y->n_params)
		return false;
	for (size_t i = 0; i < x->n_params; i++)
		if (strcmp(x->params[i], y->params[i]))
			return false;
	return true;
}

/* A method_signature that named no method, read again with each parameter whole
 * (dex 040 allows spaces in names, "a.My Class", which the usual reading takes as
 * a type and a parameter name).  Returns 0 with out filled, or rc with err as the
 * first reading left it. */
static int retry_whole_params(const struct java_resolve_opts *opts, const struct java_sig *sig,
			      struct arena *a, struct java_resolution *out, int rc,
			      struct err *err)
{
	struct java_resolution *r2 = malloc(sizeof(*r2));
	struct java_sig whole;
	struct err e = { 0 };

	if (!r2)
		return rc;
	if (!java_sig_parse_whole_params(opts->method_signature, a, &whole, &e) &&
	    !same_params(sig, &whole) && !resolve_sig(opts, &whole, a, r2, &e)) {
		*out = *r2;
		rc = 0;
	}
	free(r2);
	return rc;
}

int java_resolve(const struct java_resolve_opts *opts, struct java_resolution *out,
		 struct err *err)
{
	struct arena *a = arena_new();
	struct java_sig sig;
	int rc;

	memset(out, 0, sizeof(*out));
	out->dex_method_idx = DEX_NO_INDEX;
	if (!a)
		return err_set(err, -ENOMEM, "out of memory");
	rc = parse_sig(opts, a, &sig, err);
	if (!rc)
		rc = resolve_sig(opts, &sig, a, out, err);
	if (rc == -ENOENT && opts->method_signature && *opts->method_signature)
		rc = retry_whole_params(opts, &sig, a, out, rc, err);
	arena_free(a);
	return rc;
}
