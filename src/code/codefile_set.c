/* codefile_set.c — the set of files the code cache reads: each file found
 * by device, inode and mtime (a failure kept as an entry too), opened as an
 * ELF, or, for a zip (an APK a library is mapped from), as the ELF stored in
 * one of its entries, found by name or by a mapping's offset. */
#include "code/codefile_priv.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/zip_path.h"
#include "formats/elf.h"
#include "formats/zip.h"

struct code_files *code_files_new(void)
{
	return calloc(1, sizeof(struct code_files));
}

void code_files_free(struct code_files *fs)
{
	if (!fs)
		return;
	while (fs->head) {
		struct code_file *f = fs->head;
		fs->head = f->next;
		code_file_release(f);
	}
	free(fs);
}

void code_files_stats(const struct code_files *fs, struct code_cache_stats *out)
{
	*out = fs->st;
}


static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* The file's opened ELF: its counters and oat marker. */

static void elf_loaded(struct code_files *fs, struct code_file *f)
{
	struct elf_symbol os;

	fs->st.files_opened++;
	f->elf = f->own_elf;
	f->is_oat = elf_find_symbol(f->elf, "oatdata", &os) == 0;
}

static void load_failed(struct code_files *fs, struct code_file *f, int rc, const char *msg,
			const char *shown)
{
	f->own_elf = NULL;
	f->open_rc = rc;
	f->bad = true;
	f->open_msg = strdup(msg);
	snprintf(f->why, sizeof(f->why), "unknown in %s", shown);
	fs->st.files_failed++;
}

/* Opens the file as an ELF; the rest is read on first use. */

static void file_load(struct code_files *fs, struct code_file *f, const char *shown)
{
	struct err e = { 0 };
	int rc;

	if ((rc = elf_open(f->path, &f->own_elf, &e)) < 0)
		return load_failed(fs, f, rc, e.msg, shown);
	elf_loaded(fs, f);
}

/* The ELF stored in f->zip at f->base (f->member_size bytes). */

static void member_load(struct code_files *fs, struct code_file *f, const char *shown)
{
	struct err e = { 0 };
	size_t size;
	const uint8_t *data = zip_bytes(f->zip, &size);
	int rc;

	if ((rc = elf_open_mem(f->path, data + f->base, f->member_size, &f->own_elf, &e)) < 0) {
		err_prefix(&e, "%s+0x%llx (entry %s)", zip_name(f->zip),
			   (unsigned long long)f->base, f->member);
		return load_failed(fs, f, rc, e.msg, shown);
	}
	elf_loaded(fs, f);
}

static struct code_file *file_new(struct code_files *fs, const char *path, const struct stat *st)
{
	struct code_file *f = calloc(1, sizeof(*f));

	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	f->fs = fs;
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->mtime_ns = mtime_ns(st);
	return f;
}

static struct code_file *file_add(struct code_files *fs, struct code_file *f)
{
	f->next = fs->head;
	fs->head = f;
	return f;
}

static bool same_stat(const struct code_file *f, const struct stat *st)
{
	return f->ino == st->st_ino && f->dev == st->st_dev && f->mtime_ns == mtime_ns(st);
}

/* The member entry of zip entry ze (at data offset base), which the lookup
 * named by its file name asked: the set's entry of that member if it has one
 * (z closed), else a new one; either answers to asked from now on. */
static struct code_file *member_also_named(struct code_files *fs, struct zip_archive *z,
					   const struct stat *st, const char *mpath,
					   const char *asked, const struct zip_entry *ze,
					   uint64_t base, const char *mshown)
{
	struct code_file *f;

	for (f = fs->head; f; f = f->next)
		if (f->member && !f->bad && same_stat(f, st) && f->base == base &&
		    !strcmp(f->path, mpath))
			break;
	if (f) {
		zip_close(z);
		if (!f->asked)
			f->asked = strdup(asked);   /* else only a second lookup's cost */
		return f;
	}
	if (!(f = file_new(fs, mpath, st)) || !(f->member = strndup(ze->name, ze->name_len)) ||
	    !(f->asked = strdup(asked))) {
		zip_close(z);
		if (f) {
			free(f->member);
			free(f->path);
			free(f);
		}
		return NULL;
	}
	f->base = base;
	f->zip = z;
	f->member_size = ze->comp_size;
	member_load(fs, f, mshown);
	return file_add(fs, f);
}

/* A new member entry of container: found by name (entry) or by an offset in
 * its data (entry NULL); a failure is an entry too (f->bad), keyed by name or
 * by that offset. */

static struct code_file *member_new(struct code_files *fs, const char *container, size_t clen,
				    const char *shown, size_t slen, const struct stat *st,
				    const char *entry, uint64_t map_off)
{
	char cpath[PATH_MAX], mpath[PATH_MAX], mshown[PATH_MAX];
	struct zip_entry ze;
	struct err e = { 0 };
	struct code_file *f;
	int rc;
	struct zip_archive *z = NULL;
	const char *asked = entry;

	snprintf(cpath, sizeof(cpath), "%.*s", (int)clen, container);
	if ((rc = zip_open(cpath, &z, &e)) == 0)
		rc = entry ? zip_stored_entry(z, entry, &ze, &map_off, &e)
			   : zip_entry_holding(z, map_off, &ze, &map_off, &e);
	if (!rc) {
		entry = NULL;
		if (zip_path_join(mpath, sizeof(mpath), container, clen, ze.name, ze.name_len) ||
		    zip_path_join(mshown, sizeof(mshown), shown, slen, ze.name, ze.name_len))
			rc = err_set(&e, -ENAMETOOLONG, "%s: path too long", cpath);
	}
	if (rc) {
		if (entry)
			snprintf(mpath, sizeof(mpath), "%.*s!/%s", (int)clen, container, entry);
		else
			snprintf(mpath, sizeof(mpath), "%.*s", (int)clen, container);
		snprintf(mshown, sizeof(mshown), "%s", mpath);
	}
	/* found by its file name only (formats/zip.h): the entry of its whole name
	 * if the set has it, and found by that file name again */
	if (!rc && asked && (ze.name_len != strlen(asked) || memcmp(ze.name, asked, ze.name_len)))
		return member_also_named(fs, z, st, mpath, asked, &ze, map_off, mshown);
	if (!(f = file_new(fs, mpath, st))) {
		zip_close(z);
		return NULL;
	}
	f->base = map_off;
	f->member = rc ? strdup(entry ? entry : "") : strndup(ze.name, ze.name_len);
	if (!f->member) {
		zip_close(z);
		free(f->path);
		free(f);
		return NULL;
	}
	if (rc) {
		zip_close(z);
		f->member_size = 1;           /* the failure answers for this offset */
		load_failed(fs, f, rc, e.msg, mshown);
	} else {
		f->zip = z;
		f->member_size = ze.comp_size;
		member_load(fs, f, mshown);
	}
	return file_add(fs, f);
}

struct code_file *code_file_get(struct code_files *fs, const char *path, const char *shown)
{
	struct stat st;
	struct code_file *f;
	const char *entry, *sentry;
	size_t clen, slen;
	struct err e = { 0 };

	if (zip_path_split(path, &clen, &entry, &e) > 0) {
		char cpath[PATH_MAX];
		snprintf(cpath, sizeof(cpath), "%.*s", (int)clen, path);
		if (stat(cpath, &st) != 0)
			memset(&st, 0, sizeof(st));
		for (f = fs->head; f; f = f->next)
			if (f->member && same_stat(f, &st) &&
			    (!strcmp(f->member, entry) || (f->asked && !strcmp(f->asked, entry))) &&
			    (st.st_ino || !strcmp(f->path, path)))
				return f;
		if (zip_path_split(shown, &slen, &sentry, &e) <= 0)
			slen = strlen(shown);
		return member_new(fs, path, clen, shown, slen, &st, entry, 0);
	}
	if (stat(path, &st) != 0)
		memset(&st, 0, sizeof(st));
	for (f = fs->head; f; f = f->next) {
		if (f->member)
			continue;
		if (st.st_ino ? same_stat(f, &st) : !f->ino && !strcmp(f->path, path))
			return f;
	}
	if (!(f = file_new(fs, path, &st)))
		return NULL;
	file_load(fs, f, shown);
	return file_add(fs, f);
}

/* Whether the file at path starts like a zip (a local header or an empty
 * archive's end record): its mappings are of the entries it stores. */

static bool looks_like_zip(const char *path)
{
	unsigned char m[4] = { 0 };
	FILE *fp = fopen(path, "rb");
	bool zip;

	if (!fp)
		return false;
	zip = fread(m, 1, 4, fp) == 4 && m[0] == 'P' && m[1] == 'K' &&
	      ((m[2] == 3 && m[3] == 4) || (m[2] == 5 && m[3] == 6));
	fclose(fp);
	return zip;
}

struct code_file *code_file_get_mapped(struct code_files *fs, const char *path, const char *shown,
				       uint64_t map_off)
{
	struct code_file *plain;
	struct stat st;

	if (stat(path, &st) != 0 || !st.st_ino)
		return code_file_get(fs, path, shown);
	for (struct code_file *f = fs->head; f; f = f->next)
		if (f->member && same_stat(f, &st) && code_file_holds(f, map_off))
			return f;
	/* The file itself first, so that an ELF (nearly every mapping) is opened
	 * once; only a file that is no ELF is looked at as a zip, whose mappings
	 * are its stored entries'. */
	plain = code_file_get(fs, path, shown);
	if (!plain || !plain->bad || plain->open_rc != -ENOEXEC || !looks_like_zip(path))
		return plain;
	return member_new(fs, path, strlen(path), shown, strlen(shown), &st, NULL, map_off);
}

struct code_file *code_files_find(struct code_files *fs, dev_t dev, uint64_t ino)
{
	for (struct code_file *f = fs->head; f; f = f->next)
		if (f->ino && f->ino == ino && f->dev == dev && !f->bad && !f->member)
			return f;
	return NULL;
}
