/* cmd_match.c — `methods --match PATTERN FILE|--pid N` (every match, with what is
 * left out and why) and `resolve FILE|- PATTERN` (exactly one method): the
 * pattern matcher (plan/pattern.h) made visible before tracing. */
#include "cli/cmd_match.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "plan/exits.h"
#include "plan/pattern.h"
#include "resolve/methods_cmd.h"
#include "vocab/json_out.h"

/* A native match to probe: ,"exit_sites":[file offsets],"exit_sites_error":null, or
 * null and the reason `--exit-probes` would refuse it with (plan/exits.h). */
static void json_native_exits(FILE *out, struct code_cache *c, const struct pattern_match *x)
{
	const struct exit_sites *s;
	uint64_t base;
	struct err e = { 0 };

	if (plan_native_exit_sites(c, x->path, x->file_offset, x->code_size, x->e_machine, &s,
				   &base, &e)) {
		fputs(",\"exit_sites\":null,\"exit_sites_error\":", out);
		json_fput_string(out, e.msg);
		return;
	}
	fputs(",\"exit_sites\":[", out);
	for (uint32_t i = 0; i < s->count; i++)
		fprintf(out, "%s%llu", i ? "," : "",
			(unsigned long long)(base + s->offsets[i]));
	fputs("],\"exit_sites_error\":null", out);
}

static void print_json(FILE *out, struct code_cache *c, const struct pattern_match *x)
{
	fputs("{\"type\":\"method\",\"path\":", out);
	json_fput_string(out, x->path);
	fprintf(out, ",\"file_offset\":%llu,\"code_size\":%llu,\"java\":%s,\"name\":",
		(unsigned long long)x->file_offset, (unsigned long long)x->code_size,
		x->is_java ? "true" : "false");
	json_fput_string(out, x->name);
	if (x->is_java)
		fprintf(out, ",\"static\":%s,\"access_flags\":%u,\"isa\":\"%s\"",
			x->is_static ? "true" : "false", x->access_flags, x->isa);
	else {
		fputs(",\"raw_name\":", out);
		json_fput_string(out, x->raw_name);
		if (x->left_out == MATCH_OK)
			json_native_exits(out, c, x);
	}
	fputs(",\"left_out\":", out);
	if (x->left_out == MATCH_OK)
		fputs("null", out);
	else
		json_fput_string(out, match_left_out_name(x->left_out));
	fputs(",\"detail\":", out);
	if (x->left_out_detail)
		json_fput_string(out, x->left_out_detail);
	else
		fputs("null", out);
	fputs("}\n", out);
}

/* An ELF file's machine as the oat files name ISAs; NULL: another. */
static const char *machine_isa(uint16_t machine)
{
	switch (machine) {
	case EM_AARCH64: return "arm64";
	case EM_X86_64: return "x86_64";
	case EM_ARM: return "arm";
	case EM_386: return "x86";
	case EM_RISCV: return "riscv64";
	default: return NULL;
	}
}

/* `resolve --json` of a pattern's one match: the shape resolve_cmd writes
 * for a signature (resolve/methods_cmd.h). */
static void print_resolve_json(FILE *out, const struct match_cmd_opts *o,
			       struct code_cache *code, const struct pattern_match *x)
{
	struct resolve_json_head h = {
		.path = x->path, .file_offset = x->file_offset, .code_size = x->code_size,
		.isa = x->is_java ? x->isa : machine_isa(x->e_machine), .thumb = -1,
		.java = x->is_java, .name = x->name, .raw_name = x->raw_name,
		.is_static = x->is_java ? x->is_static : -1, .access_flags = x->access_flags,
	};
	struct resolve_json_tail t = {
		.found_by = "pattern", .searched = !o->file,
		.left_out = x->left_out == MATCH_OK ? NULL : match_left_out_name(x->left_out),
		.detail = x->left_out_detail,
	};

	resolve_json_head(out, &h);
	fputs(",\"params\":null", out);
	resolve_json_tail(out, &t);
	if (x->is_java) {
		resolve_json_oat_frame(out, code, x->path, x->file_offset);
	} else {
		resolve_json_no_frame(out);
		if (x->left_out == MATCH_OK)
			json_native_exits(out, code, x);
		else
			fputs(",\"exit_sites\":null,\"exit_sites_error\":null", out);
	}
	resolve_json_end(out);
}

static void print_summary(FILE *out, const struct trace_pattern *p,
			  const struct pattern_matches *m)
{
	fprintf(out, "# pattern '%s': %zu matched in %zu file%s, %zu to probe", pattern_text(p),
		m->n, m->n_files, m->n_files == 1 ? "" : "s", m->by_reason[MATCH_OK]);
	for (int r = 1; r < MATCH_N_REASONS; r++)
		if (m->by_reason[r])
			fprintf(out, "; %zu %s", m->by_reason[r], match_left_out_name(r));
	fputc('\n', out);
	for (size_t i = 0; i < m->n_files; i++)
		fprintf(out, "# %s: %zu matched, %zu to probe\n", m->files[i].path,
			m->files[i].matched, m->files[i].ok);
	fprintf(out, "# %-8s %6s %s\n", "FILE_OFF", "SIZE", "NAME  [left out: why]");
}

static void print_text(FILE *out, const struct pattern_match *x)
{
	if (x->left_out == MATCH_NOT_COMPILED || x->left_out == MATCH_ABSTRACT_OR_NATIVE)
		fprintf(out, "%10s %6s %s", "-", "-", x->name);
	else
		fprintf(out, "0x%08llx %6llu %s", (unsigned long long)x->file_offset,
			(unsigned long long)x->code_size, x->name);
	if (x->left_out != MATCH_OK)
		fprintf(out, "  [left out: %s%s%s]", match_left_out_name(x->left_out),
			x->left_out_detail ? ": " : "",
			x->left_out_detail ? x->left_out_detail : "");
	fputc('\n', out);
}

static int match(const struct match_cmd_opts *o, const struct trace_pattern *p,
		 struct pattern_matches *m, struct err *err)
{
	struct oat_search_opts so = { .pid = o->pid, .cache_dir = o->cache_dir,
				      .no_cache = o->no_cache };

	if (o->file)
		return pattern_match_file(p, o->file, o->max, m, err);
	return pattern_match_search(p, &so, o->max, m, err);
}

int methods_match_cmd(const struct match_cmd_opts *o, FILE *out, struct err *err)
{
	struct trace_pattern *p;
	struct pattern_matches m = { .code = o->code };
	int rc;

	if ((rc = pattern_parse(o->pattern, &p, err)))
		return rc;
	if (!(rc = match(o, p, &m, err)) && !m.n)
		rc = pattern_explain_no_match(p, &m, err);
	if (!rc) {
		struct code_cache *c = m.code;   /* the files as the matching read them */
		if (!o->json)
			print_summary(out, p, &m);
		for (size_t i = 0; i < m.n; i++) {
			if (o->json)
				print_json(out, c, &m.v[i]);
			else
				print_text(out, &m.v[i]);
		}
	}
	pattern_matches_free(&m);
	pattern_free(p);
	return rc;
}

int resolve_pattern_cmd(const struct match_cmd_opts *o, FILE *out, struct err *err)
{
	struct trace_pattern *p;
	struct pattern_matches m = { .code = o->code };
	size_t i = 0;
	int rc;

	if ((rc = pattern_parse(o->pattern, &p, err)))
		return rc;
	if (!(rc = match(o, p, &m, err)) && !(rc = pattern_single(p, &m, &i, err))) {
		const struct pattern_match *x = &m.v[i];
		if (o->json)
			print_resolve_json(out, o, m.code, x);
		else if (x->is_java)
			fprintf(out, "0x%llx %s %s size=%llu %s %s\n",
				(unsigned long long)x->file_offset, x->path, x->isa,
				(unsigned long long)x->code_size,
				x->is_static ? "static" : "instance", x->name);
		else
			fprintf(out, "0x%llx %s size=%llu %s\n", (unsigned long long)x->file_offset,
				x->path, (unsigned long long)x->code_size, x->name);
		if (!o->json && x->left_out != MATCH_OK)
			fprintf(out, "# warning: %s%s%s\n", match_left_out_name(x->left_out),
				x->left_out_detail ? ": " : "",
				x->left_out_detail ? x->left_out_detail : "");
	}
	if (rc && o->json)
		resolve_json_error(out, err->msg);
	pattern_matches_free(&m);
	pattern_free(p);
	return rc;
}

/* A '[' that opens a set: '[]' is an array type, literal in patterns too. */
static bool has_bracket_set(const char *s)
{
	for (const char *b = strchr(s, '['); b; b = strchr(b + 1, '['))
		if (b[1] != ']')
			return true;
	return false;
}

bool resolve_arg_is_pattern(const char *s)
{
	const char *open = strchr(s, '(');
	size_t head = open ? (size_t)(open - s) : strlen(s);

	if (strpbrk(s, "*?") || has_bracket_set(s) || memchr(s, ':', head))
		return true;
	/* A config method_signature has a return type before the name. */
	return !memchr(s, ' ', head);
}
