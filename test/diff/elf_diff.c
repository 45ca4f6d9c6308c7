/* elf_diff.c — the differential test of the ELF reader (see elf_diff.h).
 *
 *   elf_diff PATH...                 every ELF file under the PATHs (files or
 *                                    directories, symlinks not followed)
 *   elf_diff --hostile DIR FILE...   truncated/corrupted copies of each FILE in DIR
 *   elf_diff --self-test FILE        planted mismatches must be found
 *
 * Prints one line of counts per file, "FAIL ..." per mismatch, and last
 * "elf-diff: N passed, N failed" (or "elf-hostile: ..."); exits 1 on any failure. */
#include "elf_diff.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/grow.h"

struct pathlist {
	char **v;
	size_t n, cap;
};

static struct pathlist files;

static bool is_elf(const char *path)
{
	unsigned char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	bool yes = fd >= 0 && read(fd, magic, 4) == 4 && !memcmp(magic, ELFMAG, SELFMAG);

	if (fd >= 0)
		close(fd);
	return yes;
}

static int add_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type != FTW_F || !is_elf(path))
		return 0;
	if (grow_array(&files.v, &files.cap, files.n + 1, 256) < 0)
		return -1;
	return (files.v[files.n++] = strdup(path)) ? 0 : -1;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void print_counts(const struct diff *d)
{
	printf("%s %s: %zu sections, %zu segments, %zu .dynsym + %zu .symtab symbols, "
	       "%zu addresses mapped, %zu lookups",
	       d->fails ? "FAILED" : "ok", d->file, d->secs, d->segs, d->dynsym, d->symtab,
	       d->mapped, d->lookups);
	if (d->has_mini)
		printf(", .gnu_debugdata %zu symbols", d->mini_syms);
	printf(", %zu FDEs\n", d->fdes);
}

/* Both readers over one file; true when they agree everywhere. */
static bool diff_file(const char *path)
{
	struct diff d = { .file = path };
	struct elf_file *ours = NULL;
	struct err e = { 0 };
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Elf *theirs = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
	int orc = elf_open(path, &ours, &e);

	if (!theirs || elf_kind(theirs) != ELF_K_ELF || orc) {
		diff_fail(&d, "open", "opens", orc ? e.msg : "yes",
			  theirs && elf_kind(theirs) == ELF_K_ELF ? "yes" : elf_errmsg(-1));
	} else {
		size_t len;
		const uint8_t *data = elf_data(ours, &len);
		diff_image(&d, ours, theirs);
		if (elf_section_count(ours))
			diff_no_sections(&d, data, len, theirs);
		diff_minidebug(&d, ours, theirs);
		if (elf_type(ours) != ET_REL)   /* readelf relocates a .o's FDEs, ours never */
			diff_cfi(&d, ours, path);
		print_counts(&d);
	}
	elf_close(ours);
	if (theirs)
		elf_end(theirs);
	if (fd >= 0)
		close(fd);
	return d.fails == 0;
}

static int run_diff(int argc, char **argv)
{
	size_t failed = 0;

	for (int i = 1; i < argc; i++)
		if (nftw(argv[i], add_file, 16, FTW_PHYS) != 0) {
			fprintf(stderr, "elf_diff: cannot walk %s: %s\n", argv[i], strerror(errno));
			return 2;
		}
	if (!files.n) {
		printf("elf-diff: 0 passed, 1 failed (no ELF file under the paths given)\n");
		return 1;
	}
	qsort(files.v, files.n, sizeof(*files.v), cmp_path);
	for (size_t i = 0; i < files.n; i++)
		failed += !diff_file(files.v[i]);
	printf("elf-diff: %zu passed, %zu failed (ELF files against libelf, xz, readelf)\n",
	       files.n - failed, failed);
	return failed ? 1 : 0;
}

static int run_hostile(int argc, char **argv)
{
	size_t failed = 0, mutants = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: elf_diff --hostile DIR FILE...\n");
		return 2;
	}
	for (int i = 3; i < argc; i++)
		failed += hostile_file(argv[i], argv[2], &mutants);
	printf("elf-hostile: %zu passed, %zu failed (damaged copies of %d files)\n",
	       mutants - failed, failed, argc - 3);
	return failed ? 1 : 0;
}

/* The comparison must be able to fail: ours over FILE against libelf over a copy
 * with e_type and section 1's sh_size changed must report exactly those fields. */
static int run_self_test(const char *path)
{
	struct diff d = { .file = "(self-test)", .planted = true };
	struct elf_file *ours = NULL;
	struct err e = { 0 };
	size_t len;
	int ok = 0;

	if (elf_open(path, &ours, &e)) {
		printf("elf-diff self-test: 0 passed, 1 failed (%s)\n", e.msg);
		return 1;
	}
	const uint8_t *data = elf_data(ours, &len);
	uint8_t *copy = malloc(len);
	bool w = data[EI_CLASS] == ELFCLASS64;
	memcpy(copy, data, len);
	copy[16] ^= 1;                                              /* e_type */
	uint64_t shoff = w ? *(uint64_t *)(copy + 40) : *(uint32_t *)(copy + 32);
	uint16_t shentsize = *(uint16_t *)(copy + (w ? 58 : 46));
	copy[shoff + shentsize + (w ? 32 : 20)] ^= 1;               /* section 1 sh_size */
	Elf *theirs = elf_memory((char *)copy, len);
	diff_tables(&d, ours, theirs);
	ok = d.fails == 2;
	printf("elf-diff self-test: %d passed, %d failed (%zu mismatches found, 2 planted)\n",
	       ok, !ok, d.fails);
	elf_end(theirs);
	free(copy);
	elf_close(ours);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (elf_version(EV_CURRENT) == EV_NONE) {
		fprintf(stderr, "elf_diff: libelf: %s\n", elf_errmsg(-1));
		return 2;
	}
	if (argc == 3 && !strcmp(argv[1], "--self-test"))
		return run_self_test(argv[2]);
	if (argc > 1 && !strcmp(argv[1], "--hostile"))
		return run_hostile(argc, argv);
	if (argc < 2) {
		fprintf(stderr, "usage: elf_diff PATH... | elf_diff --hostile DIR FILE...\n");
		return 2;
	}
	return run_diff(argc, argv);
}
