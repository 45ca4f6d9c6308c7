/* fuzz_zip_entry — what a mapping of an APK at an offset is, and the `!/` spelling:
 * the first 8 input bytes are a mapping offset, the next 2 a name length, then
 * that many bytes of a path to split (common/zip_path.h), the rest a zip archive.
 * zip_entry_holding(offset) and zip_stored_entry(the split entry name) either
 * fail with one line or give a stored entry whose data lies inside the archive,
 * holds the offset and starts after the entry's local header; a split path's
 * parts are inside it and its entry name passes zip_entry_name_ok.
 * Seeds: small APKs made by test/e2e/apkzip.py (4 KiB and 16 KiB aligned, ZIP64,
 * two libraries, a deflated entry) with offsets inside, before and past their
 * entries, and paths in both spellings, with '..', empty and bare names, and a
 * tombstone's APK!NAME (one entry of that file name; two). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"
#include "common/zip_path.h"
#include "formats/zip.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_entry(const struct zip_archive *z, const struct zip_entry *e, uint64_t data_off)
{
	size_t len;
	const char *why;

	zip_bytes(z, &len);
	if (e->method || e->comp_size != e->uncomp_size || !rng_ok(len, data_off, e->comp_size) ||
	    data_off < e->local_off + 30 || !zip_entry_name_ok(e->name, e->name_len, &why))
		abort();
}

static void split(const char *path)
{
	const char *entry, *why;
	size_t clen, n = strlen(path);
	struct err e;

	if (zip_path_split(path, &clen, &entry, &e) <= 0)
		return;
	if (!clen || clen >= n || entry <= path + clen || entry > path + n ||
	    !zip_entry_name_ok(entry, strlen(entry), &why))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zip_archive *z;
	struct zip_entry en;
	struct err e;
	uint64_t off, data_off;
	size_t nlen;
	char path[1024];

	if (size < 10)
		return 0;
	off = ld64(data);
	nlen = ld16(data + 8) % sizeof(path);
	data += 10;
	size -= 10;
	if (nlen > size)
		nlen = size;
	memcpy(path, data, nlen);
	path[nlen] = 0;
	split(path);
	data += nlen;
	size -= nlen;
	if (zip_open_mem("fuzz.apk", data, size, &z, &e))
		return 0;
	if (zip_entry_holding(z, off, &en, &data_off, &e) == 0) {
		check_entry(z, &en, data_off);
		if (off < data_off || off - data_off >= en.comp_size)
			abort();
	}
	const char *entry;
	size_t clen;
	if (zip_path_split(path, &clen, &entry, &e) > 0 &&
	    zip_stored_entry(z, entry, &en, &data_off, &e) == 0)
		check_entry(z, &en, data_off);
	zip_close(z);
	return 0;
}
