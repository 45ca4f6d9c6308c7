/* fuzz_procnet — one line of /proc/PID/net/{tcp,tcp6,udp,udp6,unix}
 * (sys/proc_socks.h: the sockets traffic learns at the attach) over
 * arbitrary bytes.  Seeds: a row of each table. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "sys/proc_socks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char line[512];
	struct proc_sock s;
	uint64_t inode;

	if (size >= sizeof(line))
		size = sizeof(line) - 1;
	memcpy(line, data, size);
	line[size] = '\0';
	proc_net_inet_line(line, AF_INET, &inode, &s);
	proc_net_inet_line(line, AF_INET6, &inode, &s);
	proc_net_unix_line(line, &inode, &s);
	return 0;
}
