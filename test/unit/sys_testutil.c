#include "sys_testutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ut.h"

const char *st_fixture(const char *rel)
{
	static char buf[4096];
	const char *f = __FILE__;
	const char *slash = strrchr(f, '/');
	int dir_len = slash ? (int)(slash - f) : 1;

	snprintf(buf, sizeof(buf), "%.*s/../fixtures/%s", dir_len, slash ? f : ".", rel);
	return buf;
}

const char *st_mkdtemp(const char *name, char *buf, size_t size)
{
	static unsigned counter;
	char rel[256];

	snprintf(rel, sizeof(rel), "%s-%u", name, counter++);
	snprintf(buf, size, "%s", ut_tmpfile(rel));
	mkdir(buf, 0755);
	return buf;
}

static int mkdirs_for(const char *path)
{
	char tmp[4096];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

static int write_mode(const char *dir, const char *rel, const char *text, mode_t mode)
{
	char path[4096];
	size_t n = strlen(text);
	int fd, rc;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	if ((rc = mkdirs_for(path)) < 0)
		return rc;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return -errno;
	rc = write(fd, text, n) == (ssize_t)n ? 0 : -EIO;
	close(fd);
	chmod(path, mode);
	return rc;
}

int st_write(const char *dir, const char *rel, const char *text)
{
	return write_mode(dir, rel, text, 0644);
}

int st_write_script(const char *dir, const char *rel, const char *body)
{
	char text[8192];

	snprintf(text, sizeof(text), "#!/bin/sh\n%s", body);
	return write_mode(dir, rel, text, 0755);
}

static int copy_file(const char *src, const char *dst)
{
	char buf[65536];
	ssize_t n;
	int in = open(src, O_RDONLY | O_CLOEXEC), out, rc = 0;

	if (in < 0)
		return -errno;
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (out < 0) {
		close(in);
		return -errno;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			rc = -EIO;
	if (n < 0)
		rc = -errno;
	close(in);
	close(out);
	return rc;
}

int st_copy_dir(const char *src_dir, const char *dst_dir)
{
	DIR *d = opendir(src_dir);
	struct dirent *de;
	int rc = 0;

	if (!d)
		return -errno;
	mkdir(dst_dir, 0755);
	while (rc == 0 && (de = readdir(d))) {
		char s[4096], t[4096];
		if (de->d_name[0] == '.')
			continue;
		snprintf(s, sizeof(s), "%s/%s", src_dir, de->d_name);
		snprintf(t, sizeof(t), "%s/%s", dst_dir, de->d_name);
		rc = copy_file(s, t);
	}
	closedir(d);
	return rc;
}

int st_patch(const char *path, long off, const void *bytes, size_t n)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = pwrite(fd, bytes, n, off) == (ssize_t)n ? 0 : -EIO;
	close(fd);
	return rc;
}

int st_peek(const char *path, long off, void *bytes, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = pread(fd, bytes, n, off) == (ssize_t)n ? 0 : -EIO;
	close(fd);
	return rc;
}
