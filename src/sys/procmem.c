#include "sys/procmem.h"

#include <errno.h>
#include <sys/uio.h>

int proc_mem_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	size_t done = 0;

	/* a read can stop at a page that is not mapped: go on until all of it
	 * or nothing more came */
	while (done < len) {
		struct iovec local = { (char *)buf + done, len - done };
		struct iovec remote = { (void *)(uintptr_t)(addr + done), len - done };
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

		if (n < 0)
			return -errno;
		if (n == 0)
			return -EFAULT;
		done += (size_t)n;
	}
	return 0;
}
