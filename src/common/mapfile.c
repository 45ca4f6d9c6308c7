#include "common/mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/grow.h"

static int read_all(int fd, size_t max_size, const char *path,
		    struct mapped_file *out, struct err *err)
{
	size_t cap = 4096, len = 0;
	uint8_t *buf = malloc(cap);

	if (!buf)
		return err_set(err, -ENOMEM, "%s: out of memory", path);
	for (;;) {
		ssize_t n;
		if (len == cap) {
			if (max_size && cap >= max_size) {
				free(buf);
				return err_set(err, -EFBIG, "%s: larger than the %zu-byte limit",
					       path, max_size);
			}
			if (grow_array(&buf, &cap, len + 1, 4096) < 0) {
				free(buf);
				return err_set(err, -ENOMEM, "%s: out of memory", path);
			}
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			return err_set(err, -e, "%s: read failed: %s", path, strerror(e));
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	if (max_size && len > max_size) {
		free(buf);
		return err_set(err, -EFBIG, "%s: larger than the %zu-byte limit", path, max_size);
	}
	out->data = buf;
	out->size = len;
	out->mmapped = 0;
	return 0;
}

static const char *file_kind(mode_t m)
{
	if (S_ISCHR(m))
		return "a character device";
	if (S_ISBLK(m))
		return "a block device";
	if (S_ISFIFO(m))
		return "a FIFO (pipe)";
	if (S_ISSOCK(m))
		return "a socket";
	return "not a regular file";
}

int mapfile_open(const char *path, size_t max_size, unsigned flags,
		 struct mapped_file *out, struct err *err)
{
	struct stat st;
	int fd, rc = 0;

	memset(out, 0, sizeof(*out));
	/* O_NONBLOCK: opening a FIFO would otherwise wait for a writer. */
	fd = open(path, O_RDONLY | O_CLOEXEC | (flags & MAPFILE_REGULAR ? O_NONBLOCK : 0));
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT)
			return err_set(err, -e, "%s: no such file", path);
		if (e == EACCES)
			return err_set(err, -e, "%s: permission denied", path);
		return err_set(err, -e, "%s: cannot open: %s", path, strerror(e));
	}
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		return err_set(err, -e, "%s: cannot stat: %s", path, strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return err_set(err, -EISDIR, "%s: is a directory, expected a file", path);
	}
	if (((flags & MAPFILE_REGULAR) && !S_ISREG(st.st_mode)) ||
	    ((flags & MAPFILE_NO_DEVICE) && (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ||
					     S_ISSOCK(st.st_mode)))) {
		close(fd);
		return err_set(err, -EINVAL, "%s: is %s, not a regular file", path,
			       file_kind(st.st_mode));
	}
	if (!max_size || max_size > MAPFILE_MAX_SIZE)
		max_size = S_ISREG(st.st_mode) && st.st_size > 0 ? MAPFILE_MAX_SIZE
			   : MAPFILE_MAX_STREAM;
	out->dev = st.st_dev;
	out->ino = st.st_ino;
	out->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	if (S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p;
		if (max_size && (uint64_t)st.st_size > max_size) {
			close(fd);
			return err_set(err, -EFBIG,
				       "%s: %lld bytes, larger than the %zu-byte limit", path,
				       (long long)st.st_size, max_size);
		}
		/* MAP_SHARED, never MAP_PRIVATE: the kernel puts every live uprobe's
		 * breakpoint (another run's, bpftrace's, a closer's not yet torn
		 * down) into each private mapping of the file that may execute, a
		 * read-only view like this one included (uprobe_mmap, valid_vma),
		 * and the code read here would show traps where the file has
		 * returns.  A shared mapping (like read()) shows the file. */
		p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED) {
			out->data = p;
			out->size = (size_t)st.st_size;
			out->mmapped = 1;
		} else {   /* a file system without shared mappings (FUSE direct I/O) */
			rc = read_all(fd, max_size, path, out, err);
		}
	} else {
		rc = read_all(fd, max_size, path, out, err);
	}
	close(fd);
	if (rc == 0 && out->size == 0 && !(flags & MAPFILE_ALLOW_EMPTY)) {
		mapfile_close(out);
		return err_set(err, -ENODATA, "%s: file is empty", path);
	}
	return rc;
}

void mapfile_close(struct mapped_file *f)
{
	if (!f || !f->data)
		return;
	if (f->mmapped)
		munmap((void *)f->data, f->size);
	else
		free((void *)f->data);
	memset(f, 0, sizeof(*f));
}
