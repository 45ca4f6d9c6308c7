/* codefile.c — the per-file layer of the code cache (see codefile.h and
 * codecache.h): each file's parts, read on first use: symbols, interpreter
 * ranges, CFI, compiled Java methods, the memo of exit analyses.  The set of
 * files and how each is opened (plain or inside a zip) is codefile_set.c. */
#include "code/codefile_priv.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "formats/cfi.h"
#include "formats/codeinfo.h"
#include "formats/dex.h"
#include "formats/dex_debug.h"
#include "formats/elf.h"
#include "formats/insn.h"
#include "formats/minidebug.h"
#include "formats/oat.h"
#include "formats/oat_dexfile.h"
#include "formats/oat_methods.h"
#include "formats/zip.h"

static void exits_free(struct code_file *f)
{
	for (size_t b = 0; f->exits && b < EXITS_BUCKETS; b++) {
		while (f->exits[b]) {
			struct exits_memo *e = f->exits[b];
			f->exits[b] = e->next;
			exit_sites_free(&e->x.sites);
			free((char *)e->x.why);
			free(e);
		}
	}
	free(f->exits);
}

void code_file_release(struct code_file *f)
{
	exits_free(f);
	for (size_t i = 0; i < f->n_jm; i++) {
		free(f->jm[i].rows);
		free(f->jm[i].name);
	}
	free(f->jm);
	free(f->oat_err);
	free(f->open_msg);
	oat_method_list_free(&f->methods);
	oat_dexset_free(f->dexes);
	cfi_close(f->cfi);
	cfi_close(f->md_cfi);
	free(f->syms);
	if (f->md.elf)
		minidebug_close(&f->md);
	oat_close(f->oat);
	elf_close(f->own_elf);
	zip_close(f->zip);
	free(f->member);
	free(f->asked);
	free(f->path);
	free(f);
}

/* ---- ELF symbols ---- */

struct sym_vec {
	struct code_file *f;
	size_t cap;
	bool oom;
};

static int add_sym(void *ctx, const char *name, const struct elf_symbol *s)
{
	struct sym_vec *sv = ctx;
	struct code_file *f = sv->f;

	if ((s->type != STT_FUNC && s->type != STT_GNU_IFUNC) || !s->value || !name || !*name)
		return 0;
	if (grow_array(&f->syms, &sv->cap, f->n_syms + 1, 256) < 0) {
		sv->oom = true;
		return 1;
	}
	/* 32-bit ARM: bit 0 of a function's value marks Thumb code */
	f->syms[f->n_syms++] = (struct sym){ elf_machine(f->elf) == EM_ARM ? s->value & ~1ull
									 : s->value,
					     s->size, name };
	return 0;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->size < y->size) - (x->size > y->size);   /* larger first */
}

/* Where two names share a start, the larger symbol (sorted first) stays. */
static void dedup_syms(struct code_file *f)
{
	size_t w = 0;

	for (size_t i = 0; i < f->n_syms; i++)
		if (!w || f->syms[w - 1].start != f->syms[i].start)
			f->syms[w++] = f->syms[i];
	f->n_syms = w;
}

/* libart's interpreter: nterp and mterp (by their start/end markers). */
static void find_interp(struct code_file *f)
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

/* .gnu_debugdata's ELF, opened once (md.elf NULL: none or unreadable). */
static void open_minidebug(struct code_file *f)
{
	struct err e = { 0 };

	if (f->md_tried || !f->elf)
		return;
	f->md_tried = true;
	if (minidebug_open(f->elf, &f->md, &e) != 0)
		f->md.elf = NULL;
}

/* .symtab/.dynsym, and the .symtab of .gnu_debugdata (mini debug info:
 * most Android libraries and oat files keep their local function symbols
 * only there); on first use. */
static void load_symbols(struct code_file *f)
{
	struct sym_vec sv = { .f = f };

	if (f->syms_tried || !f->elf)
		return;
	f->syms_tried = true;
	elf_foreach_symbol(f->elf, add_sym, &sv);
	open_minidebug(f);
	if (f->md.elf)
		elf_foreach_symbol(f->md.elf, add_sym, &sv);
	if (sv.oom) {
		free(f->syms);
		f->syms = NULL;
		f->n_syms = 0;
		return;
	}
	if (f->n_syms)
		qsort(f->syms, f->n_syms, sizeof(*f->syms), sym_cmp);
	dedup_syms(f);
	find_interp(f);
}

/* The symbol covering vaddr: sized symbols by their size, an unsized one up
 * to the next symbol. */
static const struct sym *find_sym(struct code_file *f, uint64_t vaddr)
{
	size_t lo, hi;

	load_symbols(f);
	lo = 0;
	hi = f->n_syms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->syms[mid].start <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i > 0 && lo - i < 16; i--) {
		const struct sym *s = &f->syms[i - 1];
		if (s->size ? vaddr - s->start < s->size : i == lo)
			return s;
	}
	return NULL;
}

/* ---- compiled Java methods ---- */

static int jm_cmp(const void *a, const void *b)
{
	const struct jmethod *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return (x->list_i > y->list_i) - (x->list_i < y->list_i);
}

/* The first failure of the oat layers, kept for every later caller. */
static int oat_fail(struct code_file *f, int rc, const struct err *e)
{
	if (!f->oat_err && (f->oat_err = malloc(sizeof(*f->oat_err))))
		*f->oat_err = *e;
	return rc;
}

static int oat_failed(const struct code_file *f, int rc, struct err *err)
{
	if (f->oat_err)
		*err = *f->oat_err;
	else
		err_set(err, rc, "%s: out of memory", f->path);
	return rc;
}

int code_file_oat(struct code_file *f, const struct oat_file **o, struct err *err)
{
	struct err e = { 0 };

	*o = NULL;
	if (f->bad) {
		err_set(err, f->open_rc, "%s", f->open_msg ? f->open_msg : f->why);
		return f->open_rc;
	}
	if (!f->oat_tried) {
		f->oat_tried = true;
		f->oat_rc = oat_open_elf(f->own_elf, &f->oat, &e);
		if (f->oat_rc < 0)
			oat_fail(f, f->oat_rc, &e);
		else
			f->own_elf = NULL;            /* the oat file's now */
	}
	if (f->oat_rc < 0)
		return oat_failed(f, f->oat_rc, err);
	*o = f->oat;
	return 0;
}

int code_file_dexset(struct code_file *f, struct oat_dexset **ds, struct err *err)
{
	const struct oat_file *o;
	struct err e = { 0 };
	int rc;

	*ds = NULL;
	if ((rc = code_file_oat(f, &o, err)) < 0)
		return rc;
	if (!f->dexes_tried) {
		f->dexes_tried = true;
		f->dexes_rc = oat_dexset_new(o, f->path, NULL, 0, &f->dexes, &e);
		if (f->dexes_rc < 0) {
			f->dexes = NULL;
			oat_fail(f, f->dexes_rc, &e);
		}
	}
	if (f->dexes_rc < 0)
		return oat_failed(f, f->dexes_rc, err);
	*ds = f->dexes;
	return 0;
}

int code_file_methods(struct code_file *f, const struct oat_method_list **l, struct err *err)
{
	struct oat_dexset *ds;
	struct err e = { 0 };
	int rc;

	*l = NULL;
	if ((rc = code_file_dexset(f, &ds, err)) < 0)
		return rc;
	if (!f->methods_tried) {
		f->methods_tried = true;
		f->methods_rc = oat_list_methods(f->oat, ds, &f->methods, &e);
		if (f->methods_rc < 0)
			oat_fail(f, f->methods_rc, &e);
		else
			f->fs->st.oat_parsed++;
	}
	if (f->methods_rc < 0)
		return oat_failed(f, f->methods_rc, err);
	*l = &f->methods;
	return 0;
}

/* The compiled methods by code address, for the lookups by PC (built on
 * first use; false: not an oat file, or its methods cannot be listed). */
static bool load_jm(struct code_file *f)
{
	const struct oat_method_list *l;
	struct err e = { 0 };

	if (f->jm)
		return true;
	if (!f->is_oat || code_file_methods(f, &l, &e) < 0)
		return false;
	f->jm = calloc(l->n ? l->n : 1, sizeof(*f->jm));
	if (!f->jm)
		return false;
	for (size_t i = 0; i < l->n; i++) {
		const struct oat_method *om = &l->v[i];
		if (om->dedup_first != i || !om->code.code_size)
			continue;
		f->jm[f->n_jm++] = (struct jmethod){ .start = om->code.vaddr,
						      .size = om->code.code_size,
						      .list_i = (uint32_t)i };
	}
	/* by code address: profile-guided layouts put code out of class order */
	if (f->n_jm)
		qsort(f->jm, f->n_jm, sizeof(*f->jm), jm_cmp);
	return true;
}

static struct jmethod *find_jm(struct code_file *f, uint64_t vaddr)
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
static void decode_frame(struct code_file *f, struct jmethod *j)
{
	const struct oat_method *om = &f->methods.v[j->list_i];
	struct err e = { 0 };

	j->frame_decoded = true;
	j->frame_ok = oat_code_frame_info(f->oat, &om->code, &j->fi, &j->rows, &j->n_rows,
					  &e) == 0;
}

/* "Class.method(params)" from the dex (as `methods` prints it); without the
 * dex, dex2oat's .gnu_debugdata name ("pkg.Class.method"), else the
 * method's indexes. */
static void name_jm(struct code_file *f, struct jmethod *j)
{
	const struct oat_method *om = &f->methods.v[j->list_i];
	const struct dex_file *d;
	const struct sym *s;
	struct err e = { 0 };
	char buf[CODE_NAME_MAX];
	int n = oat_method_signature(f->dexes, om, buf, sizeof(buf));

	j->named = true;
	if (n >= (int)sizeof(buf))
		memcpy(buf + sizeof(buf) - 4, "...", 4);   /* marks a cut name */
	if (n >= 0 && oat_dexset_get(f->dexes, om->dex_i, &d, &e) == 0)
		find_dex_method(j, d, om);
	else if (n < 0 && (s = find_sym(f, j->start)) && s->start == j->start &&
		 strncmp(s->name, "[DEDUPED]", 9))
		snprintf(buf, sizeof(buf), "%s", s->name);
	j->name = strdup(buf);
}

/* Whether the instruction at vaddr is a return (x86_64 c3, arm64 ret): the
 * places exit probes use (art-frames.md §6), where no frame exists. */
static bool is_ret_insn(const struct code_file *f, uint64_t vaddr)
{
	size_t size;
	const uint8_t *data = elf_data(f->elf, &size);
	uint64_t off;
	uint32_t w;

	if (!data || elf_vaddr_to_offset(f->elf, vaddr, &off, NULL) || off >= size)
		return false;
	if (elf_machine(f->elf) == EM_X86_64)
		return data[off] == 0xc3;
	if (size - off < 4)
		return false;
	memcpy(&w, data + off, 4);
	return w == A64_RET;
}

static void describe_java(struct code_file *f, struct jmethod *j, uint64_t pc_vaddr,
			  struct code_info *out)
{
	if (!j->named)
		name_jm(f, j);
	if (!j->frame_decoded)
		decode_frame(f, j);
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
	/* ART's rule (GetStackMapForNativePcOffset): an exact Default or OSR map */
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

/* ---- CFI ---- */

static void open_cfi(struct code_file *f)
{
	struct err e = { 0 };
	int rc, md_rc = -ENOENT;

	f->cfi_tried = true;
	if ((rc = cfi_open(f->elf, &f->cfi, &e)) < 0)
		f->cfi = NULL;
	if (f->md.elf && (md_rc = cfi_open(f->md.elf, &f->md_cfi, &e)) < 0)
		f->md_cfi = NULL;
	f->has_cfi = rc != -ENOENT || md_rc != -ENOENT;
}

/* The row at vaddr: the file's .eh_frame/.debug_frame, then .gnu_debugdata's. */
static void native_cfi(struct code_file *f, uint64_t vaddr, struct code_info *out)
{
	struct err e = { 0 };

	if (!f->cfi_tried)
		open_cfi(f);
	out->file_has_cfi = f->has_cfi;
	out->cfi_error = -ENOENT;
	if (f->cfi)
		out->cfi_error = cfi_row_at(f->cfi, vaddr, &out->cfi, &e);
	if (out->cfi_error == -ENOENT && f->md_cfi)
		out->cfi_error = cfi_row_at(f->md_cfi, vaddr, &out->cfi, &e);
	out->has_cfi = out->cfi_error == 0;
}

static void describe_native(struct code_file *f, uint64_t vaddr, uint64_t pc_vaddr,
			    struct code_info *out)
{
	const struct sym *s = find_sym(f, vaddr);

	out->kind = FRAME_NATIVE;
	if (s) {
		out->symbol = s->name;
		out->symbol_off = pc_vaddr - s->start;
		out->at_start = pc_vaddr == s->start;
	}
	for (size_t i = 0; i < f->n_interp; i++)
		if (vaddr >= f->interp[i].start && vaddr < f->interp[i].end)
			out->kind = FRAME_INTERPRETED;
	if (s && !strncmp(s->name, "_ZN3art11interpreter", 20))
		out->kind = FRAME_INTERPRETED;
	native_cfi(f, vaddr, out);
}

void code_file_describe(struct code_file *f, uint64_t vaddr, uint64_t pc_vaddr,
			struct code_info *out)
{
	struct jmethod *j = load_jm(f) ? find_jm(f, vaddr) : NULL;

	if (j)
		describe_java(f, j, pc_vaddr, out);
	else
		describe_native(f, vaddr, pc_vaddr, out);
}

/* ---- addresses ---- */

bool code_file_vaddr(const struct code_file *f, uint64_t off, uint64_t *vaddr)
{
	const struct elf_segment *seg;
	size_t n = f->elf ? elf_load_segments(f->elf, &seg) : 0;

	for (size_t i = 0; i < n; i++) {
		if (off >= seg[i].offset && off - seg[i].offset < seg[i].filesz) {
			*vaddr = seg[i].vaddr + (off - seg[i].offset);
			return true;
		}
	}
	return false;
}

uint64_t code_file_function_at(struct code_file *f, uint64_t off)
{
	const struct elf_segment *seg;
	size_t n = f->elf ? elf_load_segments(f->elf, &seg) : 0;
	const struct sym *s;
	uint64_t vaddr;

	for (size_t i = 0; i < n; i++) {
		if (!(seg[i].flags & PF_X) || off < seg[i].offset ||
		    off - seg[i].offset >= seg[i].filesz)
			continue;
		vaddr = seg[i].vaddr + (off - seg[i].offset);
		s = find_sym(f, vaddr);
		if (!s || s->start != vaddr || off - seg[i].offset + s->size > seg[i].filesz)
			return 0;
		return s->size;
	}
	return 0;
}

/* The process address of vaddr through the mapping [start, end) at file
 * offset off, if it maps it. */
static bool vaddr_to_addr(const struct code_file *f, uint64_t start, uint64_t end,
			  uint64_t off, uint64_t vaddr, uint64_t *addr)
{
	uint64_t o;

	if (elf_vaddr_to_offset(f->elf, vaddr, &o, NULL) || o < off || o - off >= end - start)
		return false;
	*addr = start + (o - off);
	return true;
}

int code_file_java_ranges(struct code_file *f, uint64_t start, uint64_t end, uint64_t off,
			  code_cache_java_fn cb, void *ctx)
{
	for (size_t i = 0; load_jm(f) && i < f->n_jm; i++) {
		struct jmethod *j = &f->jm[i];
		uint64_t addr;
		int rc;

		if (!vaddr_to_addr(f, start, end, off, j->start, &addr))
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

/* ---- exit analyses ---- */

const struct code_exits *code_file_exits(struct code_file *f, uint64_t off, uint64_t size,
					 bool java, code_exits_fn analyse, void *ctx)
{
	struct exits_memo *e;
	struct err err = { 0 };
	size_t b = (size_t)((off ^ off >> 8 ^ off >> 16) % EXITS_BUCKETS);

	if (!f->exits && !(f->exits = calloc(EXITS_BUCKETS, sizeof(*f->exits))))
		return NULL;
	for (e = f->exits[b]; e; e = e->next)
		if (e->off == off && e->size == size && e->java == java)
			return &e->x;
	if (!(e = calloc(1, sizeof(*e))))
		return NULL;
	*e = (struct exits_memo){ .off = off, .size = size, .java = java };
	f->fs->st.exits_analysed++;
	e->x.rc = analyse(ctx, f, &e->x.base, &e->x.sites, &err);
	if (e->x.rc < 0) {
		exit_sites_free(&e->x.sites);
		if (!(e->x.why = strdup(err.msg))) {
			free(e);
			return NULL;
		}
	}
	e->next = f->exits[b];
	f->exits[b] = e;
	return &e->x;
}

/* ---- files ---- */

const char *code_file_why(const struct code_file *f)
{
	return f->bad ? f->why : NULL;
}

const struct elf_file *code_file_elf(const struct code_file *f, struct err *err)
{
	if (f->bad)
		err_set(err, f->open_rc, "%s", f->open_msg ? f->open_msg : f->why);
	return f->elf;
}

const struct elf_file *code_file_minidebug(struct code_file *f)
{
	open_minidebug(f);
	return f->md.elf;
}

bool code_file_is_oat(const struct code_file *f)
{
	return f->is_oat;
}

uint64_t code_file_base(const struct code_file *f)
{
	return f->base;
}

const char *code_file_member(const struct code_file *f)
{
	return f->member;
}

bool code_file_holds(const struct code_file *f, uint64_t off)
{
	return !f->member || (off >= f->base && off - f->base < f->member_size);
}

int code_file_bytes(const struct code_file *f, uint64_t off, uint64_t size, const uint8_t **out,
		    struct err *err)
{
	size_t len;
	const uint8_t *data;

	*out = NULL;
	if (!f->elf)
		return err_set(err, f->open_rc, "%s", f->open_msg ? f->open_msg : f->why);
	data = elf_data(f->elf, &len);
	if (off > len || size > len - off)
		return err_set(err, -EIO, "%s+0x%llx: reading %llu bytes of code: file too short",
			       f->path, (unsigned long long)off, (unsigned long long)size);
	*out = data + off;
	return 0;
}

const char *code_file_path(const struct code_file *f)
{
	return f->path;
}
