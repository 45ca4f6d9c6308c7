/* proc_socks.h — a process's open sockets as /proc tells them, so that
 * `uprobestats traffic` knows the sockets that existed before it attached:
 * each fd of <proc>/PID/fd that is "socket:[INODE]", with the family, type
 * and peer of that inode from <proc>/PID/net/{tcp,tcp6,udp,udp6,unix} (the
 * tables of the process's own network namespace).  Text files every kernel
 * has (no BPF, no sock_diag), read as hostile input.  Sockets of other
 * families (netlink, packet) are left out; a unix socket's peer is not
 * known (the table names only the socket's own path). */
#ifndef UPROBESTATS_SYS_PROC_SOCKS_H
#define UPROBESTATS_SYS_PROC_SOCKS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_sock {
	uint32_t fd;
	uint64_t inode;
	uint16_t family;          /* AF_UNIX, AF_INET, AF_INET6; 0: not found in a table */
	uint16_t type;            /* SOCK_STREAM, SOCK_DGRAM, … */
	uint16_t port;            /* the peer's, host order; 0: none (listening, unconnected) */
	uint8_t addr[16];         /* the peer's, network order */
};

/* At most max sockets of pid into out.  Returns how many, or a negative
 * errno (-ESRCH: no such process, -EACCES). */
int proc_sockets(const char *proc_dir, pid_t pid, struct proc_sock *out, size_t max);

/* One line of a tcp/tcp6/udp/udp6 table (family AF_INET or AF_INET6): the
 * socket's inode and its peer into s.  0, or -EINVAL for a header or a
 * malformed line. */
int proc_net_inet_line(const char *line, int family, uint64_t *inode, struct proc_sock *s);
/* One line of the unix table: the inode and the type. */
int proc_net_unix_line(const char *line, uint64_t *inode, struct proc_sock *s);

#endif
