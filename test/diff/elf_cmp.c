/* elf_cmp.c — one image read by ours and by libelf, compared field by field
 * (see elf_diff.h). */
#include "common/grow.h"
#include "elf_diff.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void diff_fail(struct diff *d, const char *where, const char *field, const char *ours,
	       const char *theirs)
{
	if (d->fails++ < DIFF_MAX_REPORTS)
		printf("%s %s: %s: %s: ours %s, theirs %s\n", d->planted ? "planted" : "FAIL",
		       d->file, where, field, ours, theirs);
	else if (d->fails == DIFF_MAX_REPORTS + 1)
		printf("FAIL %s: (further mismatches counted, not printed)\n", d->file);
}

bool diff_u64(struct diff *d, const char *where, const char *field, uint64_t ours,
	      uint64_t theirs)
{
	char a[32], b[32];

	if (ours == theirs)
		return true;
	snprintf(a, sizeof(a), "0x%" PRIx64, ours);
	snprintf(b, sizeof(b), "0x%" PRIx64, theirs);
	diff_fail(d, where, field, a, b);
	return false;
}

bool diff_str(struct diff *d, const char *where, const char *field, const char *ours,
	      const char *theirs)
{
	if (strcmp(ours, theirs) == 0)
		return true;
	diff_fail(d, where, field, ours, theirs);
	return false;
}

const char *lelf_section_name(Elf *e, const GElf_Shdr *sh)
{
	size_t strndx;
	const char *n;

	if (elf_getshdrstrndx(e, &strndx) != 0)
		return "";
	n = elf_strptr(e, strndx, sh->sh_name);
	return n ? n : "";
}

bool lelf_read_all_shdrs(Elf *e, size_t *n)
{
	GElf_Shdr sh;

	if (elf_getshdrnum(e, n) != 0)
		return false;
	for (size_t i = 0; i < *n; i++) {
		Elf_Scn *s = elf_getscn(e, i);
		if (!s || !gelf_getshdr(s, &sh))
			return false;
	}
	return true;
}

bool lelf_read_all_phdrs(Elf *e, size_t *n)
{
	GElf_Phdr ph;

	if (elf_getphdrnum(e, n) != 0)
		return false;
	for (size_t i = 0; i < *n; i++)
		if (!gelf_getphdr(e, (int)i, &ph))
			return false;
	return true;
}

static void diff_header(struct diff *d, const struct elf_file *ours, Elf *theirs)
{
	GElf_Ehdr eh;

	if (!gelf_getehdr(theirs, &eh)) {
		diff_fail(d, "ELF header", "readable", "yes", elf_errmsg(-1));
		return;
	}
	diff_u64(d, "ELF header", "class", (uint64_t)elf_class(ours),
		 gelf_getclass(theirs) == ELFCLASS64 ? 64 : 32);
	diff_u64(d, "ELF header", "e_machine", elf_machine(ours), eh.e_machine);
	diff_u64(d, "ELF header", "e_type", elf_type(ours), eh.e_type);
}

static void diff_segment(struct diff *d, size_t i, const struct elf_segment *o,
			 const GElf_Phdr *t)
{
	char where[48];

	snprintf(where, sizeof(where), "program header %zu", i);
	diff_u64(d, where, "p_type", o->type, t->p_type);
	diff_u64(d, where, "p_flags", o->flags, t->p_flags);
	diff_u64(d, where, "p_offset", o->offset, t->p_offset);
	diff_u64(d, where, "p_vaddr", o->vaddr, t->p_vaddr);
	diff_u64(d, where, "p_filesz", o->filesz, t->p_filesz);
	diff_u64(d, where, "p_memsz", o->memsz, t->p_memsz);
	diff_u64(d, where, "p_align", o->align, t->p_align);
}

/* Every program header, and the PT_LOAD list as the subsequence of them. */
static void diff_segments(struct diff *d, const struct elf_file *ours, Elf *theirs)
{
	const struct elf_segment *segs, *loads;
	size_t n = elf_segments(ours, &segs), nloads = elf_load_segments(ours, &loads);
	size_t tn = 0, tl = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(theirs, &tn) != 0) {
		diff_fail(d, "program headers", "count", "read", elf_errmsg(-1));
		return;
	}
	diff_u64(d, "program headers", "count", n, tn);
	for (size_t i = 0; i < n && i < tn; i++) {
		if (!gelf_getphdr(theirs, (int)i, &ph)) {
			diff_fail(d, "program header", "readable", "yes", elf_errmsg(-1));
			return;
		}
		diff_segment(d, i, &segs[i], &ph);
		if (ph.p_type != PT_LOAD)
			continue;
		if (tl < nloads)
			diff_segment(d, i, &loads[tl], &ph);
		tl++;
	}
	diff_u64(d, "PT_LOAD list", "count", nloads, tl);
	d->segs += n;
}

static void diff_section(struct diff *d, size_t i, const struct elf_section *o,
			 const GElf_Shdr *t, const char *tname)
{
	char where[160];

	snprintf(where, sizeof(where), "section %zu (%s)", i, tname);
	diff_str(d, where, "name", o->name, tname);
	diff_u64(d, where, "sh_type", o->type, t->sh_type);
	diff_u64(d, where, "sh_flags", o->flags, t->sh_flags);
	diff_u64(d, where, "sh_addr", o->addr, t->sh_addr);
	diff_u64(d, where, "sh_offset", o->offset, t->sh_offset);
	diff_u64(d, where, "sh_size", o->size, t->sh_size);
	diff_u64(d, where, "sh_link", o->link, t->sh_link);
	diff_u64(d, where, "sh_info", o->info, t->sh_info);
	diff_u64(d, where, "sh_entsize", o->entsize, t->sh_entsize);
}

static void diff_sections(struct diff *d, const struct elf_file *ours, Elf *theirs)
{
	size_t n = elf_section_count(ours), tn = 0;
	struct elf_section s;
	GElf_Shdr sh;

	if (elf_getshdrnum(theirs, &tn) != 0) {
		diff_fail(d, "section headers", "count", "read", elf_errmsg(-1));
		return;
	}
	diff_u64(d, "section headers", "count", n, tn);
	for (size_t i = 0; i < n && i < tn; i++) {
		Elf_Scn *scn = elf_getscn(theirs, i);
		if (!scn || !gelf_getshdr(scn, &sh)) {
			diff_fail(d, "section header", "readable", "yes", elf_errmsg(-1));
			return;
		}
		elf_section_at(ours, i, &s);
		diff_section(d, i, &s, &sh, lelf_section_name(theirs, &sh));
	}
	d->secs += n;
}

/* A symbol as either reader gives it. */
struct sym {
	const char *name;
	struct elf_symbol s;
};

struct symlist {
	struct sym *v;
	size_t n, cap;
};

static int push(struct symlist *l, const char *name, const struct elf_symbol *s)
{
	int rc = grow_array(&l->v, &l->cap, l->n + 1, 256);

	if (rc < 0)
		return rc;
	l->v[l->n++] = (struct sym){ name, *s };
	return 0;
}

static int collect_ours(void *ctx, const char *name, const struct elf_symbol *sym)
{
	return push(ctx, name, sym);
}

/* libelf's reading of the first usable symbol table of type (what ours picks:
 * entries at least one Elf_Sym large, linked to a string table); named symbols. */
static void collect_theirs(Elf *e, uint32_t type, struct symlist *l)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh, str;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *data;
		Elf_Scn *strscn;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != type)
			continue;
		strscn = elf_getscn(e, sh.sh_link);
		if (!strscn || !gelf_getshdr(strscn, &str) || str.sh_type != SHT_STRTAB)
			continue;
		if (!(data = elf_getdata(scn, NULL)))
			continue;
		size_t count = data->d_size / gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
		for (size_t i = 0; i < count; i++) {
			GElf_Sym gs;
			const char *name;
			if (!gelf_getsym(data, (int)i, &gs) || gs.st_name == 0)
				continue;
			if (!(name = elf_strptr(e, sh.sh_link, gs.st_name)))
				continue;
			struct elf_symbol s = {
				.value = gs.st_value, .size = gs.st_size,
				.type = GELF_ST_TYPE(gs.st_info), .bind = GELF_ST_BIND(gs.st_info),
				.shndx = gs.st_shndx, .from_dynsym = type == SHT_DYNSYM,
			};
			push(l, name, &s);
		}
		return;
	}
}

static void diff_symbol(struct diff *d, size_t i, const struct sym *o, const struct sym *t)
{
	char where[320];

	snprintf(where, sizeof(where), "%s symbol %zu (%.200s)",
		 t->s.from_dynsym ? ".dynsym" : ".symtab", i, t->name);
	if (!diff_str(d, where, "name", o->name, t->name))
		return;
	diff_u64(d, where, "st_value", o->s.value, t->s.value);
	diff_u64(d, where, "st_size", o->s.size, t->s.size);
	diff_u64(d, where, "type", o->s.type, t->s.type);
	diff_u64(d, where, "binding", o->s.bind, t->s.bind);
	diff_u64(d, where, "st_shndx", o->s.shndx, t->s.shndx);
	diff_u64(d, where, "table (1 = .dynsym)", o->s.from_dynsym, t->s.from_dynsym);
}

/* elf_find_symbol(name) must give the first defined symbol of that name in
 * .dynsym-then-.symtab order; a sample of at most ~300 names per image. */
static void diff_lookups(struct diff *d, const struct elf_file *ours, const struct symlist *t)
{
	size_t step = t->n / 300 + 1;

	for (size_t i = 0; i < t->n; i += step) {
		const struct sym *want = NULL;
		struct elf_symbol got;
		char where[320];
		for (size_t j = 0; j < t->n && !want; j++)
			if (t->v[j].s.shndx != SHN_UNDEF && !strcmp(t->v[j].name, t->v[i].name))
				want = &t->v[j];
		int rc = elf_find_symbol(ours, t->v[i].name, &got);
		snprintf(where, sizeof(where), "elf_find_symbol(%.200s)", t->v[i].name);
		d->lookups++;
		if (!want) {
			diff_u64(d, where, "found", rc == 0, 0);
			continue;
		}
		if (diff_u64(d, where, "found", rc == 0, 1)) {
			diff_u64(d, where, "st_value", got.value, want->s.value);
			diff_u64(d, where, "table (1 = .dynsym)", got.from_dynsym,
				 want->s.from_dynsym);
		}
	}
}

/* The file offset of vaddr through libelf's PT_LOAD headers; -ERANGE if none. */
static int theirs_offset(Elf *e, uint64_t vaddr, uint64_t *off, uint32_t *flags)
{
	size_t n = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(e, &n) != 0)
		return -ERANGE;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			*flags = ph.p_flags;
			return 0;
		}
	}
	return -ERANGE;
}

static void diff_vaddr(struct diff *d, const struct elf_file *ours, Elf *theirs,
		       const char *what, uint64_t vaddr)
{
	uint64_t o_off = 0, t_off = 0;
	uint32_t o_fl = 0, t_fl = 0;
	int orc = elf_vaddr_to_offset(ours, vaddr, &o_off, &o_fl);
	int trc = theirs_offset(theirs, vaddr, &t_off, &t_fl);
	char where[320];

	snprintf(where, sizeof(where), "vaddr 0x%" PRIx64 " (%.200s)", vaddr, what);
	if (!diff_u64(d, where, "mapped (1 = in a PT_LOAD)", orc == 0, trc == 0) || orc)
		return;
	diff_u64(d, where, "file offset", o_off, t_off);
	diff_u64(d, where, "segment flags", o_fl, t_fl);
	d->mapped++;
}

/* Where a symbol lies in an allocated PROGBITS section, the section headers give
 * its file offset too: ours (through program headers) must agree with that. */
static void diff_section_view(struct diff *d, const struct elf_file *ours, Elf *theirs,
			      const struct sym *t)
{
	Elf_Scn *scn = elf_getscn(theirs, t->s.shndx);
	uint64_t off;
	GElf_Shdr sh;
	char where[320];

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
	    !(sh.sh_flags & SHF_ALLOC) || t->s.value < sh.sh_addr ||
	    t->s.value - sh.sh_addr >= sh.sh_size)
		return;
	if (elf_vaddr_to_offset(ours, t->s.value, &off, NULL))
		return;   /* reported by diff_vaddr when libelf maps it */
	snprintf(where, sizeof(where), "symbol %.200s in section %u", t->name, t->s.shndx);
	diff_u64(d, where, "file offset (section view)", off,
		 t->s.value - sh.sh_addr + sh.sh_offset);
}

static void diff_mapping(struct diff *d, const struct elf_file *ours, Elf *theirs,
			 const struct symlist *t)
{
	size_t n = 0;
	GElf_Phdr ph;

	for (size_t i = 0; i < t->n; i++) {
		const struct sym *s = &t->v[i];
		if (s->s.shndx == SHN_UNDEF || s->s.shndx >= SHN_LORESERVE ||
		    s->s.type == STT_TLS || s->s.type == STT_SECTION || s->s.type == STT_FILE)
			continue;
		diff_vaddr(d, ours, theirs, s->name, s->s.value);
		diff_section_view(d, ours, theirs, s);
	}
	if (elf_getphdrnum(theirs, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++) {     /* each PT_LOAD's edges */
		if (!gelf_getphdr(theirs, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		diff_vaddr(d, ours, theirs, "PT_LOAD start", ph.p_vaddr);
		diff_vaddr(d, ours, theirs, "PT_LOAD file end - 1", ph.p_vaddr + ph.p_filesz - 1);
		diff_vaddr(d, ours, theirs, "PT_LOAD file end", ph.p_vaddr + ph.p_filesz);
	}
}

static void diff_symbols(struct diff *d, const struct elf_file *ours, Elf *theirs)
{
	struct symlist o = { 0 }, t = { 0 };

	if (elf_foreach_symbol(ours, collect_ours, &o) != 0)
		diff_fail(d, "symbols", "collected", "out of memory", "-");
	collect_theirs(theirs, SHT_DYNSYM, &t);
	size_t ndyn = t.n;
	collect_theirs(theirs, SHT_SYMTAB, &t);
	diff_u64(d, "symbols (.dynsym + .symtab, named)", "count", o.n, t.n);
	for (size_t i = 0; i < o.n && i < t.n; i++)
		diff_symbol(d, i, &o.v[i], &t.v[i]);
	d->dynsym += ndyn;
	d->symtab += t.n - ndyn;
	diff_lookups(d, ours, &t);
	diff_mapping(d, ours, theirs, &t);
	free(o.v);
	free(t.v);
}

void diff_tables(struct diff *d, const struct elf_file *ours, Elf *theirs)
{
	diff_header(d, ours, theirs);
	diff_segments(d, ours, theirs);
	diff_sections(d, ours, theirs);
}

void diff_image(struct diff *d, const struct elf_file *ours, Elf *theirs)
{
	diff_tables(d, ours, theirs);
	diff_symbols(d, ours, theirs);
}

/* Leaves the defined symbols of l. */
static void keep_defined(struct symlist *l)
{
	size_t k = 0;

	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].s.shndx != SHN_UNDEF)
			l->v[k++] = l->v[i];
	l->n = k;
}

/* A copy of the image with e_shoff/e_shnum/e_shstrndx zeroed: ours must find the
 * dynamic symbols through PT_DYNAMIC alone, exactly libelf's .dynsym.  The defined
 * ones only: DT_GNU_HASH covers the symbols the dynamic linker can look up, and the
 * undefined imports after them (ld.bfd puts them there in an executable that
 * exports nothing) have no count anywhere in the dynamic section. */
void diff_no_sections(struct diff *d, const uint8_t *data, size_t len, Elf *theirs)
{
	struct symlist o = { 0 }, t = { 0 };
	struct elf_file *f = NULL;
	struct err e = { 0 };
	uint8_t *copy;
	bool is64 = len > 4 && data[EI_CLASS] == ELFCLASS64;

	collect_theirs(theirs, SHT_DYNSYM, &t);
	if (!t.n || !(copy = malloc(len))) {
		free(t.v);
		return;
	}
	memcpy(copy, data, len);
	memset(copy + (is64 ? 40 : 32), 0, is64 ? 8 : 4);          /* e_shoff */
	memset(copy + (is64 ? 60 : 48), 0, 4);                      /* e_shnum, e_shstrndx */
	if (elf_open_mem("(no section headers)", copy, len, &f, &e)) {
		diff_fail(d, "without section headers", "open", e.msg, "-");
	} else {
		elf_foreach_symbol(f, collect_ours, &o);
		keep_defined(&o);
		keep_defined(&t);
		diff_u64(d, "PT_DYNAMIC symbols (defined)", "count", o.n, t.n);
		for (size_t i = 0; i < o.n && i < t.n; i++)
			diff_symbol(d, i, &o.v[i], &t.v[i]);
		elf_close(f);
	}
	free(copy);
	free(o.v);
	free(t.v);
}
