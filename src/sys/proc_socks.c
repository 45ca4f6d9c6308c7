#include "sys/proc_socks.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* 8 hex digits per 32-bit word, each word as the kernel printed it (%08X of
 * the word in this machine's order): its bytes back in memory order. */
static int hex_words(const char *hex, size_t n_words, uint8_t *out)
{
	if (strlen(hex) != n_words * 8)
		return -EINVAL;
	for (size_t i = 0; i < n_words; i++) {
		char word[9];
		char *end;
		uint32_t v;

		memcpy(word, hex + i * 8, 8);
		word[8] = '\0';
		v = (uint32_t)strtoul(word, &end, 16);
		if (*end)
			return -EINVAL;
		memcpy(out + i * 4, &v, 4);
	}
	return 0;
}

int proc_net_inet_line(const char *line, int family, uint64_t *inode, struct proc_sock *s)
{
	char rem[40];
	unsigned port, st;

	/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
	if (sscanf(line, " %*u: %*[0-9A-Fa-f]:%*x %39[0-9A-Fa-f]:%x %x %*s %*s %*s %*u %*u %"
		   SCNu64, rem, &port, &st, inode) != 4 || port > 0xffff)
		return -EINVAL;
	memset(s->addr, 0, sizeof(s->addr));
	if (hex_words(rem, family == AF_INET ? 1 : 4, s->addr) < 0)
		return -EINVAL;
	s->family = (uint16_t)family;
	s->port = (uint16_t)port;
	return 0;
}

int proc_net_unix_line(const char *line, uint64_t *inode, struct proc_sock *s)
{
	unsigned type;

	/* Num: RefCount Protocol Flags Type St Inode [Path] */
	if (sscanf(line, " %*x: %*x %*x %*x %x %*x %" SCNu64, &type, inode) != 2 || !type ||
	    type > 0xffff)
		return -EINVAL;
	s->family = AF_UNIX;
	s->type = (uint16_t)type;
	s->port = 0;
	memset(s->addr, 0, sizeof(s->addr));
	return 0;
}

static int by_inode(const void *x, const void *y)
{
	const struct proc_sock *a = x, *b = y;

	return a->inode < b->inode ? -1 : a->inode > b->inode;
}

/* Fills the sockets (sorted by inode) that one table lists. */
static void read_table(const char *proc_dir, pid_t pid, const char *name, int family, int type,
		       struct proc_sock *socks, size_t n)
{
	char path[4096], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%d/net/%s", proc_dir, (int)pid, name);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct proc_sock s = { 0 }, *hit;
		uint64_t inode;
		int rc;

		if (!strchr(line, '\n') && !feof(f)) {  /* longer than a line can be: skip it */
			int c;
			while ((c = fgetc(f)) != EOF && c != '\n')
				;
			continue;
		}
		rc = family == AF_UNIX ? proc_net_unix_line(line, &inode, &s)
				       : proc_net_inet_line(line, family, &inode, &s);
		if (rc < 0 || !inode)
			continue;
		s.inode = inode;
		hit = bsearch(&s, socks, n, sizeof(*socks), by_inode);
		while (hit && hit > socks && hit[-1].inode == inode)
			hit--;   /* the first fd of this socket (dup()ed: several) */
		for (; hit && hit < socks + n && hit->inode == inode; hit++) {
			if (hit->family)
				continue;
			hit->family = s.family;
			hit->type = family == AF_UNIX ? s.type : (uint16_t)type;
			hit->port = s.port;
			memcpy(hit->addr, s.addr, sizeof(hit->addr));
		}
	}
	fclose(f);
}

int proc_sockets(const char *proc_dir, pid_t pid, struct proc_sock *out, size_t max)
{
	static const struct { const char *name; int family, type; } tables[] = {
		{ "tcp", AF_INET, SOCK_STREAM },   { "tcp6", AF_INET6, SOCK_STREAM },
		{ "udp", AF_INET, SOCK_DGRAM },    { "udp6", AF_INET6, SOCK_DGRAM },
		{ "unix", AF_UNIX, 0 },
	};
	char path[4096];
	struct dirent *d;
	size_t n = 0, kept = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/%d/fd", proc_dir ? proc_dir : "/proc", (int)pid);
	dir = opendir(path);
	if (!dir)
		return errno == ENOENT ? -ESRCH : -errno;
	while (n < max && (d = readdir(dir))) {
		char link[64], *end;
		unsigned long fd = strtoul(d->d_name, &end, 10);
		ssize_t len;
		uint64_t inode;

		if (*end || end == d->d_name || fd > INT32_MAX)
			continue;
		len = readlinkat(dirfd(dir), d->d_name, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (sscanf(link, "socket:[%" SCNu64 "]", &inode) != 1)
			continue;
		out[n++] = (struct proc_sock){ .fd = (uint32_t)fd, .inode = inode };
	}
	closedir(dir);
	if (!n)
		return 0;
	qsort(out, n, sizeof(*out), by_inode);
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		read_table(proc_dir ? proc_dir : "/proc", pid, tables[i].name, tables[i].family,
			   tables[i].type, out, n);
	for (size_t i = 0; i < n; i++)
		if (out[i].family)
			out[kept++] = out[i];
	return (int)kept;
}
