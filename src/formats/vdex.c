#include "formats/vdex.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mapfile.h"
#include "common/bytes.h"

#define V21_FIXED 28            /* magic, 2 versions, 4 u32 sizes */
#define MAX_SECTIONS 16

struct vdex_file {
	char *name;
	const uint8_t *data;
	size_t size;
	struct mapped_file mf;
	bool mapped, invalidated;
	int version;
	uint32_t n_dex;
	uint64_t checksums;         /* offset of u32[n_dex] */
	uint64_t dex_begin, dex_end; /* the dex files; [0,0) when absent */
	bool quickening_words;      /* 021: a u32 precedes each dex */
};

static int parse_v21(struct vdex_file *v, struct err *err)
{
	const uint8_t *d = v->data;
	bool has_dex;

	if (v->size < V21_FIXED)
		return err_set(err, -EINVAL, "%s: truncated vdex 021 header", v->name);
	if (memcmp(d + 8, "002\0", 4) == 0)
		has_dex = true;
	else if (memcmp(d + 8, "000\0", 4) == 0)
		has_dex = false;
	else
		return err_set(err, -ENOTSUP, "%s: unknown vdex dex-section version \"%.3s\"",
			       v->name, (const char *)d + 8);
	v->n_dex = ld32(d + 12);
	v->checksums = V21_FIXED;
	if (!rng_ok(v->size, v->checksums, 4ull * v->n_dex))
		return err_set(err, -EINVAL,
			       "%s: vdex checksum table (%u entries) runs past the end", v->name,
			       v->n_dex);
	if (!has_dex)
		return 0;
	uint64_t sh = v->checksums + 4ull * v->n_dex;
	uint32_t dex_size;
	if (!rd32(d, v->size, sh, &dex_size) || !rng_ok(v->size, sh + 12, dex_size))
		return err_set(err, -EINVAL, "%s+0x%llx: vdex dex section runs past the end",
			       v->name, (unsigned long long)sh);
	v->dex_begin = sh + 12;
	v->dex_end = sh + 12 + dex_size;
	v->quickening_words = true;
	return 0;
}

static int parse_v27(struct vdex_file *v, struct err *err)
{
	uint32_t n;

	if (!rd32(v->data, v->size, 8, &n) || n > MAX_SECTIONS || !rng_ok(v->size, 12, 12ull * n))
		return err_set(err, -EINVAL, "%s: truncated or bad vdex 027 section table",
			       v->name);
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *s = v->data + 12 + 12ull * i;
		uint32_t kind = ld32(s), off = ld32(s + 4), size = ld32(s + 8);
		if (size && !rng_ok(v->size, off, size))
			return err_set(err, -EINVAL,
				       "%s: vdex section %u (kind %u) at 0x%x+0x%x runs past "
				       "the end",
				       v->name, i, kind, off, size);
		if (kind == 0) {
			v->checksums = off;
			v->n_dex = size / 4;
		} else if (kind == 1 && size) {
			v->dex_begin = off;
			v->dex_end = (uint64_t)off + size;
		}
	}
	return 0;
}

int vdex_open_mem(const char *name, const void *buf, size_t len, struct vdex_file **out,
		  struct err *err)
{
	struct vdex_file *v = calloc(1, sizeof(*v));
	int rc;

	*out = NULL;
	if (!v || !(v->name = strdup(name ? name : "(vdex)"))) {
		free(v);
		return err_set(err, -ENOMEM, "out of memory");
	}
	v->data = buf;
	v->size = len;
	if (len < 12 || (memcmp(buf, "vdex", 4) && memcmp(buf, "wdex", 4))) {
		rc = err_set(err, -EINVAL, "%s: not a vdex file (no \"vdex\" magic)", v->name);
	} else {
		v->invalidated = memcmp(buf, "wdex", 4) == 0;
		if (memcmp(v->data + 4, "021\0", 4) == 0) {
			v->version = 21;
			rc = parse_v21(v, err);
		} else if (memcmp(v->data + 4, "027\0", 4) == 0) {
			v->version = 27;
			rc = parse_v27(v, err);
		} else {
			rc = err_set(err, -ENOTSUP,
				     "%s: vdex version \"%.3s\" is not one of Android 10-16 "
				     "(021, 027)",
				     v->name, (const char *)v->data + 4);
		}
	}
	if (rc) {
		vdex_close(v);
		return rc;
	}
	*out = v;
	return 0;
}

int vdex_open(const char *path, struct vdex_file **out, struct err *err)
{
	struct mapped_file mf;
	int rc;

	*out = NULL;
	if ((rc = mapfile_open(path, 0, MAPFILE_REGULAR, &mf, err)))
		return rc;
	if ((rc = vdex_open_mem(path, mf.data, mf.size, out, err))) {
		mapfile_close(&mf);
		return rc;
	}
	(*out)->mf = mf;
	(*out)->mapped = true;
	return 0;
}

void vdex_close(struct vdex_file *v)
{
	if (!v)
		return;
	if (v->mapped)
		mapfile_close(&v->mf);
	free(v->name);
	free(v);
}

const char *vdex_name(const struct vdex_file *v) { return v->name; }
int vdex_version(const struct vdex_file *v) { return v->version; }
bool vdex_invalidated(const struct vdex_file *v) { return v->invalidated; }
uint32_t vdex_dex_count(const struct vdex_file *v) { return v->n_dex; }
bool vdex_has_dex_section(const struct vdex_file *v) { return v->dex_end > v->dex_begin; }

uint32_t vdex_checksum(const struct vdex_file *v, uint32_t i)
{
	return i < v->n_dex ? ld32(v->data + v->checksums + 4ull * i) : 0;
}

int vdex_open_dex(const struct vdex_file *v, uint32_t dex_file_offset, struct dex_file **out,
		  struct err *err)
{
	char name[512];

	*out = NULL;
	if (!vdex_has_dex_section(v))
		return err_set(err, -ENOENT, "%s: the vdex holds no dex files (dex section absent)",
			       v->name);
	if (dex_file_offset < v->dex_begin || dex_file_offset >= v->dex_end)
		return err_set(err, -EINVAL,
			       "%s: dex offset 0x%x is outside the vdex dex section "
			       "[0x%llx, 0x%llx)",
			       v->name, dex_file_offset, (unsigned long long)v->dex_begin,
			       (unsigned long long)v->dex_end);
	snprintf(name, sizeof(name), "%s@0x%x", v->name, dex_file_offset);
	/* Compact dex reads its shared data after the dex section, so the dex
	 * sees the whole vdex; dex_open bounds standard dex files by file_size. */
	return dex_open(name, v->data, v->size, dex_file_offset, out, err);
}

int vdex_next_dex(const struct vdex_file *v, uint64_t *cursor, uint32_t *off, struct err *err)
{
	uint64_t pos = *cursor ? *cursor : v->dex_begin;
	uint32_t fsize;

	if (!vdex_has_dex_section(v) || pos >= v->dex_end)
		return 0;
	if (v->quickening_words)
		pos += 4;
	pos = (pos + 3) & ~3ull;
	if (!rd32(v->data, v->size, pos + 0x20, &fsize) || pos + 0x70 > v->dex_end ||
	    fsize < 0x70 || fsize > v->dex_end - pos)
		return err_set(err, -EINVAL, "%s+0x%llx: damaged dex header in the dex section",
			       v->name, (unsigned long long)pos);
	if (pos > UINT32_MAX)
		return err_set(err, -EINVAL, "%s: dex section beyond 4 GiB", v->name);
	*off = (uint32_t)pos;
	*cursor = (pos + fsize + 3) & ~3ull;
	return 1;
}
