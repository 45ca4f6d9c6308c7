#include "formats/oat.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/bytes.h"

#define OAT_MIN_VERSION 170
#define OAT_MAX_KNOWN 265
#define MAX_LOCATION 4096
#define MAX_CLASSES 65536       /* class_def type indices are u16 */

struct oat_file {
	struct elf_file *elf;
	const uint8_t *oat;         /* oatdata in the file */
	struct oat_info info;
	struct oat_dex *dex;
	char *kv;                   /* copy of the key/value store */
};

/* ---- OatHeader ---------------------------------------------------------- */

/* The k-th layout to try after the version's own (def): neighbours first,
 * since real deviations are one step (a field added or not yet added).
 * Returns n (no candidate) for out-of-range steps. */
static size_t nearest(size_t def, size_t k, size_t n)
{
	size_t d = (k + 1) / 2;

	if (k % 2)
		return def + d < n ? def + d : n;
	return d <= def ? def - d : n;
}

struct hdr_layout {
	unsigned size, exec_at, kv_at;
	const char *name;
};

static const struct hdr_layout HDR[] = {
	{ 56, 28, 52, "v170-179" },
	{ 60, 28, 56, "v180-189" },
	{ 64, 28, 60, "v190-221/223" },
	{ 68, 32, 64, "v222/224-254" },
	{ 72, 36, 68, "v255+" },
};

static size_t hdr_default(unsigned v)
{
	if (v < 180)
		return 0;
	if (v < 190)
		return 1;
	if (v < 222 || v == 223)
		return 2;
	return v < 255 ? 3 : 4;
}

/* What the executable_offset field must equal, from the ELF symbols:
 * exactly oatexec - oatdata, or, when nothing is compiled (no oatexec), the
 * end of the region rounded up to at most a 64 KiB segment alignment. */
static uint32_t expected_exec(const struct oat_file *o)
{
	struct elf_symbol s;

	if (!elf_find_symbol(o->elf, "oatexec", &s))
		return (uint32_t)(s.value - o->info.oatdata_vaddr);
	return (uint32_t)o->info.oat_size;
}

static bool exec_ok(const struct oat_file *o, uint32_t exec, uint32_t want)
{
	if (o->info.has_oatexec)
		return exec == want;
	return exec >= want && exec - want < 0x10000;
}

static bool hdr_fits(const struct oat_file *o, const struct hdr_layout *l, uint32_t want_exec)
{
	uint64_t size = o->info.oat_size;
	uint32_t exec = ld32(o->oat + l->exec_at), kv = ld32(o->oat + l->kv_at);
	uint32_t dex_files = ld32(o->oat + 24);

	if (!exec_ok(o, exec, want_exec) || (uint64_t)l->size + kv > dex_files || dex_files > size)
		return false;
	if (!kv)
		return true;
	const uint8_t *k = o->oat + l->size;
	return k[0] >= 'a' && k[0] <= 'z' && k[kv - 1] == 0;
}

static int pick_header(struct oat_file *o, struct err *err)
{
	size_t def = hdr_default(o->info.version), pick = def;
	uint32_t want = expected_exec(o);

	if (o->info.oat_size < 72 + 4)
		return err_set(err, -EINVAL,
			       "%s: oat region of %llu bytes is too small for an OatHeader",
			       oat_name(o), (unsigned long long)o->info.oat_size);
	if (!hdr_fits(o, &HDR[def], want)) {
		size_t n = sizeof(HDR) / sizeof(HDR[0]), k;
		for (k = 1; k < 2 * n; k++) {
			pick = nearest(def, k, n);
			if (pick < n && hdr_fits(o, &HDR[pick], want))
				break;
		}
		if (k == 2 * n)
			return err_set(err, -EINVAL,
				       "%s+0x%llx: OatHeader v%u matches no known layout "
				       "(executable_offset should be 0x%x; header %s has 0x%x)",
				       oat_name(o), (unsigned long long)o->info.oatdata_off,
				       o->info.version, want, HDR[def].name,
				       ld32(o->oat + HDR[def].exec_at));
	}
	const struct hdr_layout *l = &HDR[pick];
	o->info.executable_offset = ld32(o->oat + l->exec_at);
	o->info.kv_size = ld32(o->oat + l->kv_at);
	o->info.header_size = l->size + o->info.kv_size;
	snprintf(o->info.header_layout, sizeof(o->info.header_layout),
		 "OatHeader %s layout (%u bytes)%s", l->name, l->size,
		 pick == def ? "" : ", chosen by validation over the version's own");
	o->kv = malloc(o->info.kv_size + 1);
	if (!o->kv)
		return err_set(err, -ENOMEM, "out of memory");
	memcpy(o->kv, o->oat + l->size, o->info.kv_size);
	o->kv[o->info.kv_size] = 0;
	return 0;
}

const char *oat_kv_get(const struct oat_file *o, const char *key)
{
	const char *p = o->kv, *end = o->kv + o->info.kv_size;

	/* "key\0value\0" pairs; v259+ pads some values with NULs, so skip empties. */
	while (p < end) {
		const char *k = p, *v;
		while (p < end && !*p)
			p++;
		k = p;
		p += strlen(p) + 1;
		if (p >= end)
			break;
		v = p;
		p += strlen(p) + 1;
		if (*k && strcmp(k, key) == 0)
			return v;
	}
	return NULL;
}

/* ---- OatDexFile records ------------------------------------------------- */

struct rec_layout {
	bool magic, sha1;
	unsigned nbss;
	const char *name;
};

static const struct rec_layout REC[] = {
	{ false, false, 3, "no magic/SHA-1, 3 .bss slots (v170-185)" },
	{ false, false, 5, "no magic/SHA-1, 5 .bss slots (v186-231)" },
	{ false, true, 5, "SHA-1, 5 .bss slots (v232)" },
	{ true, true, 5, "magic+SHA-1, 5 .bss slots (v233-239)" },
	{ true, true, 6, "magic+SHA-1, 6 .bss slots (v240+)" },
};

static size_t rec_default(unsigned v)
{
	if (v < 186)
		return 0;
	if (v < 232)
		return 1;
	if (v == 232)
		return 2;
	return v < 240 ? 3 : 4;
}

static bool looks_like_dex_magic(const uint8_t *p)
{
	return memcmp(p, "dex\n", 4) == 0 || memcmp(p, "cdex", 4) == 0;
}

static bool oat_class_plausible(const struct oat_file *o, uint32_t class_offsets)
{
	uint32_t first;
	uint16_t status, type;

	if (!rd32(o->oat, o->info.oat_size, class_offsets, &first) || !first)
		return true;     /* empty dex: nothing to check */
	return rd16(o->oat, o->info.oat_size, first, &status) &&
	       rd16(o->oat, o->info.oat_size, (uint64_t)first + 2, &type) && status <= 15 &&
	       type <= 2;
}

/* Parses record i at *pos with layout l; false when anything is implausible. */
static bool parse_record(const struct oat_file *o, const struct rec_layout *l, uint64_t *pos,
			 struct oat_dex *r, const uint8_t **loc, uint32_t *loc_len)
{
	const uint8_t *b = o->oat;
	uint64_t size = o->info.oat_size, p = *pos;
	uint32_t v[12];
	unsigned nfix = 5 + l->nbss;

	if (!rd32(b, size, p, loc_len) || !*loc_len || *loc_len >= MAX_LOCATION ||
	    !rng_ok(size, p + 4, *loc_len))
		return false;
	*loc = b + p + 4;
	for (uint32_t k = 0; k < *loc_len; k++)
		if ((*loc)[k] < 0x20 || (*loc)[k] == 0x7f)
			return false;
	p += 4 + *loc_len;
	memset(r, 0, sizeof(*r));
	if (!rng_ok(size, p, (l->magic ? 8 : 0) + (l->sha1 ? 20 : 0) + 4ull * nfix))
		return false;
	if (l->magic != looks_like_dex_magic(b + p))
		return false;
	if (l->magic) {
		memcpy(r->magic, b + p, 7);
		r->has_magic = true;
		p += 8;
	}
	v[0] = ld32(b + p);
	p += 4;
	if (l->sha1) {
		r->has_sha1 = true;
		p += 20;
	}
	for (unsigned k = 1; k < nfix; k++, p += 4)
		v[k] = ld32(b + p);
	r->checksum = v[0];
	r->dex_file_offset = v[1];
	r->class_offsets_offset = v[2];
	/* v[3] lookup table (vdex-relative from v193), v[4] layout sections,
	 * v[5..] .bss mappings: all oat offsets or 0. */
	if ((v[2] & 3) || v[2] < o->info.header_size || v[2] >= size)
		return false;
	for (unsigned k = 4; k < nfix; k++)
		if (v[k] >= size)
			return false;
	if (!oat_class_plausible(o, v[2]))
		return false;
	*pos = p;
	return true;
}

/* Walks every record with layout l, filling o->dex when keep is set. */
static bool walk_records(struct oat_file *o, const struct rec_layout *l, bool keep)
{
	uint64_t pos = o->info.oat_dex_files_offset;
	bool in_vdex = false;

	for (uint32_t i = 0; i < o->info.dex_count; i++) {
		struct oat_dex r;
		const uint8_t *loc;
		uint32_t len;
		if (!parse_record(o, l, &pos, &r, &loc, &len))
			return false;
		/* ART never mixes dex files in the vdex with dex files in the jar. */
		if (i && in_vdex != (r.dex_file_offset != 0))
			return false;
		in_vdex = r.dex_file_offset != 0;
		if (!keep)
			continue;
		char *s = malloc(len + 1);
		if (!s)
			return false;
		memcpy(s, loc, len);
		s[len] = 0;
		r.location = s;
		o->dex[i] = r;
	}
	return true;
}

static int pick_records(struct oat_file *o, struct err *err)
{
	size_t def = rec_default(o->info.version), pick = def, n = sizeof(REC) / sizeof(REC[0]);

	if (o->info.dex_count > MAX_CLASSES)
		return err_set(err, -EINVAL, "%s: implausible dex_file_count %u", oat_name(o),
			       o->info.dex_count);
	if (!walk_records(o, &REC[def], false)) {
		size_t k;
		for (k = 1; k < 2 * n; k++) {
			pick = nearest(def, k, n);
			if (pick < n && walk_records(o, &REC[pick], false))
				break;
		}
		if (k == 2 * n)
			return err_set(err, -EINVAL,
				       "%s+0x%llx: OatDexFile records (oat v%u) match no "
				       "known layout",
				       oat_name(o),
				       (unsigned long long)(o->info.oatdata_off +
							    o->info.oat_dex_files_offset),
				       o->info.version);
	}
	snprintf(o->info.record_layout, sizeof(o->info.record_layout), "OatDexFile %s%s",
		 REC[pick].name,
		 pick == def ? "" : ", chosen by validation over the version's own");
	o->dex = calloc(o->info.dex_count ? o->info.dex_count : 1, sizeof(*o->dex));
	if (!o->dex || !walk_records(o, &REC[pick], true))
		return err_set(err, -ENOMEM, "out of memory");
	return 0;
}

/* ---- ELF side ----------------------------------------------------------- */

const char *oat_isa_name(uint16_t m)
{
	switch (m) {
	case EM_AARCH64: return "arm64";
	case EM_ARM: return "arm";
	case EM_386: return "x86";
	case EM_X86_64: return "x86_64";
	case EM_RISCV: return "riscv64";
	default: return NULL;
	}
}

/* Locates [oatdata, oatlastword + 4) in the file; it must be file-backed and
 * mapped with one vaddr-to-offset delta so the region can be read flat. */
static int locate_region(struct oat_file *o, struct err *err)
{
	struct elf_symbol data, last;
	uint64_t off_last, vlast;
	size_t fsize;
	const uint8_t *base = elf_data(o->elf, &fsize);

	if (elf_find_symbol(o->elf, "oatdata", &data))
		return err_set(err, -ENOEXEC,
			       "%s: no \"oatdata\" dynamic symbol: not an oat/odex file",
			       oat_name(o));
	if (elf_find_symbol(o->elf, "oatlastword", &last) || last.value < data.value)
		return err_set(err, -EINVAL, "%s: missing or misplaced \"oatlastword\" symbol",
			       oat_name(o));
	if (elf_vaddr_to_offset(o->elf, data.value, &o->info.oatdata_off, NULL))
		return err_set(err, -EINVAL,
			       "%s: oatdata (0x%llx) is in no file-backed PT_LOAD segment",
			       oat_name(o), (unsigned long long)data.value);
	vlast = last.value + 3;
	if (elf_vaddr_to_offset(o->elf, vlast, &off_last, NULL) ||
	    off_last - o->info.oatdata_off != vlast - data.value)
		return err_set(err, -EINVAL,
			       "%s: the oat region 0x%llx..0x%llx is not contiguous in the file "
			       "(truncated, or an unsupported segment layout)",
			       oat_name(o), (unsigned long long)data.value,
			       (unsigned long long)(vlast + 1));
	o->info.oatdata_vaddr = data.value;
	o->info.oat_size = vlast + 1 - data.value;
	o->oat = base + o->info.oatdata_off;
	o->info.has_oatexec = elf_find_symbol(o->elf, "oatexec", &data) == 0;
	return 0;
}

static int parse_fixed_header(struct oat_file *o, struct err *err)
{
	const uint8_t *h = o->oat;

	if (memcmp(h, "oat\n", 4) != 0)
		return err_set(err, -EINVAL, "%s+0x%llx: no \"oat\\n\" magic at oatdata",
			       oat_name(o), (unsigned long long)o->info.oatdata_off);
	if (h[4] < '0' || h[4] > '9' || h[5] < '0' || h[5] > '9' || h[6] < '0' || h[6] > '9' ||
	    h[7])
		return err_set(err, -EINVAL, "%s+0x%llx: oat version is not 3 digits",
			       oat_name(o), (unsigned long long)o->info.oatdata_off + 4);
	o->info.version = (unsigned)((h[4] - '0') * 100 + (h[5] - '0') * 10 + (h[6] - '0'));
	if (o->info.version < OAT_MIN_VERSION)
		return err_set(err, -ENOTSUP,
			       "%s: oat version %u predates Android 10 (170); not supported",
			       oat_name(o), o->info.version);
	o->info.oat_checksum = ld32(h + 8);
	o->info.isa_enum = ld32(h + 12);
	o->info.dex_count = ld32(h + 20);
	o->info.oat_dex_files_offset = ld32(h + 24);
	return 0;
}

static int oat_init(struct oat_file *o, struct err *err)
{
	int rc;

	o->info.e_machine = elf_machine(o->elf);
	o->info.isa = oat_isa_name(o->info.e_machine);
	if (!o->info.isa)
		return err_set(err, -ENOTSUP, "%s: ELF machine %u is not an Android ISA",
			       oat_name(o), o->info.e_machine);
	if ((rc = locate_region(o, err)) || (rc = parse_fixed_header(o, err)) ||
	    (rc = pick_header(o, err)) || (rc = pick_records(o, err)))
		return rc;
	if (o->info.version > OAT_MAX_KNOWN) {
		size_t n = strlen(o->info.header_layout);
		snprintf(o->info.header_layout + n, sizeof(o->info.header_layout) - n,
			 "; v%u is newer than any known (%d)", o->info.version, OAT_MAX_KNOWN);
	}
	return 0;
}

static int finish_open(struct oat_file *o, struct oat_file **out, struct err *err)
{
	int rc = oat_init(o, err);

	if (rc) {
		oat_close(o);
		return rc;
	}
	*out = o;
	return 0;
}

int oat_open(const char *path, struct oat_file **out, struct err *err)
{
	struct oat_file *o = calloc(1, sizeof(*o));
	int rc;

	*out = NULL;
	if (!o)
		return err_set(err, -ENOMEM, "out of memory");
	if ((rc = elf_open(path, &o->elf, err))) {
		free(o);
		return rc;
	}
	return finish_open(o, out, err);
}

int oat_open_elf(struct elf_file *elf, struct oat_file **out, struct err *err)
{
	struct oat_file *o = calloc(1, sizeof(*o));
	int rc;

	*out = NULL;
	if (!o)
		return err_set(err, -ENOMEM, "out of memory");
	o->elf = elf;
	if ((rc = oat_init(o, err))) {
		o->elf = NULL;          /* still the caller's */
		oat_close(o);
		return rc;
	}
	*out = o;
	return 0;
}

int oat_open_mem(const char *name, const void *buf, size_t len, struct oat_file **out,
		 struct err *err)
{
	struct oat_file *o = calloc(1, sizeof(*o));
	int rc;

	*out = NULL;
	if (!o)
		return err_set(err, -ENOMEM, "out of memory");
	if ((rc = elf_open_mem(name, buf, len, &o->elf, err))) {
		free(o);
		return rc;
	}
	return finish_open(o, out, err);
}

void oat_close(struct oat_file *o)
{
	if (!o)
		return;
	if (o->dex)
		for (uint32_t i = 0; i < o->info.dex_count; i++)
			free((char *)o->dex[i].location);
	free(o->dex);
	free(o->kv);
	elf_close(o->elf);
	free(o);
}

const char *oat_name(const struct oat_file *o) { return elf_name(o->elf); }
const struct oat_info *oat_info(const struct oat_file *o) { return &o->info; }
const struct elf_file *oat_elf(const struct oat_file *o) { return o->elf; }
uint32_t oat_dex_count(const struct oat_file *o) { return o->info.dex_count; }

const uint8_t *oat_region(const struct oat_file *o, uint64_t *size)
{
	*size = o->info.oat_size;
	return o->oat;
}

const struct oat_dex *oat_dex_at(const struct oat_file *o, uint32_t i)
{
	return i < o->info.dex_count ? &o->dex[i] : NULL;
}

uint32_t oat_guess_class_count(const struct oat_file *o, uint32_t dex_i)
{
	uint64_t start, limit = o->info.oat_size;
	uint32_t n = 0;

	if (dex_i >= o->info.dex_count)
		return 0;
	start = o->dex[dex_i].class_offsets_offset;
	for (uint32_t i = 0; i < o->info.dex_count; i++)
		if (o->dex[i].class_offsets_offset > start &&
		    o->dex[i].class_offsets_offset < limit)
			limit = o->dex[i].class_offsets_offset;
	while (n < MAX_CLASSES && start + 4ull * n + 4 <= limit) {
		uint32_t c = ld32(o->oat + start + 4ull * n);
		n++;
		if (c > start && c < limit)
			limit = c;
	}
	return n;
}
