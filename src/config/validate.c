/* validate.c — the checks of validate.h, one function per concern; each
 * appends problems and carries on, so one run reports everything. */
#include "config/validate.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "config/schema.h"
#include "config/signature.h"

/* Java arguments the call_detail record holds: x0..x9 with argument i in
 * x(2+i) (reference §2.5, §3.1). */
#define DETAIL_MAX_ARGS 8
/* A native probe reads the C ABI argument registers (x0-x5 / rdi..r9). */
#define NATIVE_MAX_ARGS 6
/* The binder filter map: a 128-byte NUL-terminated key, 10 codes per value (§3.5). */
#define BINDER_KEY_MAX 127
#define BINDER_MAX_CODES 10
#define BINDER_PROGRAM "prog_Binder_uprobe_exec_transact_internal"
/* Duplicate checks compare with every earlier entry; past this many the
 * config is far beyond what the filter map holds, so they stop (bounding
 * the cost on hostile input). */
#define DUP_SCAN_MAX 512

struct vctx {
	const struct uprobestats_config *cfg;
	const struct config_validate_opts *opts;
	struct config_problems *out;
	int rc;                 /* -ENOMEM, sticky */
	size_t task, probe;     /* where we are (SIZE_MAX: not inside one) */
};

static void add(struct vctx *v, const struct src_loc *loc, enum config_problem_kind kind,
		enum config_severity sev, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void add(struct vctx *v, const struct src_loc *loc, enum config_problem_kind kind,
		enum config_severity sev, const char *fmt, ...)
{
	char msg[ERR_MSG_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (config_problem_add(v->cfg, v->out, loc, kind, sev, v->task, v->probe, "%s", msg))
		v->rc = -ENOMEM;
}

/* A field's own location when the parser recorded one, else its message's. */
static const struct src_loc *at(const struct src_loc *field, const struct src_loc *msg)
{
	return field && field->kind != SRC_LOC_NONE ? field : msg;
}

static const struct src_loc *elem_loc(const struct src_loc *locs, size_t i,
				      const struct src_loc *msg)
{
	return locs ? at(&locs[i], msg) : msg;
}

static bool empty(const char *s)
{
	return s && !*s;
}

static bool given(const char *s)
{
	return s && *s;
}

/* ---- task-level checks ---- */

static void check_target(struct vctx *v, const struct task_config *t)
{
	const struct src_loc *sel = at(&t->target_process_selection_loc, &t->loc);
	const char *name = t->target_process_name;
	int32_t tps = t->has_target_process_selection ? t->target_process_selection : TPS_UNKNOWN;

	if (empty(name))
		add(v, at(&t->target_process_name_loc, &t->loc), CP_TARGET, CS_ERROR,
		    "target_process_name is empty");
	if (!schema_enum_name(&schema_enum_tps, tps)) {
		add(v, sel, CP_ENUM, CS_ERROR, "target_process_selection %d is not a "
		    "TargetProcessSelection value (0-3)", tps);
		return;
	}
	if (tps == TPS_ANY_APP_PROCESS_ON_START && name)
		add(v, sel, CP_TARGET, CS_ERROR, "target_process_selection "
		    "ANY_APP_PROCESS_ON_START watches every app start, but "
		    "target_process_name \"%s\" names one process: drop one of the two", name);
	else if (tps == TPS_SPECIFIC_APP_PROCESS_ON_START && !name)
		add(v, sel, CP_TARGET, CS_ERROR, "target_process_selection "
		    "SPECIFIC_APP_PROCESS_ON_START needs target_process_name (the app to wait "
		    "for)");
	else if (tps == TPS_SPECIFIC_PROCESS_NAME && !name && !v->opts->pid_given)
		add(v, sel, CP_TARGET, CS_ERROR, "target_process_selection SPECIFIC_PROCESS_NAME "
		    "needs target_process_name (or the pid on the command line)");
	else if (tps == TPS_UNKNOWN && !name && !v->opts->pid_given)
		/* Upstream needs a process; standalone, no name means every process. */
		add(v, &t->loc, CP_TARGET, CS_WARNING, "no target_process_name: every process "
		    "that runs the probed code is traced");
}

static void check_duration(struct vctx *v, const struct task_config *t)
{
	if (t->has_duration_seconds && t->duration_seconds <= 0)
		add(v, at(&t->duration_seconds_loc, &t->loc), CP_DURATION, CS_ERROR,
		    "duration_seconds must be > 0, found %d", t->duration_seconds);
}

static void check_atom_id(struct vctx *v, bool has, int64_t id, const struct src_loc *loc,
			  const char *what)
{
	if (!has)
		add(v, loc, CP_ATOM, CS_ERROR, "%s has no atom_id", what);
	else if (id <= 0 || id > INT32_MAX)
		add(v, loc, CP_ATOM, CS_ERROR, "atom_id %lld is not a valid atom id "
		    "(1..2147483647)", (long long)id);
}

static void check_statsd(struct vctx *v, const struct task_config *t)
{
	const struct statsd_logging_config *s = &t->statsd;
	const struct src_loc *sloc = at(&s->loc, &t->loc);

	if (!t->has_statsd_logging_config)
		return;
	check_atom_id(v, s->has_atom_id, s->atom_id, at(&s->atom_id_loc, sloc),
		      "statsd_logging_config");
	for (size_t k = 0; k < s->primitive_argument_positions.n; k++)
		if (s->primitive_argument_positions.v[k] < 0)
			add(v, elem_loc(s->primitive_argument_positions.loc, k, sloc),
			    CP_ARG_POSITION, CS_ERROR, "argument position %d is negative",
			    s->primitive_argument_positions.v[k]);
}

static void check_map_name(struct vctx *v, const char *name, const struct src_loc *loc,
			   const char *field)
{
	const struct config_catalog *c = v->opts->catalog;

	if (empty(name))
		add(v, loc, CP_MAP, CS_ERROR, "%s is empty", field);
	else if (name && c && c->has_map && !c->has_map(name, c->ctx))
		add(v, loc, CP_MAP, CS_ERROR, "unknown map \"%s\" in %s: no embedded program "
		    "writes it", name, field);
}

static void check_task_maps(struct vctx *v, const struct task_config *t)
{
	for (size_t k = 0; k < t->bpf_maps.n; k++)
		check_map_name(v, t->bpf_maps.v[k], elem_loc(t->bpf_maps.loc, k, &t->loc),
			       "bpf_maps");
}

/* ---- probe-level checks ---- */

static void check_program(struct vctx *v, const struct probe_config *p)
{
	const struct config_catalog *c = v->opts->catalog;
	const struct src_loc *loc = at(&p->bpf_name_loc, &p->loc);
	const char *hint;

	if (!given(p->bpf_name)) {
		add(v, loc, CP_PROGRAM, CS_ERROR, "probe has no bpf_name (the program to attach)");
		return;
	}
	if (!c || !c->has_program || c->has_program(p->bpf_name, c->ctx))
		return;
	hint = c->known_programs_hint ? c->known_programs_hint(c->ctx) : NULL;
	add(v, loc, CP_PROGRAM, CS_ERROR, "unknown bpf_name \"%s\"%s%s", p->bpf_name,
	    hint ? "; embedded programs: " : "", hint ? hint : "");
}

static bool span_eq(struct span a, const char *s, size_t n)
{
	return a.len == n && memcmp(a.p, s, n) == 0;
}

/* method_signature and fqcn + method_name (+ parameters) must name one method. */
static void check_same_method(struct vctx *v, const struct probe_config *p,
			      const struct method_sig *sig, const struct src_loc *loc)
{
	struct span cls = sig_class(sig);
	size_t cl = strlen(p->fully_qualified_class_name), ml = strlen(p->method_name);

	if (sig->native) {
		add(v, loc, CP_METHOD, CS_ERROR, "method_signature \"%s\" is a native symbol but "
		    "fully_qualified_class_name names a Java class", p->method_signature);
		return;
	}
	if (!span_eq(cls, p->fully_qualified_class_name, cl) ||
	    sig->name.len != cl + 1 + ml || memcmp(sig->name.p + cl + 1, p->method_name, ml)) {
		add(v, loc, CP_METHOD, CS_ERROR, "method_signature names %.*s but "
		    "fully_qualified_class_name + method_name name %s.%s", (int)sig->name.len,
		    sig->name.p, p->fully_qualified_class_name, p->method_name);
		return;
	}
	if (!p->has_fully_qualified_parameters && !p->fully_qualified_parameters.n)
		return;
	bool same = sig->n_params == p->fully_qualified_parameters.n;
	for (size_t k = 0; same && k < sig->n_params; k++)
		same = span_eq(sig->params[k], p->fully_qualified_parameters.v[k],
			       strlen(p->fully_qualified_parameters.v[k]));
	if (!same)
		add(v, loc, CP_METHOD, CS_ERROR, "method_signature and fully_qualified_parameters "
		    "list different parameters");
}

static void check_strings(struct vctx *v, const struct str_list *l, const char *field,
			  const struct src_loc *msg)
{
	for (size_t k = 0; k < l->n; k++)
		if (!*l->v[k])
			add(v, elem_loc(l->loc, k, msg), CP_METHOD, CS_ERROR, "%s[%zu] is empty",
			    field, k);
}

static void check_identity(struct vctx *v, const struct probe_config *p)
{
	const struct src_loc *sloc = at(&p->method_signature_loc, &p->loc);
	bool cls = given(p->fully_qualified_class_name), meth = given(p->method_name);
	struct method_sig sig;
	const char *why = "";

	if (empty(p->method_signature) || empty(p->fully_qualified_class_name) ||
	    empty(p->method_name))
		add(v, &p->loc, CP_METHOD, CS_ERROR, "%s is empty",
		    empty(p->method_signature) ? "method_signature" :
		    empty(p->method_name) ? "method_name" : "fully_qualified_class_name");
	check_strings(v, &p->file_paths, "file_paths", &p->loc);
	check_strings(v, &p->fully_qualified_parameters, "fully_qualified_parameters", &p->loc);
	if (cls != meth)
		add(v, at(cls ? &p->fully_qualified_class_name_loc : &p->method_name_loc, &p->loc),
		    CP_METHOD, CS_ERROR, "%s without %s", cls ? "fully_qualified_class_name" :
		    "method_name", cls ? "method_name" : "fully_qualified_class_name");
	if (!given(p->method_signature)) {
		if (!cls && !meth)
			add(v, &p->loc, CP_METHOD, CS_ERROR, "no method identity: set "
			    "fully_qualified_class_name + method_name, or method_signature + "
			    "file_paths");
		return;
	}
	if (sig_parse(p->method_signature, &sig, &why)) {
		add(v, sloc, CP_METHOD, CS_ERROR, "method_signature \"%s\" is neither a Java "
		    "signature (\"void a.b.C.m(int)\") nor an ELF symbol: %s",
		    p->method_signature, why);
		return;
	}
	if (!cls && !p->file_paths.n)
		add(v, sloc, CP_METHOD, CS_ERROR, "method_signature needs file_paths (the "
		    "oat/odex/ELF files to look it up in)");
	if (cls && meth)
		check_same_method(v, p, &sig, sloc);
}

/* The count of config_probe_param_count, given the parsed signature (NULL
 * when there is none or it does not parse). */
static int param_count(const struct probe_config *p, const struct method_sig *sig)
{
	if (p->has_fully_qualified_parameters || p->fully_qualified_parameters.n)
		return (int)p->fully_qualified_parameters.n;
	if (sig)
		return sig->native ? -1 : (int)sig->n_params;
	/* The ART API path with no parameter list means a method without parameters. */
	if (given(p->fully_qualified_class_name) && given(p->method_name))
		return 0;
	return -2;
}

int config_probe_param_count(const struct probe_config *p)
{
	struct method_sig sig;
	bool ok = given(p->method_signature) && sig_parse(p->method_signature, &sig, NULL) == 0;

	return param_count(p, ok ? &sig : NULL);
}

/* A probe's parameters, worked out once: the count (as
 * config_probe_param_count) and the signature the types come from. */
struct params {
	int count;
	bool has_sig;
	struct method_sig sig;
};

static void probe_params(const struct probe_config *p, struct params *pa)
{
	pa->has_sig = given(p->method_signature) &&
		      sig_parse(p->method_signature, &pa->sig, NULL) == 0;
	pa->count = param_count(p, pa->has_sig ? &pa->sig : NULL);
}

/* The type of Java parameter k, from the list or the signature. */
static struct span param_type(const struct probe_config *p, const struct params *pa, size_t k)
{
	if (k < p->fully_qualified_parameters.n)
		return (struct span){ p->fully_qualified_parameters.v[k],
				      strlen(p->fully_qualified_parameters.v[k]) };
	if (pa->has_sig && k < pa->sig.n_params)
		return pa->sig.params[k];
	return (struct span){ "", 0 };
}

static const char *method_label(const struct probe_config *p, char *buf, size_t size)
{
	if (given(p->fully_qualified_class_name) && given(p->method_name))
		snprintf(buf, size, "%s.%s", p->fully_qualified_class_name, p->method_name);
	else
		snprintf(buf, size, "%s", p->method_signature ? p->method_signature : "the method");
	return buf;
}

static bool is_string_type(struct span type)
{
	static const char name[] = "java.lang.String";
	return type.len == sizeof(name) - 1 && !memcmp(type.p, name, type.len);
}

static void check_position(struct vctx *v, const struct probe_config *p,
			   const struct params *pa, int32_t pos, const struct src_loc *loc)
{
	int count = pa->count;
	char label[256];
	struct span type;

	if (pos < 0)
		return;   /* reported once per task by check_statsd */
	if (count == -1) {
		if (pos >= NATIVE_MAX_ARGS)
			add(v, loc, CP_ARG_POSITION, CS_ERROR, "argument position %d: a native "
			    "probe can read arguments 0..%d (the C ABI argument registers)", pos,
			    NATIVE_MAX_ARGS - 1);
		return;
	}
	if (pos >= count) {
		add(v, loc, CP_ARG_POSITION, CS_ERROR, "argument position %d does not exist: %s "
		    "has %d parameter%s", pos, method_label(p, label, sizeof(label)), count,
		    count == 1 ? "" : "s");
		return;
	}
	if (pos >= DETAIL_MAX_ARGS) {
		add(v, loc, CP_ARG_POSITION, CS_ERROR, "argument position %d is past the %d "
		    "argument registers the call_detail record holds (x2..x9)", pos,
		    DETAIL_MAX_ARGS);
		return;
	}
	type = param_type(p, pa, (size_t)pos);
	if (sig_is_floating(type.p, type.len))
		add(v, loc, CP_ARG_POSITION, CS_ERROR, "argument position %d is a %.*s, passed in "
		    "a floating-point register that the programs do not record", pos,
		    (int)type.len, type.p);
	else if (is_string_type(type) && p->bpf_name && strstr(p->bpf_name, "_call_args"))
		return;   /* call_args records String arguments as text */
	else if (!sig_is_primitive(type.p, type.len))
		add(v, loc, CP_ARG_POSITION, CS_ERROR, "argument position %d is %.*s, not a "
		    "primitive: the atom would get an object reference%s", pos, (int)type.len,
		    type.p, is_string_type(type) ? " (prog_Uprobestats_uprobe_call_args records "
		    "Strings as text)" : "");
}

/* The programs whose records hold argument registers: GenericInstrumentation's
 * call_detail and its early name `call`, and our call_args. */
static bool records_arguments(const char *bpf_name)
{
	size_t n = strlen(bpf_name);
	return strstr(bpf_name, "_call_detail") || strstr(bpf_name, "_call_args") ||
	       (n >= 12 && strcmp(bpf_name + n - 12, "_uprobe_call") == 0);
}

static void check_positions(struct vctx *v, const struct task_config *t,
			    const struct probe_config *p)
{
	const struct i32_list *pos = &t->statsd.primitive_argument_positions;
	const struct src_loc *sloc = at(&t->statsd.loc, &t->loc);
	struct params pa;

	if (!t->has_statsd_logging_config || !pos->n)
		return;
	probe_params(p, &pa);
	/* Only the argument-recording programs use positions (upstream's
	 * call_detail; the timestamp and return programs record none, §3.1), so
	 * a task mixing programs gets a note, not an error, for the others. */
	if (p->bpf_name && !strncmp(p->bpf_name, "prog_", 5) && !records_arguments(p->bpf_name)) {
		add(v, sloc, CP_ARG_POSITION, CS_WARNING, "primitive_argument_positions are "
		    "ignored by %s: it records no arguments", p->bpf_name);
		return;
	}
	if (pa.count == -2)
		return;   /* the identity problem is reported already */
	for (size_t k = 0; k < pos->n; k++)
		check_position(v, p, &pa, pos->v[k], elem_loc(pos->loc, k, sloc));
}

/* ---- binder transaction filters (reference §5.4) ---- */

static void check_binder_method(struct vctx *v, const struct binder_filter *f, size_t m)
{
	const struct binder_method_config *mc = &f->methods[m];
	const struct src_loc *loc = at(&mc->loc, &f->loc);

	if (!mc->has_method_id || mc->method_id <= 0)
		add(v, at(&mc->method_id_loc, loc), CP_BINDER, CS_ERROR,
		    "method_configs[%zu] needs a method_id > 0 (the transaction code; 0 cannot "
		    "be filtered)", m);
	for (size_t k = 0; k < m && m < DUP_SCAN_MAX && mc->has_method_id; k++)
		if (f->methods[k].has_method_id && f->methods[k].method_id == mc->method_id) {
			add(v, at(&mc->method_id_loc, loc), CP_BINDER, CS_ERROR, "method_id %lld "
			    "appears twice for %s", (long long)mc->method_id,
			    f->interface_name ? f->interface_name : "this interface");
			break;
		}
	if (!mc->has_event_service_config && !mc->has_atom_config)
		add(v, loc, CP_BINDER, CS_ERROR, "method_configs[%zu] needs event_service_config "
		    "or atom_config (what to do with a matching transaction)", m);
	if (!mc->has_atom_config)
		return;
	check_atom_id(v, mc->has_atom_id, mc->atom_id, at(&mc->atom_id_loc, loc), "atom_config");
	for (size_t k = 0; k < mc->atom_field_positions.n; k++) {
		int32_t fp = mc->atom_field_positions.v[k];
		const struct src_loc *fl = elem_loc(mc->atom_field_positions.loc, k, loc);
		if (!schema_enum_name(&schema_enum_atom_field, fp))
			add(v, fl, CP_ENUM, CS_ERROR, "atom_field_positions value %d is not an "
			    "AtomFieldPosition (0-4)", fp);
		else if (fp == ATOM_FIELD_UNKNOWN)
			add(v, fl, CP_BINDER, CS_ERROR, "atom_field_positions lists UNKNOWN, "
			    "which is no field");
	}
}

static void check_binder_filter(struct vctx *v, const struct probe_config *p, size_t i)
{
	const struct binder_filter *f = &p->binder_filters[i];
	const struct src_loc *loc = at(&f->loc, &p->loc);
	const struct src_loc *iloc = at(&f->interface_name_loc, loc);

	if (!given(f->interface_name))
		add(v, loc, CP_BINDER, CS_ERROR, "binder_transaction_filters[%zu] has no "
		    "interface_name", i);
	else if (strlen(f->interface_name) > BINDER_KEY_MAX)
		add(v, iloc, CP_BINDER, CS_ERROR, "interface_name is %zu bytes; the BPF filter key "
		    "holds at most %d", strlen(f->interface_name), BINDER_KEY_MAX);
	for (size_t k = 0; k < i && i < DUP_SCAN_MAX && given(f->interface_name); k++)
		if (p->binder_filters[k].interface_name &&
		    !strcmp(p->binder_filters[k].interface_name, f->interface_name)) {
			add(v, iloc, CP_BINDER, CS_ERROR, "interface \"%s\" has two filters",
			    f->interface_name);
			break;
		}
	if (!f->n_methods && !f->method_ids.n)
		add(v, loc, CP_BINDER, CS_ERROR, "binder_transaction_filters[%zu] has no "
		    "method_configs (the transaction codes to report)", i);
	else if (f->method_ids.n)
		add(v, loc, CP_BINDER, CS_WARNING, "method_ids is deprecated upstream; use "
		    "method_configs { method_id: N atom_config { ... } }");
	if (f->n_methods + f->method_ids.n > BINDER_MAX_CODES)
		add(v, loc, CP_BINDER, CS_ERROR, "%zu transaction codes for one interface; the BPF "
		    "filter holds at most %d", f->n_methods + f->method_ids.n, BINDER_MAX_CODES);
	for (size_t m = 0; m < f->n_methods; m++)
		check_binder_method(v, f, m);
}

static void check_binder(struct vctx *v, const struct probe_config *p)
{
	bool binder_prog = p->bpf_name && !strcmp(p->bpf_name, BINDER_PROGRAM);

	if (p->n_binder_filters && !binder_prog)
		add(v, at(&p->bpf_name_loc, &p->loc), CP_BINDER, CS_ERROR,
		    "binder_transaction_filters only apply to %s, not %s", BINDER_PROGRAM,
		    p->bpf_name ? p->bpf_name : "a probe without bpf_name");
	else if (binder_prog && !p->n_binder_filters)
		add(v, at(&p->bpf_name_loc, &p->loc), CP_BINDER, CS_ERROR,
		    "%s needs at least one binder_transaction_filters entry", BINDER_PROGRAM);
	for (size_t i = 0; i < p->n_binder_filters; i++)
		check_binder_filter(v, p, i);
}

static void check_probe(struct vctx *v, const struct task_config *t, size_t j)
{
	const struct probe_config *p = &t->probes[j];

	v->probe = j;
	check_program(v, p);
	if (p->bpf_map)
		check_map_name(v, p->bpf_map, at(&p->bpf_map_loc, &p->loc), "bpf_map");
	check_identity(v, p);
	check_positions(v, t, p);
	check_binder(v, p);
	v->probe = SIZE_MAX;
}

static void check_task(struct vctx *v, size_t i)
{
	const struct task_config *t = &v->cfg->tasks[i];

	v->task = i;
	if (!t->n_probes)
		add(v, &t->loc, CP_NO_TASKS, CS_ERROR, "task has no probe_configs");
	check_target(v, t);
	check_duration(v, t);
	check_statsd(v, t);
	check_task_maps(v, t);
	for (size_t j = 0; j < t->n_probes; j++)
		check_probe(v, t, j);
	v->task = SIZE_MAX;
}

int config_validate(const struct uprobestats_config *cfg,
		    const struct config_validate_opts *opts, struct config_problems *out)
{
	static const struct config_validate_opts defaults = { 0 };
	struct vctx v = { cfg, opts ? opts : &defaults, out, 0, SIZE_MAX, SIZE_MAX };
	size_t before = out->n_errors;

	if (!cfg->n_tasks)
		add(&v, NULL, CP_NO_TASKS, CS_ERROR, "the config has no tasks");
	for (size_t i = 0; i < cfg->n_tasks; i++)
		check_task(&v, i);
	return v.rc ? v.rc : (int)(out->n_errors - before);
}
