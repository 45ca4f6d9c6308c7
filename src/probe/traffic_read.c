#include "probe/traffic_read.h"

#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan/aggregation.h"
#include "records.h"
#include "sink/traffic_out.h"

struct traffic_entry {
	struct ups_traffic_key key;
	struct ups_traffic_value value;
};

struct traffic_reader {
	int fd;
	int64_t uid;
	uint32_t max;
	size_t n;
	struct traffic_entry *entries;
	struct traffic_row *rows;
};

int traffic_reader_open(const struct plan *plan, const struct session *s, int64_t uid,
			struct traffic_reader **out, struct err *err)
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
	r->max = plan_agg_max_keys(plan);
	r->fd = session_map_fd(s, first->obj, CATALOG_MAP_TRAFFIC_DATA);
	r->entries = calloc(r->max, sizeof(*r->entries));
	r->rows = calloc(r->max, sizeof(*r->rows));
	if (r->fd < 0 || !r->entries || !r->rows) {
		traffic_reader_close(r);
		return err_set(err, -ENOMEM, "traffic: the map %s is missing or out of memory",
			       CATALOG_MAP_TRAFFIC_DATA);
	}
	*out = r;
	return 0;
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

/* The interface of the IPv4 route to addr (network order): the longest
 * matching prefix of /proc/net/route; NULL when none matches. */
static const char *route_iface(uint32_t addr, char *buf, size_t size)
{
	FILE *f = fopen("/proc/net/route", "re");
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

static const char *proto_of(const struct ups_traffic_sock *s)
{
	if (s->family == 1)
		return "unix";
	if (s->type == UPS_SOCK_STREAM)
		return "tcp";
	if (s->type == UPS_SOCK_DGRAM)
		return "udp";
	return "inet";
}

/* The peer as text and its interface. */
static void describe(const struct ups_traffic_sock *s, struct traffic_row *row, char *iface,
		     size_t size)
{
	char a[INET6_ADDRSTRLEN] = "";
	uint32_t v4;

	static const uint8_t zero[16];

	row->iface = NULL;
	if ((s->family == 2 || s->family == 10) && !s->port && !memcmp(s->addr, zero, 16)) {
		snprintf(row->peer, sizeof(row->peer), "?");  /* accept(fd, NULL, …) */
	} else if (s->family == 2) {
		memcpy(&v4, s->addr, 4);
		inet_ntop(AF_INET, s->addr, a, sizeof(a));
		snprintf(row->peer, sizeof(row->peer), "%s:%u", a, s->port);
		row->iface = (s->addr[0] == 127) ? "lo" : route_iface(v4, iface, size);
	} else if (s->family == 10) {
		static const uint8_t loop6[16] = { [15] = 1 };
		inet_ntop(AF_INET6, s->addr, a, sizeof(a));
		snprintf(row->peer, sizeof(row->peer), "[%s]:%u", a, s->port);
		if (!memcmp(s->addr, loop6, 16))
			row->iface = "lo";
	} else if (s->family == 1) {
		snprintf(row->peer, sizeof(row->peer), "unix:%.*s", 16, (const char *)s->addr);
	} else {
		snprintf(row->peer, sizeof(row->peer), "?");
	}
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

void traffic_reader_print(struct traffic_reader *r, struct outbuf *o, bool json, uint64_t seq,
			  uint64_t ts_ns, uint64_t span_ns, bool final, uint64_t dropped)
{
	static char ifaces[64][16];   /* route names, shared by rows past 64 */
	size_t rows = 0;
	struct traffic_interval iv = { .seq = seq, .ts_ns = ts_ns, .span_ns = span_ns,
				       .final = final, .rows = r->rows, .dropped = dropped };

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
			describe(&e->key.sock, row, ifaces[rows % 64], sizeof(ifaces[0]));
		}
		row = &r->rows[rows - 1];
		row->tx_bytes += e->value.tx_bytes;
		row->rx_bytes += e->value.rx_bytes;
		row->tx_calls += e->value.tx_calls;
		row->rx_calls += e->value.rx_calls;
	}
	qsort(r->rows, rows, sizeof(*r->rows), by_bytes);
	iv.n_rows = rows;
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
	free(r);
}
