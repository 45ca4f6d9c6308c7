#include "formats/oat_dexfile.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/vdex.h"
#include "formats/zip.h"

#define MAX_CANDIDATES 12
#define MAX_DEX_SIZE ((size_t)1 << 30)

struct slot {
	bool tried;
	struct dex_file *dex;
	struct zip_archive *zip;    /* kept open: a stored dex points into it */
	void *owned;                /* an inflated dex */
	char *source;
	struct err err;             /* the failure, replayed on later calls */
};

struct oat_dexset {
	const struct oat_file *oat;
	char *oat_path;
	char **extra;
	size_t n_extra;
	struct vdex_file *vdex;
	bool vdex_tried;
	struct err vdex_err;
	struct slot *slots;
};

char *oat_vdex_path(const char *oat_path)
{
	size_t n = strlen(oat_path);
	const char *slash = strrchr(oat_path, '/'), *dot = strrchr(oat_path, '.');
	char *p;

	if (!dot || (slash && dot < slash))
		dot = oat_path + n;
	p = malloc((size_t)(dot - oat_path) + 6);
	if (p)
		sprintf(p, "%.*s.vdex", (int)(dot - oat_path), oat_path);
	return p;
}

int oat_dexset_new(const struct oat_file *o, const char *oat_path, const char *const *extra,
		   size_t n_extra, struct oat_dexset **out, struct err *err)
{
	struct oat_dexset *s = calloc(1, sizeof(*s));
	uint32_t n = oat_dex_count(o);

	*out = NULL;
	if (!s)
		return err_set(err, -ENOMEM, "out of memory");
	s->oat = o;
	s->oat_path = strdup(oat_path);
	s->slots = calloc(n ? n : 1, sizeof(*s->slots));
	s->extra = calloc(n_extra ? n_extra : 1, sizeof(char *));
	if (!s->oat_path || !s->slots || !s->extra) {
		oat_dexset_free(s);
		return err_set(err, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < n_extra; i++)
		if (!(s->extra[s->n_extra++] = strdup(extra[i]))) {
			oat_dexset_free(s);
			return err_set(err, -ENOMEM, "out of memory");
		}
	*out = s;
	return 0;
}

void oat_dexset_free(struct oat_dexset *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; s->slots && i < oat_dex_count(s->oat); i++) {
		dex_close(s->slots[i].dex);
		zip_close(s->slots[i].zip);
		free(s->slots[i].owned);
		free(s->slots[i].source);
	}
	for (size_t i = 0; i < s->n_extra; i++)
		free(s->extra[i]);
	free(s->extra);
	free(s->slots);
	vdex_close(s->vdex);
	free(s->oat_path);
	free(s);
}

const char *oat_dexset_source(const struct oat_dexset *s, uint32_t i)
{
	return i < oat_dex_count(s->oat) ? s->slots[i].source : NULL;
}

static int from_vdex(struct oat_dexset *s, uint32_t i, struct slot *sl, struct err *err)
{
	const struct oat_dex *r = oat_dex_at(s->oat, i);
	int rc;

	if (!s->vdex_tried) {
		char *vp = oat_vdex_path(s->oat_path);
		s->vdex_tried = true;
		if (!vp)
			return err_set(err, -ENOMEM, "out of memory");
		vdex_open(vp, &s->vdex, &s->vdex_err);
		free(vp);
	}
	if (!s->vdex) {
		*err = s->vdex_err;
		return err_prefix(err, "dex #%u (%s) is in the vdex", i, r->location);
	}
	if (i < vdex_dex_count(s->vdex) && vdex_checksum(s->vdex, i) != r->checksum)
		return err_set(err, -ESTALE,
			       "%s: checksum 0x%08x of dex #%u differs from the oat's 0x%08x: the "
			       "vdex does not belong to this oat", vdex_name(s->vdex),
			       vdex_checksum(s->vdex, i), i, r->checksum);
	if ((rc = vdex_open_dex(s->vdex, r->dex_file_offset, &sl->dex, err)))
		return rc;
	sl->source = strdup(dex_name(sl->dex));
	return 0;
}

/* Appends a candidate path unless already listed. */
static void add_cand(char **c, size_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void add_cand(char **c, size_t *n, const char *fmt, ...)
{
	va_list ap;
	char *p = NULL;

	if (*n >= MAX_CANDIDATES)
		return;
	va_start(ap, fmt);
	if (vasprintf(&p, fmt, ap) < 0)
		p = NULL;
	va_end(ap);
	if (!p)
		return;
	for (size_t k = 0; k < *n; k++)
		if (strcmp(c[k], p) == 0) {
			free(p);
			return;
		}
	c[(*n)++] = p;
}

/* "system@framework@x.jar@classes.odex" -> "x.jar"; "dir/foo.odex" -> "foo". */
static void oat_stem(const char *oat_path, char *buf, size_t size)
{
	const char *b = strrchr(oat_path, '/');
	const char *at, *dot;

	b = b ? b + 1 : oat_path;
	at = strstr(b, "@classes.");
	if (at) {
		const char *start = at;
		while (start > b && start[-1] != '@')
			start--;
		snprintf(buf, size, "%.*s", (int)(at - start), start);
		return;
	}
	dot = strrchr(b, '.');
	snprintf(buf, size, "%.*s", (int)(dot ? dot - b : (long)strlen(b)), b);
}

static size_t candidates(const struct oat_dexset *s, const char *primary, char **c)
{
	char dir[4096], stem[256];
	const char *slash = strrchr(s->oat_path, '/'), *base = strrchr(primary, '/');
	size_t n = 0;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - s->oat_path) : 1,
		 slash ? s->oat_path : ".");
	base = base ? base + 1 : primary;
	oat_stem(s->oat_path, stem, sizeof(stem));
	for (size_t i = 0; i < s->n_extra; i++)
		add_cand(c, &n, "%s", s->extra[i]);
	add_cand(c, &n, "%s/%s", dir, base);
	add_cand(c, &n, "%s/../%s", dir, base);
	add_cand(c, &n, "%s/../../%s", dir, base);
	if (primary[0] == '/')
		add_cand(c, &n, "%s", primary);
	if (strchr(stem, '.')) {
		add_cand(c, &n, "%s/%s", dir, stem);
	} else {
		add_cand(c, &n, "%s/%s.jar", dir, stem);
		add_cand(c, &n, "%s/%s.apk", dir, stem);
		if (!strncmp(stem, "boot-", 5))     /* boot-okhttp.oat holds okhttp.jar */
			add_cand(c, &n, "%s/%s.jar", dir, stem + 5);
	}
	return n;
}

/* Tries one archive; 0 when its entry matches the checksum. */
static int try_archive(const char *path, const char *entry, uint32_t crc, struct slot *sl,
		       char *why, size_t why_len)
{
	struct zip_archive *z;
	struct zip_entry e;
	struct err ze = { 0 };
	const uint8_t *data;
	size_t len;
	void *owned;

	if (access(path, F_OK) != 0) {
		snprintf(why, why_len, "%s (missing)", path);
		return -ENOENT;
	}
	if (zip_open(path, &z, &ze)) {
		snprintf(why, why_len, "%s (%s)", path, ze.msg);
		return -EINVAL;
	}
	if (zip_find(z, entry, &e, &ze)) {
		snprintf(why, why_len, "%s (no %s)", path, entry);
		zip_close(z);
		return -ENOENT;
	}
	if (e.crc32 != crc) {
		snprintf(why, why_len, "%s (%s CRC32 0x%08x, stale or another build)", path, entry,
			 e.crc32);
		zip_close(z);
		return -ESTALE;
	}
	if (zip_read(z, &e, MAX_DEX_SIZE, &data, &len, &owned, &ze)) {
		snprintf(why, why_len, "%s (%s)", path, ze.msg);
		zip_close(z);
		return -EINVAL;
	}
	char name[4352];
	snprintf(name, sizeof(name), "%s!%s", path, entry);
	if (dex_open(name, data, len, 0, &sl->dex, &ze)) {
		snprintf(why, why_len, "%s", ze.msg);
		free(owned);
		zip_close(z);
		return -EINVAL;
	}
	sl->zip = z;
	sl->owned = owned;
	sl->source = strdup(name);
	return 0;
}

static int from_archive(struct oat_dexset *s, uint32_t i, struct slot *sl, struct err *err)
{
	const struct oat_dex *r = oat_dex_at(s->oat, i);
	const char *bang = strchr(r->location, '!');
	char primary[4096], entry[256], *cand[MAX_CANDIDATES], tried[ERR_MSG_MAX] = "";
	size_t n, used = 0;
	int rc = -ENOENT;

	snprintf(primary, sizeof(primary), "%.*s",
		 bang ? (int)(bang - r->location) : (int)strlen(r->location), r->location);
	snprintf(entry, sizeof(entry), "%s", bang ? bang + 1 : "classes.dex");
	n = candidates(s, primary, cand);
	for (size_t k = 0; k < n && rc; k++) {
		char why[600];
		rc = try_archive(cand[k], entry, r->checksum, sl, why, sizeof(why));
		if (rc && used < sizeof(tried))
			used += (size_t)snprintf(tried + used, sizeof(tried) - used, "%s%s",
						 used ? "; " : "", why);
	}
	for (size_t k = 0; k < n; k++)
		free(cand[k]);
	if (!rc)
		return 0;
	return err_set(err, -ENOENT,
		       "dex #%u (%s, CRC32 0x%08x) is not in the vdex and no matching archive was "
		       "found: tried %s", i, r->location, r->checksum, tried);
}

int oat_dexset_get(struct oat_dexset *s, uint32_t i, const struct dex_file **out,
		   struct err *err)
{
	struct slot *sl;
	const struct oat_dex *r = oat_dex_at(s->oat, i);
	int rc;

	*out = NULL;
	if (!r)
		return err_set(err, -ENOENT, "%s: no dex #%u", oat_name(s->oat), i);
	sl = &s->slots[i];
	if (!sl->tried) {
		sl->tried = true;
		rc = r->dex_file_offset ? from_vdex(s, i, sl, &sl->err)
					: from_archive(s, i, sl, &sl->err);
		if (rc && !sl->err.code)
			sl->err.code = rc;
	}
	if (!sl->dex) {
		*err = sl->err;
		return sl->err.code ? sl->err.code : -ENOENT;
	}
	*out = sl->dex;
	return 0;
}
