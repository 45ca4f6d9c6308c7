#include "formats/elf.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mapfile.h"
#include "common/bytes.h"

/* One symbol table: entries at [off, off + count*entsize), names in
 * [stroff, stroff + strsz).  All ranges were checked against the file. */
struct symtab {
	bool present, dyn;
	uint64_t off, count, entsize, stroff, strsz;
};

struct elf_file {
	char *name;
	const uint8_t *data;
	size_t size;
	struct mapped_file mf;
	bool mapped;
	int cls;
	uint16_t machine, type;
	uint64_t shoff, phoff;
	uint32_t shnum, phnum, shentsize, phentsize, shstrndx;
	struct elf_segment *segs, *loads;
	size_t nsegs, nloads;
	struct elf_section *secs;
	size_t nsecs;
	struct symtab dynsym, symtab;
};

static int bad(struct elf_file *f, struct err *err, int code, const char *what)
{
	return err_set(err, code, "%s: %s (file size 0x%zx)", f->name, what, f->size);
}

static int parse_ehdr(struct elf_file *f, struct err *err)
{
	const uint8_t *d = f->data;

	if (f->size < EI_NIDENT || memcmp(d, ELFMAG, SELFMAG) != 0)
		return err_set(err, -ENOEXEC, "%s: not an ELF file (no \\x7fELF magic at offset 0)",
			       f->name);
	if (d[EI_DATA] != ELFDATA2LSB)
		return err_set(err, -ENOEXEC, "%s: ELF data encoding %u is not little-endian",
			       f->name, d[EI_DATA]);
	if (d[EI_CLASS] == ELFCLASS64) {
		if (f->size < 64)
			return bad(f, err, -EINVAL, "truncated ELF64 header (64 bytes needed)");
		f->cls = 64;
		f->phoff = ld64(d + 32);
		f->shoff = ld64(d + 40);
		f->phentsize = ld16(d + 54);
		f->phnum = ld16(d + 56);
		f->shentsize = ld16(d + 58);
		f->shnum = ld16(d + 60);
		f->shstrndx = ld16(d + 62);
	} else if (d[EI_CLASS] == ELFCLASS32) {
		if (f->size < 52)
			return bad(f, err, -EINVAL, "truncated ELF32 header (52 bytes needed)");
		f->cls = 32;
		f->phoff = ld32(d + 28);
		f->shoff = ld32(d + 32);
		f->phentsize = ld16(d + 42);
		f->phnum = ld16(d + 44);
		f->shentsize = ld16(d + 46);
		f->shnum = ld16(d + 48);
		f->shstrndx = ld16(d + 50);
	} else {
		return err_set(err, -ENOEXEC, "%s: unknown ELF class %u", f->name, d[EI_CLASS]);
	}
	f->type = ld16(d + 16);
	f->machine = ld16(d + 18);
	return 0;
}

static void decode_phdr(const struct elf_file *f, const uint8_t *p, struct elf_segment *s)
{
	s->type = ld32(p);
	if (f->cls == 64) {
		s->flags = ld32(p + 4);
		s->offset = ld64(p + 8);
		s->vaddr = ld64(p + 16);
		s->filesz = ld64(p + 32);
		s->memsz = ld64(p + 40);
		s->align = ld64(p + 48);
	} else {
		s->offset = ld32(p + 4);
		s->vaddr = ld32(p + 8);
		s->filesz = ld32(p + 16);
		s->memsz = ld32(p + 20);
		s->flags = ld32(p + 24);
		s->align = ld32(p + 28);
	}
}

static void decode_shdr(const struct elf_file *f, const uint8_t *p, struct elf_section *s)
{
	s->name = "";
	s->type = ld32(p + 4);
	if (f->cls == 64) {
		s->flags = ld64(p + 8);
		s->addr = ld64(p + 16);
		s->offset = ld64(p + 24);
		s->size = ld64(p + 32);
		s->link = ld32(p + 40);
		s->info = ld32(p + 44);
		s->entsize = ld64(p + 56);
	} else {
		s->flags = ld32(p + 8);
		s->addr = ld32(p + 12);
		s->offset = ld32(p + 16);
		s->size = ld32(p + 20);
		s->link = ld32(p + 24);
		s->info = ld32(p + 28);
		s->entsize = ld32(p + 36);
	}
}

/* Section 0 carries the real counts when they overflow the 16-bit fields. */
static void apply_extended_numbering(struct elf_file *f)
{
	size_t min = f->cls == 64 ? 64 : 40;
	struct elf_section s0;

	if (!f->shoff || f->shentsize < min || !rng_ok(f->size, f->shoff, min))
		return;
	decode_shdr(f, f->data + f->shoff, &s0);
	if (f->shnum == 0)
		f->shnum = s0.size > UINT32_MAX ? UINT32_MAX : (uint32_t)s0.size;
	if (f->shstrndx == SHN_XINDEX)
		f->shstrndx = s0.link;
	if (f->phnum == PN_XNUM)
		f->phnum = s0.info;
}

static int parse_phdrs(struct elf_file *f, struct err *err)
{
	size_t min = f->cls == 64 ? 56 : 32;
	char msg[160];

	if (!f->phnum)
		return 0;
	if (f->phentsize < min)
		return bad(f, err, -EINVAL, "program header entry size too small");
	if (!rng_ok(f->size, f->phoff, (uint64_t)f->phnum * f->phentsize)) {
		snprintf(msg, sizeof(msg),
			 "program headers at 0x%llx (%u x %u bytes) lie outside the file",
			 (unsigned long long)f->phoff, f->phnum, f->phentsize);
		return bad(f, err, -EINVAL, msg);
	}
	f->segs = calloc(f->phnum, sizeof(*f->segs));
	f->loads = calloc(f->phnum, sizeof(*f->loads));
	if (!f->segs || !f->loads)
		return err_set(err, -ENOMEM, "%s: out of memory", f->name);
	for (uint32_t i = 0; i < f->phnum; i++) {
		struct elf_segment *s = &f->segs[f->nsegs++];
		decode_phdr(f, f->data + f->phoff + (uint64_t)i * f->phentsize, s);
		if (s->type != PT_LOAD)
			continue;
		if (s->filesz && !rng_ok(f->size, s->offset, s->filesz)) {
			snprintf(msg, sizeof(msg),
				 "PT_LOAD[%u] file range 0x%llx+0x%llx extends past the "
				 "end: truncated?",
				 i, (unsigned long long)s->offset, (unsigned long long)s->filesz);
			return bad(f, err, -EINVAL, msg);
		}
		if (s->filesz > s->memsz || s->vaddr + s->memsz < s->vaddr) {
			snprintf(msg, sizeof(msg),
				 "PT_LOAD[%u] has filesz 0x%llx > memsz 0x%llx or wraps", i,
				 (unsigned long long)s->filesz, (unsigned long long)s->memsz);
			return bad(f, err, -EINVAL, msg);
		}
		f->loads[f->nloads++] = *s;
	}
	return 0;
}

static bool section_in_file(const struct elf_file *f, const struct elf_section *s)
{
	return s->type == SHT_NOBITS || s->type == SHT_NULL || rng_ok(f->size, s->offset, s->size);
}

/* Section headers are advisory (the loader ignores them): when the table is
 * out of range we drop it and symbols come from PT_DYNAMIC instead. */
static int parse_shdrs(struct elf_file *f, struct err *err)
{
	size_t min = f->cls == 64 ? 64 : 40;

	if (!f->shoff || !f->shnum || f->shentsize < min ||
	    !rng_ok(f->size, f->shoff, (uint64_t)f->shnum * f->shentsize))
		return 0;
	f->secs = calloc(f->shnum, sizeof(*f->secs));
	if (!f->secs)
		return err_set(err, -ENOMEM, "%s: out of memory", f->name);
	for (uint32_t i = 0; i < f->shnum; i++)
		decode_shdr(f, f->data + f->shoff + (uint64_t)i * f->shentsize, &f->secs[i]);
	f->nsecs = f->shnum;
	/* names only from an uncompressed string table in the file (as libelf's
	 * elf_strptr) */
	if (f->shstrndx >= f->nsecs || f->secs[f->shstrndx].type != SHT_STRTAB ||
	    (f->secs[f->shstrndx].flags & SHF_COMPRESSED) ||
	    !rng_ok(f->size, f->secs[f->shstrndx].offset, f->secs[f->shstrndx].size))
		return 0;
	const struct elf_section *ss = &f->secs[f->shstrndx];
	for (size_t i = 0; i < f->nsecs; i++) {
		uint32_t n = ld32(f->data + f->shoff + (uint64_t)i * f->shentsize);
		const uint8_t *base = f->data + ss->offset;
		if (n < ss->size && memchr(base + n, 0, ss->size - n))
			f->secs[i].name = (const char *)base + n;
	}
	return 0;
}

static size_t sym_size(const struct elf_file *f)
{
	return f->cls == 64 ? 24 : 16;
}

/* A symbol table from a section and its linked string table. */
static void symtab_from_section(struct elf_file *f, uint32_t type, struct symtab *t)
{
	for (size_t i = 0; i < f->nsecs; i++) {
		const struct elf_section *s = &f->secs[i], *str;
		uint64_t ent = s->entsize ? s->entsize : sym_size(f);
		if (s->type != type)
			continue;
		if (ent < sym_size(f) || !section_in_file(f, s) || s->link >= f->nsecs)
			continue;
		str = &f->secs[s->link];
		if (str->type != SHT_STRTAB || !section_in_file(f, str))
			continue;
		t->present = true;
		t->dyn = type == SHT_DYNSYM;
		t->off = s->offset;
		t->entsize = ent;
		t->count = s->size / ent;
		t->stroff = str->offset;
		t->strsz = str->size;
		return;
	}
}

/* Number of symbols covered by a DT_GNU_HASH table at file offset off:
 * the highest index reached by any bucket's chain, plus one. */
static uint64_t gnu_hash_count(const struct elf_file *f, uint64_t off)
{
	uint32_t nbuckets, symoffset, bloom_size, maxsym = 0;
	uint64_t words = f->cls == 64 ? 8 : 4, buckets, chains;

	if (!rd32(f->data, f->size, off, &nbuckets) ||
	    !rd32(f->data, f->size, off + 4, &symoffset) ||
	    !rd32(f->data, f->size, off + 8, &bloom_size))
		return 0;
	buckets = off + 16 + (uint64_t)bloom_size * words;
	chains = buckets + (uint64_t)nbuckets * 4;
	if (!rng_ok(f->size, buckets, (uint64_t)nbuckets * 4))
		return 0;
	for (uint32_t i = 0; i < nbuckets; i++) {
		uint32_t b = ld32(f->data + buckets + 4ull * i);
		if (b > maxsym)
			maxsym = b;
	}
	if (maxsym < symoffset)
		return symoffset;
	for (uint64_t i = maxsym;; i++) {
		uint32_t c;
		if (!rd32(f->data, f->size, chains + 4 * (i - symoffset), &c))
			return 0;
		if (c & 1)
			return i + 1;
	}
}

struct dyn_info {
	uint64_t symtab, strtab, strsz, syment, hash, gnu_hash;
	bool has_symtab, has_strtab, has_hash, has_gnu_hash;
};

static void read_dynamic(const struct elf_file *f, const struct elf_segment *d, struct dyn_info *di)
{
	uint64_t ent = f->cls == 64 ? 16 : 8;
	uint64_t n = rng_ok(f->size, d->offset, d->filesz) ? d->filesz / ent : 0;

	for (uint64_t i = 0; i < n; i++) {
		const uint8_t *p = f->data + d->offset + i * ent;
		int64_t tag = f->cls == 64 ? (int64_t)ld64(p) : (int32_t)ld32(p);
		uint64_t val = f->cls == 64 ? ld64(p + 8) : ld32(p + 4);
		if (tag == DT_NULL)
			break;
		switch (tag) {
		case DT_SYMTAB: di->symtab = val; di->has_symtab = true; break;
		case DT_STRTAB: di->strtab = val; di->has_strtab = true; break;
		case DT_STRSZ: di->strsz = val; break;
		case DT_SYMENT: di->syment = val; break;
		case DT_HASH: di->hash = val; di->has_hash = true; break;
		case DT_GNU_HASH: di->gnu_hash = val; di->has_gnu_hash = true; break;
		default: break;
		}
	}
}

static void symtab_from_dynamic(struct elf_file *f, struct symtab *t)
{
	struct dyn_info di = { 0 };
	uint64_t symoff, stroff, hoff, count = 0;
	const struct elf_segment *dyn = NULL;

	for (size_t i = 0; i < f->nsegs; i++)
		if (f->segs[i].type == PT_DYNAMIC)
			dyn = &f->segs[i];
	if (!dyn)
		return;
	read_dynamic(f, dyn, &di);
	if (!di.has_symtab || !di.has_strtab)
		return;
	if (elf_vaddr_to_offset(f, di.symtab, &symoff, NULL) ||
	    elf_vaddr_to_offset(f, di.strtab, &stroff, NULL))
		return;
	if (!di.syment)
		di.syment = sym_size(f);
	if (di.syment < sym_size(f))
		return;
	if (di.has_hash && !elf_vaddr_to_offset(f, di.hash, &hoff, NULL)) {
		uint32_t nchain;
		if (rd32(f->data, f->size, hoff + 4, &nchain))
			count = nchain;
	} else if (di.has_gnu_hash && !elf_vaddr_to_offset(f, di.gnu_hash, &hoff, NULL)) {
		count = gnu_hash_count(f, hoff);
	}
	if (symoff > f->size || stroff > f->size)
		return;
	if (count > (f->size - symoff) / di.syment)
		count = (f->size - symoff) / di.syment;
	if (di.strsz > f->size - stroff)
		di.strsz = f->size - stroff;
	*t = (struct symtab){ .present = true, .dyn = true, .off = symoff, .count = count,
			      .entsize = di.syment, .stroff = stroff, .strsz = di.strsz };
}

static int elf_init(struct elf_file *f, struct err *err)
{
	int rc;

	if ((rc = parse_ehdr(f, err)))
		return rc;
	apply_extended_numbering(f);
	if ((rc = parse_phdrs(f, err)) || (rc = parse_shdrs(f, err)))
		return rc;
	symtab_from_section(f, SHT_DYNSYM, &f->dynsym);
	symtab_from_section(f, SHT_SYMTAB, &f->symtab);
	if (!f->dynsym.present && !f->symtab.present)
		symtab_from_dynamic(f, &f->dynsym);
	return 0;
}

int elf_open_mem(const char *name, const void *buf, size_t len, struct elf_file **out,
		 struct err *err)
{
	struct elf_file *f = calloc(1, sizeof(*f));
	int rc;

	*out = NULL;
	if (!f || !(f->name = strdup(name ? name : "(memory)"))) {
		free(f);
		return err_set(err, -ENOMEM, "out of memory");
	}
	f->data = buf;
	f->size = len;
	if ((rc = elf_init(f, err))) {
		elf_close(f);
		return rc;
	}
	*out = f;
	return 0;
}

int elf_open(const char *path, struct elf_file **out, struct err *err)
{
	struct mapped_file mf;
	int rc;

	*out = NULL;
	if ((rc = mapfile_open(path, 0, MAPFILE_REGULAR, &mf, err)))
		return rc;
	if ((rc = elf_open_mem(path, mf.data, mf.size, out, err))) {
		mapfile_close(&mf);
		return rc;
	}
	(*out)->mf = mf;
	(*out)->mapped = true;
	return 0;
}

void elf_close(struct elf_file *f)
{
	if (!f)
		return;
	if (f->mapped)
		mapfile_close(&f->mf);
	free(f->segs);
	free(f->loads);
	free(f->secs);
	free(f->name);
	free(f);
}

const char *elf_name(const struct elf_file *f)
{
	return f->name;
}

uint16_t elf_machine(const struct elf_file *f)
{
	return f->machine;
}

int elf_class(const struct elf_file *f)
{
	return f->cls;
}

uint16_t elf_type(const struct elf_file *f)
{
	return f->type;
}

const uint8_t *elf_data(const struct elf_file *f, size_t *size)
{
	if (size)
		*size = f->size;
	return f->data;
}

/* Decodes symbol i; the name is NULL when st_name is outside the string table. */
static void sym_at(const struct elf_file *f, const struct symtab *t, uint64_t i,
		   struct elf_symbol *s, const char **name)
{
	const uint8_t *p = f->data + t->off + i * t->entsize;
	uint32_t n = ld32(p);
	uint8_t info;

	if (f->cls == 64) {
		info = p[4];
		s->shndx = ld16(p + 6);
		s->value = ld64(p + 8);
		s->size = ld64(p + 16);
	} else {
		s->value = ld32(p + 4);
		s->size = ld32(p + 8);
		info = p[12];
		s->shndx = ld16(p + 14);
	}
	s->type = info & 0xf;
	s->bind = info >> 4;
	s->from_dynsym = t->dyn;
	*name = NULL;
	if (n && n < t->strsz && memchr(f->data + t->stroff + n, 0, t->strsz - n))
		*name = (const char *)f->data + t->stroff + n;
}

static int foreach_in(const struct elf_file *f, const struct symtab *t, elf_symbol_fn fn,
		      void *ctx)
{
	if (!t->present)
		return 0;
	for (uint64_t i = 0; i < t->count; i++) {
		struct elf_symbol s;
		const char *name;
		int rc;
		sym_at(f, t, i, &s, &name);
		if (name && (rc = fn(ctx, name, &s)))
			return rc;
	}
	return 0;
}

int elf_foreach_symbol(const struct elf_file *f, elf_symbol_fn fn, void *ctx)
{
	int rc = foreach_in(f, &f->dynsym, fn, ctx);
	return rc ? rc : foreach_in(f, &f->symtab, fn, ctx);
}

struct find_ctx {
	const char *want;
	struct elf_symbol *out;
};

static int find_cb(void *ctx, const char *name, const struct elf_symbol *sym)
{
	struct find_ctx *c = ctx;

	if (sym->shndx == SHN_UNDEF || strcmp(name, c->want) != 0)
		return 0;
	*c->out = *sym;
	return 1;
}

int elf_find_symbol(const struct elf_file *f, const char *name, struct elf_symbol *out)
{
	struct find_ctx c = { name, out };
	return elf_foreach_symbol(f, find_cb, &c) == 1 ? 0 : -ENOENT;
}

int elf_vaddr_to_offset(const struct elf_file *f, uint64_t vaddr, uint64_t *off,
			uint32_t *seg_flags)
{
	for (size_t i = 0; i < f->nloads; i++) {
		const struct elf_segment *s = &f->loads[i];
		if (vaddr >= s->vaddr && vaddr - s->vaddr < s->filesz) {
			*off = vaddr - s->vaddr + s->offset;
			if (seg_flags)
				*seg_flags = s->flags;
			return 0;
		}
	}
	return -ERANGE;
}

size_t elf_load_segments(const struct elf_file *f, const struct elf_segment **out)
{
	*out = f->loads;
	return f->nloads;
}

size_t elf_segments(const struct elf_file *f, const struct elf_segment **out)
{
	*out = f->segs;
	return f->nsegs;
}

int elf_find_section(const struct elf_file *f, const char *name, struct elf_section *out)
{
	for (size_t i = 0; i < f->nsecs; i++) {
		if (strcmp(f->secs[i].name, name) == 0) {
			*out = f->secs[i];
			return 0;
		}
	}
	return -ENOENT;
}

size_t elf_section_count(const struct elf_file *f)
{
	return f->nsecs;
}

int elf_section_at(const struct elf_file *f, size_t i, struct elf_section *out)
{
	if (i >= f->nsecs)
		return -ENOENT;
	*out = f->secs[i];
	return 0;
}
