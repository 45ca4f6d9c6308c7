#include "resolve/class_index.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "code/codecache.h"
#include "code/codefile.h"
#include "common/grow.h"
#include "common/mapfile.h"
#include "formats/dex.h"
#include "formats/oat.h"
#include "formats/oat_dexfile.h"

#define MAGIC "uprobestats-class-index 1\n"
#define MAX_CACHE ((size_t)256 << 20)

struct class_index {
	char *text;                 /* "\nLa;\nLb;\n": lookups are one memmem */
	size_t len, cap, count;
	bool from_cache;
	char isa[16];
	char missing[512];
};

static int put(struct class_index *ci, const char *s, size_t n)
{
	if (n > SIZE_MAX - 2 - ci->len)
		return -EOVERFLOW;
	if (grow_array(&ci->text, &ci->cap, ci->len + n + 2, 65536) < 0)
		return -ENOMEM;
	memcpy(ci->text + ci->len, s, n);
	ci->len += n;
	ci->text[ci->len] = 0;
	return 0;
}

/* The cache key line: everything that must still match the file. */
static void key_line(const char *path, const struct stat *st, const struct oat_file *o,
		     char *buf, size_t size)
{
	snprintf(buf, size, "%s\t%lld\t%lld.%09ld\t%08x\t%s\n", path, (long long)st->st_size,
		 (long long)st->st_mtim.tv_sec, st->st_mtim.tv_nsec, oat_info(o)->oat_checksum,
		 oat_info(o)->isa);
}

static void cache_path(const char *dir, const char *path, char *buf, size_t size)
{
	uint64_t h = 1469598103934665603ull;   /* FNV-1a */
	for (const char *p = path; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	snprintf(buf, size, "%s/%016" PRIx64 ".cls", dir, h);
}

static bool read_cache(struct class_index *ci, const char *file, const char *key)
{
	struct mapped_file mf;
	struct err e;
	size_t hl = strlen(MAGIC) + strlen(key);

	if (mapfile_open(file, MAX_CACHE, 0, &mf, &e))
		return false;
	bool ok = mf.size > hl && !memcmp(mf.data, MAGIC, strlen(MAGIC)) &&
		  !memcmp(mf.data + strlen(MAGIC), key, strlen(key)) &&
		  mf.data[mf.size - 1] == '\n';
	/* keep the "\n" that ends the key line: every entry is then "\n<desc>\n" */
	ci->len = 0;
	if (ok && put(ci, (const char *)mf.data + hl - 1, mf.size - hl + 1) == 0) {
		for (size_t i = 1; i < ci->len; i++)
			ci->count += ci->text[i] == '\n';
	} else {
		ok = false;
	}
	mapfile_close(&mf);
	return ok;
}

static void mkdirs(const char *dir)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s", dir);
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			mkdir(tmp, 0700);
			*p = '/';
		}
	}
	mkdir(tmp, 0700);
}

/* Best effort: a cache that cannot be written only costs time. */
static void write_cache(const struct class_index *ci, const char *dir, const char *file,
			const char *key)
{
	char tmp[4200];
	FILE *f;

	mkdirs(dir);
	snprintf(tmp, sizeof(tmp), "%s.%d.tmp", file, (int)getpid());
	if (!(f = fopen(tmp, "w")))
		return;
	bool ok = fputs(MAGIC, f) >= 0 && fputs(key, f) >= 0 &&
		  fwrite(ci->text + 1, 1, ci->len - 1, f) == ci->len - 1;
	if (fclose(f) != 0 || !ok || rename(tmp, file) != 0)
		unlink(tmp);
}

static int build(struct class_index *ci, const struct oat_file *o, struct oat_dexset *ds,
		 struct err *err)
{
	for (uint32_t di = 0; di < oat_dex_count(o); di++) {
		const struct dex_file *d;
		struct err de;
		if (oat_dexset_get(ds, di, &d, &de)) {
			if (!ci->missing[0])
				snprintf(ci->missing, sizeof(ci->missing), "%s", de.msg);
			continue;
		}
		for (uint32_t k = 0; k < dex_class_def_count(d); k++) {
			struct dex_class_def cd;
			const char *desc;
			if (dex_class_def_at(d, k, &cd) ||
			    !(desc = dex_type_descriptor(d, cd.class_idx)))
				continue;
			if (put(ci, desc, strlen(desc)) || put(ci, "\n", 1))
				return err_set(err, -ENOMEM, "out of memory");
			ci->count++;
		}
	}
	return 0;
}

/* Its dex files: the code cache's without extra archives (*own NULL). */
static int open_dexset(struct code_file *f, const char *path, const struct oat_file *o,
		       const char *const *dex_files, size_t n_dex, struct oat_dexset **ds,
		       struct oat_dexset **own, struct err *err)
{
	int rc;

	*own = NULL;
	if (!n_dex)
		return code_file_dexset(f, ds, err);
	rc = oat_dexset_new(o, path, dex_files, n_dex, own, err);
	*ds = *own;
	return rc;
}

static int build_from(struct class_index *ci, struct code_file *f, const char *path,
		      const struct oat_file *o, const char *const *dex_files, size_t n_dex,
		      struct err *err)
{
	struct oat_dexset *ds, *own;
	int rc = open_dexset(f, path, o, dex_files, n_dex, &ds, &own, err);

	if (!rc)
		rc = build(ci, o, ds, err);
	oat_dexset_free(own);
	return rc;
}

int class_index_load(struct code_cache *code, const char *oat_path, const char *cache_dir,
		     const char *const *dex_files, size_t n_dex_files, struct class_index **out,
		     struct err *err)
{
	struct class_index *ci = calloc(1, sizeof(*ci));
	struct code_file *f = code_cache_file(code, oat_path);
	const struct oat_file *o;
	struct stat st;
	char key[4400], file[4200];
	int rc;

	*out = NULL;
	if (!ci || !f || put(ci, "\n", 1)) {
		free(ci);
		return err_set(err, -ENOMEM, "out of memory");
	}
	if (stat(oat_path, &st) != 0) {
		rc = err_set(err, -errno, "%s: cannot stat: %s", oat_path, strerror(errno));
		class_index_free(ci);
		return rc;
	}
	if ((rc = code_file_oat(f, &o, err))) {
		class_index_free(ci);
		return rc;
	}
	snprintf(ci->isa, sizeof(ci->isa), "%s", oat_info(o)->isa);
	key_line(oat_path, &st, o, key, sizeof(key));
	if (cache_dir) {
		cache_path(cache_dir, oat_path, file, sizeof(file));
		ci->from_cache = read_cache(ci, file, key);
		if (!ci->from_cache)
			ci->len = 1, ci->count = 0;
	}
	if (!ci->from_cache) {
		if ((rc = build_from(ci, f, oat_path, o, dex_files, n_dex_files, err))) {
			class_index_free(ci);
			return rc;
		}
		if (cache_dir && !ci->missing[0])
			write_cache(ci, cache_dir, file, key);
	}
	*out = ci;
	return 0;
}

void class_index_free(struct class_index *ci)
{
	if (!ci)
		return;
	free(ci->text);
	free(ci);
}

bool class_index_has(const struct class_index *ci, const char *desc)
{
	size_t n = strlen(desc);
	const char *p = ci->text, *end = ci->text + ci->len;

	while ((p = memmem(p, (size_t)(end - p), desc, n))) {
		if (p > ci->text && p[-1] == '\n' && p + n < end && p[n] == '\n')
			return true;
		p++;
	}
	return false;
}

bool class_index_from_cache(const struct class_index *ci) { return ci->from_cache; }
const char *class_index_isa(const struct class_index *ci) { return ci->isa; }
size_t class_index_count(const struct class_index *ci) { return ci->count; }
const char *class_index_missing_dex(const struct class_index *ci) { return ci->missing; }
