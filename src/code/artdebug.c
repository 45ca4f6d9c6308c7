/* artdebug.c — ART's debugger interface of one process (see artdebug.h). */
#include "code/artdebug.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arena.h"
#include "common/grow.h"
#include "formats/cfi.h"
#include "formats/dex.h"
#include "formats/dex_debug.h"
#include "formats/elf.h"
#include "formats/minidebug.h"

/* 64-bit layouts (artdebug.h) */
#define D_VERSION 0
#define D_FIRST 16
#define D_MAGIC 24
#define D_SIZEOF_ENTRY 40
#define D_SEQLOCK 44
#define D_SIZE 56
#define D_SIZE_V1 24
#define E_NEXT 0
#define E_SYMFILE 16
#define E_SIZE 24
#define E_SEQLOCK 40
#define E_SIZE_V2 48
#define E_SIZE_V1 32

/* One entry's copy: its symfile's bytes, parsed once. */
struct jsym {
	uint64_t start, size;
	const char *name;
};

struct symfile {
	uint64_t entry;               /* the entry's address and seqlock: its identity */
	uint32_t seqlock;
	uint8_t *bytes;
	size_t len;
	/* JIT: the ELF */
	struct elf_file *elf;
	struct minidebug md;
	struct cfi_table *cfi, *md_cfi;
	uint64_t lo, hi;              /* .text */
	struct jsym *syms;
	size_t n_syms;
	/* dex */
	uint64_t addr;                /* where the dex is in the process */
	struct dex_file *dex;
	struct dmeth *meths;          /* methods by insns start, built on first use */
	size_t n_meths;
	bool meths_tried;
	char name[48];
};

struct dmeth {
	uint64_t start, end;          /* insns, offsets in the dex */
	struct dex_method m;
};

struct view {
	uint64_t desc;
	bool is_dex;
	bool read_once;
	uint32_t read_seqlock;        /* the descriptor's at the last read */
	struct symfile *v;
	size_t n;
};

#define NAME_BUCKETS 1024
struct name_node {
	struct name_node *next;
	char s[];
};

struct art_debug {
	art_read_fn read;
	void *ctx;
	bool arm64;
	struct view jit, dex;
	struct arena *names;          /* interned names: they outlive any re-read */
	struct name_node *buckets[NAME_BUCKETS];
	struct art_debug_stats st;
};

static const char *intern(struct art_debug *a, const char *s)
{
	uint64_t h = 1469598103934665603ull;
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 1099511628211ull;
	for (struct name_node *p = a->buckets[h % NAME_BUCKETS]; p; p = p->next)
		if (!strcmp(p->s, s))
			return p->s;
	struct name_node *nn = arena_alloc(a->names, sizeof(*nn) + n + 1);
	if (!nn)
		return NULL;
	memcpy(nn->s, s, n + 1);
	nn->next = a->buckets[h % NAME_BUCKETS];
	a->buckets[h % NAME_BUCKETS] = nn;
	return nn->s;
}

static uint64_t strip_tag(const struct art_debug *a, uint64_t p)
{
	return a->arm64 ? (uint64_t)((int64_t)(p << 8) >> 8) : p;
}

static int rd_u32(struct art_debug *a, uint64_t addr, uint32_t *v)
{
	return a->read(a->ctx, addr, v, sizeof(*v));
}

static void symfile_free(struct symfile *f)
{
	cfi_close(f->cfi);
	cfi_close(f->md_cfi);
	minidebug_close(&f->md);
	elf_close(f->elf);
	dex_close(f->dex);
	free(f->syms);
	free(f->meths);
	free(f->bytes);
	memset(f, 0, sizeof(*f));
}

static void view_clear(struct view *w)
{
	for (size_t i = 0; i < w->n; i++)
		symfile_free(&w->v[i]);
	free(w->v);
	w->v = NULL;
	w->n = 0;
}

struct art_debug *art_debug_new(uint64_t jit_desc, uint64_t dex_desc, bool arm64,
				art_read_fn read, void *ctx)
{
	struct art_debug *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->names = arena_new();
	if (!a->names) {
		free(a);
		return NULL;
	}
	a->read = read;
	a->ctx = ctx;
	a->arm64 = arm64;
	a->jit.desc = jit_desc;
	a->dex.desc = dex_desc;
	a->dex.is_dex = true;
	return a;
}

void art_debug_free(struct art_debug *a)
{
	if (!a)
		return;
	view_clear(&a->jit);
	view_clear(&a->dex);
	arena_free(a->names);
	free(a);
}

void art_debug_get_stats(const struct art_debug *a, struct art_debug_stats *out)
{
	*out = a->st;
}

/* ---- parsing one copy ---- */

static int add_jsym(void *ctx, const char *name, const struct elf_symbol *s)
{
	struct symfile *f = ((void **)ctx)[0];
	size_t *cap = ((void **)ctx)[1];

	if (s->type != STT_FUNC || !s->value || !name || !*name)
		return 0;
	if (grow_array(&f->syms, cap, f->n_syms + 1, 16) < 0)
		return 1;
	f->syms[f->n_syms++] = (struct jsym){ s->value, s->size, name };
	return 0;
}

static int jsym_cmp(const void *x, const void *y)
{
	const struct jsym *p = x, *q = y;

	return p->start < q->start ? -1 : p->start > q->start;
}

/* A JIT symfile: the ELF, its .gnu_debugdata, symbols, CFI, the .text range. */
static bool parse_elf(struct symfile *f)
{
	struct err e = { 0 };
	struct elf_section sec;
	size_t cap = 0;
	void *ctx[2] = { f, &cap };

	if (elf_open_mem(f->name, f->bytes, f->len, &f->elf, &e))
		return false;
	if (minidebug_open(f->elf, &f->md, &e))
		f->md.elf = NULL;
	if (elf_find_section(f->elf, ".text", &sec) == 0 ||
	    (f->md.elf && elf_find_section(f->md.elf, ".text", &sec) == 0)) {
		f->lo = sec.addr;
		f->hi = sec.addr + sec.size < sec.addr ? UINT64_MAX : sec.addr + sec.size;
	}
	elf_foreach_symbol(f->elf, add_jsym, ctx);
	if (f->md.elf)
		elf_foreach_symbol(f->md.elf, add_jsym, ctx);
	if (f->n_syms)
		qsort(f->syms, f->n_syms, sizeof(*f->syms), jsym_cmp);
	if (!f->hi && f->n_syms) {   /* no .text: the symbols' span */
		f->lo = f->syms[0].start;
		for (size_t i = 0; i < f->n_syms; i++)
			if (f->syms[i].start + f->syms[i].size > f->hi)
				f->hi = f->syms[i].start + f->syms[i].size;
	}
	if (cfi_open(f->elf, &f->cfi, &e))
		f->cfi = NULL;
	if (f->md.elf && cfi_open(f->md.elf, &f->md_cfi, &e))
		f->md_cfi = NULL;
	return f->hi > f->lo;
}

static bool parse_dex(struct symfile *f)
{
	struct err e = { 0 };

	return dex_open(f->name, f->bytes, f->len, 0, &f->dex, &e) == 0;
}

/* ---- the walk (the seqlock protocol, artdebug.h) ---- */

struct walk {
	struct symfile *v;
	size_t n, cap, total;
	uint64_t seen[ART_MAX_ENTRIES];
	size_t n_seen;
};

static void walk_clear(struct walk *w)
{
	for (size_t i = 0; i < w->n; i++)
		symfile_free(&w->v[i]);
	free(w->v);
	w->v = NULL;
	w->n = w->cap = w->total = w->n_seen = 0;
}

static bool seen_before(struct walk *w, uint64_t entry)
{
	for (size_t i = 0; i < w->n_seen; i++)
		if (w->seen[i] == entry)
			return true;
	w->seen[w->n_seen++] = entry;
	return false;
}

/* The copy of a symfile whose identity (entry, seqlock) the previous read
 * holds already: taken over, not read again. */
static bool take_known(struct view *old, uint64_t entry, uint32_t seq, struct symfile *out)
{
	for (size_t i = 0; i < old->n; i++) {
		struct symfile *f = &old->v[i];
		if (f->bytes && f->entry == entry && f->seqlock == seq) {
			*out = *f;
			memset(f, 0, sizeof(*f));
			return true;
		}
	}
	return false;
}

/* One entry: 1 copied (or left out, counted), 0 a race, <0 unreadable list. */
static int walk_entry(struct art_debug *a, struct view *old, struct walk *w, uint64_t entry,
		      size_t esize, bool v2, uint64_t *next)
{
	uint8_t raw[E_SIZE_V2];
	uint64_t sym_addr, sym_size;
	uint32_t seq = 0, seq2 = 0;
	struct symfile f = { 0 };

	memset(raw, 0, sizeof(raw));
	if (a->read(a->ctx, entry, raw, esize) < 0)
		return -EIO;
	memcpy(next, raw + E_NEXT, 8);
	memcpy(&sym_addr, raw + E_SYMFILE, 8);
	memcpy(&sym_size, raw + E_SIZE, 8);
	*next = strip_tag(a, *next);
	sym_addr = strip_tag(a, sym_addr);
	if (v2) {
		memcpy(&seq, raw + E_SEQLOCK, 4);
		if (seq & 1)
			return 0;
	}
	a->st.entries++;
	f.entry = entry;
	f.seqlock = seq;
	if (v2 && take_known(old, entry, seq, &f))
		goto keep;
	if (!sym_addr || !sym_size ||
	    sym_size > (old->is_dex ? ART_MAX_DEXFILE : ART_MAX_SYMFILE) ||
	    w->total + sym_size > ART_MAX_TOTAL) {
		a->st.bad++;
		return 1;
	}
	f.bytes = malloc(sym_size);
	if (!f.bytes)
		return -ENOMEM;
	f.len = sym_size;
	f.addr = sym_addr;
	if (a->read(a->ctx, sym_addr, f.bytes, sym_size) < 0) {
		free(f.bytes);
		a->st.bad++;
		return 1;
	}
	/* the entry still the same one after the copy (Android2) */
	if (v2 && (rd_u32(a, entry + E_SEQLOCK, &seq2) < 0 || seq2 != seq)) {
		free(f.bytes);
		return 0;
	}
	snprintf(f.name, sizeof(f.name), "%s@0x%llx", old->is_dex ? "dex" : "jit",
		 (unsigned long long)sym_addr);
	if (!(old->is_dex ? parse_dex(&f) : parse_elf(&f))) {
		symfile_free(&f);
		a->st.bad++;
		return 1;
	}
keep:
	if (grow_array(&w->v, &w->cap, w->n + 1, 16) < 0) {
		symfile_free(&f);
		return -ENOMEM;
	}
	w->total += f.len;
	w->v[w->n++] = f;
	return 1;
}

/* One pass over the list: 1 done, 0 a race (retry), <0 failed. */
static int walk_once(struct art_debug *a, struct view *vw, struct walk *w, uint32_t *seq_out)
{
	uint8_t d[D_SIZE];
	uint32_t version, sizeof_entry = 0, seq = 0, seq2 = 0;
	bool android = false, v2 = false;
	size_t esize = E_SIZE_V1;
	uint64_t entry;

	memset(d, 0, sizeof(d));
	if (a->read(a->ctx, vw->desc, d, D_SIZE) < 0 && a->read(a->ctx, vw->desc, d, D_SIZE_V1) < 0)
		return -EIO;
	memcpy(&version, d + D_VERSION, 4);
	if (version != 1)
		return -EPROTO;
	if (!memcmp(d + D_MAGIC, "Android", 7) && (d[D_MAGIC + 7] == '1' || d[D_MAGIC + 7] == '2')) {
		android = true;
		v2 = d[D_MAGIC + 7] == '2';
		memcpy(&sizeof_entry, d + D_SIZEOF_ENTRY, 4);
		memcpy(&seq, d + D_SEQLOCK, 4);
		if (seq & 1)
			return 0;
		if (v2 && sizeof_entry < E_SIZE_V2)
			return -EPROTO;
		esize = v2 ? E_SIZE_V2 : E_SIZE_V1;
	}
	memcpy(&entry, d + D_FIRST, 8);
	entry = strip_tag(a, entry);
	while (entry) {
		uint64_t next = 0;
		int rc;

		if (w->n_seen == ART_MAX_ENTRIES || seen_before(w, entry)) {
			a->st.loops++;
			break;
		}
		rc = walk_entry(a, vw, w, entry, esize, v2, &next);
		if (rc <= 0)
			return rc == -EIO ? (android ? 0 : -EIO) : rc;
		entry = next;
	}
	if (android && (rd_u32(a, vw->desc + D_SEQLOCK, &seq2) < 0 || seq2 != seq))
		return v2 ? 1 : 0;   /* Android2: every entry was checked by its own seqlock */
	*seq_out = seq;
	return 1;
}

/* Reads the descriptor's list again, unless its seqlock says nothing changed
 * since the last read. */
static void view_refresh(struct art_debug *a, struct view *vw)
{
	struct walk *w;
	uint32_t seq = 0;
	int rc = 0;

	if (!vw->desc)
		return;
	if (vw->read_once && rd_u32(a, vw->desc + D_SEQLOCK, &seq) == 0 && seq == vw->read_seqlock)
		return;
	w = calloc(1, sizeof(*w));
	if (!w)
		return;
	for (int i = 0; i < ART_MAX_RETRIES; i++) {
		a->st.reads++;
		rc = walk_once(a, vw, w, &seq);
		if (rc != 0)
			break;
		a->st.races++;
		walk_clear(w);
	}
	if (rc == 0)
		a->st.gave_up++;
	vw->read_once = true;
	vw->read_seqlock = seq;
	if (rc > 0) {
		view_clear(vw);
		vw->v = w->v;
		vw->n = w->n;
		w->v = NULL;
		w->n = 0;
	}
	walk_clear(w);
	free(w);
}

/* ---- JIT lookups ---- */

static const struct jsym *find_jsym(const struct symfile *f, uint64_t q)
{
	size_t lo = 0, hi = f->n_syms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->syms[mid].start <= q)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct jsym *s = &f->syms[lo - 1];
	if (s->size ? q - s->start < s->size : lo == f->n_syms || q < f->syms[lo].start)
		return s;
	return NULL;
}

static bool jit_in(struct art_debug *a, uint64_t pc, uint64_t q, struct code_info *out)
{
	for (size_t i = 0; i < a->jit.n; i++) {
		struct symfile *f = &a->jit.v[i];
		const struct jsym *s;
		struct err e = { 0 };

		if (q < f->lo || q >= f->hi || !(s = find_jsym(f, q)))
			continue;
		out->kind = FRAME_JIT;
		out->symbol = intern(a, s->name);
		out->symbol_off = pc - s->start;
		out->at_start = pc == s->start;
		out->file_has_cfi = f->cfi || f->md_cfi;
		out->cfi_error = -ENOENT;
		if (f->cfi)
			out->cfi_error = cfi_row_at(f->cfi, q, &out->cfi, &e);
		if (out->cfi_error == -ENOENT && f->md_cfi)
			out->cfi_error = cfi_row_at(f->md_cfi, q, &out->cfi, &e);
		out->has_cfi = out->cfi_error == 0;
		return true;
	}
	return false;
}

bool art_debug_jit(struct art_debug *a, uint64_t pc, uint64_t q, struct code_info *out)
{
	if (jit_in(a, pc, q, out))
		return true;
	view_refresh(a, &a->jit);
	return jit_in(a, pc, q, out);
}

/* ---- dex lookups ---- */

static int dmeth_cmp(const void *x, const void *y)
{
	const struct dmeth *p = x, *q = y;

	return p->start < q->start ? -1 : p->start > q->start;
}

/* A code item's instructions [*start, *end) in r's buffer.  Standard dex:
 * insns_size (u32) at +12, insns at +16.  Compact dex (libdexfile's
 * CompactDexFile::CodeItem): u16 fields, u16 insns_count_and_flags (the count
 * << 5, preheader flags below), insns at +4; with kFlagPreHeaderInsnsSize
 * (0x10) the count gains the u16 just before the item, and the u16 before
 * that shifted by 16. */
static bool code_range(const struct dex_raw *r, uint64_t ci, uint64_t *start, uint64_t *end)
{
	uint64_t units;

	if (!r->compact) {
		uint32_t u;
		if (ci > r->lim || r->lim - ci < 16)
			return false;
		memcpy(&u, r->b + ci + 12, 4);
		units = u;
		*start = ci + 16;
	} else {
		uint16_t cf, lo, hi;
		if (ci > r->lim || r->lim - ci < 4)
			return false;
		memcpy(&cf, r->b + ci + 2, 2);
		units = cf >> 5;
		if (cf & 0x10) {
			if (ci < r->hdr + 4)
				return false;
			memcpy(&lo, r->b + ci - 2, 2);
			memcpy(&hi, r->b + ci - 4, 2);
			units += lo + ((uint64_t)hi << 16);
		}
		*start = ci + 4;
	}
	if (units * 2 > r->lim - *start)
		return false;
	*end = *start + 2 * units;
	return true;
}

/* Every method with code: its instructions' range in the dex. */
static void index_methods(struct symfile *f)
{
	struct dex_raw r;
	size_t cap = 0;
	struct err e = { 0 };

	f->meths_tried = true;
	dex_raw(f->dex, &r);
	for (uint32_t c = 0; c < dex_class_def_count(f->dex); c++) {
		struct dex_class_iter it;
		struct dex_method m;

		if (dex_class_iter_init(f->dex, c, &it, &e) < 0)
			continue;
		while (dex_class_iter_next(&it, &m, &e) == 1) {
			uint64_t start, end;

			if (!m.code_off || !code_range(&r, r.data_base + m.code_off, &start, &end))
				continue;
			if (grow_array(&f->meths, &cap, f->n_meths + 1, 64) < 0)
				return;
			f->meths[f->n_meths++] = (struct dmeth){ start, end, m };
		}
	}
	if (f->n_meths)
		qsort(f->meths, f->n_meths, sizeof(*f->meths), dmeth_cmp);
}

static bool dex_in(struct art_debug *a, uint64_t addr, struct code_info *out)
{
	for (size_t i = 0; i < a->dex.n; i++) {
		struct symfile *f = &a->dex.v[i];
		uint64_t off = addr - f->addr;
		size_t lo = 0, hi;
		char buf[CODE_NAME_MAX];
		uint32_t line = 0;
		struct err e = { 0 };

		if (addr < f->addr || off >= f->len)
			continue;
		if (!f->meths_tried)
			index_methods(f);
		hi = f->n_meths;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (f->meths[mid].start <= off)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (!lo || off >= f->meths[lo - 1].end || (off - f->meths[lo - 1].start) % 2)
			continue;
		const struct dmeth *dm = &f->meths[lo - 1];
		if (dex_pretty_method(f->dex, dm->m.method_idx, buf, sizeof(buf)) < 0)
			continue;
		out->kind = FRAME_INTERPRETED;
		out->symbol = intern(a, buf);
		out->file = intern(a, f->name);
		out->offset = off;
		out->dex_pc = (uint32_t)((off - dm->start) / 2);
		if (dex_method_line(f->dex, &dm->m, out->dex_pc, &line, &e) == 0 && line <= INT32_MAX)
			out->line = (int32_t)line;
		return true;
	}
	return false;
}

bool art_debug_dex(struct art_debug *a, uint64_t addr, struct code_info *out)
{
	if (dex_in(a, addr, out))
		return true;
	view_refresh(a, &a->dex);
	return dex_in(a, addr, out);
}

void art_debug_refresh(struct art_debug *a)
{
	view_refresh(a, &a->jit);
	view_refresh(a, &a->dex);
}
