#include "formats/zip.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/mapfile.h"
#include "common/bytes.h"

#define EOCD_SIG 0x06054b50u
#define CDIR_SIG 0x02014b50u
#define LOCAL_SIG 0x04034b50u
#define EOCD_SIZE 22
#define CDIR_SIZE 46
#define LOCAL_SIZE 30
#define MAX_COMMENT 0xffff

struct zip_archive {
	char *name;
	const uint8_t *data;
	size_t size;
	struct mapped_file mf;
	bool mapped;
	uint64_t cd_off, cd_size;
	uint32_t count;
};

/* The EOCD is the last record; an archive comment of up to 64 KiB may follow it. */
static int find_eocd(struct zip_archive *z, struct err *err)
{
	uint64_t lo, pos;

	if (z->size < EOCD_SIZE)
		return err_set(err, -EINVAL, "%s: not a zip archive (only %zu bytes)", z->name,
			       z->size);
	lo = z->size > EOCD_SIZE + MAX_COMMENT ? z->size - EOCD_SIZE - MAX_COMMENT : 0;
	for (pos = z->size - EOCD_SIZE + 1; pos-- > lo;) {
		const uint8_t *p = z->data + pos;
		if (ld32(p) != EOCD_SIG)
			continue;
		uint16_t disk = ld16(p + 4), cd_disk = ld16(p + 6);
		uint16_t n_here = ld16(p + 8), n = ld16(p + 10);
		uint32_t cd_size = ld32(p + 12), cd_off = ld32(p + 16);
		if (cd_off == 0xffffffffu || n == 0xffff)
			return err_set(err, -ENOTSUP, "%s: ZIP64 archives are not supported",
				       z->name);
		if (disk || cd_disk || n_here != n)
			return err_set(err, -ENOTSUP,
				       "%s: multi-disk zip archives are not supported", z->name);
		if ((uint64_t)cd_off + cd_size > pos)
			return err_set(err, -EINVAL,
				       "%s+0x%llx: central directory 0x%x+0x%x overlaps the "
				       "end record",
				       z->name, (unsigned long long)pos, cd_off, cd_size);
		z->cd_off = cd_off;
		z->cd_size = cd_size;
		z->count = n;
		return 0;
	}
	return err_set(err, -EINVAL, "%s: not a zip archive (no end-of-central-directory record)",
		       z->name);
}

int zip_open_mem(const char *name, const void *buf, size_t len, struct zip_archive **out,
		 struct err *err)
{
	struct zip_archive *z = calloc(1, sizeof(*z));
	int rc;

	*out = NULL;
	if (!z || !(z->name = strdup(name ? name : "(memory)"))) {
		free(z);
		return err_set(err, -ENOMEM, "out of memory");
	}
	z->data = buf;
	z->size = len;
	if ((rc = find_eocd(z, err))) {
		zip_close(z);
		return rc;
	}
	*out = z;
	return 0;
}

int zip_open(const char *path, struct zip_archive **out, struct err *err)
{
	struct mapped_file mf;
	int rc;

	*out = NULL;
	if ((rc = mapfile_open(path, 0, MAPFILE_REGULAR, &mf, err)))
		return rc;
	if ((rc = zip_open_mem(path, mf.data, mf.size, out, err))) {
		mapfile_close(&mf);
		return rc;
	}
	(*out)->mf = mf;
	(*out)->mapped = true;
	return 0;
}

void zip_close(struct zip_archive *z)
{
	if (!z)
		return;
	if (z->mapped)
		mapfile_close(&z->mf);
	free(z->name);
	free(z);
}

const char *zip_name(const struct zip_archive *z)
{
	return z->name;
}

size_t zip_entry_count(const struct zip_archive *z)
{
	return z->count;
}

int zip_next(const struct zip_archive *z, uint64_t *cursor, struct zip_entry *out,
	     struct err *err)
{
	uint64_t pos = z->cd_off + *cursor, end = z->cd_off + z->cd_size;
	const uint8_t *p;
	uint16_t nlen, xlen, clen;

	if (pos >= end)
		return 0;
	if (end - pos < CDIR_SIZE || ld32(z->data + pos) != CDIR_SIG)
		return err_set(err, -EINVAL, "%s+0x%llx: damaged central directory entry", z->name,
			       (unsigned long long)pos);
	p = z->data + pos;
	nlen = ld16(p + 28);
	xlen = ld16(p + 30);
	clen = ld16(p + 32);
	if ((uint64_t)CDIR_SIZE + nlen + xlen + clen > end - pos)
		return err_set(err, -EINVAL,
			       "%s+0x%llx: central directory entry overruns the directory", z->name,
			       (unsigned long long)pos);
	out->flags = ld16(p + 8);
	out->method = ld16(p + 10);
	out->crc32 = ld32(p + 16);
	out->comp_size = ld32(p + 20);
	out->uncomp_size = ld32(p + 24);
	out->local_off = ld32(p + 42);
	out->name = (const char *)p + CDIR_SIZE;
	out->name_len = nlen;
	*cursor += (uint64_t)CDIR_SIZE + nlen + xlen + clen;
	return 1;
}

int zip_find(const struct zip_archive *z, const char *name, struct zip_entry *out,
	     struct err *err)
{
	size_t n = strlen(name);
	uint64_t cur = 0;
	int rc;

	while ((rc = zip_next(z, &cur, out, err)) > 0)
		if (out->name_len == n && memcmp(out->name, name, n) == 0)
			return 0;
	return rc < 0 ? rc : -ENOENT;
}

static int inflate_entry(const struct zip_archive *z, const struct zip_entry *e,
			 const uint8_t *src, uint8_t *dst, struct err *err)
{
	z_stream zs;
	int zr;

	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
		return err_set(err, -ENOMEM, "%s: zlib init failed", z->name);
	/* Entries are < 4 GiB (no ZIP64), so the sizes fit zlib's uInt. */
	zs.next_in = (Bytef *)src;
	zs.avail_in = (uInt)e->comp_size;
	zs.next_out = dst;
	zs.avail_out = (uInt)e->uncomp_size;
	zr = inflate(&zs, Z_FINISH);
	inflateEnd(&zs);
	if (zr != Z_STREAM_END || zs.total_out != e->uncomp_size)
		return err_set(err, -EINVAL, "%s: entry %.*s: corrupt deflate data (zlib %d)",
			       z->name, (int)e->name_len, e->name, zr);
	return 0;
}

int zip_read(const struct zip_archive *z, const struct zip_entry *e, size_t max_size,
	     const uint8_t **data, size_t *len, void **owned, struct err *err)
{
	uint64_t lo = e->local_off, start;
	uint8_t *buf;
	int rc;

	*owned = NULL;
	if (!max_size)
		max_size = (size_t)1 << 30;
	if (e->flags & 1)
		return err_set(err, -ENOTSUP, "%s: entry %.*s is encrypted", z->name,
			       (int)e->name_len, e->name);
	if (!rng_ok(z->size, lo, LOCAL_SIZE) || ld32(z->data + lo) != LOCAL_SIG)
		return err_set(err, -EINVAL, "%s+0x%llx: no local header for entry %.*s", z->name,
			       (unsigned long long)lo, (int)e->name_len, e->name);
	/* The local header's name/extra lengths may differ from the central ones
	 * (alignment padding in the extra field): the data follows the local ones. */
	start = lo + LOCAL_SIZE + ld16(z->data + lo + 26) + ld16(z->data + lo + 28);
	if (!rng_ok(z->size, start, e->comp_size))
		return err_set(err, -EINVAL,
			       "%s+0x%llx: entry %.*s data (0x%llx bytes) runs past the end",
			       z->name, (unsigned long long)start, (int)e->name_len, e->name,
			       (unsigned long long)e->comp_size);
	if (e->uncomp_size > max_size)
		return err_set(err, -EFBIG, "%s: entry %.*s is %llu bytes, over the %zu-byte limit",
			       z->name, (int)e->name_len, e->name,
			       (unsigned long long)e->uncomp_size, max_size);
	if (e->method == 0) {
		if (e->comp_size != e->uncomp_size)
			return err_set(err, -EINVAL, "%s: stored entry %.*s has different sizes",
				       z->name, (int)e->name_len, e->name);
		*data = z->data + start;
		*len = e->comp_size;
		return 0;
	}
	if (e->method != 8)
		return err_set(err, -ENOTSUP,
			       "%s: entry %.*s uses compression method %u (only 0 and 8)", z->name,
			       (int)e->name_len, e->name, e->method);
	buf = malloc(e->uncomp_size ? e->uncomp_size : 1);
	if (!buf)
		return err_set(err, -ENOMEM, "%s: out of memory inflating %.*s", z->name,
			       (int)e->name_len, e->name);
	if ((rc = inflate_entry(z, e, z->data + start, buf, err))) {
		free(buf);
		return rc;
	}
	if (crc32(0L, buf, (uInt)e->uncomp_size) != e->crc32) {
		free(buf);
		return err_set(err, -EINVAL, "%s: entry %.*s fails its CRC32 check", z->name,
			       (int)e->name_len, e->name);
	}
	*data = buf;
	*len = e->uncomp_size;
	*owned = buf;
	return 0;
}
