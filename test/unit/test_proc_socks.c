#include "ut.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sys/proc_socks.h"
#include "sys_testutil.h"

/* As the kernel prints them (net/ipv4/tcp_ipv4.c, udp.c, ipv6, af_unix.c). */
static const char TCP[] =
	"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
	"timeout inode\n"
	"   0: 0100007F:1F90 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0"
	"        0 1001 1 0000000000000000 100 0 0 10 0\n"
	"   1: 0100007F:C350 0100007F:1F90 01 00000000:00000000 00:00000000 00000000     0"
	"        0 1002 1 0000000000000000 20 4 30 10 -1\n";
static const char TCP6[] =
	"  sl  local_address                         remote_address                        st "
	"tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	"   0: 00000000000000000000000001000000:9C41 00000000000000000000000001000000:1F91 01 "
	"00000000:00000000 00:00000000 00000000     0        0 1003 1 0000000000000000 20 4 0"
	" 10 -1\n";
static const char UDP[] =
	"   sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  "
	"timeout inode ref pointer drops\n"
	"  100: 0100007F:1F92 00000000:0000 07 00000000:00000000 00:00000000 00000000     0"
	"        0 1004 2 0000000000000000 0\n";
static const char UNIX[] =
	"Num       RefCount Protocol Flags    Type St Inode Path\n"
	"0000000000000000: 00000002 00000000 00010000 0001 01 1005 /tmp/app.sock\n"
	"0000000000000000: 00000003 00000000 00000000 0002 03 1006\n";

static void fd_link(const char *dir, const char *fd, const char *target)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/42/fd/%s", dir, fd);
	UT_EQ_INT(symlink(target, path), 0);
}

UT_TEST(proc_sockets_reads_fds_and_the_net_tables)
{
	char buf[256], path[512];
	const char *dir = st_mkdtemp("procsocks", buf, sizeof(buf));
	struct proc_sock s[8];
	char a[INET6_ADDRSTRLEN];

	UT_EQ_INT(st_write(dir, "42/net/tcp", TCP), 0);
	UT_EQ_INT(st_write(dir, "42/net/tcp6", TCP6), 0);
	UT_EQ_INT(st_write(dir, "42/net/udp", UDP), 0);
	UT_EQ_INT(st_write(dir, "42/net/udp6", ""), 0);
	UT_EQ_INT(st_write(dir, "42/net/unix", UNIX), 0);
	snprintf(path, sizeof(path), "%s/42/fd", dir);
	UT_EQ_INT(mkdir(path, 0755), 0);
	fd_link(dir, "3", "socket:[1002]");
	fd_link(dir, "4", "socket:[1003]");
	fd_link(dir, "5", "/etc/hostname");
	fd_link(dir, "6", "socket:[1004]");
	fd_link(dir, "7", "socket:[1005]");
	fd_link(dir, "8", "socket:[9999]");      /* netlink: in no table */
	fd_link(dir, "9", "pipe:[1002]");
	fd_link(dir, "10", "socket:[1002]");     /* a dup() of fd 3 */
	UT_EQ_INT(proc_sockets(dir, 42, s, 8), 5);
	/* sorted by inode: 1002 (fds 3 and 10), 1003, 1004, 1005 */
	UT_EQ_INT(s[0].family, AF_INET);
	UT_EQ_INT(s[0].type, SOCK_STREAM);
	UT_EQ_INT(s[0].port, 8080);
	UT_EQ_STR(inet_ntop(AF_INET, s[0].addr, a, sizeof(a)), "127.0.0.1");
	UT_EQ_INT(s[0].fd + s[1].fd, 13);
	UT_EQ_INT(s[1].port, 8080);
	UT_EQ_INT(s[2].fd, 4);
	UT_EQ_INT(s[2].family, AF_INET6);
	UT_EQ_INT(s[2].port, 8081);
	UT_EQ_STR(inet_ntop(AF_INET6, s[2].addr, a, sizeof(a)), "::1");
	UT_EQ_INT(s[3].fd, 6);
	UT_EQ_INT(s[3].type, SOCK_DGRAM);
	UT_EQ_INT(s[3].port, 0);                /* unconnected */
	UT_EQ_INT(s[4].fd, 7);
	UT_EQ_INT(s[4].family, AF_UNIX);
	UT_EQ_INT(s[4].type, SOCK_STREAM);
	UT_EQ_INT(proc_sockets(dir, 42, s, 1), 1);   /* bounded by max */
	UT_EQ_INT(proc_sockets(dir, 43, s, 8), -ESRCH);
}

UT_TEST(proc_net_lines_refuse_what_is_not_a_row)
{
	struct proc_sock s = { 0 };
	uint64_t inode = 0;

	UT_EQ_INT(proc_net_inet_line("  sl  local_address rem_address   st", AF_INET, &inode, &s),
		  -EINVAL);
	UT_EQ_INT(proc_net_inet_line("   0: 0100007F:1F90 0100007F:1F90", AF_INET, &inode, &s),
		  -EINVAL);
	/* a v6 address in the v4 table, a port past 16 bits */
	UT_EQ_INT(proc_net_inet_line("0: 0:0 00000000000000000000000001000000:1 01 a b c 0 0 7",
				     AF_INET, &inode, &s), -EINVAL);
	UT_EQ_INT(proc_net_inet_line("0: 0:0 0100007F:10000 01 a b c 0 0 7", AF_INET, &inode, &s),
		  -EINVAL);
	UT_EQ_INT(proc_net_inet_line("0: 0:0 0100007F:50 01 a b c 0 0 7", AF_INET, &inode, &s), 0);
	UT_EQ_U64(inode, 7);
	UT_EQ_INT(s.port, 80);
	UT_EQ_INT(proc_net_unix_line("Num       RefCount Protocol Flags    Type St Inode Path",
				     &inode, &s), -EINVAL);
	UT_EQ_INT(proc_net_unix_line("0: 2 0 0 0 1 5", &inode, &s), -EINVAL);   /* type 0 */
}
