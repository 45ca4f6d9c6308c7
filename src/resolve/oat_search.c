#include "resolve/oat_search.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/grow.h"
#include "resolve/class_index.h"
#include "sys/maps.h"

#define MAX_DEPTH 5
#define MAX_FILES 4096

static const char *const DEFAULT_ROOTS[] = {
	"/data/misc/apexdata/com.android.art/dalvik-cache/%s",
	"/system/framework/oat/%s",
	"/system/framework/%s",
	"/apex/com.android.art/javalib/%s",
	"/system_ext/framework/oat/%s",
	"/product/framework/oat/%s",
	"/vendor/framework/oat/%s",
	"/system/priv-app",
	"/system/app",
	"/system_ext/priv-app",
	"/system_ext/app",
	"/product/priv-app",
	"/product/app",
	NULL,
};

const char *const *oat_search_default_roots(void)
{
	return DEFAULT_ROOTS;
}

void oat_search_default_cache_dir(char *buf, size_t size)
{
	const char *x = getenv("XDG_CACHE_HOME");

	if (access("/system/build.prop", F_OK) == 0)
		snprintf(buf, size, "/data/local/tmp/uprobestats-cache");
	else if (x && *x)
		snprintf(buf, size, "%s/uprobestats", x);
	else
		snprintf(buf, size, "/tmp/uprobestats-cache");
}

struct cands {
	char *path[MAX_FILES];
	char *why[MAX_FILES];
	size_t n;
};

static bool is_oat_name(const char *p, size_t n)
{
	return (n > 5 && !memcmp(p + n - 5, ".odex", 5)) ||
	       (n > 4 && !memcmp(p + n - 4, ".oat", 4));
}

static void add(struct cands *c, const char *path, const char *why)
{
	if (c->n >= MAX_FILES)
		return;
	for (size_t i = 0; i < c->n; i++)
		if (!strcmp(c->path[i], path))
			return;
	c->path[c->n] = strdup(path);
	c->why[c->n] = strdup(why);
	if (c->path[c->n] && c->why[c->n])
		c->n++;
}

struct maps_ctx {
	struct cands *c;
	const char *why;
};

static int add_if_oat(void *ctx, const struct proc_mapping *m)
{
	struct maps_ctx *mc = ctx;
	const char *slash = strchr(m->path, '/');

	if (slash && is_oat_name(slash, strlen(slash)))
		add(mc->c, slash, mc->why);
	return 0;
}

/* The oat/odex paths of /proc/PID/maps lines, in order. */
static int from_maps(const struct oat_search_opts *o, struct cands *c, struct err *err)
{
	char path[4200], why[4400];
	struct maps_ctx mc = { c, why };
	int rc;

	if (o->maps_path)
		snprintf(path, sizeof(path), "%s", o->maps_path);
	else
		proc_maps_path(o->proc_dir, o->pid, path, sizeof(path));
	snprintf(why, sizeof(why), "mapped by pid %d (%s)", o->pid, path);
	if ((rc = proc_maps_read_file(path, add_if_oat, &mc, err)))
		return err_prefix(err, "cannot read the mappings of pid %d", o->pid);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Depth-first, names sorted; directory symlinks are not followed (loops). */
static void walk(const char *dir, int depth, const char *why, struct cands *c)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (grow_array(&names, &cap, n + 1, 64) < 0)
			break;
		if (!(names[n] = strdup(de->d_name)))
			break;
		n++;
	}
	closedir(d);
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char p[4096];
		struct stat lst, st;
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		if (lstat(p, &lst) != 0 || stat(p, &st) != 0)
			continue;
		if (S_ISDIR(lst.st_mode) && depth < MAX_DEPTH)
			walk(p, depth + 1, why, c);
		else if (S_ISREG(st.st_mode) && is_oat_name(names[i], strlen(names[i])))
			add(c, p, why);
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

static void from_roots(const struct oat_search_opts *o, struct cands *c)
{
	char dir[4096], why[4200];

	if (o->roots) {
		for (size_t i = 0; i < o->n_roots; i++) {
			snprintf(why, sizeof(why), "found under search root %s", o->roots[i]);
			walk(o->roots[i], 0, why, c);
		}
		return;
	}
	for (const char *const *r = DEFAULT_ROOTS; *r; r++) {
		if (strstr(*r, "%s") && !o->isa)
			continue;
		snprintf(dir, sizeof(dir), *r, o->isa);
		snprintf(why, sizeof(why), "found under default root %s", dir);
		walk(dir, 0, why, c);
	}
}

static void free_cands(struct cands *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->path[i]);
		free(c->why[i]);
	}
	free(c);
}

/* Checks one candidate; 1 when it defines the class. */
static int check(const struct oat_search_opts *o, const char *cache, const char *path,
		 const char *why, const char *desc, struct oat_search_hit *hit, char *skipped,
		 size_t skipped_size)
{
	struct class_index *ci;
	struct err e = { 0 };

	if (class_index_load(o->code, path, cache, o->dex_files, o->n_dex_files, &ci, &e)) {
		size_t l = strlen(skipped);
		if (l + 1 < skipped_size)
			snprintf(skipped + l, skipped_size - l, "%s%s", l ? "; " : "", e.msg);
		return 0;
	}
	bool wrong_isa = o->isa && strcmp(class_index_isa(ci), o->isa) != 0;
	bool found = !wrong_isa && class_index_has(ci, desc);
	if (found) {
		snprintf(hit->path, sizeof(hit->path), "%s", path);
		snprintf(hit->why, sizeof(hit->why), "%s; its dex defines %s (class index of %zu "
			 "classes%s)", why, desc, class_index_count(ci),
			 class_index_from_cache(ci) ? ", from the cache" : "");
		hit->from_cache = class_index_from_cache(ci);
	}
	class_index_free(ci);
	return found;
}

int oat_search_class(const struct oat_search_opts *o, const char *class_desc,
		     struct oat_search_hit *hit, struct err *err)
{
	struct cands *c = calloc(1, sizeof(*c));
	char cache[4096], skipped[ERR_MSG_MAX / 2] = "";
	int rc;

	memset(hit, 0, sizeof(*hit));
	if (!c)
		return err_set(err, -ENOMEM, "out of memory");
	if (o->cache_dir)
		snprintf(cache, sizeof(cache), "%s", o->cache_dir);
	else
		oat_search_default_cache_dir(cache, sizeof(cache));
	if ((o->pid > 0 || o->maps_path) && (rc = from_maps(o, c, err))) {
		free_cands(c);
		return rc;
	}
	from_roots(o, c);
	for (size_t i = 0; i < c->n; i++) {
		if (check(o, o->no_cache ? NULL : cache, c->path[i], c->why[i], class_desc, hit,
			  skipped, sizeof(skipped))) {
			free_cands(c);
			return 0;
		}
	}
	rc = err_set(err, -ENOENT,
		     "no oat/odex file %s%sdefines class %s (%zu files searched%s%s): the class "
		     "may be in an app that is not AOT-compiled (then it runs interpreted or "
		     "JIT-compiled and has no file offset), or outside the search roots",
		     o->pid > 0 ? "mapped by the target process or " : "",
		     o->roots ? "under the given roots " : "under the default roots ", class_desc,
		     c->n, *skipped ? "; unreadable: " : "", skipped);
	free_cands(c);
	return rc;
}

int oat_search_candidates(const struct oat_search_opts *o, char ***paths, size_t *n,
			  struct err *err)
{
	struct cands *c = calloc(1, sizeof(*c));
	int rc;

	*paths = NULL;
	*n = 0;
	if (!c)
		return err_set(err, -ENOMEM, "out of memory");
	if ((o->pid > 0 || o->maps_path) && (rc = from_maps(o, c, err))) {
		free_cands(c);
		return rc;
	}
	from_roots(o, c);
	if (c->n && !(*paths = malloc(c->n * sizeof(char *)))) {
		free_cands(c);
		return err_set(err, -ENOMEM, "out of memory");
	}
	for (size_t i = 0; i < c->n; i++) {
		(*paths)[i] = c->path[i];
		c->path[i] = NULL;
	}
	*n = c->n;
	free_cands(c);
	return 0;
}
