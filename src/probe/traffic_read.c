#include "probe/traffic_read.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "plan/aggregation.h"
#include "records.h"
#include "sink/traffic_out.h"
#include "sys/proc.h"
#include "sys/proc_socks.h"

struct traffic_entry {
	struct ups_traffic_key key;
	struct ups_traffic_value value;
};

struct traffic_reader {
	int fd;
	int hosts_fd;                 /* traffic_hosts: address -> looked-up name */
	int socks_fd;                 /* traffic_socks: the sockets the programs know */
	int64_t uid;
	struct sinks *sinks;          /* with atom_id: rows as atoms too */
	int32_t atom_id;
	uint32_t max;
	size_t n;
	struct traffic_entry *entries;
	struct traffic_row *rows;
	char (*hosts)[UPS_TRAFFIC_HOST_LEN];   /* per row */
	char (*ifaces)[16];                    /* per row: the route's interface */
	uint32_t *comm_tids;                   /* per row: the thread its comm is of */
};

int traffic_reader_open(const struct plan *plan, const struct session *s, int64_t uid,
			struct sinks *sinks, int32_t atom_id, struct traffic_reader **out,
			struct err *err)
{
	const struct plan_probe *first = NULL;
	struct traffic_reader *r;

	*out = NULL;
	for (size_t i = 0; i < plan->n_probes && !first; i++)
		if (plan->probe_by_id[i]->prog->traffic)
			first = plan->probe_by_id[i];
	if (!first)
		return 0;
	r = calloc(1, sizeof(*r));
	if (!r)
		return err_set(err, -ENOMEM, "out of memory");
	r->uid = uid;
	r->sinks = sinks;
	r->atom_id = atom_id;
	r->max = plan_agg_max_keys(plan);
	r->fd = session_map_fd(s, first->obj, CATALOG_MAP_TRAFFIC_DATA);
	r->hosts_fd = session_map_fd(s, first->obj, CATALOG_MAP_TRAFFIC_HOSTS);
	r->socks_fd = session_map_fd(s, first->obj, CATALOG_MAP_TRAFFIC_SOCKS);
	r->entries = calloc(r->max, sizeof(*r->entries));
	r->rows = calloc(r->max, sizeof(*r->rows));
	r->hosts = calloc(r->max, sizeof(*r->hosts));
	r->ifaces = calloc(r->max, sizeof(*r->ifaces));
	r->comm_tids = calloc(r->max, sizeof(*r->comm_tids));
	if (r->fd < 0 || r->hosts_fd < 0 || r->socks_fd < 0 || !r->entries || !r->rows ||
	    !r->hosts || !r->ifaces || !r->comm_tids) {
		traffic_reader_close(r);
		return err_set(err, -ENOMEM, "traffic: the map %s is missing or out of memory",
			       CATALOG_MAP_TRAFFIC_DATA);
	}
	*out = r;
	return 0;
}

/* pid's open sockets into traffic_socks (at most room of them); returns how
 * many went in. */
static size_t learn_pid(struct traffic_reader *r, const char *proc_dir, pid_t pid, size_t room,
			uint64_t id_base)
{
	size_t added = 0;
	struct proc_sock *socks = calloc(room ? room : 1, sizeof(*socks));
	int n = socks ? proc_sockets(proc_dir, pid, socks, room) : 0;

	for (int i = 0; i < n; i++) {
		struct ups_traffic_sock_key k = { .pid = (uint32_t)pid, .fd = socks[i].fd };
		struct ups_traffic_sock v = { .sock_id = id_base + (uint64_t)i,
					      .family = socks[i].family,
					      .type = socks[i].type & 0xf, .port = socks[i].port };

		memcpy(v.addr, socks[i].addr, sizeof(v.addr));
		/* a connected TCP socket (its peer known): its sends go there
		 * whatever address a sendto names */
		if (v.type == UPS_SOCK_STREAM && v.port)
			v.flags = UPS_TRAFFIC_PEER_FIXED;
		if (socks[i].family == AF_UNIX)
			memset(v.addr, 0, sizeof(v.addr));   /* the peer's path: unknown */
		/* NOEXIST: a probe saw it meanwhile, and knows better */
		added += bpf_map_update_elem(r->socks_fd, &k, &v, BPF_NOEXIST) == 0;
	}
	free(socks);
	return added;
}

size_t traffic_reader_known_sockets(struct traffic_reader *r, const struct plan *plan,
				    const char *proc_dir)
{
	/* system-wide, half the map at most: room for the sockets made later */
	size_t room = r ? r->max / 2 : 0, added = 0;
	uint64_t id_base = 1;   /* below any bpf_ktime_get_ns() of a probe */
	bool every = false;

	if (!r)
		return 0;
	proc_dir = proc_dir ? proc_dir : "/proc";
	for (size_t t = 0; t < plan->n_tasks; t++) {
		every |= plan->tasks[t].all_processes;
		for (size_t i = 0; i < plan->tasks[t].n_pids && added < room; i++) {
			added += learn_pid(r, proc_dir, plan->tasks[t].pids[i], room - added,
					   id_base);
			id_base += room;
		}
	}
	DIR *d = every ? opendir(proc_dir) : NULL;
	struct dirent *e;
	while (d && added < room && (e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || pid == (long)getpid())
			continue;
		added += learn_pid(r, proc_dir, (pid_t)pid, room - added, id_base);
		id_base += room;
	}
	if (d)
		closedir(d);
	return added;
}

void traffic_reader_collect(struct traffic_reader *r, uint32_t gen)
{
	struct ups_traffic_key key, next, *prev = NULL;
	size_t start = r->n;

	while (r->n < r->max && bpf_map_get_next_key(r->fd, prev, &next) == 0) {
		key = next;
		prev = &key;
		if (next.gen == gen)
			r->entries[r->n++].key = next;
	}
	for (size_t i = start; i < r->n; i++) {
		if (bpf_map_lookup_elem(r->fd, &r->entries[i].key, &r->entries[i].value) < 0)
			memset(&r->entries[i].value, 0, sizeof(r->entries[i].value));
		else
			bpf_map_delete_elem(r->fd, &r->entries[i].key);
	}
}

/* A routing table of pid's network namespace (/proc/PID/net/NAME), else of
 * ours when pid is gone. */
static FILE *route_table(uint32_t pid, const char *name)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%u/net/%s", pid, name);
	f = fopen(path, "re");
	if (!f) {
		snprintf(path, sizeof(path), "/proc/net/%s", name);
		f = fopen(path, "re");
	}
	return f;
}

/* The interface of the IPv4 route to addr (network order): the longest
 * matching prefix of the route table; NULL when none matches. */
static const char *route_iface(uint32_t pid, uint32_t addr, char *buf, size_t size)
{
	FILE *f = route_table(pid, "route");
	char line[256], name[32];
	unsigned dest, mask, flags, best_mask = 0;
	bool found = false;

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		unsigned gw;
		if (sscanf(line, "%31s %x %x %x %*s %*s %*s %x", name, &dest, &gw, &flags,
			   &mask) != 5 || !(flags & 1))
			continue;
		if ((addr & mask) == dest && (!found || mask >= best_mask)) {
			snprintf(buf, size, "%s", name);
			best_mask = mask;
			found = true;
		}
	}
	fclose(f);
	return found ? buf : NULL;
}

/* The IPv6 route's: the longest prefix of ipv6_route (addresses as 32 hex
 * digits in network order) that holds addr, up and not a reject route. */
static const char *route6_iface(uint32_t pid, const uint8_t addr[16], char *buf, size_t size)
{
	FILE *f = route_table(pid, "ipv6_route");
	char line[256], dest[33], name[32];
	unsigned plen, flags;
	int best = -1;

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f)) {
		uint8_t d[16];
		bool ok = true;

		if (sscanf(line, "%32[0-9a-f] %x %*s %*s %*s %*s %*s %*s %x %31s", dest, &plen,
			   &flags, name) != 4 || strlen(dest) != 32 || plen > 128 ||
		    !(flags & 0x1) || (flags & 0x200) || (int)plen <= best)
			continue;
		for (int i = 0; i < 16; i++) {
			unsigned byte;
			sscanf(dest + 2 * i, "%2x", &byte);
			d[i] = (uint8_t)byte;
		}
		for (unsigned bit = 0; bit < plen && ok; bit++)
			ok = ((d[bit / 8] ^ addr[bit / 8]) & (0x80 >> (bit % 8))) == 0;
		if (ok) {
			snprintf(buf, size, "%s", name);
			best = (int)plen;
		}
	}
	fclose(f);
	return best >= 0 ? buf : NULL;
}

static const char *proto_of(const struct ups_traffic_sock *s)
{
	if (!s->family && !s->type)
		return "?";    /* accepted by a call that began before the attach */
	if (s->family == 1)
		return "unix";
	if (s->type == UPS_SOCK_STREAM)
		return "tcp";
	if (s->type == UPS_SOCK_DGRAM)
		return "udp";
	return "inet";
}

/* The peer as text and its interface. */
static void describe(uint32_t pid, const struct ups_traffic_sock *s, struct traffic_row *row,
		     char *iface, size_t size)
{
	char a[INET6_ADDRSTRLEN] = "";
	uint32_t v4;

	static const uint8_t zero[16];

	row->iface = NULL;
	if (s->flags & UPS_TRAFFIC_PEER_CUT) {
		/* recvfrom's or accept()'s buffer shorter than the address */
		snprintf(row->peer, sizeof(row->peer), "truncated");
	} else if ((s->family == 2 || s->family == 10) && !s->port && !memcmp(s->addr, zero, 16)) {
		snprintf(row->peer, sizeof(row->peer), "?");  /* accept(fd, NULL, …) */
	} else if (s->family == 2) {
		memcpy(&v4, s->addr, 4);
		inet_ntop(AF_INET, s->addr, a, sizeof(a));
		snprintf(row->peer, sizeof(row->peer), "%s:%u", a, s->port);
		row->iface = (s->addr[0] == 127) ? "lo" : route_iface(pid, v4, iface, size);
	} else if (s->family == 10) {
		static const uint8_t loop6[16] = { [15] = 1 };
		inet_ntop(AF_INET6, s->addr, a, sizeof(a));
		snprintf(row->peer, sizeof(row->peer), "[%s]:%u", a, s->port);
		row->iface = !memcmp(s->addr, loop6, 16) ? "lo"
			     : route6_iface(pid, s->addr, iface, size);
	} else if (s->family == 1) {
		snprintf(row->peer, sizeof(row->peer), "unix:%.*s", 16, (const char *)s->addr);
	} else {
		snprintf(row->peer, sizeof(row->peer), "?");
	}
}

/* The name the process looked up that gave the peer's address (an
 * IPv4-mapped IPv6 peer: its IPv4 address), printable ASCII only; NULL when
 * it looked none up, or looked up the address itself. */
static const char *host_of(const struct traffic_reader *r, const struct ups_traffic_key *k,
			   char *name)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct ups_traffic_host_key hk = { .pid = k->pid, .family = k->sock.family };
	struct ups_traffic_host h;
	uint8_t bin[16];

	if (hk.family != 2 && hk.family != 10)
		return NULL;
	memcpy(hk.addr, k->sock.addr, sizeof(hk.addr));
	if (hk.family == 10 && !memcmp(hk.addr, mapped, sizeof(mapped))) {
		hk.family = 2;
		memmove(hk.addr, hk.addr + 12, 4);
		memset(hk.addr + 4, 0, 12);
	}
	if (bpf_map_lookup_elem(r->hosts_fd, &hk, &h) < 0)
		return NULL;
	h.name[sizeof(h.name) - 1] = '\0';
	if (inet_pton(AF_INET, h.name, bin) == 1 || inet_pton(AF_INET6, h.name, bin) == 1)
		return NULL;
	for (size_t i = 0; h.name[i]; i++)
		name[i] = h.name[i] > 0x20 && h.name[i] < 0x7f ? h.name[i] : '?';
	name[strlen(h.name)] = '\0';
	return name;
}

static int by_bytes(const void *x, const void *y)
{
	const struct traffic_row *a = x, *b = y;
	uint64_t ta = a->tx_bytes + a->rx_bytes, tb = b->tx_bytes + b->rx_bytes;

	if (ta != tb)
		return ta > tb ? -1 : 1;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->fd < b->fd ? -1 : a->fd > b->fd;
}

/* Entries by socket (pid, fd, the socket itself), whatever the generation. */
static int by_sock(const void *x, const void *y)
{
	const struct ups_traffic_key *a = &((const struct traffic_entry *)x)->key;
	const struct ups_traffic_key *b = &((const struct traffic_entry *)y)->key;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->fd != b->fd)
		return a->fd < b->fd ? -1 : 1;
	return memcmp(&a->sock, &b->sock, sizeof(a->sock));
}

/* The interval's rows as atoms, one batch, stamped now (CLOCK_BOOTTIME,
 * as statsd's elapsed time). */
static void send_atoms(struct traffic_reader *r, size_t rows)
{
	struct traffic_atom ta;
	struct timespec ts;
	struct err e = { 0 };
	uint64_t now;

	if (!r->atom_id || !r->sinks || !rows)
		return;
	clock_gettime(CLOCK_BOOTTIME, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	for (size_t i = 0; i < rows; i++)
		sinks_atom(r->sinks, traffic_row_atom(&ta, r->atom_id, &r->rows[i], now));
	(void)sinks_flush(r->sinks, &e);   /* a failed output says so at the end */
}

/* The interval's bytes up and down: per process (the sum of its rows) and
 * per peer, as counters on the process's tracks. */
static void send_counters(const struct traffic_reader *r, size_t rows, uint64_t mono_ns)
{
	char name[160];

	if (!r->sinks)
		return;
	for (size_t i = 0; i < rows; i++) {
		const struct traffic_row *row = &r->rows[i];
		struct counter_sample c = { .name = name, .pid = row->pid, .mono_ns = mono_ns };
		bool first = true;
		uint64_t tx = 0, rx = 0;

		for (size_t k = 0; k < rows; k++) {
			if (r->rows[k].pid != row->pid)
				continue;
			first &= k >= i;
			tx += r->rows[k].tx_bytes;
			rx += r->rows[k].rx_bytes;
		}
		if (first) {  /* the process's totals once, at its first row */
			c.name = "bytes up";
			c.value = (int64_t)tx;
			sinks_counter(r->sinks, &c);
			c.name = "bytes down";
			c.value = (int64_t)rx;
			sinks_counter(r->sinks, &c);
			c.name = name;
		}
		snprintf(name, sizeof(name), "bytes up %s %s", row->proto, row->peer);
		c.value = (int64_t)row->tx_bytes;
		sinks_counter(r->sinks, &c);
		snprintf(name, sizeof(name), "bytes down %s %s", row->proto, row->peer);
		c.value = (int64_t)row->rx_bytes;
		sinks_counter(r->sinks, &c);
	}
}

/* The row's comm from an entry of it: the first entry's, or one counted
 * by the process's main thread (whose name is the process's). */
static void take_comm(struct traffic_row *row, uint32_t *tid, const struct traffic_entry *e,
		      bool first)
{
	const struct ups_traffic_value *v = &e->value;

	if (!v->comm[0] || (!first && (*tid == row->pid || v->comm_tid != row->pid)))
		return;
	memcpy(row->comm, v->comm, sizeof(row->comm));
	row->comm[sizeof(row->comm) - 1] = '\0';
	*tid = v->comm_tid;
}

/* Rows whose comm is another thread's name (or none): the process's own
 * (the main thread's /proc/PID/comm) while it runs.  Rows are by socket,
 * so a process's rows are together: its name is read once. */
static void leader_comms(struct traffic_reader *r, size_t rows)
{
	char name[sizeof(r->rows[0].comm)] = "";
	uint32_t pid = 0;
	bool have = false;

	for (size_t i = 0; i < rows; i++) {
		struct traffic_row *row = &r->rows[i];

		if (r->comm_tids[i] == row->pid && row->comm[0])
			continue;
		if (!pid || pid != row->pid) {
			pid = row->pid;
			have = proc_comm("/proc", (pid_t)pid, name, sizeof(name));
		}
		if (have)
			memcpy(row->comm, name, sizeof(row->comm));
	}
}

void traffic_reader_print(struct traffic_reader *r, struct outbuf *o, bool json, uint64_t seq,
			  uint64_t ts_ns, uint64_t mono_ns, uint64_t span_ns, bool final,
			  uint64_t dropped)
{
	size_t rows = 0;
	struct traffic_interval iv = { .seq = seq, .ts_ns = ts_ns, .span_ns = span_ns,
				       .final = final, .rows = r->rows, .dropped = dropped };

	/* BOOTTIME at the interval's end (MONOTONIC mono_ns): the clocks differ
	 * by the time suspended, the same now as then unless it slept since */
	iv.boot_ns = mono_ns + (uint64_t)(clock_ns(CLOCK_BOOTTIME) - clock_ns(CLOCK_MONOTONIC));

	qsort(r->entries, r->n, sizeof(*r->entries), by_sock);
	for (size_t i = 0; i < r->n; i++) {
		const struct traffic_entry *e = &r->entries[i];
		struct traffic_row *row;

		if (r->uid >= 0 && e->key.uid != (uint32_t)r->uid)
			continue;
		if (!i || by_sock(e, e - 1)) {
			row = &r->rows[rows++];
			*row = (struct traffic_row){ .pid = e->key.pid, .uid = e->key.uid,
						     .fd = e->key.fd, .proto = proto_of(&e->key.sock) };
			describe(e->key.pid, &e->key.sock, row, r->ifaces[rows - 1],
				 sizeof(r->ifaces[0]));
			row->host = host_of(r, &e->key, r->hosts[rows - 1]);
			r->comm_tids[rows - 1] = 0;
			take_comm(row, &r->comm_tids[rows - 1], e, true);
		}
		row = &r->rows[rows - 1];
		take_comm(row, &r->comm_tids[rows - 1], e, false);
		row->tx_bytes += e->value.tx_bytes;
		row->rx_bytes += e->value.rx_bytes;
		row->tx_calls += e->value.tx_calls;
		row->rx_calls += e->value.rx_calls;
		iv.uncounted_calls += e->value.uncounted_calls;
		iv.uncounted_msgs += e->value.uncounted_msgs;
	}
	leader_comms(r, rows);
	qsort(r->rows, rows, sizeof(*r->rows), by_bytes);
	iv.n_rows = rows;
	send_atoms(r, rows);
	send_counters(r, rows, mono_ns);
	if (json)
		traffic_print_jsonl(o, &iv);
	else
		traffic_print_text(o, &iv);
	r->n = 0;
}

void traffic_reader_close(struct traffic_reader *r)
{
	if (!r)
		return;
	free(r->entries);
	free(r->rows);
	free(r->hosts);
	free(r->ifaces);
	free(r->comm_tids);
	free(r);
}
