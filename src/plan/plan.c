#include "plan/plan.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code/codecache.h"
#include "code/codefile.h"
#include "common/zip_path.h"
#include "config/schema.h"
#include "formats/elf.h"
#include "plan/exits.h"
#include "plan/method_key.h"
#include "records.h"
#include "resolve/java_resolve.h"
#include "resolve/native.h"
#include "sys/proc.h"
#include "sys/proc_path.h"

const char *resolve_how_name(enum resolve_how how)
{
	switch (how) {
	case RESOLVED_ELF_SYMBOL: return "elf-symbol";
	case RESOLVED_OAT_BUILTIN: return "oat-builtin";
	case RESOLVED_OATDUMP: return "oatdump";
	}
	return "?";
}

int plan_arg_register(enum arg_abi abi, int32_t pos)
{
	int reg;

	if (pos < 0)
		return -1;
	switch (abi) {
	case ARG_ABI_ART_INSTANCE: reg = pos + 2; break; /* ArtMethod*, this */
	case ARG_ABI_ART_STATIC: reg = pos + 1; break;   /* ArtMethod* */
	default: reg = pos; break;
	}
	return reg < 10 ? reg : -1;
}

const char *arg_abi_name(enum arg_abi abi)
{
	switch (abi) {
	case ARG_ABI_NATIVE: return "native";
	case ARG_ABI_ART_INSTANCE: return "art-instance";
	case ARG_ABI_ART_STATIC: return "art-static";
	}
	return "?";
}

struct build_state {
	const struct plan_opts *opts;
	struct native_cache *native;  /* ELF files opened and indexed once per build */
	struct err *err;
	int n_problems;
	pid_t mapped_pid;             /* check_mapped's last answer */
	char mapped_path[PATH_MAX];
	int mapped_rc;
};

/* Records a problem: with a problem callback it is reported and building
 * continues, otherwise it becomes the error. */
static int problem(struct build_state *st, struct err *e)
{
	st->n_problems++;
	if (st->opts->problem) {
		st->opts->problem(st->opts->problem_ctx, e->msg);
		if (st->n_problems == 1 && st->err != e)
			*st->err = *e;
		return 0;
	}
	if (st->err != e)
		*st->err = *e;
	return e->code ? e->code : -EINVAL;
}

/* A Java method is named by class + method, or by a signature with a
 * parameter list ("void a.B.m(int)"); anything else is an ELF symbol. */
static bool is_java_probe(const struct probe_config *pc)
{
	return (pc->fully_qualified_class_name && *pc->fully_qualified_class_name) ||
	       (pc->method_signature && strchr(pc->method_signature, '(') &&
		strchr(pc->method_signature, ' '));
}

/* file_paths name files as the target process sees them (its root, its mounts:
 * a chroot, an /apex bind mount): OUT names for us the file PID sees as PATH
 * (sys/proc_path.h), or is PATH. */
static void path_as_seen(const struct plan_opts *po, pid_t pid, const char *path, char *out,
			 size_t size)
{
	if (po->root && po->root[0] && path[0] == '/')
		snprintf(out, size, "%s%s", po->root, path);
	else if (proc_path_resolve(po->proc_dir ? po->proc_dir : "/proc", pid, path, out, size))
		snprintf(out, size, "%s", path);
}

static int resolve_native(struct plan_probe *p, const struct plan_opts *po, pid_t pid,
			  struct native_cache *nc, struct err *err)
{
	const struct str_list *files = &p->cfg->file_paths;
	const char *method = p->cfg->method_signature;
	struct native_location loc;
	struct err first = { 0 };

	if (!method || !*method)
		return err_set(err, -EINVAL,
			       "probe %s: no method_signature (ELF symbol) to look up",
			       p->program_name);
	if (files->n == 0)
		return err_set(err, -EINVAL, "probe %s: a native symbol ('%s') needs file_paths "
			       "naming the ELF file", p->program_name, method);
	/* file_paths in order, as upstream: the first that resolves wins. */
	for (size_t i = 0; i < files->n; i++) {
		struct err e = { 0 };
		char path[sizeof(p->path)];
		path_as_seen(po, pid, files->v[i], path, sizeof(path));
		if (native_resolve(nc, path, method,
				   po->unsafe_any_symbol ? NATIVE_UNSAFE_ANY_SYMBOL : 0, &loc,
				   &e) == 0) {
			snprintf(p->path, sizeof(p->path), "%s", path);
			p->offset = loc.offset;
			p->code_size = loc.size;
			p->machine = loc.machine;
			p->how = RESOLVED_ELF_SYMBOL;
			p->abi = ARG_ABI_NATIVE;
			memset(p->string_reg, 0xff, sizeof(p->string_reg));
			memset(p->string_pos, 0xff, sizeof(p->string_pos));
			snprintf(p->note, sizeof(p->note), "symbol %s at 0x%llx in %s", method,
				 (unsigned long long)loc.vaddr,
				 loc.from_dynsym ? ".dynsym" : ".symtab");
			return 0;
		}
		if (i == 0)
			first = e;
	}
	if (files->n > 1)
		return err_set(err, first.code, "%s (and %zu more file_paths failed)", first.msg,
			       files->n - 1);
	*err = first;
	return first.code;
}

/* Registers an argument can be read from in BPF: x0..x7, rdi..r9. */
static int arg_regs_for(uint16_t machine)
{
	return machine == EM_X86_64 ? 6 : 8;
}

/* call_args: which configured positions are java.lang.String, and where. */
static int plan_string_args(struct plan_probe *p, const struct java_resolution *r,
			    struct err *err)
{
	const struct i32_list *pos = &p->task_cfg->statsd.primitive_argument_positions;
	size_t k = 0;

	memset(p->string_reg, 0xff, sizeof(p->string_reg));
	memset(p->string_pos, 0xff, sizeof(p->string_pos));
	if (!p->task_cfg->has_statsd_logging_config || strcmp(p->prog->name, "call_args"))
		return 0;
	for (size_t i = 0; i < pos->n; i++) {
		const char *desc = pos->v[i] >= 0 ? java_resolution_param(r, (uint32_t)pos->v[i])
						  : NULL;
		int reg = plan_arg_register(p->abi, pos->v[i]);
		if (!desc || strcmp(desc, "Ljava/lang/String;"))
			continue;
		if (reg < 0 || reg >= arg_regs_for(p->machine))
			return err_set(err, -ENOTSUP, "probe %s: String argument %d is passed on "
				       "the stack; call_args reads Strings from registers only",
				       p->program_name, pos->v[i]);
		if (k == sizeof(p->string_reg))
			return err_set(err, -ENOTSUP, "probe %s: more than %zu String arguments",
				       p->program_name, sizeof(p->string_reg));
		p->string_reg[k] = (uint8_t)reg;
		p->string_pos[k++] = (uint8_t)pos->v[i];
	}
	return 0;
}

/* The Java file_paths as PID sees them (path_as_seen): one block, free() it; NULL when
 * out of memory. */
static const char **java_paths_as_seen(const struct str_list *files,
				       const struct plan_opts *po, pid_t pid)
{
	const char **v = calloc(1, files->n * (sizeof(*v) + PATH_MAX) + 1);
	char *buf = (char *)(v + files->n);

	for (size_t i = 0; v && i < files->n; i++, buf += PATH_MAX) {
		path_as_seen(po, pid, files->v[i], buf, PATH_MAX);
		v[i] = buf;
	}
	return v;
}

static int resolve_java(struct plan_probe *p, const struct plan_opts *po, pid_t pid,
			struct native_cache *nc, struct err *err)
{
	const struct probe_config *pc = p->cfg;
	const char **file_paths = java_paths_as_seen(&pc->file_paths, po, pid);
	struct java_resolve_opts jo = {
		.method_signature = pc->fully_qualified_class_name ? NULL : pc->method_signature,
		.class_name = pc->fully_qualified_class_name,
		.method_name = pc->method_name,
		.params = (const char *const *)pc->fully_qualified_parameters.v,
		.n_params = pc->fully_qualified_parameters.n,
		.params_given = pc->has_fully_qualified_parameters,
		.file_paths = file_paths,
		.n_file_paths = pc->file_paths.n,
		.mode = (enum java_resolver_mode)po->java_mode,
		.oatdump_path = po->oatdump_path,
		.code = po->code,
		.search = {
			.pid = pid > 0 ? pid : 0,
			.proc_dir = po->proc_dir,
			.roots = po->search_roots,
			.n_roots = po->n_search_roots,
			.isa = po->isa,
			.cache_dir = po->cache_dir,
			.no_cache = po->no_cache,
		},
	};
	struct java_resolution *r = file_paths ? calloc(1, sizeof(*r)) : NULL;
	int rc;

	if (!r) {
		free(file_paths);
		return err_set(err, -ENOMEM, "out of memory");
	}
	rc = java_resolve(&jo, r, err);
	free(file_paths);
	if (rc < 0) {
		free(r);
		return err_prefix(err, "probe %s", p->program_name);
	}
	if (r->thumb) {
		rc = err_set(err, -ENOTSUP, "probe %s: %s +0x%llx is arm32 Thumb code, which the "
			     "kernel cannot uprobe", p->program_name, r->path,
			     (unsigned long long)r->file_offset);
		free(r);
		return rc;
	}
	/* Whatever found it (our reader or oatdump's text), the breakpoint goes
	 * only on code. */
	if ((rc = native_check_code_offset(nc, r->path, r->file_offset, err)) < 0) {
		free(r);
		return err_prefix(err, "probe %s", p->program_name);
	}
	snprintf(p->path, sizeof(p->path), "%s", r->path);
	p->offset = r->file_offset;
	p->code_size = r->code_size;
	p->java = true;
	p->machine = r->e_machine;
	p->how = r->found_by == JAVA_FOUND_OATDUMP ? RESOLVED_OATDUMP : RESOLVED_OAT_BUILTIN;
	/* Upstream assumes instance methods; the dex access flags say which. */
	p->abi = r->flags_known && r->is_static ? ARG_ABI_ART_STATIC : ARG_ABI_ART_INSTANCE;
	snprintf(p->note, sizeof(p->note), "%s, %s method%s (%s)%s%s", r->signature,
		 r->is_static ? "static" : "instance",
		 r->flags_known ? "" : " assumed: no dex access flags",
		 r->searched ? "file found by search" : "file from file_paths",
		 r->warning[0] ? "; warning: " : "", r->warning);
	p->method_key = method_key_java(r->signature, r->source_file);
	rc = plan_string_args(p, r, err);
	if (rc == 0 && p->cfg->has_section && p->cfg->has_section_name_arg &&
	    p->cfg->section_name_arg >= 0 &&
	    strcmp(java_resolution_param(r, (uint32_t)p->cfg->section_name_arg) ?: "",
		   "Ljava/lang/String;"))
		rc = err_set(err, -EINVAL, "probe %s: section_name_arg %d of %s is not a String",
			     p->program_name, p->cfg->section_name_arg, r->signature);
	free(r);
	return rc;
}

/* A probe a plan source located already (plan_opts.located). */
static int locate(struct plan_probe *p, const struct plan_location *l)
{
	snprintf(p->path, sizeof(p->path), "%s", l->path);
	p->offset = l->offset;
	p->code_size = l->code_size;
	p->machine = l->machine;
	p->java = l->java;
	p->abi = l->abi;
	p->how = l->java ? RESOLVED_OAT_BUILTIN : RESOLVED_ELF_SYMBOL;
	memcpy(p->string_reg, l->string_reg, sizeof(p->string_reg));
	memcpy(p->string_pos, l->string_pos, sizeof(p->string_pos));
	p->string_native = l->string_native;
	if (l->display)
		p->desc.method = l->display;
	if (l->java)
		p->method_key = method_key_java(p->cfg->method_signature, l->source_file);
	snprintf(p->note, sizeof(p->note), "%s", l->note ? l->note : "located by the plan source");
	return 0;
}

/* The method as configured, for messages. */
static const char *probe_what(const struct plan_probe *p)
{
	const struct probe_config *pc = p->cfg;

	if (pc->method_signature && *pc->method_signature)
		return pc->method_signature;
	return pc->method_name ? pc->method_name : "?";
}

static void add_note(struct plan_probe *p, const char *text)
{
	size_t len = strlen(p->note);

	snprintf(p->note + len, sizeof(p->note) - len, "%s%s", len ? "; " : "", text);
}

/* A note that must be seen (the exit choice: whether a uretprobe is used):
 * appended whole, the earlier text cut short with "..." when both do not fit
 * (a method whose code many others share lists them all before it). */
static void add_note_kept(struct plan_probe *p, const char *text)
{
	size_t need = strlen(text) + sizeof("...; "), len = strlen(p->note);

	if (len + need > sizeof(p->note) && need < sizeof(p->note)) {
		len = sizeof(p->note) - need;
		while (len && ((unsigned char)p->note[len] & 0xC0) == 0x80)
			len--;     /* not inside a UTF-8 sequence */
		memcpy(p->note + len, "...", 4);
	}
	add_note(p, text);
}

int plan_choose_exits(struct plan_probe *p, const struct plan_opts *opts, struct err *err)
{
	const struct probe_config *pc = p->cfg;
	struct exits_query q = {
		.path = p->path, .offset = p->offset, .code_size = p->code_size,
		.machine = p->machine, .java = p->java,
		.program = p->program_name, .what = probe_what(p),
		.has_exit_probes = pc->has_exit_probes, .exit_probes = pc->exit_probes,
		.opt_exit_probes = opts->exit_probes, .unsafe_uretprobe = opts->unsafe_uretprobe,
		.no_exits_advice = opts->no_exits_advice,
		.code = opts->code,
	};
	struct exits_choice c;
	int rc;

	if (!p->prog->is_return || !p->prog->exit)
		return 0;
	rc = exits_choose(&q, &c, err);
	if (rc < 0)
		return rc;
	if (c.exit_probes) {
		p->exit_probes = true;
		p->lone_ret = c.lone_ret;
		p->n_exits = c.n_exits;
		p->exit_offsets = c.exit_offsets;
	}
	if (c.note[0])
		add_note_kept(p, c.note);
	return 0;
}

_Static_assert(SECTION_OP_BEGIN == (int)TRACE_SECTION_BEGIN &&
	       SECTION_OP_END == (int)TRACE_SECTION_END &&
	       SECTION_OP_ASYNC_BEGIN == (int)TRACE_SECTION_ASYNC_BEGIN &&
	       SECTION_OP_ASYNC_END == (int)TRACE_SECTION_ASYNC_END &&
	       SECTION_OP_COUNTER == (int)TRACE_SECTION_COUNTER &&
	       SECTION_OP_COUNTER64 == (int)TRACE_SECTION_COUNTER64,
	       "vocab/event.h's section_op follows config.h's trace_section");

/* An argument position read from a register, or -1 with err set. */
static int section_register(const struct plan_probe *p, const char *what, int32_t pos,
			    struct err *err)
{
	int reg = plan_arg_register(p->abi, pos);

	if (reg < 0 || reg >= arg_regs_for(p->machine))
		return err_set(err, PLAN_BAD_POSITION, "probe %s: %s %d is passed on the stack; "
			       "sections read registers only", p->program_name, what, pos);
	return reg;
}

/* sections: the name argument becomes call_args' first string slot (a
 * String in ART code, a char * in native code), the cookie or value
 * argument a register the sinks read. */
static int plan_section(struct plan_probe *p, struct err *err)
{
	const struct probe_config *pc = p->cfg;
	int32_t name = pc->has_section_name_arg ? pc->section_name_arg : -1;
	int32_t value = pc->has_section_value_arg ? pc->section_value_arg : -1;
	bool needs_name = pc->section != TRACE_SECTION_END;
	bool needs_value = pc->section >= TRACE_SECTION_ASYNC_BEGIN;
	int reg;

	p->desc.section_value_reg = -1;
	if (!pc->has_section || pc->section == TRACE_SECTION_NONE)
		return 0;
	/* Every refusal here is the config's: the config-error exit (PLAN_BAD_POSITION). */
	if (pc->section < 0 || pc->section > TRACE_SECTION_COUNTER64)
		return err_set(err, PLAN_BAD_POSITION, "probe %s: section %d is not a TraceSection",
			       p->program_name, pc->section);
	if (strcmp(p->prog->name, "call_args"))
		return err_set(err, PLAN_BAD_POSITION, "probe %s: section needs "
			       "prog_Uprobestats_uprobe_call_args", p->program_name);
	if ((pc->has_section_name_arg && pc->section_name_arg < 0) ||
	    (pc->has_section_value_arg && pc->section_value_arg < 0))
		return err_set(err, PLAN_BAD_POSITION, "probe %s: %s %d is not an argument "
			       "position (0 is the first argument)", p->program_name,
			       pc->has_section_name_arg && pc->section_name_arg < 0
			       ? "section_name_arg" : "section_value_arg",
			       pc->has_section_name_arg && pc->section_name_arg < 0
			       ? pc->section_name_arg : pc->section_value_arg);
	if (needs_name != (name >= 0) || needs_value != (value >= 0))
		return err_set(err, PLAN_BAD_POSITION, "probe %s: section %s takes %s",
			       p->program_name,
			       schema_enum_name(&schema_enum_trace_section, pc->section),
			       !needs_name ? "no name or value argument"
			       : needs_value ? "section_name_arg and section_value_arg"
			       : "section_name_arg only");
	p->desc.section = (uint8_t)pc->section;
	if (name >= 0) {
		if ((reg = section_register(p, "section_name_arg", name, err)) < 0)
			return reg;
		memset(p->string_reg, 0xff, sizeof(p->string_reg));
		memset(p->string_pos, 0xff, sizeof(p->string_pos));
		p->string_reg[0] = (uint8_t)reg;
		p->string_pos[0] = (uint8_t)name;
		p->string_native = p->java ? 0 : 1;
	}
	if (value >= 0) {
		if ((reg = section_register(p, "section_value_arg", value, err)) < 0)
			return reg;
		p->desc.section_value_reg = (int8_t)reg;
	}
	return 0;
}

/* A library stored in an APK ("APK!/lib/.../libfoo.so", common/zip_path.h):
 * the file its uprobes go on is the archive (the inode the process mapped),
 * each at the entry's data offset plus the offset in the ELF, which every
 * other step (symbols, exit sites, notes) counts from the ELF's start. */
static int plan_container(struct plan_probe *p, const struct plan_opts *po, struct err *err)
{
	const struct elf_file *elf;
	struct code_file *f;
	const char *entry;
	size_t clen;
	int rc = zip_path_split(p->path, &clen, &entry, err);

	if (rc <= 0)
		return rc < 0 ? err_prefix(err, "probe %s", p->program_name) : 0;
	if (!(f = code_cache_file(po->code, p->path)))
		return err_set(err, -ENOMEM, "out of memory");
	if (!(elf = code_file_elf(f, err)))
		return err_prefix(err, "probe %s", p->program_name);
	if (!(p->uprobe_file = strndup(p->path, clen)))
		return err_set(err, -ENOMEM, "out of memory");
	p->file_base = code_file_base(f);
	return 0;
}

static int resolve_probe(struct plan_probe *p, const struct plan_opts *po, pid_t pid,
			 struct native_cache *nc, struct err *err)
{
	int rc = po->located && p->id < po->n_located ? locate(p, &po->located[p->id])
		 : is_java_probe(p->cfg) ? resolve_java(p, po, pid, nc, err)
		 : resolve_native(p, po, pid, nc, err);

	if (rc == 0 && !p->method_key)
		p->method_key = p->java ? method_key_java(p->cfg->method_signature, "")
				: method_key_native(p->path, p->cfg->method_signature);
	p->desc.method_key = p->method_key;
	if (rc == 0)
		rc = plan_section(p, err);
	if (rc == 0)
		rc = plan_container(p, po, err);
	return rc < 0 ? rc : plan_choose_exits(p, po, err);
}

static int plan_probe_init(struct plan_probe *p, uint32_t id, struct plan_task *t,
			   const struct probe_config *pc, struct err *err)
{
	const char *map = NULL;

	p->id = id;
	p->task_cfg = t->cfg;
	memset(p->string_reg, 0xff, sizeof(p->string_reg));
	memset(p->string_pos, 0xff, sizeof(p->string_pos));
	p->cfg = pc;
	if (!pc->bpf_name || catalog_find_program(pc->bpf_name, &p->obj, &p->prog) < 0) {
		char known[4096];
		catalog_program_names(known, sizeof(known));
		return err_set(err, -ENOENT, "task %u: unknown bpf_name '%s'; known programs: %s",
			       t->index, pc->bpf_name ? pc->bpf_name : "(none)", known);
	}
	snprintf(p->program_name, sizeof(p->program_name), "%s", pc->bpf_name);
	snprintf(p->map_name, sizeof(p->map_name), "map_%s_%s", p->obj->name,
		 p->prog->map ? p->prog->map
		 : p->prog->aggregate ? CATALOG_MAP_AGG_DATA
		 : p->prog->traffic ? CATALOG_MAP_TRAFFIC_DATA : CATALOG_MAP_HISTOGRAM);
	/* A configured map must be the one the program writes. */
	for (size_t i = 0; i < t->cfg->bpf_maps.n + (pc->bpf_map ? 1 : 0); i++) {
		const struct catalog_object *mo;
		const char *name = i < t->cfg->bpf_maps.n ? t->cfg->bpf_maps.v[i] : pc->bpf_map;
		if (catalog_find_map(name, &mo, &map) < 0) {
			char known[4096];
			catalog_map_names(known, sizeof(known));
			return err_set(err, -ENOENT, "task %u: unknown map '%s'; known maps: %s",
				       t->index, name, known);
		}
	}
	p->desc = (struct probe_desc){
		.task_index = t->index,
		.task_id = t->cfg->has_task_id ? t->cfg->task_id : 0,
		.probe_index = (uint32_t)(p - t->probes),
		.program = p->program_name,
		.map = p->map_name,
		.file = p->path,
		.method = pc->method_signature ? pc->method_signature
					       : (pc->method_name ? pc->method_name : ""),
		.offset = 0,
		.role = pc->trace_role == TRACE_ROLE_ENTER ? PROBE_ENTER
			: pc->trace_role == TRACE_ROLE_EXIT ? PROBE_EXIT : PROBE_PLAIN,
		.slice = pc->trace_slice,
	};
	return 0;
}

/* --stack and the probe's stack_frames (which wins) -> what the program
 * records.  A program without records (latency histograms) gets none. */
static int plan_probe_stack(struct plan_probe *p, const struct plan_opts *po, struct err *err)
{
	int64_t frames = p->cfg->has_stack_frames ? p->cfg->stack_frames : po->stack_frames;

	if (frames < 0 || frames > UPS_STACK_MAX_FRAMES)
		return err_set(err, -EINVAL, "task %u probe %u: stack_frames %lld is outside "
			       "0..%u", p->desc.task_index, p->desc.probe_index,
			       (long long)frames, UPS_STACK_MAX_FRAMES);
	if (!frames || !p->prog->record_kind)
		return 0;
	p->stack_frames = (uint32_t)frames;
	p->stack_art_frames = po->stack_art_frames;
	p->stack_mode = po->stack_mode ? po->stack_mode : UPS_STACK_COPY;
	p->stack_bytes = po->stack_bytes ? po->stack_bytes : UPS_STACK_DEFAULT_BYTES;
	return 0;
}

static int plan_pids(struct plan_task *t, const struct plan_opts *opts, struct err *err)
{
	const char *name = t->cfg->target_process_name;
	pid_t *found;
	size_t n;
	int rc;

	if (opts->n_pids) {
		for (size_t i = 0; i < opts->n_pids; i++)
			if ((rc = proc_check_traceable(opts->proc_dir ? opts->proc_dir : "/proc",
						       opts->pids[i], err)) < 0)
				return rc;
		t->pids = malloc(opts->n_pids * sizeof(pid_t));
		if (!t->pids)
			return err_set(err, -ENOMEM, "out of memory");
		memcpy(t->pids, opts->pids, opts->n_pids * sizeof(pid_t));
		t->n_pids = opts->n_pids;
		return 0;
	}
	if (t->cfg->has_target_process_selection &&
	    (t->cfg->target_process_selection == TPS_ANY_APP_PROCESS_ON_START ||
	     t->cfg->target_process_selection == TPS_SPECIFIC_APP_PROCESS_ON_START)) {
		t->wait_for_start = true;
		t->wait_name = t->cfg->target_process_selection == TPS_SPECIFIC_APP_PROCESS_ON_START
			       ? name : NULL;
		return 0;
	}
	if (!name || !*name) {
		t->all_processes = true;
		return 0;
	}
	rc = proc_find_by_name(opts->proc_dir ? opts->proc_dir : "/proc", name, &found, &n, err);
	if (rc < 0)
		return rc;
	if (n == 0) {
		char near[256];
		free(found);
		proc_nearest_name(opts->proc_dir ? opts->proc_dir : "/proc", name, near,
				  sizeof(near));
		return err_set(err, -ESRCH, "task %u: no running process named '%s' (argv[0], "
			       "or its last path component)%s%s", t->index, name,
			       *near ? "; nearest: " : "", near);
	}
	/* Upstream takes the first match; --all-matches takes them all. */
	t->pids = found;
	t->n_pids = opts->all_matches ? n : 1;
	return 0;
}

/* Whether pid maps path, remembered for the last (pid, path): the probes of
 * a task are mostly on one file (116,000 probes: one read of the maps). */
static int mapped_cached(struct build_state *st, const char *dir, pid_t pid, const char *path)
{
	if (pid != st->mapped_pid || strcmp(path, st->mapped_path)) {
		st->mapped_pid = pid;
		snprintf(st->mapped_path, sizeof(st->mapped_path), "%s", path);
		st->mapped_rc = proc_maps_file(dir, pid, path);
	}
	return st->mapped_rc;
}

/* A probe on a file none of the task's processes maps now fires only if a
 * process loads it later (dlopen, a dex loaded after start, a target held
 * before it maps its code): said in the probe's note, which every command
 * prints as a warning, and marked unmapped; never refused, since loading
 * later is ordinary.  Unknown (a maps file that
 * cannot be read, a process gone or a zombie, a fixture /proc) is neither. */
static int check_mapped(const struct plan_task *t, struct plan_probe *p,
			struct build_state *st, struct err *err)
{
	const struct plan_opts *opts = st->opts;
	const char *dir = opts->proc_dir ? opts->proc_dir : "/proc";
	size_t known = 0;
	char list[128] = "", msg[ERR_MSG_MAX];

	if (!t->n_pids || t->wait_for_start || !p->path[0])
		return 0;
	for (size_t i = 0; i < t->n_pids; i++) {
		int r = mapped_cached(st, dir, t->pids[i], plan_probe_uprobe_file(p));
		size_t l = strlen(list);
		if (r > 0)
			return 0;
		if (r < 0)
			continue;
		if (known++ < 4 && l + 16 < sizeof(list))
			snprintf(list + l, sizeof(list) - l, "%s%d", l ? ", " : "", (int)t->pids[i]);
	}
	if (!known)
		return 0;
	snprintf(msg, sizeof(msg), "task %u: %s %s does not map %s (see /proc/PID/maps): "
		 "probe %s could never fire unless it loads the file later", t->index,
		 known > 1 ? "no process of pids" : "pid", list, p->path,
		 p->desc.method ? p->desc.method : p->program_name);
	p->unmapped = true;
	size_t len = strlen(p->note);
	snprintf(p->note + len, sizeof(p->note) - len, "%s%s", len ? "; " : "", msg);
	return 0;
}

static int plan_task(struct plan *plan, size_t ti, const struct task_config *tc,
		     uint32_t *next_id, struct build_state *st)
{
	struct plan_task *t = &plan->tasks[ti];
	struct err e = { 0 };
	int rc;

	t->index = (uint32_t)ti;
	t->cfg = tc;
	t->duration_seconds = st->opts->duration_override > 0 ? st->opts->duration_override
		: (tc->has_duration_seconds ? tc->duration_seconds : 0);
	t->duration_ms = st->opts->duration_override_ms ? st->opts->duration_override_ms
			 : t->duration_seconds > 0 ? (uint64_t)t->duration_seconds * 1000 : 0;
	t->probes = calloc(tc->n_probes ? tc->n_probes : 1, sizeof(*t->probes));
	if (!t->probes)
		return err_set(st->err, -ENOMEM, "out of memory");
	t->n_probes = tc->n_probes;
	/* Processes first: a Java method without file_paths is searched for
	 * in what the target process has mapped. */
	if (!st->opts->no_resolve) {
		rc = plan_pids(t, st->opts, &e);
		if (rc < 0 && (rc = problem(st, &e)) < 0)
			return rc;
	}
	for (size_t i = 0; i < tc->n_probes; i++) {
		struct plan_probe *p = &t->probes[i];
		rc = plan_probe_init(p, (*next_id)++, t, &tc->probes[i], &e);
		p->atom_int32_args = st->opts->atom_int32_args;
		if (rc == 0)
			rc = plan_probe_stack(p, st->opts, &e);
		if (rc == 0 && !st->opts->no_resolve)
			rc = resolve_probe(p, st->opts, t->n_pids ? t->pids[0] : 0, st->native, &e);
		if (rc == 0)
			rc = plan_aggregation(p, &e);
		if (rc == 0 && !st->opts->no_resolve && !st->opts->held)
			rc = check_mapped(t, p, st, &e);
		if (rc == 0)
			plan_call_shape(p);
		if (rc < 0) {
			rc = problem(st, &e);
			if (rc < 0)
				return rc;
			continue;
		}
		p->desc.offset = p->offset;
	}
	return 0;
}

int plan_build(const struct uprobestats_config *cfg, const struct plan_opts *opts,
	       struct plan **out, struct err *err)
{
	struct build_state st = { .opts = opts, .err = err };
	struct plan *plan = calloc(1, sizeof(*plan));
	uint32_t next_id = 0;
	int rc = 0;

	*out = NULL;
	st.native = native_cache_new(opts->code);
	if (plan && st.native)
		plan->tasks = calloc(cfg->n_tasks ? cfg->n_tasks : 1, sizeof(*plan->tasks));
	if (!plan || !plan->tasks) {
		free(plan);
		native_cache_free(st.native);
		return err_set(err, -ENOMEM, "out of memory");
	}
	plan->n_tasks = cfg->n_tasks;
	plan->held = opts->held;
	for (size_t i = 0; i < cfg->n_tasks && rc == 0; i++)
		rc = plan_task(plan, i, &cfg->tasks[i], &next_id, &st);
	native_cache_free(st.native);
	plan->n_probes = next_id;
	if (rc == 0 && st.n_problems)
		rc = err_set(err, err->code ? err->code : -EINVAL, "%s%s", err->msg,
			     st.n_problems > 1 ? " (and more problems above)" : "");
	if (rc == 0) {
		plan->probe_by_id = calloc(next_id ? next_id : 1, sizeof(*plan->probe_by_id));
		if (!plan->probe_by_id)
			rc = err_set(err, -ENOMEM, "out of memory");
	}
	if (rc < 0) {
		plan_free(plan);
		return rc;
	}
	for (size_t i = 0; i < plan->n_tasks; i++)
		for (size_t j = 0; j < plan->tasks[i].n_probes; j++)
			plan->probe_by_id[plan->tasks[i].probes[j].id] = &plan->tasks[i].probes[j];
	if (plan_call_pairs(plan) < 0) {
		plan_free(plan);
		return err_set(err, -ENOMEM, "out of memory");
	}
	*out = plan;
	return 0;
}

void plan_free(struct plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_tasks; i++) {
		for (size_t j = 0; j < plan->tasks[i].n_probes; j++) {
			free(plan->tasks[i].probes[j].exit_offsets);
			free(plan->tasks[i].probes[j].method_key);
			free(plan->tasks[i].probes[j].uprobe_file);
		}
		free(plan->tasks[i].probes);
		free(plan->tasks[i].pids);
	}
	free(plan->tasks);
	free(plan->probe_by_id);
	free(plan);
}
