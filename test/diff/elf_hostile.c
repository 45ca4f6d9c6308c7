/* elf_hostile.c — damaged copies of real ELF files (see elf_diff.h).
 *
 * Each copy is written to the temporary directory and checked there; a crash (an
 * ASan/UBSan report) names the copy.
 * Rules:
 *   - ours never crashes, and every error it returns is one non-empty line;
 *   - where libelf cannot read the ELF header or the program headers, ours
 *     refuses the file; where libelf cannot read the section headers, ours
 *     shows none (it falls back to PT_DYNAMIC, as the loader would);
 *   - where both read the file, the header, program headers and section
 *     headers agree (symbols are not compared here: with a damaged table ours
 *     may legitimately fall back to PT_DYNAMIC where libelf shows nothing);
 *   - ours may refuse what libelf reads only for the reasons it documents: a
 *     program header table that does not fit in the file or whose e_phentsize is
 *     too small, a PT_LOAD whose file range lies outside the file or whose filesz
 *     exceeds its memsz (the loader could not map it), or a big-endian file;
 *   - ours may show no section headers where libelf reads them only when the table
 *     is unusable by its rules (e_shentsize too small, table not in the file). */
#include "elf_diff.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sanitizer/common_interface_defs.h>

#include "formats/cfi.h"
#include "formats/minidebug.h"

struct hctx {
	const char *dir, *base;
	const uint8_t *orig;
	size_t len;
	bool is64;
	size_t mutants, failed;
};

static void put(uint8_t *p, uint64_t v, unsigned width)
{
	for (unsigned i = 0; i < width; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Would the loader refuse this file's program headers (ours does, by design)?
 * libelf reads them with its own entry size whatever e_phentsize says, and
 * quietly shortens a table that runs past the end of the file. */
static bool loader_refuses(Elf *e, const GElf_Ehdr *eh, size_t len)
{
	size_t n = 0, ent = gelf_fsize(e, ELF_T_PHDR, 1, EV_CURRENT);
	GElf_Phdr ph;

	if (eh->e_phnum && (eh->e_phentsize < ent || eh->e_phoff > len ||
			    (uint64_t)eh->e_phnum * eh->e_phentsize > len - eh->e_phoff))
		return true;
	if (elf_getphdrnum(e, &n) != 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_filesz > ph.p_memsz || ph.p_vaddr + ph.p_memsz < ph.p_vaddr)
			return true;
		if (ph.p_filesz && (ph.p_offset > len || ph.p_filesz > len - ph.p_offset))
			return true;
	}
	return false;
}

/* Ours drops a section header table whose e_shentsize is below the ELF's entry size
 * or that does not fit in the file (it is advisory: the loader never reads it);
 * libelf ignores e_shentsize. */
static bool shdrs_unusable(Elf *e, const GElf_Ehdr *eh, size_t len)
{
	size_t ent = gelf_fsize(e, ELF_T_SHDR, 1, EV_CURRENT), n = 0;

	if (elf_getshdrnum(e, &n) != 0)
		return true;
	return eh->e_shentsize < ent || eh->e_shoff > len ||
	       (uint64_t)n * eh->e_shentsize > len - eh->e_shoff;
}

static int count_sym(void *ctx, const char *name, const struct elf_symbol *sym)
{
	(void)name;
	(void)sym;
	++*(size_t *)ctx;
	return 0;
}

/* Everything else ours offers over the file: only that it does not crash. */
static void exercise(const struct elf_file *f)
{
	struct minidebug m;
	struct cfi_table *t;
	struct cfi_row row;
	struct elf_symbol s;
	struct err e = { 0 };
	size_t n = 0;
	uint64_t off;

	elf_foreach_symbol(f, count_sym, &n);
	elf_find_symbol(f, "main", &s);
	elf_vaddr_to_offset(f, 0x1000, &off, NULL);
	if (minidebug_open(f, &m, &e) == 0) {
		elf_foreach_symbol(m.elf, count_sym, &n);
		minidebug_close(&m);
	}
	if (cfi_open(f, &t, &e) == 0) {
		for (size_t i = 0; i < cfi_fde_count(t) && i < 2000; i++) {
			uint64_t a, b;
			cfi_fde_range(t, i, &a, &b);
			cfi_row_at(t, a, &row, &e);
		}
		cfi_close(t);
	}
}

static bool one_line(const char *msg)
{
	return msg[0] && !strchr(msg, '\n');
}

/* The child's check of one copy; returns its failure count. */
static size_t check_copy(const char *path, size_t len)
{
	struct diff d = { .file = path };
	struct elf_file *ours = NULL;
	struct err e = { 0 };
	size_t np, ns;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *lf = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	GElf_Ehdr eh;
	bool ehdr_ok = lf && elf_kind(lf) == ELF_K_ELF && gelf_getehdr(lf, &eh);
	bool phdr_ok = ehdr_ok && lelf_read_all_phdrs(lf, &np);
	bool shdr_ok = ehdr_ok && lelf_read_all_shdrs(lf, &ns);
	int rc = elf_open(path, &ours, &e);

	if (rc) {
		if (!one_line(e.msg))
			diff_fail(&d, "error message", "one line", e.msg, "-");
		bool big = ehdr_ok && eh.e_ident[EI_DATA] == ELFDATA2MSB;
		if (ehdr_ok && phdr_ok && !big && !loader_refuses(lf, &eh, len))
			diff_fail(&d, "open", "reads the file", e.msg, "yes");
	} else if (!ehdr_ok || !phdr_ok) {
		diff_fail(&d, "open", "refuses the file", "no (opened it)",
			  ehdr_ok ? "program headers unreadable" : "ELF header unreadable");
	} else {
		if (!shdr_ok)
			diff_u64(&d, "section headers (libelf cannot read them)", "count",
				 elf_section_count(ours), 0);
		else if (elf_section_count(ours) || !shdrs_unusable(lf, &eh, len))
			diff_tables(&d, ours, lf);
		exercise(ours);
	}
	elf_close(ours);
	if (lf)
		elf_end(lf);
	if (fd >= 0)
		close(fd);
	return d.fails;
}

/* The copy being checked, named by the sanitizers' death callback: the check runs in
 * this process (a fork per copy would cost more than the checks), and the test is
 * built with ASan+UBSan, which turn a crash or a bad access into a report and exit. */
static char current[4096];

static void on_death(void)
{
	printf("FAIL %s: the check crashed (report above)\n", current);
	printf("elf-hostile: 0 passed, 1 failed (crashed)\n");
	fflush(stdout);
}

static void emit(struct hctx *h, const char *what, const uint8_t *buf, size_t len)
{
	int fd;

	snprintf(current, sizeof(current), "%s/%s.%s", h->dir, h->base, what);
	h->mutants++;
	fd = open(current, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || (len && write(fd, buf, len) != (ssize_t)len)) {
		printf("FAIL %s: cannot write: %s\n", current, strerror(errno));
		h->failed++;
	} else if (check_copy(current, len)) {
		h->failed++;
	} else {
		unlink(current);    /* failing copies stay for a look */
	}
	if (fd >= 0)
		close(fd);
}

static void truncated(struct hctx *h, const char *what, uint64_t at)
{
	char name[96];

	if (at >= h->len)
		return;
	snprintf(name, sizeof(name), "cut-%s-%llu", what, (unsigned long long)at);
	emit(h, name, h->orig, at);
}

/* A full copy with width bytes at off set to v. */
static void patched(struct hctx *h, const char *what, uint64_t off, uint64_t v, unsigned width)
{
	uint8_t *c;

	if (off + width > h->len || !(c = malloc(h->len)))
		return;
	memcpy(c, h->orig, h->len);
	put(c + off, v, width);
	emit(h, what, c, h->len);
	free(c);
}

static void header_cases(struct hctx *h)
{
	bool w = h->is64;
	unsigned aw = w ? 8 : 4;

	patched(h, "phoff-huge", w ? 32 : 28, ~0ull >> 8, aw);
	patched(h, "shoff-huge", w ? 40 : 32, ~0ull >> 8, aw);
	patched(h, "shoff-at-end", w ? 40 : 32, h->len - 10, aw);
	patched(h, "phentsize-1", w ? 54 : 42, 1, 2);
	patched(h, "shentsize-1", w ? 58 : 46, 1, 2);
	patched(h, "phnum-max", w ? 56 : 44, 0xffff, 2);
	patched(h, "shnum-max", w ? 60 : 48, 0xffff, 2);
	patched(h, "shstrndx-bad", w ? 62 : 50, 0xfffe, 2);
	patched(h, "shstrndx-xindex", w ? 62 : 50, 0xffff, 2);
	patched(h, "class-3", EI_CLASS, 3, 1);
	patched(h, "class-swapped", EI_CLASS, w ? ELFCLASS32 : ELFCLASS64, 1);
	patched(h, "big-endian", EI_DATA, ELFDATA2MSB, 1);
}

static void section_cases(struct hctx *h, Elf *e, size_t i, const char *name)
{
	Elf_Scn *scn = elf_getscn(e, i);
	GElf_Shdr sh;
	GElf_Ehdr eh;
	char what[96];
	bool w = h->is64;
	unsigned aw = w ? 8 : 4;

	if (!scn || !gelf_getshdr(scn, &sh) || !gelf_getehdr(e, &eh))
		return;
	uint64_t base = eh.e_shoff + (uint64_t)i * eh.e_shentsize;
#define SEC(tag, off, v, width) \
	(snprintf(what, sizeof(what), "%s-%s", name + 1, tag), \
	 patched(h, what, base + (off), v, width))
	SEC("offset-huge", w ? 24 : 16, ~0ull >> 8, aw);
	SEC("offset-at-end", w ? 24 : 16, h->len - 1, aw);
	SEC("size-huge", w ? 32 : 20, ~0ull >> 8, aw);
	SEC("link-bad", w ? 40 : 24, 0xffff, 4);
	SEC("entsize-1", w ? 56 : 36, 1, aw);
	SEC("name-huge", 0, 0x7fffffff, 4);
	SEC("nobits", 4, SHT_NOBITS, 4);
#undef SEC
	snprintf(what, sizeof(what), "%s", name + 1);
	truncated(h, what, sh.sh_offset + sh.sh_size / 2);
	if (sh.sh_type != SHT_NOBITS && sh.sh_size > 16) {   /* its bytes */
		snprintf(what, sizeof(what), "%s-head-zeroed", name + 1);
		patched(h, what, sh.sh_offset, 0, 8);
		snprintf(what, sizeof(what), "%s-middle-flipped", name + 1);
		patched(h, what, sh.sh_offset + sh.sh_size / 2, 0xa5a5a5a5u, 4);
		snprintf(what, sizeof(what), "%s-count-huge", name + 1);
		patched(h, what, sh.sh_offset + 8, 0x7fffffffu, 4);   /* .eh_frame_hdr count */
	}
}

/* Random bytes over the first 4 KiB and the section header table. */
static void random_cases(struct hctx *h, uint64_t shoff, unsigned count)
{
	uint8_t *c = malloc(h->len);
	uint32_t seed = 2463534242u;
	char what[32];

	for (unsigned k = 0; c && k < count; k++) {
		memcpy(c, h->orig, h->len);
		for (unsigned j = 0; j < 1 + k % 8; j++) {
			seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
			uint64_t span = h->len < 4096 ? h->len : 4096, off = seed % span;
			if (k % 2 && shoff < h->len)
				off = shoff + seed % (h->len - shoff);
			c[off] = (uint8_t)(seed >> 24);
		}
		snprintf(what, sizeof(what), "random-%u", k);
		emit(h, what, c, h->len);
	}
	free(c);
}

static const char *const interesting[] = {
	".dynsym", ".dynstr", ".symtab", ".strtab", ".shstrtab", ".dynamic", ".gnu.hash",
	".hash", ".gnu_debugdata", ".eh_frame", ".eh_frame_hdr", ".debug_frame",
};

static void file_cases(struct hctx *h, Elf *e)
{
	GElf_Ehdr eh;
	size_t n = 0;

	gelf_getehdr(e, &eh);
	uint64_t ph_mid = eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize / 2;
	uint64_t sh_mid = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize / 2;
	uint64_t cuts[] = { 0, 3, 4, 16, 51, 63, ph_mid, eh.e_shoff, sh_mid, h->len / 2,
			    h->len - 1 };
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++)
		truncated(h, "at", cuts[i]);
	header_cases(h);
	if (elf_getshdrnum(e, &n) == 0)
		for (size_t i = 1; i < n; i++) {
			Elf_Scn *scn = elf_getscn(e, i);
			GElf_Shdr sh;
			const char *name = scn && gelf_getshdr(scn, &sh) ?
				lelf_section_name(e, &sh) : "";
			for (size_t k = 0; k < sizeof(interesting) / sizeof(*interesting); k++)
				if (!strcmp(name, interesting[k]))
					section_cases(h, e, i, name);
		}
	random_cases(h, eh.e_shoff, 64);
}

size_t hostile_file(const char *path, const char *dir, size_t *mutants)
{
	struct hctx h = { .dir = dir };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	uint8_t *buf = NULL;
	Elf *e = NULL;

	__sanitizer_set_death_callback(on_death);
	h.base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	if (fd < 0 || fstat(fd, &st) != 0 || !(buf = malloc(st.st_size ? st.st_size : 1)) ||
	    read(fd, buf, st.st_size) != st.st_size ||
	    !(e = elf_memory((char *)buf, st.st_size)) || elf_kind(e) != ELF_K_ELF) {
		printf("FAIL %s: cannot read it as ELF\n", path);
		(*mutants)++;
		h.failed = 1;
	} else {
		h.orig = buf;
		h.len = st.st_size;
		h.is64 = gelf_getclass(e) == ELFCLASS64;
		file_cases(&h, e);
		printf("%s %s: %zu damaged copies, %zu failed\n", h.failed ? "FAILED" : "ok",
		       path, h.mutants, h.failed);
		*mutants += h.mutants;
	}
	if (e)
		elf_end(e);
	free(buf);
	if (fd >= 0)
		close(fd);
	return h.failed;
}
