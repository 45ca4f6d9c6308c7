/* ups_aggregate.bpf.h — the in-kernel aggregation programs (aggregate,
 * agg_entry, aggregate_exit, aggregate_return).
 * Included once by Uprobestats.bpf.c, at the place the programs above it
 * (exit probes, the pending-call stacks) are defined: one object, one
 * compilation unit; a header only to keep each concern its own file. */

/* ---- in-kernel aggregation (records.h: struct ups_agg_key) ----
 * aggregate: at the entry, keyed by pid/tid/uid/an argument, summing and
 * histogramming an argument.  aggregate_return: the same at the return, where
 * the return value and the latency exist too; its entry half (agg_entry)
 * keeps the entry time and the arguments per (thread, probe, sp), which the
 * exit sees again (exit probes: the sp at the return instruction; a
 * uretprobe: that sp plus the popped return address on x86_64). */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);  /* resized before load (--agg-keys) */
	__type(key, struct ups_agg_key);
	__type(value, struct ups_agg_value);
} agg_data SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} agg_gen SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192); /* 1 when no aggregate_return probe runs */
	__type(key, struct ups_agg_entry_key);
	__type(value, struct ups_agg_entry);
} agg_entries SEC(".maps");

#if defined(__TARGET_ARCH_x86)
#define UPS_RET_SP_ADJ 8   /* a uretprobe runs after `ret` popped the return address */
#else
#define UPS_RET_SP_ADJ 0
#endif

/* The arguments of the key, the sum and the histogram (agg_regs' bytes 0, 1,
 * 2: register numbers, constants to the verifier).  From a copy of the
 * registers: indexing the context by a variable would be a modified-ctx
 * dereference the verifier refuses. */
static __always_inline void agg_args(void *ctx, __u64 out[3])
{
	__u64 regs[8] = {};
	__u32 r = UPS_CFG(agg_regs);

#pragma unroll
	for (int i = 0; i < UPS_NUM_ARG_REGS; i++)
		regs[i] = UPS_ARG(ctx, i);
#pragma unroll
	for (int k = 0; k < 3; k++) {
		__u32 reg = (r >> (8 * k)) & 0xff;
		out[k] = reg < 8 ? regs[reg & 7] : 0;
	}
}

/* Returns 1 when the key could not be added: the map is full. */
static __always_inline int agg_add(struct ups_agg_key *k, __u64 sum, __u32 by)
{
	struct ups_agg_value *v = bpf_map_lookup_elem(&agg_data, k);

	if (!v) {
		struct ups_agg_value zero = {};

		if (by & UPS_AGG_BY_PROCESS)
			bpf_get_current_comm(zero.comm, sizeof(zero.comm));
		/* NOEXIST: another CPU may have created it meanwhile */
		bpf_map_update_elem(&agg_data, k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&agg_data, k);
		if (!v)
			return 1;
	}
	__sync_fetch_and_add(&v->count, 1);
	if (sum)
		__sync_fetch_and_add(&v->sum, sum);
	return 0;
}

static __always_inline __u64 agg_value(__u32 what, __u64 arg, __u64 ret, __u64 latency)
{
	return what == UPS_AGG_VAL_ARG ? arg : what == UPS_AGG_VAL_RET ? ret
	       : what == UPS_AGG_VAL_LATENCY ? latency : 0;
}

static __always_inline void agg_hit(void *ctx, __u64 pid_tgid, const __u64 *args, __u64 ret,
				    __u64 latency)
{
	__u32 zero = 0, *gen = bpf_map_lookup_elem(&agg_gen, &zero);
	__u32 by = UPS_CFG(agg_by);
	struct ups_agg_key k = {};
	int full;
	__s64 h;

	k.probe_id = ups_probe_id(ctx);
	k.gen = gen ? (*gen & 1) : 0;
	k.slot = UPS_AGG_TOTAL;
	if (by & (UPS_AGG_BY_PID | UPS_AGG_BY_PROCESS))
		k.pid = pid_tgid >> 32;
	if (by & UPS_AGG_BY_TID)
		k.tid = (__u32)pid_tgid;
	if (by & UPS_AGG_BY_UID)
		k.uid = (__u32)bpf_get_current_uid_gid();
	if (by & UPS_AGG_BY_ARG)
		k.arg = args[0];
	if (by & UPS_AGG_BY_RET)
		k.ret = ret;
	if (by & UPS_AGG_BY_COMM)
		bpf_get_current_comm(k.comm, sizeof(k.comm));
	full = agg_add(&k, agg_value(UPS_CFG(agg_sum), args[1], ret, latency), by);
	if (UPS_CFG(agg_hist)) {
		h = (__s64)agg_value(UPS_CFG(agg_hist), args[2], ret, latency);
		/* bpftrace's buckets: [0], [1], [2, 4), … (log2_slot: 0 and 1 in 0) */
		k.slot = h < 0 ? UPS_AGG_NEGATIVE : h == 0 ? 0 : log2_slot((__u64)h) + 1;
		full |= agg_add(&k, 0, by);
	}
	if (full) {
		/* a hit whose key (or histogram slot) found no room */
		struct ups_probe_counters *c = ups_counters(ctx);
		if (c)
			c->agg_full++;
	}
}

SEC("uprobe/aggregate")
int aggregate(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 args[3];

	if (!ups_enter(ctx, pid_tgid))
		return 0;
	agg_args(ctx, args);
	agg_hit(ctx, pid_tgid, args, 0, 0);
	return 0;
}

/* traffic's sendmsg and recvmsg: the msghdr's msg_name (into args[2]) and
 * msg_namelen as given (into the fd's upper half), read as the call begins:
 * sendto's address and length, recvfrom's buffer and its length.  None (0)
 * when the msghdr cannot be read: the call counts as one that names none. */
static __always_inline void traffic_msg_name_in(__u64 args[3])
{
	struct { __u64 name; __u32 namelen; } h = {};

	if (!args[1] || ups_probe_read_user(&h, sizeof(h), (const void *)UPS_UNTAG(args[1])))
		h.name = h.namelen = 0;
	/* a sendmsg's name with no length is none (the kernel drops it);
	 * recvmsg's buffer is written back as recvfrom's, 0 bytes long or not */
	args[2] = h.namelen || UPS_CFG(traffic_op) == UPS_TRAFFIC_RX_MSG ? h.name : 0;
	args[0] = (__u32)args[0] | (__u64)h.namelen << 32;
}

/* traffic's recvfrom and accept: the address buffer's length as given
 * (*addrlen at the entry, which the kernel overwrites with the address's
 * whole length), kept in the fd argument's upper half (an int: its
 * register's upper bits carry nothing), so that the exit reads no more of
 * the address than the kernel copied.  0 when it cannot be read: the exit
 * then takes any address that came back as cut short. */
static __always_inline void traffic_addrlen_in(__u64 args[3])
{
	__u32 op = UPS_CFG(traffic_op), in = 0;
	__u64 ulen;

	if (op == UPS_TRAFFIC_TX_MSG || op == UPS_TRAFFIC_RX_MSG) {
		traffic_msg_name_in(args);
		return;
	}
	if (op != UPS_TRAFFIC_RX_ADDR && op != UPS_TRAFFIC_ACCEPT)
		return;
	ulen = op == UPS_TRAFFIC_RX_ADDR ? args[1] : args[2];
	if (ulen && ups_probe_read_user(&in, sizeof(in), (const void *)UPS_UNTAG(ulen)))
		in = 0;
	args[0] = (__u32)args[0] | (__u64)in << 32;
}

SEC("uprobe/agg_entry")
int agg_entry(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct ups_agg_entry_key key = {};
	struct ups_agg_entry e = {};

	if (!ups_enter(ctx, pid_tgid))
		return 0;
	key.tid = (__u32)pid_tgid;
	key.probe_id = ups_probe_id(ctx);
	key.sp = UPS_SP(ctx);
	e.entry_ns = bpf_ktime_get_ns();
	agg_args(ctx, e.args);
	traffic_addrlen_in(e.args);
	bpf_map_update_elem(&agg_entries, &key, &e, BPF_ANY);
	return 0;
}

/* The entry of the call returning now (whose entry had this sp), taken out
 * of agg_entries into *e; 0 when it was not seen (attached mid-call,
 * filtered, evicted): counted as unpaired at a uretprobe.  At an exit site
 * a miss is no call of this probe's (a function it tail-branches to, whose
 * `ret` is its exit too, called from elsewhere; plan/exits_tail.c), as
 * call_return's exit sites take it.  At a lone `ret` the arguments are
 * still in their registers: the entry is this hit. */
static __always_inline int take_agg_entry(void *ctx, __u64 pid_tgid, __u64 sp, int uret,
					  struct ups_agg_entry *e)
{
	struct ups_agg_entry_key key = {};
	struct ups_agg_entry *found;

	if (UPS_CFG(lone_ret)) {
		e->entry_ns = lone_call(ctx, pid_tgid);
		agg_args(ctx, e->args);
		return e->entry_ns != 0;
	}
	key.tid = (__u32)pid_tgid;
	key.probe_id = ups_probe_id(ctx);
	key.sp = sp;
	found = bpf_map_lookup_elem(&agg_entries, &key);
	if (!found) {
		if (uret && ups_pid_ok(pid_tgid))
			count_unpaired(ctx);
		return 0;
	}
	*e = *found;
	bpf_map_delete_elem(&agg_entries, &key);
	return 1;
}

static __always_inline int agg_exit(void *ctx, __u64 sp, int uret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct ups_agg_entry e;

	if (take_agg_entry(ctx, pid_tgid, sp, uret, &e))
		agg_hit(ctx, pid_tgid, e.args, UPS_RET(ctx), duration_since(e.entry_ns));
	return 0;
}

SEC("uprobe/aggregate_exit")
int aggregate_exit(void *ctx)
{
	return agg_exit(ctx, UPS_SP(ctx), 0);
}

SEC("uretprobe/aggregate_return")
int aggregate_return(void *ctx)
{
	return agg_exit(ctx, UPS_SP(ctx) - UPS_RET_SP_ADJ, 1);
}
