/* ups_traffic.bpf.h — the traffic programs (traffic, traffic_exit): per
 * process, socket and peer byte and call counts.
 * Included once by Uprobestats.bpf.c, at the place the programs above it
 * (exit probes, the pending-call stacks) are defined: one object, one
 * compilation unit; a header only to keep each concern its own file. */

/* ---- traffic (records.h: enum ups_traffic_op) ---- */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);  /* resized when a traffic probe runs */
	__type(key, struct ups_traffic_sock_key);
	__type(value, struct ups_traffic_sock);
} traffic_socks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);  /* resized when a traffic probe runs (--agg-keys) */
	__type(key, struct ups_traffic_key);
	__type(value, struct ups_traffic_value);
} traffic_data SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1);  /* resized when a traffic probe runs (--agg-keys) */
	__type(key, struct ups_traffic_host_key);
	__type(value, struct ups_traffic_host);
} traffic_hosts SEC(".maps");

/* getaddrinfo's addresses: whole (sockaddr_in or sockaddr_in6) */
#define UPS_SOCKADDR_ANY 128

/* A sockaddr of len bytes at uaddr: family, port and address (AF_UNIX: the
 * path's start; none when len is the family's alone).  Nothing when len does not cover the family
 * and (inet) the port and address: a call that got no address back (addrlen
 * 0: a unix stream or connected TCP socket) left the buffer as it was.
 * cut: the kernel wrote only len bytes of a longer address (recvfrom's,
 * accept()'s buffer was short); when those do not hold the peer, *s says
 * so (UPS_TRAFFIC_PEER_CUT: no port, no address), never the stale rest of
 * the buffer.  A unix path cut short is not read at all.
 * 16 bytes first (a sockaddr_in may end a mapping), the rest by family.
 * Returns 1 when it read the peer. */
static __always_inline int read_peer(struct ups_traffic_sock *s, __u64 uaddr, __u32 len, int cut)
{
	__u8 sa[28] = {};
	const void *u = (const void *)UPS_UNTAG(uaddr);
	__u16 family;

	if (!uaddr || len < 2 || ups_probe_read_user(sa, 16, u))
		goto none;
	family = sa[0] | (__u16)sa[1] << 8;
	if ((family == 2 && len < 8) || (family == 10 && len < 24) || (family == 1 && cut)) {
		if (cut)
			s->family = family;     /* the kernel wrote that much */
		goto none;
	}
	s->family = family;
	if (family == 2) {               /* AF_INET */
		s->port = (__u16)sa[2] << 8 | sa[3];
		__builtin_memcpy(s->addr, sa + 4, 4);
	} else if (family == 10) {       /* AF_INET6 */
		if (ups_probe_read_user(sa, sizeof(sa), u))
			goto none;
		s->port = (__u16)sa[2] << 8 | sa[3];
		__builtin_memcpy(s->addr, sa + 8, 16);
	} else if (family == 1) {        /* AF_UNIX */
		/* an unbound peer's is the family alone: no path */
		if (len > 2 && !ups_probe_read_user(sa, 18, u))
			__builtin_memcpy(s->addr, sa + 2, 16);
	}
	return 1;
none:
	if (cut) {
		s->flags |= UPS_TRAFFIC_PEER_CUT;
		s->port = 0;
		__builtin_memset(s->addr, 0, sizeof(s->addr));
	}
	return 0;
}

/* The address bytes the kernel wrote for recvfrom and accept: the length it
 * wrote back at ulen (read only; the address's whole length), but no more
 * than the buffer's length given at the entry (in), which is all it copies.
 * *cut: the address was longer than the buffer.  0 when there is none. */
static __always_inline __u32 filled_len(__u64 ulen, __u32 in, int *cut)
{
	__u32 len = 0;

	*cut = 0;
	if (!ulen || ups_probe_read_user(&len, sizeof(len), (const void *)UPS_UNTAG(ulen)))
		return 0;
	if (UPS_CFG(lone_ret))
		return len;     /* no entry: the length given is gone (no libc call is one) */
	if (len > in) {
		*cut = 1;
		return in;
	}
	return len;
}

/* getaddrinfo's result list at *resp (read only): each IPv4/IPv6 address
 * -> the name looked up (node), per process.  bsd: bionic's addrinfo. */
static __always_inline void traffic_lookup(__u32 pid, __u64 node, __u64 resp, int bsd)
{
	struct ups_traffic_host_key k = {};
	struct ups_traffic_host h = {};
	__u64 ai = 0, f[6];

	if (!node || !resp || ups_probe_read_user(&ai, sizeof(ai), (const void *)UPS_UNTAG(resp)))
		return;
	if (ups_probe_read_user_str(h.name, sizeof(h.name), (const void *)UPS_UNTAG(node)) <= 1)
		return;
	k.pid = pid;
#pragma unroll
	for (int i = 0; i < UPS_TRAFFIC_LOOKUP_ADDRS; i++) {
		struct ups_traffic_sock s = {};

		if (!ai || ups_probe_read_user(f, sizeof(f), (const void *)UPS_UNTAG(ai)))
			break;
		read_peer(&s, bsd ? f[4] : f[3], UPS_SOCKADDR_ANY, 0);
		if (s.family == 2 || s.family == 10) {
			k.family = s.family;
			__builtin_memcpy(k.addr, s.addr, sizeof(k.addr));
			bpf_map_update_elem(&traffic_hosts, &k, &h, BPF_ANY);
		}
		ai = f[5];
	}
}

/* Network traffic is IPv4, IPv6 and unix sockets.  Netlink (glibc's
 * getaddrinfo with AI_ADDRCONFIG asks the kernel for the interface addresses
 * through one), packet and other sockets are a process talking to its kernel
 * or below IP: not counted, like a file. */
static __always_inline int traffic_family(__u16 family)
{
	return family == 1 || family == 2 || family == 10;
}

static __always_inline void traffic_new_sock(struct ups_traffic_sock_key *k, __u16 family,
					     __u16 type, __u16 flags, __u64 uaddr, __u32 ulen,
					     int cut)
{
	struct ups_traffic_sock s = {};

	s.sock_id = bpf_ktime_get_ns();
	s.family = family;
	s.type = type;
	s.flags = flags;
	read_peer(&s, uaddr, ulen, cut);
	if (!s.family || traffic_family(s.family))   /* 0: not known yet */
		bpf_map_update_elem(&traffic_socks, k, &s, BPF_ANY);
	else    /* the fd is no (network) socket now, whatever it was */
		bpf_map_delete_elem(&traffic_socks, k);
}

/* A connection's socket type: stream or seqpacket, whose sends go to the
 * peer whatever address they name. */
static __always_inline __u16 fixed_peer(__u16 type)
{
	return type == UPS_SOCK_STREAM || type == UPS_SOCK_SEQPACKET ? UPS_TRAFFIC_PEER_FIXED : 0;
}

/* Returns 1 when the call counted on fd (a known socket, or one whose
 * address says it is traffic), else 0.  The address (uaddr, ulen bytes; cut:
 * filled_len's) is the datagram's peer, except on a connection
 * (UPS_TRAFFIC_PEER_FIXED), whose peer the kernel uses whatever a sendto
 * names.  uncounted: a sendmmsg/recvmmsg's messages whose bytes are not in
 * bytes. */
static __always_inline int traffic_count(void *ctx, __u64 pid_tgid, __u32 fd, __s64 bytes,
					 int tx, __u64 uaddr, __u32 ulen, int cut, __u32 uncounted)
{
	struct ups_traffic_sock_key sk = { .pid = pid_tgid >> 32, .fd = fd };
	struct ups_traffic_sock *s = bpf_map_lookup_elem(&traffic_socks, &sk);
	struct ups_traffic_key k = {};
	struct ups_traffic_value *v;
	__u32 zero = 0, *gen;

	if (bytes < 0 || (!bytes && !uncounted))
		return 0;
	if (s) {
		k.sock = *s;
		if (s->flags & UPS_TRAFFIC_PEER_FIXED)
			uaddr = 0;
	} else if (!uaddr) {
		return 0;    /* not a socket we know: a file, a pipe */
	}
	if (uaddr) {
		struct ups_traffic_sock peer = k.sock;

		/* sendto/recvfrom: this datagram's peer */
		read_peer(&peer, uaddr, ulen, cut);
		if (!traffic_family(peer.family) && !s)
			return 0;           /* a netlink message, say */
		if (traffic_family(peer.family))
			k.sock = peer;      /* (else no address came back: the socket's) */
		/* an unconnected socket's later recv()/recvfrom(NULL) count
		 * against the peer it first sent to */
		if (s && tx && !s->port && k.sock.port) {
			s->port = k.sock.port;
			__builtin_memcpy(s->addr, k.sock.addr, sizeof(s->addr));
		}
	}
	gen = bpf_map_lookup_elem(&agg_gen, &zero);
	k.pid = sk.pid;
	k.uid = (__u32)bpf_get_current_uid_gid();
	k.fd = fd;
	k.gen = gen ? (*gen & 1) : 0;
	v = bpf_map_lookup_elem(&traffic_data, &k);
	if (!v) {
		struct ups_traffic_value z = {};

		/* the first caller's name: kept even when the process is gone
		 * by the time the interval is printed */
		bpf_get_current_comm(z.comm, sizeof(z.comm));
		z.comm_tid = (__u32)pid_tgid;
		bpf_map_update_elem(&traffic_data, &k, &z, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&traffic_data, &k);
		if (!v) {
			struct ups_probe_counters *c = ups_counters(ctx);
			if (c)
				c->agg_full++;
			return 1;
		}
	}
	if (uncounted) {
		__sync_fetch_and_add(&v->uncounted_calls, 1);
		__sync_fetch_and_add(&v->uncounted_msgs, uncounted);
	}
	if (tx) {
		__sync_fetch_and_add(&v->tx_bytes, bytes);
		__sync_fetch_and_add(&v->tx_calls, 1);
	} else {
		__sync_fetch_and_add(&v->rx_bytes, bytes);
		__sync_fetch_and_add(&v->rx_calls, 1);
	}
	return 1;
}

/* Messages whose msg_len a sendmmsg/recvmmsg's exit reads: all a call can
 * move, in a bounded loop (the normal objects: 5.5 and newer verify one);
 * the legacy objects' first UPS_TRAFFIC_MMSG_LEGACY, unrolled (4.14: no
 * loop, 4,096 instructions). */
#ifdef UPS_LEGACY
#define UPS_TRAFFIC_MMSG_READ UPS_TRAFFIC_MMSG_LEGACY
#define UPS_MMSG_LOOP _Pragma("unroll")
#else
#define UPS_TRAFFIC_MMSG_READ UPS_MMSG_VLEN_MAX
#define UPS_MMSG_LOOP _Pragma("clang loop unroll(disable)")
#endif

/* struct mmsghdr on 64-bit, read whole: its msghdr's msg_name and
 * msg_namelen, and msg_len */
struct ups_mmsghdr {
	__u64 name;
	__u32 namelen, pad0;
	__u64 rest[5];
	__u32 len, pad1;
};
_Static_assert(sizeof(struct ups_mmsghdr) == UPS_MMSGHDR_SIZE &&
	       __builtin_offsetof(struct ups_mmsghdr, len) == UPS_MMSGHDR_LEN_AT,
	       "struct mmsghdr, 64-bit");

/* A sendmmsg's/recvmmsg's sums: the bytes of the messages counted, the
 * messages not.  In the normal objects in this CPU's ups_scratch: on the
 * stack the verifier would tell each count and each sum's range apart, one
 * state per value at each of the 1,024 messages (it gave up at 1,000,000
 * instructions); in a map value they are unknown to it. */
struct mmsg_sums {
	__s64 bytes;
	__u32 skipped;
};

#ifdef UPS_LEGACY
#define UPS_MMSG_SUMS(local) (&(local))
#else
#define UPS_MMSG_SUMS(local) ((void)(local), \
			      (struct mmsg_sums *)ups_scratch_get(sizeof(struct mmsg_sums)))
#endif

/* The bytes of a sendmmsg/recvmmsg that returned n messages: the msg_len of
 * vec[0..n-1] (read only), UPS_TRAFFIC_MMSG_READ of them at most, of the
 * messages that name no address, or whose socket's peer is fixed (own: the
 * kernel sends there whatever they name, and a connection's recvmmsg gets
 * no address).  *left: the messages not counted: past those read, where a
 * read failed, and a message naming its peer (msg_name and a msg_namelen:
 * a sendmmsg's as given, a recvmmsg's as the kernel wrote it), whose
 * address is not read (the loop that would read and compare each is past
 * the verifier's limits), so that it never counts on another peer. */
static __always_inline __s64 mmsg_bytes(__u64 vec, __s64 n, int own, __u32 *left)
{
	const __u8 *at = (const __u8 *)UPS_UNTAG(vec);
	struct mmsg_sums local = {}, *m = UPS_MMSG_SUMS(local);
	int i;

	*left = 0;
	if (n <= 0)
		return 0;
	if (!m) {
		*left = (__u32)n;       /* (no scratch: never) */
		return 0;
	}
	m->bytes = 0;
	m->skipped = 0;
	UPS_MMSG_LOOP
	for (i = 0; i < UPS_TRAFFIC_MMSG_READ; i++) {
		struct ups_mmsghdr h;

		if (i >= n || ups_probe_read_user(&h, sizeof(h), at + i * UPS_MMSGHDR_SIZE))
			break;
		if (h.namelen && h.name && !own)
			m->skipped++;
		else
			m->bytes += h.len;
	}
	*left = m->skipped + (n > i ? (__u32)(n - i) : 0);
	return m->bytes;
}

/* A socket whose sends go to its peer whatever they name. */
static __always_inline int peer_fixed(const struct ups_traffic_sock_key *sk)
{
	struct ups_traffic_sock *s = bpf_map_lookup_elem(&traffic_socks, sk);

	return s && (s->flags & UPS_TRAFFIC_PEER_FIXED);
}

/* A call that moves bytes (send*, recv*, read, write, …; not splice):
 * counted once on fd's row.  The address of sendto, sendmsg (msg_name as
 * the entry read it), recvfrom and recvmsg (as far as the kernel wrote it:
 * its length at ulen now, bounded by the length given, the fd's upper
 * half). */
static __always_inline void traffic_io(void *ctx, __u64 pid_tgid, __u32 op,
				       const struct ups_agg_entry *e, __s64 ret)
{
	struct ups_traffic_sock_key sk = { .pid = pid_tgid >> 32, .fd = (__u32)e->args[0] };
	int tx = op == UPS_TRAFFIC_TX || op == UPS_TRAFFIC_TX_ADDR || op == UPS_TRAFFIC_TX_MSG ||
		 op == UPS_TRAFFIC_TX_MMSG;
	__u32 in = (__u32)(e->args[0] >> 32), ulen = 0, left = 0;
	__u64 uaddr = 0;
	int cut = 0;

	if (op == UPS_TRAFFIC_TX_ADDR || op == UPS_TRAFFIC_TX_MSG) {
		/* sendto: the address and its length (register 5) as given;
		 * sendmsg: msg_name and msg_namelen as the entry read them */
		uaddr = e->args[2];
		ulen = op == UPS_TRAFFIC_TX_ADDR ? (__u32)e->args[1] : in;
	} else if (op == UPS_TRAFFIC_RX_ADDR || op == UPS_TRAFFIC_RX_MSG) {
		/* the address only as far as the kernel wrote it */
		uaddr = e->args[2];
		ulen = filled_len(op == UPS_TRAFFIC_RX_ADDR ? e->args[1] :
				  e->args[1] + UPS_MSGHDR_NAMELEN_AT, in, &cut);
	} else if (op == UPS_TRAFFIC_TX_MMSG || op == UPS_TRAFFIC_RX_MMSG) {
		ret = mmsg_bytes(e->args[1], ret, peer_fixed(&sk), &left);
	}
	traffic_count(ctx, pid_tgid, sk.fd, ret, tx, uaddr, ulen, cut, left);
}

/* splice(fd_in, …, fd_out, …): bytes out of a socket fd_out, else into a
 * socket fd_in (args: fd_in, fd_out). */
static __always_inline void traffic_splice(void *ctx, __u64 pid_tgid, const __u64 *args,
					   __s64 ret)
{
	if (!traffic_count(ctx, pid_tgid, (__u32)args[1], ret, 1, 0, 0, 0, 0))
		traffic_count(ctx, pid_tgid, (__u32)args[0], ret, 0, 0, 0, 0, 0);
}

/* socketpair(domain, type, protocol, sv) = 0: sv[0] and sv[1] are sockets
 * (args: domain, type, sv), their peer unknown. */
static __always_inline void traffic_socketpair(__u32 pid, const __u64 *args)
{
	struct ups_traffic_sock_key sk = { .pid = pid };
	__s32 sv[2] = {};

	if (!args[2] || ups_probe_read_user(sv, sizeof(sv), (const void *)UPS_UNTAG(args[2])))
		return;
#pragma unroll
	for (int i = 0; i < 2; i++) {
		sk.fd = (__u32)sv[i];
		traffic_new_sock(&sk, (__u16)args[0], (__u16)(args[1] & 0xf),
				 fixed_peer((__u16)(args[1] & 0xf)), 0, 0, 0);
	}
}

static __always_inline int traffic_exit_at(void *ctx, __u64 sp, int uret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct ups_traffic_sock_key sk = { .pid = pid_tgid >> 32 };
	__s64 ret = (__s64)UPS_RET(ctx);
	__u32 op = UPS_CFG(traffic_op), n;
	struct ups_agg_entry e;
	int cut;

	if (!take_agg_entry(ctx, pid_tgid, sp, uret, &e)) {
		/* an accept() blocked since before the attach: its new fd is a
		 * socket all the same (family, type and peer unknown; a
		 * connection) */
		if (op == UPS_TRAFFIC_ACCEPT && ret >= 0 && ups_pid_ok(pid_tgid)) {
			sk.fd = (__u32)ret;
			traffic_new_sock(&sk, 0, 0, UPS_TRAFFIC_PEER_FIXED, 0, 0, 0);
		}
		return 0;
	}
	/* (the upper half: recvfrom's, recvmsg's, sendmsg's and accept's
	 * address length at the entry) */
	sk.fd = (__u32)e.args[0];
	if (op == UPS_TRAFFIC_TX || op == UPS_TRAFFIC_TX_ADDR || op == UPS_TRAFFIC_RX ||
	    op == UPS_TRAFFIC_RX_ADDR || (op >= UPS_TRAFFIC_TX_MMSG && op <= UPS_TRAFFIC_RX_MMSG) ||
	    op == UPS_TRAFFIC_TX_MSG || op == UPS_TRAFFIC_RX_MSG) {
		traffic_io(ctx, pid_tgid, op, &e, ret);
	} else if (op == UPS_TRAFFIC_SPLICE) {
		traffic_splice(ctx, pid_tgid, e.args, ret);
	} else if (op == UPS_TRAFFIC_SOCKETPAIR && ret == 0) {
		traffic_socketpair(sk.pid, e.args);
	} else if (op == UPS_TRAFFIC_SOCKET && ret >= 0) {
		sk.fd = (__u32)ret;
		traffic_new_sock(&sk, (__u16)e.args[0], (__u16)(e.args[1] & 0xf), 0, 0, 0, 0);
	} else if (op == UPS_TRAFFIC_ACCEPT && ret >= 0) {
		/* the listening socket's family when accept gives no address
		 * (addr or addrlen NULL); the peer only as far as the kernel
		 * wrote it (an unbound unix peer's is 2: the family alone) */
		struct ups_traffic_sock *l;

		l = bpf_map_lookup_elem(&traffic_socks, &sk);
		n = filled_len(e.args[2], (__u32)(e.args[0] >> 32), &cut);
		sk.fd = (__u32)ret;
		traffic_new_sock(&sk, l ? l->family : 0, UPS_SOCK_STREAM, UPS_TRAFFIC_PEER_FIXED,
				 e.args[1], n, cut);
	} else if (op == UPS_TRAFFIC_CONNECT) {
		/* the peer, also for a non-blocking connect still in progress
		 * (-1); a stream socket's sends go there from now on */
		struct ups_traffic_sock *s = bpf_map_lookup_elem(&traffic_socks, &sk);
		if (s) {
			read_peer(s, e.args[1], (__u32)e.args[2], 0);
			s->flags |= fixed_peer(s->type);
		} else {
			traffic_new_sock(&sk, 0, 0, 0, e.args[1], (__u32)e.args[2], 0);
		}
	} else if (op == UPS_TRAFFIC_CLOSE) {
		bpf_map_delete_elem(&traffic_socks, &sk);
	} else if ((op == UPS_TRAFFIC_LOOKUP || op == UPS_TRAFFIC_LOOKUP_BSD) && ret == 0) {
		traffic_lookup(sk.pid, e.args[0], e.args[1], op == UPS_TRAFFIC_LOOKUP_BSD);
	}
	return 0;
}

SEC("uprobe/traffic_exit")
int traffic_exit(void *ctx)
{
	return traffic_exit_at(ctx, UPS_SP(ctx), 0);
}

SEC("uretprobe/traffic")
int traffic(void *ctx)
{
	return traffic_exit_at(ctx, UPS_SP(ctx) - UPS_RET_SP_ADJ, 1);
}
