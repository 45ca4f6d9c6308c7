#include "sys/properties.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/mapfile.h"
#include "sys/propfile.h"

#define AREA_MAX_BYTES (16u << 20)   /* areas are 128 KiB, 1 MiB on some builds */
#define GETPROP_TIMEOUT_MS 5000

/* Internal answer of the area reader: the store is not there at all. */
#define NO_STORE (-ENODEV)

static int area_file_get(const char *path, const char *name, char *buf, size_t size,
			 struct err *err)
{
	struct mapped_file f;
	int rc = mapfile_open(path, AREA_MAX_BYTES, 0, &f, err);

	if (rc < 0)
		return rc == -ENOENT ? -EIO : rc;   /* -ENOENT means "not set" here */
	rc = prop_area_get(f.data, f.size, path, name, buf, size, err);
	mapfile_close(&f);
	return rc;
}

/* Android 8+: property_info names the area. */
static int serialized_get(const char *root, const char *info_path, const char *name,
			  char *buf, size_t size, struct err *err)
{
	struct mapped_file f;
	const char *ctx;
	char path[4096];
	int rc = mapfile_open(info_path, AREA_MAX_BYTES, 0, &f, err);

	if (rc < 0)
		return rc == -ENOENT ? -EIO : rc;
	rc = prop_info_context(f.data, f.size, info_path, name, &ctx, err);
	if (rc == 0 && !sys_path_join(path, sizeof(path), root, ctx))
		rc = err_set(err, -ENAMETOOLONG, "%s: context name too long", info_path);
	mapfile_close(&f);
	if (rc < 0)
		return rc;
	return area_file_get(path, name, buf, size, err);
}

static bool is_regular(const char *dir, const struct dirent *de)
{
	char path[4096];
	struct stat st;

	if (de->d_name[0] == '.')
		return false;
	if (de->d_type == DT_REG)
		return true;
	if (de->d_type != DT_UNKNOWN || !sys_path_join(path, sizeof(path), dir, de->d_name))
		return false;
	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Android 7 (contexts without property_info): look in every area. */
static int scan_get(const char *root, const char *name, char *buf, size_t size,
		    struct err *err)
{
	DIR *d = opendir(root);
	struct dirent *de;
	struct err first = { 0 };
	int rc = -ENOENT;

	if (!d)
		return err_set(err, -errno, "%s: cannot list: %s", root, strerror(errno));
	while (rc != 0 && (de = readdir(d))) {
		char path[4096];
		struct err e = { 0 };
		int r;

		if (!is_regular(root, de) || !sys_path_join(path, sizeof(path), root, de->d_name))
			continue;
		r = area_file_get(path, name, buf, size, &e);
		if (r == 0 || r == -ERANGE)
			rc = r;
		else if (r != -ENOENT && first.code == 0)
			first = e;
		if (r == -ERANGE && err)
			*err = e;
	}
	closedir(d);
	if (rc == -ENOENT && first.code) {
		if (err)
			*err = first;
		return first.code;
	}
	return rc;
}

static int areas_get(const char *root, const char *name, char *buf, size_t size,
		     struct err *err)
{
	char info[4096];
	struct stat st;

	if (stat(root, &st) < 0) {
		int e = errno;
		if (e == ENOENT)
			return err_set(err, NO_STORE, "%s: no such file", root);
		return err_set(err, -e, "%s: %s", root, strerror(e));
	}
	if (S_ISREG(st.st_mode))   /* Android 6 and earlier: one area */
		return area_file_get(root, name, buf, size, err);
	if (!S_ISDIR(st.st_mode))
		return err_set(err, -EBADMSG, "%s: neither a property area nor a directory", root);
	if (!sys_path_join(info, sizeof(info), root, "property_info"))
		return err_set(err, -ENAMETOOLONG, "%s: path too long", root);
	if (stat(info, &st) == 0)
		return serialized_get(root, info, name, buf, size, err);
	return scan_get(root, name, buf, size, err);
}

/* ---- getprop ---- */

#define GETPROP_UNAVAILABLE (-ENOSYS)

/* The child starts with an empty signal mask: the CLI blocks SIGINT and
 * SIGTERM for its own signal handling, getprop should not inherit that. */
static int spawn_attrs(posix_spawnattr_t *attr)
{
	sigset_t none;

	sigemptyset(&none);
	if (posix_spawnattr_init(attr))
		return ENOMEM;
	if (posix_spawnattr_setsigmask(attr, &none) ||
	    posix_spawnattr_setflags(attr, POSIX_SPAWN_SETSIGMASK)) {
		posix_spawnattr_destroy(attr);
		return EINVAL;
	}
	return 0;
}

static int spawn_getprop(const char *getprop, const char *name, int out_fd, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	char *argv[] = { (char *)getprop, (char *)name, NULL };
	int rc = spawn_attrs(&attr);

	if (rc)
		return -rc;
	if (posix_spawn_file_actions_init(&fa)) {
		posix_spawnattr_destroy(&attr);
		return -ENOMEM;
	}
	rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	if (!rc)
		rc = posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (!rc)
		rc = posix_spawn(pid, getprop, &fa, &attr, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&attr);
	return -rc;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads the child's output until EOF or the deadline.  Returns the length,
 * -ERANGE when it did not fit, -ETIMEDOUT. */
static ssize_t read_output(int fd, char *buf, size_t size)
{
	int64_t deadline = now_ms() + GETPROP_TIMEOUT_MS;
	size_t len = 0;
	bool overflow = false;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		char sink[256];
		int64_t left = deadline - now_ms();
		ssize_t n;

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
		if (len < size - 1)
			n = read(fd, buf + len, size - 1 - len);
		else
			n = read(fd, sink, sizeof(sink));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0)
			break;
		if (len < size - 1)
			len += (size_t)n;
		else
			overflow = true;
	}
	buf[len] = '\0';
	return overflow ? -ERANGE : (ssize_t)len;
}

static int wait_child(pid_t pid, bool kill_it)
{
	int status;

	if (kill_it)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* `getprop NAME`: 0 with the value, -ENOENT when it prints nothing (unset),
 * GETPROP_UNAVAILABLE when there is no getprop, another code with err. */
static int getprop_run(const char *getprop, const char *name, char *buf, size_t size,
		       struct err *err)
{
	int pfd[2], status;
	pid_t pid;
	ssize_t len;

	if (!getprop[0] || access(getprop, X_OK) != 0)
		return err_set(err, GETPROP_UNAVAILABLE, "no getprop at %s",
			       getprop[0] ? getprop : "(disabled)");
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return err_set(err, -errno, "getprop: pipe: %s", strerror(errno));
	int rc = spawn_getprop(getprop, name, pfd[1], &pid);
	close(pfd[1]);
	if (rc < 0) {
		close(pfd[0]);
		return err_set(err, rc, "%s: cannot run: %s", getprop, strerror(-rc));
	}
	len = read_output(pfd[0], buf, size);
	close(pfd[0]);
	status = wait_child(pid, len == -ETIMEDOUT);
	if (len == -ETIMEDOUT)
		return err_set(err, -ETIMEDOUT, "%s %s: no answer within %d ms", getprop, name,
			       GETPROP_TIMEOUT_MS);
	if (len < 0)
		return err_set(err, (int)len, "%s %s: value longer than %zu bytes", getprop, name,
			       size - 1);
	if (status != 0)
		return err_set(err, -EIO, "%s %s: exit status %d", getprop, name, status);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		buf[--len] = '\0';
	return len ? 0 : err_set(err, -ENOENT, "%s: not set (getprop)", name);
}

/* ---- the lookup ---- */

int props_get(const struct sys_paths *paths, const char *name, char *buf, size_t size,
	      enum props_source *src, struct err *err)
{
	struct sys_paths p = sys_paths_resolve(paths);
	struct err aerr = { 0 }, gerr = { 0 };
	int arc, grc;

	*src = PROPS_SOURCE_NONE;
	if (!name[0] || size < 2)
		return err_set(err, -EINVAL, "property lookup needs a name and a buffer");
	buf[0] = '\0';
	arc = areas_get(p.props, name, buf, size, &aerr);
	if (arc == 0 || arc == -ENOENT || arc == -ERANGE) {
		*src = PROPS_SOURCE_AREA;
		if (arc == -ENOENT)
			return err_set(err, -ENOENT, "%s: not set", name);
		if (arc == -ERANGE)
			return err_set(err, -ERANGE, "%s: value longer than %zu bytes", name,
				       size - 1);
		return 0;
	}
	/* The areas are missing, unreadable or not understood: ask getprop. */
	grc = getprop_run(p.getprop, name, buf, size, &gerr);
	if (grc != GETPROP_UNAVAILABLE) {
		*src = PROPS_SOURCE_GETPROP;
		if (grc < 0 && err)
			*err = gerr;
		if (grc < 0 && grc != -ENOENT && arc != NO_STORE)
			err_prefix(err, "%s; then", aerr.msg);
		return grc;
	}
	buf[0] = '\0';
	if (arc == NO_STORE)
		return err_set(err, -ENOENT, "not an Android device: no %s and no getprop at %s",
			       p.props, p.getprop[0] ? p.getprop : "(disabled)");
	if (err)
		*err = aerr;
	err_prefix(err, "reading %s", name);
	return arc;
}

const char *props_source_name(enum props_source s)
{
	switch (s) {
	case PROPS_SOURCE_AREA: return "property areas";
	case PROPS_SOURCE_GETPROP: return "getprop";
	default: return "none";
	}
}

/* One property into dst; records the first real problem in info. */
static enum props_source read_one(const struct sys_paths *paths, const char *name, char *dst,
				  size_t size, struct android_info *info)
{
	char buf[PROPS_VALUE_MAX];
	enum props_source src;
	struct err e = { 0 };
	int rc = props_get(paths, name, buf, sizeof(buf), &src, &e);

	dst[0] = '\0';
	if (rc == 0)
		snprintf(dst, size, "%s", buf);
	else if (rc != -ENOENT && !info->problem[0])
		snprintf(info->problem, sizeof(info->problem), "%s", e.msg);
	return src;
}

static int parse_sdk(const char *s)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	return (errno || end == s || *end || v < 0 || v > 10000) ? 0 : (int)v;
}

void android_info_read(const struct sys_paths *paths, struct android_info *info)
{
	char debuggable[8];
	enum props_source srcs[5];

	memset(info, 0, sizeof(*info));
	srcs[0] =
		read_one(paths, "ro.build.type", info->build_type, sizeof(info->build_type), info);
	srcs[1] = read_one(paths, "ro.build.version.sdk", info->sdk, sizeof(info->sdk), info);
	srcs[2] = read_one(paths, "ro.build.version.release", info->release,
			   sizeof(info->release), info);
	srcs[3] = read_one(paths, "ro.product.cpu.abi", info->abi, sizeof(info->abi), info);
	srcs[4] = read_one(paths, "ro.debuggable", debuggable, sizeof(debuggable), info);
	for (size_t i = 0; i < sizeof(srcs) / sizeof(srcs[0]) && !info->source; i++)
		info->source = srcs[i];
	info->on_android = info->source != PROPS_SOURCE_NONE;
	info->sdk_int = parse_sdk(info->sdk);
	info->debuggable = debuggable[0] ? (strcmp(debuggable, "1") == 0) : -1;
}
