#include "resolve/methods_cmd.h"

#include <errno.h>
#include <string.h>

#include "code/codecache.h"
#include "code/codefile.h"
#include "formats/dex.h"
#include "formats/oat.h"
#include "formats/oat_dexfile.h"
#include "formats/oat_exits.h"
#include "formats/oat_methods.h"
#include "vocab/json_out.h"

static void json_null_frame(FILE *out, const char *why)
{
	fputs(",\"frame_size\":null,\"core_spill_mask\":null,\"fp_spill_mask\":null,"
	      "\"num_stack_maps\":null,\"frameless_leaf\":null,\"frame_error\":", out);
	json_fput_string(out, why);
}

/* ,"frame_size":..,"core_spill_mask":..,"fp_spill_mask":..,"num_stack_maps":..,
 * "frameless_leaf":..,"frame_error":..,"exit_sites":[file offsets],"exit_sites_error":..
 * (values null and the *_error a string when unknown). */
static void json_frame_exits(FILE *out, const struct oat_method_exits *x)
{
	const struct art_frame_info *f = &x->frame;

	if (!x->frame_rc)
		fprintf(out, ",\"frame_size\":%u,\"core_spill_mask\":%u,\"fp_spill_mask\":%u,"
			"\"num_stack_maps\":%u,\"frameless_leaf\":%s,\"frame_error\":null",
			f->frame_size, f->core_spill_mask, f->fp_spill_mask, f->num_stack_maps,
			f->frameless_leaf ? "true" : "false");
	else
		json_null_frame(out, x->frame_err.msg);
	if (x->exits_rc) {
		fputs(",\"exit_sites\":null,\"exit_sites_error\":", out);
		json_fput_string(out, x->exits_err.msg);
		return;
	}
	fputs(",\"exit_sites\":[", out);
	for (uint32_t i = 0; i < x->sites.count; i++)
		fprintf(out, "%s%llu", i ? "," : "",
			(unsigned long long)(x->code_file_offset + x->sites.offsets[i]));
	fputs("],\"exit_sites_error\":null", out);
}

static void print_json(FILE *out, const struct oat_file *o, const struct oat_method *m,
		       const char *sig)
{
	struct oat_method_exits x;

	fputs("{\"type\":\"method\",\"signature\":", out);
	if (m->has_dex)
		json_fput_string(out, sig);
	else
		fputs("null", out);
	if (m->has_dex)
		fprintf(out, ",\"dex_method_idx\":%u", m->method_idx);
	else
		fputs(",\"dex_method_idx\":null", out);
	fprintf(out, ",\"dex_index\":%u,\"class_def_idx\":%u,\"class_method_index\":%u,"
		"\"code_offset\":%u,\"file_offset\":%llu,\"code_size\":%u,\"isa\":\"%s\","
		"\"thumb\":%s,", m->dex_i, m->cdi, m->index_in_class, m->code.code_offset,
		(unsigned long long)m->code.file_offset, m->code.code_size, oat_info(o)->isa,
		m->code.thumb ? "true" : "false");
	if (m->has_dex)
		fprintf(out, "\"access_flags\":%u", m->access_flags);
	else
		fputs("\"access_flags\":null", out);
	fprintf(out, ",\"dedup_group\":%zu,\"dedup_count\":%u", m->dedup_first, m->dedup_n);
	oat_method_exits_get(o, &m->code, &x);
	json_frame_exits(out, &x);
	oat_method_exits_free(&x);
	fputs("}\n", out);
}

static void print_text(FILE *out, const struct oat_method *m, size_t i, const char *sig)
{
	char idx[16] = "-";

	if (m->has_dex)
		snprintf(idx, sizeof(idx), "%u", m->method_idx);
	fprintf(out, "0x%08llx %6u %6s %s", (unsigned long long)m->code.file_offset,
		m->code.code_size, idx, sig);
	if (m->dedup_n > 1)
		fprintf(out, "  (shares code with %u other%s; group #%zu)", m->dedup_n - 1,
			m->dedup_n > 2 ? "s" : "", m->dedup_first == i ? i : m->dedup_first);
	fputc('\n', out);
}

static void header(FILE *out, const struct oat_file *o, const struct oat_method_list *l,
		   bool verbose)
{
	const struct oat_info *in = oat_info(o);
	const char *f = oat_kv_get(o, "compiler-filter");

	fprintf(out, "# %s: oat v%u %s, compiler-filter %s, %zu compiled methods, "
		"oatdata at file offset 0x%llx\n", oat_name(o), in->version, in->isa,
		f ? f : "(none)", l->n, (unsigned long long)in->oatdata_off);
	if (verbose)
		fprintf(out, "# %s\n# %s\n", in->header_layout, in->record_layout);
	if (l->notes[0]) {
		for (const char *p = l->notes; *p;) {
			const char *nl = strchr(p, '\n');
			int n = nl ? (int)(nl - p) : (int)strlen(p);
			fprintf(out, "# %.*s\n", n, p);
			p += n + (nl ? 1 : 0);
		}
	}
	fprintf(out, "# %-8s %6s %6s %s\n", "FILE_OFF", "SIZE", "DEXIDX", "SIGNATURE");
}

/* The oat file, its dex files and its compiled methods, from the command's
 * code cache; with extra dex archives (--dex-file) the dex set and the list
 * are this command's own (*own_ds, *own_l to free), over the cached oat. */
static int open_methods(const struct methods_cmd_opts *opt, const struct oat_file **o,
			struct oat_dexset **ds, const struct oat_method_list **l,
			struct oat_dexset **own_ds, struct oat_method_list *own_l, struct err *err)
{
	struct code_file *f = code_cache_file(opt->code, opt->file);
	int rc;

	if (!f)
		return err_set(err, -ENOMEM, "out of memory");
	if ((rc = code_file_oat(f, o, err)))
		return rc;
	if (!opt->n_dex_files)
		return code_file_dexset(f, ds, err) ?: code_file_methods(f, l, err);
	if ((rc = oat_dexset_new(*o, opt->file, opt->dex_files, opt->n_dex_files, own_ds, err)))
		return rc;
	*ds = *own_ds;
	if ((rc = oat_list_methods(*o, *ds, own_l, err)))
		return rc;
	*l = own_l;
	return 0;
}

int methods_cmd(const struct methods_cmd_opts *opt, FILE *out, struct err *err)
{
	const struct oat_file *o = NULL;
	struct oat_dexset *ds = NULL, *own_ds = NULL;
	const struct oat_method_list *l = NULL;
	struct oat_method_list own_l = { 0 };
	int rc = open_methods(opt, &o, &ds, &l, &own_ds, &own_l, err);

	/* Nothing listable is not "0 compiled methods": say why. */
	if (!rc && l->dex_skipped && l->dex_skipped == oat_dex_count(o)) {
		rc = err_set(err, -ENODATA, "%s: no method can be listed: the dex file%s could "
			     "not be read (oat v%u needs %s to count methods): %s", opt->file,
			     l->dex_skipped > 1 ? "s" : "", oat_info(o)->version,
			     l->dex_skipped > 1 ? "them" : "it", l->first_skip);
	} else if (!rc) {
		if (!opt->json)
			header(out, o, l, opt->verbose);
		for (size_t i = 0; i < l->n; i++) {
			char sig[2048];
			oat_method_signature(ds, &l->v[i], sig, sizeof(sig));
			if (opt->filter && !strstr(sig, opt->filter))
				continue;
			if (opt->json)
				print_json(out, o, &l->v[i], sig);
			else
				print_text(out, &l->v[i], i, sig);
		}
	}
	if (l == &own_l)
		oat_method_list_free(&own_l);
	oat_dexset_free(own_ds);
	return rc;
}

void resolve_json_oat_frame(FILE *out, struct code_cache *code, const char *path,
			    uint64_t file_offset)
{
	struct code_file *f = code_cache_file(code, path);
	const struct oat_file *o;
	struct oat_method_exits x;
	struct err e = { 0 };
	int rc = f ? code_file_oat(f, &o, &e) : err_set(&e, -ENOMEM, "out of memory");

	if (rc || oat_method_exits_in(o, file_offset, &x, &e)) {
		json_null_frame(out, e.msg);
		fputs(",\"exit_sites\":null,\"exit_sites_error\":", out);
		json_fput_string(out, e.msg);
		return;
	}
	json_frame_exits(out, &x);
	oat_method_exits_free(&x);
}

/* A string, or null when s is NULL or empty. */
static void json_fput_or_null(FILE *out, const char *s)
{
	if (s && *s)
		json_fput_string(out, s);
	else
		fputs("null", out);
}

void resolve_json_head(FILE *out, const struct resolve_json_head *h)
{
	fputs("{\"type\":\"resolve\",\"path\":", out);
	json_fput_string(out, h->path);
	fprintf(out, ",\"file_offset\":%llu,\"code_size\":%llu,\"isa\":",
		(unsigned long long)h->file_offset, (unsigned long long)h->code_size);
	json_fput_or_null(out, h->isa);
	fprintf(out, ",\"thumb\":%s,\"java\":%s,\"name\":",
		h->thumb < 0 ? "null" : h->thumb ? "true" : "false", h->java ? "true" : "false");
	json_fput_string(out, h->name);
	fputs(",\"signature\":", out);
	json_fput_or_null(out, h->java ? h->name : NULL);
	fputs(",\"raw_name\":", out);
	json_fput_or_null(out, h->java ? NULL : h->raw_name);
	if (h->is_static < 0)
		fputs(",\"static\":null,\"access_flags\":null", out);
	else
		fprintf(out, ",\"static\":%s,\"access_flags\":%u",
			h->is_static ? "true" : "false", h->access_flags);
}

void resolve_json_tail(FILE *out, const struct resolve_json_tail *t)
{
	fprintf(out, ",\"found_by\":\"%s\",\"searched\":%s,\"left_out\":", t->found_by,
		t->searched ? "true" : "false");
	json_fput_or_null(out, t->left_out);
	fputs(",\"detail\":", out);
	json_fput_or_null(out, t->detail);
	fputs(",\"warning\":", out);
	json_fput_or_null(out, t->warning);
	fputs(",\"notes\":", out);
	json_fput_or_null(out, t->notes);
}

void resolve_json_no_frame(FILE *out)
{
	fputs(",\"frame_size\":null,\"core_spill_mask\":null,\"fp_spill_mask\":null,"
	      "\"num_stack_maps\":null,\"frameless_leaf\":null,\"frame_error\":null", out);
}

void resolve_json_end(FILE *out)
{
	fputs(",\"error\":null}\n", out);
}

void resolve_json_error(FILE *out, const char *msg)
{
	fputs("{\"type\":\"resolve\",\"path\":null,\"file_offset\":null,\"code_size\":null,"
	      "\"isa\":null,\"thumb\":null,\"java\":null,\"name\":null,\"signature\":null,"
	      "\"raw_name\":null,\"static\":null,\"access_flags\":null,\"params\":null,"
	      "\"found_by\":null,\"searched\":null,\"left_out\":null,\"detail\":null,"
	      "\"warning\":null,\"notes\":null", out);
	resolve_json_no_frame(out);
	fputs(",\"exit_sites\":null,\"exit_sites_error\":null,\"error\":", out);
	json_fput_string(out, msg);
	fputs("}\n", out);
}

static void resolve_json(FILE *out, struct code_cache *code, const struct java_resolution *r)
{
	struct resolve_json_head h = {
		.path = r->path, .file_offset = r->file_offset, .code_size = r->code_size,
		.isa = r->isa, .thumb = r->thumb, .java = true, .name = r->signature,
		.is_static = r->flags_known ? r->is_static : -1, .access_flags = r->access_flags,
	};
	struct resolve_json_tail t = {
		.found_by = r->found_by == JAVA_FOUND_OATDUMP ? "oatdump" : "builtin",
		.searched = r->searched, .warning = r->warning, .notes = r->notes,
	};

	resolve_json_head(out, &h);
	fputs(",\"params\":[", out);
	for (uint32_t i = 0; i < r->n_params; i++) {
		if (i)
			fputc(',', out);
		json_fput_string(out, java_resolution_param(r, i));
	}
	fputc(']', out);
	resolve_json_tail(out, &t);
	resolve_json_oat_frame(out, code, r->path, r->file_offset);
	resolve_json_end(out);
}

static void comment_lines(FILE *out, const char *prefix, const char *text)
{
	const char *p = text;

	while (*p) {
		const char *nl = strchr(p, '\n');
		int n = nl ? (int)(nl - p) : (int)strlen(p);
		fprintf(out, "# %s%.*s\n", prefix, n, p);
		p += n + (nl ? 1 : 0);
	}
}

int resolve_cmd(const struct resolve_cmd_opts *opt, FILE *out, struct err *err)
{
	struct java_resolve_opts ro = {
		.method_signature = opt->signature,
		.file_paths = opt->file ? &opt->file : NULL,
		.n_file_paths = opt->file ? 1 : 0,
		.dex_files = opt->dex_files,
		.n_dex_files = opt->n_dex_files,
		.mode = opt->mode,
		.oatdump_path = opt->oatdump_path,
		.oatdump_timeout_ms = opt->oatdump_timeout_ms,
		.search = opt->search,
		.code = opt->code,
	};
	struct java_resolution r;
	int rc = java_resolve(&ro, &r, err);

	if (rc) {
		if (opt->json)
			resolve_json_error(out, err->msg);
		return rc;
	}
	if (opt->json) {
		resolve_json(out, opt->code, &r);
		return 0;
	}
	fprintf(out, "0x%llx %s %s size=%u %s %s\n", (unsigned long long)r.file_offset, r.path,
		r.isa, r.code_size,
		!r.flags_known ? "static?" : r.is_static ? "static" : "instance", r.signature);
	if (r.warning[0])
		comment_lines(out, "warning: ", r.warning);
	if (opt->verbose)
		comment_lines(out, "", r.notes);
	return 0;
}
