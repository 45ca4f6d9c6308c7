#include "formats/zip.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common/mapfile.h"
#include "common/bytes.h"
#include "common/zip_path.h"

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

#define EOCD64_LOC_SIG 0x07064b50u
#define EOCD64_SIG 0x06064b50u
#define EOCD64_LOC_SIZE 20
#define EOCD64_SIZE 56
#define ZIP64_EXTRA_ID 0x0001

/* A ZIP64 archive: the locator right before the EOCD points at the ZIP64 end
 * record, which holds the 64-bit count, size and offset of the directory. */
static int find_eocd64(struct zip_archive *z, uint64_t eocd, struct err *err)
{
	uint64_t loc, rec, n, n_here, cd_size, cd_off;
	const uint8_t *p;

	if (eocd < EOCD64_LOC_SIZE || ld32(z->data + eocd - EOCD64_LOC_SIZE) != EOCD64_LOC_SIG)
		return err_set(err, -EINVAL, "%s+0x%llx: the end record says ZIP64 (0xffffffff), "
			       "expected a ZIP64 locator at +0x%llx, found none", z->name,
			       (unsigned long long)eocd,
			       (unsigned long long)(eocd >= EOCD64_LOC_SIZE ? eocd - EOCD64_LOC_SIZE
									: 0));
	loc = eocd - EOCD64_LOC_SIZE;
	rec = ld64(z->data + loc + 8);
	if (ld32(z->data + loc + 4) || ld32(z->data + loc + 16) > 1)
		return err_set(err, -ENOTSUP, "%s: multi-disk zip archives are not supported",
			       z->name);
	if (rec > loc || loc - rec < EOCD64_SIZE || ld32(z->data + rec) != EOCD64_SIG)
		return err_set(err, -EINVAL, "%s+0x%llx: expected the ZIP64 end record the "
			       "locator at +0x%llx points to, found %s", z->name,
			       (unsigned long long)rec, (unsigned long long)loc,
			       rec > loc || loc - rec < EOCD64_SIZE ? "it past the locator"
								   : "no ZIP64 end signature");
	p = z->data + rec;
	n_here = ld64(p + 24);
	n = ld64(p + 32);
	cd_size = ld64(p + 40);
	cd_off = ld64(p + 48);
	if (ld32(p + 16) || ld32(p + 20) || n_here != n)
		return err_set(err, -ENOTSUP, "%s: multi-disk zip archives are not supported",
			       z->name);
	if (cd_off > rec || cd_size > rec - cd_off)
		return err_set(err, -EINVAL, "%s+0x%llx: central directory 0x%llx+0x%llx overlaps "
			       "the ZIP64 end record", z->name, (unsigned long long)rec,
			       (unsigned long long)cd_off, (unsigned long long)cd_size);
	if (n > cd_size / CDIR_SIZE)
		return err_set(err, -EINVAL, "%s+0x%llx: %llu entries cannot fit a 0x%llx-byte "
			       "central directory", z->name, (unsigned long long)rec,
			       (unsigned long long)n, (unsigned long long)cd_size);
	z->cd_off = cd_off;
	z->cd_size = cd_size;
	z->count = (uint32_t)n;
	return 0;
}

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
		if (cd_off == 0xffffffffu || cd_size == 0xffffffffu || n == 0xffff)
			return find_eocd64(z, pos, err);
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

/* The ZIP64 extended information of a central entry: the 64-bit values of the
 * fields that hold 0xffffffff, in the order uncompressed, compressed, offset. */
static int zip64_extra(const struct zip_archive *z, uint64_t pos, const uint8_t *x, uint16_t xlen,
		       struct zip_entry *e, struct err *err)
{
	for (uint32_t at = 0; at + 4 <= xlen;) {
		uint16_t id = ld16(x + at), len = ld16(x + at + 2);
		uint32_t got = 0;
		if ((uint32_t)len > xlen - at - 4u)
			break;
		if (id == ZIP64_EXTRA_ID) {
			uint64_t *f[3] = { &e->uncomp_size, &e->comp_size, &e->local_off };
			for (int k = 0; k < 3; k++) {
				if (*f[k] != 0xffffffffu)
					continue;
				if (got + 8 > len)
					return err_set(err, -EINVAL, "%s+0x%llx: expected a 64-bit "
						       "value in the ZIP64 extra field, found %u "
						       "bytes", z->name, (unsigned long long)pos,
						       len);
				*f[k] = ld64(x + at + 4 + got);
				got += 8;
			}
			return 0;
		}
		at += 4u + len;
	}
	return err_set(err, -EINVAL, "%s+0x%llx: entry %.*s has a 32-bit field of 0xffffffff, "
		       "expected a ZIP64 extra field, found none", z->name,
		       (unsigned long long)pos, (int)e->name_len, e->name);
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
	out->cd_pos = pos;
	if (out->comp_size == 0xffffffffu || out->uncomp_size == 0xffffffffu ||
	    out->local_off == 0xffffffffu) {
		int rc = zip64_extra(z, pos, p + CDIR_SIZE + nlen, xlen, out, err);
		if (rc)
			return rc;
	}
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
	/* zip_read caps the sizes at 1 GiB, so they fit zlib's uInt. */
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
	if (e->comp_size > UINT32_MAX)
		return err_set(err, -EFBIG, "%s: entry %.*s has 0x%llx compressed bytes, over 4 GiB",
			       z->name, (int)e->name_len, e->name,
			       (unsigned long long)e->comp_size);
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

const uint8_t *zip_bytes(const struct zip_archive *z, size_t *size)
{
	*size = z->size;
	return z->data;
}

/* Where e's data starts after its local header (which must be there), and
 * where its record (local header to data end) ends; false when the local
 * header is missing or the data runs past the file. */
static bool entry_span(const struct zip_archive *z, const struct zip_entry *e, uint64_t *data,
		       uint64_t *end)
{
	uint64_t lo = e->local_off;

	if (!rng_ok(z->size, lo, LOCAL_SIZE) || ld32(z->data + lo) != LOCAL_SIG)
		return false;
	*data = lo + LOCAL_SIZE + ld16(z->data + lo + 26) + ld16(z->data + lo + 28);
	if (!rng_ok(z->size, *data, e->comp_size))
		return false;
	*end = *data + e->comp_size;
	return true;
}

int zip_entry_data(const struct zip_archive *z, const struct zip_entry *e, uint64_t *data_off,
		   struct err *err)
{
	const char *why;
	uint64_t lo = e->local_off, data, end;
	const uint8_t *l;

	if (!zip_entry_name_ok(e->name, e->name_len, &why))
		return err_set(err, -EINVAL, "%s+0x%llx: expected a relative entry name, found %s "
			       "in '%.*s'", z->name, (unsigned long long)e->cd_pos, why,
			       (int)(e->name_len > 200 ? 200 : e->name_len), e->name);
	if (!rng_ok(z->size, lo, LOCAL_SIZE) || ld32(z->data + lo) != LOCAL_SIG)
		return err_set(err, -EINVAL, "%s+0x%llx: expected the local header of entry %.*s "
			       "(the central directory's offset), found %s", z->name,
			       (unsigned long long)lo, (int)e->name_len, e->name,
			       rng_ok(z->size, lo, LOCAL_SIZE) ? "no local header signature"
							       : "the end of the file");
	l = z->data + lo;
	if (ld16(l + 26) != e->name_len ||
	    !rng_ok(z->size, lo + LOCAL_SIZE, e->name_len) ||
	    memcmp(l + LOCAL_SIZE, e->name, e->name_len))
		return err_set(err, -EINVAL, "%s+0x%llx: expected the local header of entry %.*s, "
			       "found one of another name (the central directory lies)", z->name,
			       (unsigned long long)lo, (int)e->name_len, e->name);
	if (e->method != 0 || ld16(l + 8) != 0)
		return err_set(err, -ENOTSUP, "%s+0x%llx: entry %.*s is compressed (method %u), "
			       "expected a stored one: a compressed library is extracted at "
			       "install (extractNativeLibs=true; name the file in the app's lib/ "
			       "directory instead)", z->name, (unsigned long long)lo,
			       (int)e->name_len, e->name, e->method ? e->method : ld16(l + 8));
	if (e->flags & 1)
		return err_set(err, -ENOTSUP, "%s+0x%llx: entry %.*s is encrypted", z->name,
			       (unsigned long long)lo, (int)e->name_len, e->name);
	if (e->comp_size != e->uncomp_size)
		return err_set(err, -EINVAL, "%s+0x%llx: stored entry %.*s: expected equal sizes, "
			       "found 0x%llx stored and 0x%llx uncompressed", z->name,
			       (unsigned long long)lo, (int)e->name_len, e->name,
			       (unsigned long long)e->comp_size, (unsigned long long)e->uncomp_size);
	if (!entry_span(z, e, &data, &end))
		return err_set(err, -EINVAL, "%s+0x%llx: entry %.*s: expected 0x%llx bytes of data, "
			       "found the file ends at 0x%zx", z->name, (unsigned long long)lo,
			       (int)e->name_len, e->name, (unsigned long long)e->comp_size, z->size);
	if (end > z->cd_off && data < z->cd_off + z->cd_size)
		return err_set(err, -EINVAL, "%s+0x%llx: entry %.*s: its data 0x%llx-0x%llx "
			       "overlaps the central directory at 0x%llx", z->name,
			       (unsigned long long)data, (int)e->name_len, e->name,
			       (unsigned long long)data, (unsigned long long)end,
			       (unsigned long long)z->cd_off);
	*data_off = data;
	return 0;
}

/* No other entry's record overlaps e's (a zip whose entries share bytes says
 * two things about them). */
static int check_alone(const struct zip_archive *z, const struct zip_entry *e, uint64_t data,
		       struct err *err)
{
	uint64_t lo = e->local_off, end = data + e->comp_size, cur = 0, od, oe;
	struct zip_entry o;
	int rc;

	while ((rc = zip_next(z, &cur, &o, err)) > 0) {
		if (o.cd_pos == e->cd_pos || !entry_span(z, &o, &od, &oe))
			continue;
		if (o.local_off < end && lo < oe)
			return err_set(err, -EINVAL, "%s+0x%llx: entry %.*s (0x%llx-0x%llx) "
				       "overlaps entry %.*s (0x%llx-0x%llx): expected entries "
				       "apart", z->name, (unsigned long long)data, (int)e->name_len,
				       e->name, (unsigned long long)lo, (unsigned long long)end,
				       (int)o.name_len, o.name, (unsigned long long)o.local_off,
				       (unsigned long long)oe);
	}
	return rc;
}

/* Whether entry e's name ends in the component name (name_len bytes, no '/'). */
static bool file_name_is(const struct zip_entry *e, const char *name, size_t name_len)
{
	return e->name_len > name_len && e->name[e->name_len - name_len - 1] == '/' &&
	       !memcmp(e->name + e->name_len - name_len, name, name_len);
}

#define MAX_NAMED 4   /* candidates an ambiguous file name's error lists */

/* The one entry whose file name (its last component) is name, as a tombstone
 * names a library mapped from an APK ("base.apk!libfoo.so"); -ENOENT when none
 * or several have it, err naming them. */
static int find_by_file_name(const struct zip_archive *z, const char *name,
			     struct zip_entry *out, struct err *err)
{
	char list[600] = "";
	size_t n = 0, len = strlen(name), used = 0;
	uint64_t cur = 0;
	struct zip_entry e;
	int rc;

	while ((rc = zip_next(z, &cur, &e, err)) > 0) {
		if (!file_name_is(&e, name, len))
			continue;
		if (!n++)
			*out = e;
		if (n <= MAX_NAMED && used < sizeof(list))
			used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%.*s",
						 n > 1 ? ", " : "", (int)e.name_len, e.name);
	}
	if (rc < 0)
		return rc;
	if (n == 1)
		return 0;
	if (!n)
		return err_set(err, -ENOENT, "%s: no entry %s (nor one named .../%s)", z->name,
			       name, name);
	return err_set(err, -ENOENT, "%s: no entry %s, and %zu entries have that file name: "
		       "%s%s; name one as %s!/ENTRY", z->name, name, n, list,
		       n > MAX_NAMED ? ", ..." : "", z->name);
}

int zip_stored_entry(const struct zip_archive *z, const char *name, struct zip_entry *out,
		     uint64_t *data_off, struct err *err)
{
	int rc = zip_find(z, name, out, err);

	if (rc == -ENOENT && !strchr(name, '/'))
		rc = find_by_file_name(z, name, out, err);
	else if (rc == -ENOENT)
		return err_set(err, -ENOENT, "%s: no entry %s", z->name, name);
	return rc ?: zip_entry_data(z, out, data_off, err) ?: check_alone(z, out, *data_off, err);
}

int zip_entry_holding(const struct zip_archive *z, uint64_t off, struct zip_entry *out,
		      uint64_t *data_off, struct err *err)
{
	uint64_t cur = 0, data, end;
	const char *found = "no entry's data";
	int rc;

	while ((rc = zip_next(z, &cur, out, err)) > 0) {
		if (!entry_span(z, out, &data, &end))
			continue;
		if (off >= data && off < end)
			return zip_entry_data(z, out, data_off, err) ?:
			       check_alone(z, out, *data_off, err);
		if (off >= out->local_off && off < data)
			found = "an entry's local header";
	}
	if (rc < 0)
		return rc;
	if (off >= z->size)
		found = "the end of the file";
	else if (off >= z->cd_off && off < z->cd_off + z->cd_size)
		found = "the central directory";
	return err_set(err, -ENOENT, "%s+0x%llx: expected the data of a stored entry (a library "
		       "mapped from the archive), found %s there", z->name, (unsigned long long)off,
		       found);
}
