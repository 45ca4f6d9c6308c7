/* elf_tools.c — the independent tools elf_diff compares with: `xz -dc` for
 * .gnu_debugdata, `readelf --debug-dump=frames` for the CFI (see elf_diff.h). */
#include "common/grow.h"
#include "elf_diff.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "formats/cfi.h"
#include "formats/minidebug.h"

extern char **environ;

/* Runs argv with stdout into *out (NUL-terminated, caller frees); stderr dropped.
 * Returns the exit status, or -1 when it could not run. */
static int run_capture(char *const argv[], uint8_t **out, size_t *len)
{
	posix_spawn_file_actions_t fa;
	int pfd[2], status;
	size_t cap = 1 << 16;
	pid_t pid;
	ssize_t r;

	*out = NULL;
	*len = 0;
	if (pipe(pfd) != 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_addclose(&fa, pfd[0]);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (rc != 0) {
		close(pfd[0]);
		return -1;
	}
	uint8_t *buf = malloc(cap + 1);
	while (buf && (r = read(pfd[0], buf + *len, cap - *len)) > 0) {
		*len += (size_t)r;
		if (*len == cap) {
			uint8_t *nb = realloc(buf, cap * 2 + 1);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	close(pfd[0]);
	if (waitpid(pid, &status, 0) < 0 || !buf) {
		free(buf);
		return -1;
	}
	buf[*len] = 0;
	*out = buf;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* A temporary file holding len bytes; its path in path (PATH_MAX bytes). */
static int write_temp(const void *data, size_t len, char *path, size_t size)
{
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	int fd;

	snprintf(path, size, "%s/elf_diff.XXXXXX", dir);
	if ((fd = mkstemp(path)) < 0)
		return -errno;
	if (write(fd, data, len) != (ssize_t)len) {
		close(fd);
		unlink(path);
		return -EIO;
	}
	close(fd);
	return 0;
}

static Elf_Data *lelf_section_by_name(Elf *e, const char *name, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn)))
		if (gelf_getshdr(scn, sh) && !strcmp(lelf_section_name(e, sh), name))
			return sh->sh_type == SHT_NOBITS ? NULL : elf_rawdata(scn, NULL);
	return NULL;
}

/* The inner image read by both: diff_image under "FILE!.gnu_debugdata". */
static void diff_inner(struct diff *d, const struct minidebug *m, uint8_t *img, size_t len)
{
	char name[1024], tmp[4096];
	const char *outer = d->file;
	Elf *e = elf_memory((char *)img, len);
	size_t dynsym = d->dynsym, symtab = d->symtab, mapped = d->mapped;

	snprintf(name, sizeof(name), "%s!.gnu_debugdata", outer);
	d->file = name;
	if (!e || elf_kind(e) != ELF_K_ELF)
		diff_fail(d, "embedded ELF", "readable", "yes", elf_errmsg(-1));
	else
		diff_image(d, m->elf, e);
	if (write_temp(img, len, tmp, sizeof(tmp)) == 0) {   /* its .debug_frame, if any */
		diff_cfi(d, m->elf, tmp);
		unlink(tmp);
	}
	d->mini_syms += d->dynsym + d->symtab - dynsym - symtab;
	d->dynsym = dynsym;       /* the outer file's counts stay its own */
	d->symtab = symtab;
	d->mapped = mapped;
	if (e)
		elf_end(e);
	d->file = outer;
}

void diff_minidebug(struct diff *d, const struct elf_file *ours, Elf *theirs)
{
	struct minidebug m;
	struct err e = { 0 };
	GElf_Shdr sh;
	Elf_Data *raw = lelf_section_by_name(theirs, ".gnu_debugdata", &sh);
	int rc = minidebug_open(ours, &m, &e);
	char tmp[4096];
	uint8_t *img;
	size_t len;

	if (!raw) {
		diff_u64(d, ".gnu_debugdata", "present (1 = yes)", rc != -ENOENT, 0);
		if (!rc)
			minidebug_close(&m);
		return;
	}
	d->has_mini = true;
	if (write_temp(raw->d_buf, raw->d_size, tmp, sizeof(tmp))) {
		diff_fail(d, ".gnu_debugdata", "temporary copy", "-", strerror(errno));
		goto out;
	}
	char *argv[] = { "xz", "-dc", tmp, NULL };
	int xrc = run_capture(argv, &img, &len);
	unlink(tmp);
	if (!diff_u64(d, ".gnu_debugdata", "decompresses (1 = yes; xz's view)", rc == 0,
		      xrc == 0) || rc) {
		if (rc && xrc == 0)
			printf("     ours: %s\n", e.msg);
		free(img);
		goto out;
	}
	if (diff_u64(d, ".gnu_debugdata", "decompressed size", m.len, len) &&
	    memcmp(m.buf, img, len) != 0)
		diff_fail(d, ".gnu_debugdata", "decompressed bytes", "differ", "(xz -dc)");
	else if (m.len == len)
		diff_inner(d, &m, img, len);
	free(img);
out:
	if (!rc)
		minidebug_close(&m);
}

struct range {
	uint64_t start, end;
};

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Sorted ranges with identical neighbours merged; returns the new count.  Two FDEs
 * for one range are legitimate (bionic's x86_64 libm.so repeats its assembly's CFI);
 * lld's .eh_frame_hdr lists that start once and ours, like the runtime's unwinder,
 * indexes through it, while readelf prints every FDE: so ranges are compared once. */
static size_t unique_ranges(struct range *v, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		if (!k || v[k - 1].start != v[i].start || v[k - 1].end != v[i].end)
			v[k++] = v[i];
	return k;
}

/* Every non-empty FDE's pc=START..END in readelf's frame dump, sorted. */
static struct range *readelf_fdes(const char *path, size_t *n, bool *ok)
{
	/* no-follow-links: the frames of this file only, never of a .gnu_debuglink file */
	char *argv[] = { "readelf", "--debug-dump=no-follow-links", "--debug-dump=frames",
			 (char *)path, NULL };
	struct range *v = NULL;
	size_t len, cap = 0;
	uint8_t *out;
	char *line, *save = NULL;

	*n = 0;
	*ok = run_capture(argv, &out, &len) == 0;
	if (!out)
		return NULL;
	for (line = strtok_r((char *)out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *pc = strstr(line, " FDE ");
		uint64_t s, e;
		if (!pc || !(pc = strstr(pc, "pc=")) ||
		    sscanf(pc, "pc=%" SCNx64 "..%" SCNx64, &s, &e) != 2 || s == e)
			continue;
		if (grow_array(&v, &cap, *n + 1, 256) < 0)
			break;
		v[(*n)++] = (struct range){ s, e };
	}
	free(out);
	if (*n)
		qsort(v, *n, sizeof(*v), cmp_range);
	*n = unique_ranges(v, *n);
	return v;
}

void diff_cfi(struct diff *d, const struct elf_file *ours, const char *path)
{
	struct cfi_table *t = NULL;
	struct err e = { 0 };
	size_t n = 0;
	bool ok;
	struct range *want;

	if (cfi_open(ours, &t, &e) == -ENOENT)
		return;
	if (!t) {
		diff_fail(d, "CFI", "opens", e.msg, "(readelf reads it)");
		return;
	}
	want = readelf_fdes(path, &n, &ok);
	if (!ok)
		diff_fail(d, "CFI", "readelf --debug-dump=frames", "-", "failed");
	size_t m = cfi_fde_count(t);
	struct range *got = calloc(m ? m : 1, sizeof(*got));
	for (size_t i = 0; got && i < m; i++)
		cfi_fde_range(t, i, &got[i].start, &got[i].end);
	if (got && m)
		qsort(got, m, sizeof(*got), cmp_range);
	m = got ? unique_ranges(got, m) : 0;
	diff_u64(d, "CFI (distinct non-empty FDE ranges; readelf's view)", "count", m, n);
	for (size_t i = 0; got && i < m && i < n; i++) {
		char where[64];
		snprintf(where, sizeof(where), "FDE %zu (sorted)", i);
		if (!diff_u64(d, where, "pc start", got[i].start, want[i].start) ||
		    !diff_u64(d, where, "pc end", got[i].end, want[i].end))
			break;
	}
	d->fdes += m;
	free(got);
	free(want);
	cfi_close(t);
}
