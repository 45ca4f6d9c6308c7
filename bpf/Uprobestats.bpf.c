// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Uprobestats — programs beyond upstream.
 *
 * call_return: a uretprobe that records the return value and the entry ->
 * return duration of each call; its companion uprobe call_return_entry
 * stores the entry time per (thread, probe).
 * call_latency: the same pairing, but the duration only goes into an
 * in-kernel log2 histogram per probe (no record per call).
 * Exit-probe forms of both (call_return_exit_entry + call_return_exit,
 * exit_entry + call_latency_exit):
 * plain uprobes at the entry and at every exit site (return instruction) of
 * the function, never touching its return address; entries and exits pair
 * by stack pointer on a small stack of calls in flight per (thread, probe),
 * so recursion keeps every call and frames left by an exception or longjmp
 * are counted as unwound, and call_return's written as rec_call_unwound
 * when they are found (docs/programs.md, "Exit probes").  On a lone `ret`
 * (code whose first instruction returns) the exit program runs alone and
 * reports the call at that one hit with duration 0 (UPS_CFG(lone_ret)).
 * call_args: call_detail plus the text of up to four java.lang.String
 * or native char * arguments (which registers hold them, and which are C
 * strings, is set per probe in ups_cfg). */
#include "ups_bpf.h"

UPS_OUTPUT(call_return_buf);
UPS_OUTPUT(call_args_buf);

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct ups_entry_key);
	__type(value, __u64);
} entry_times SEC(".maps");

/* probe_id * UPS_HIST_SLOTS + log2(duration) -> count; resized before load. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, UPS_HIST_SLOTS);
	__type(key, __u32);
	__type(value, __u64);
} latency_hist SEC(".maps");

static __always_inline int store_entry(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct ups_entry_key key = { .tid = (__u32)pid_tgid, .probe_id = ups_probe_id(ctx) };
	__u64 now, *slot;

	if (!ups_enter(ctx, pid_tgid))
		return 0;
	now = bpf_ktime_get_ns();
	/* A thread's slot stays in the map between calls (take_entry zeroes it
	 * instead of deleting): writing in place costs a lookup, where an
	 * update allocates an LRU node and a delete frees it, twice as much. */
	slot = UPS_LOOKUP_OR_INIT(&entry_times, &key, &now);
	if (slot)
		*slot = now;
	return 0;
}

/* Returns the entry time and forgets it; 0 when the entry was not seen
 * (attached mid-call, filtered, or evicted). */
static __always_inline __u64 take_entry(void *ctx, __u64 pid_tgid)
{
	struct ups_entry_key key = { .tid = (__u32)pid_tgid, .probe_id = ups_probe_id(ctx) };
	__u64 *ts = bpf_map_lookup_elem(&entry_times, &key);
	__u64 entry;

	if (!ts)
		return 0;
	entry = *ts;
	*ts = 0;
	return entry;
}

SEC("uprobe/call_return_entry")
int call_return_entry(void *ctx)
{
	return store_entry(ctx);
}

/* A return whose entry time is gone is counted, never lost silently: a
 * recursive call on the thread overwrote it (the innermost return took it),
 * the LRU map evicted it, or the call began before the probe was attached. */
static __always_inline void count_unpaired(void *ctx)
{
	struct ups_probe_counters *c = ups_counters(ctx);
	if (c)
		c->unpaired++;
}

/* At a uretprobe: the entry time of the call returning now, or 0 (filtered
 * out, or unpaired and counted). */
static __always_inline __u64 take_uretprobe_entry(void *ctx, __u64 pid_tgid)
{
	__u64 entry;

	if (!ups_pid_ok(pid_tgid))
		return 0;
	entry = take_entry(ctx, pid_tgid);
	if (!entry)
		count_unpaired(ctx);
	return entry;
}

/* ---- a lone `ret` (records.h: ups_prog_config.lone_ret) ----
 * The exit program stands alone on code whose first instruction returns: the
 * call enters and leaves at this one hit, which it takes as the entry program
 * would (filter, hit count).  Returns the entry time, now; 0 to skip. */
static __always_inline __u64 lone_call(void *ctx, __u64 pid_tgid)
{
	return ups_enter(ctx, pid_tgid) ? bpf_ktime_get_ns() : 0;
}

/* The duration of the call that entered at entry and returns now: 0 at a
 * lone `ret`, whose entry and return are one instruction. */
static __always_inline __u64 duration_since(__u64 entry)
{
	return UPS_CFG(lone_ret) ? 0 : bpf_ktime_get_ns() - entry;
}

/* The record of a call_return, at its uretprobe or at an exit site: the
 * return value, the entry time and the duration. */
static __always_inline void emit_return(void *ctx, __u64 pid_tgid, __u64 entry)
{
	struct rec_call_return *rec = UPS_RESERVE(ctx, call_return_buf, struct rec_call_return);

	if (!rec)
		return;
	ups_fill_envelope(ctx, &rec->env, pid_tgid, UPS_REC_CALL_RETURN);
	rec->r.return_value = UPS_RET(ctx);
	rec->r.entry_ns = UPS_CFG(lone_ret) ? rec->env.ktime_ns : entry;
	rec->r.duration_ns = rec->env.ktime_ns - rec->r.entry_ns;
	UPS_SUBMIT(ctx, call_return_buf, rec);
}

SEC("uretprobe/call_return")
int call_return(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 entry = take_uretprobe_entry(ctx, pid_tgid);

	if (entry)
		emit_return(ctx, pid_tgid, entry);
	return 0;
}

/* ---- exit probes ---- */

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, struct ups_entry_key);
	__type(value, struct ups_pending_stack);
} pending_calls SEC(".maps");

/* The zeroed value a thread's first entry starts from: PENDING_ZERO in a
 * function that declared PENDING_ZERO_SPACE, evaluated only when needed.  A
 * never-written map (the stack is larger than the BPF stack frame); legacy
 * objects fill a copy of their smaller stack on the BPF stack instead
 * (records.h, UPS_EXIT_DEPTH). */
#ifdef UPS_LEGACY
#define PENDING_ZERO_SPACE struct ups_pending_stack pending_zero_copy
#define PENDING_ZERO                                                                \
	({                                                                          \
		__builtin_memset(&pending_zero_copy, 0, sizeof(pending_zero_copy)); \
		&pending_zero_copy;                                                 \
	})
#else
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ups_pending_stack);
} pending_zero SEC(".maps");

#define PENDING_ZERO_SPACE __u32 pending_zero_key = 0
#define PENDING_ZERO bpf_map_lookup_elem(&pending_zero, &pending_zero_key)
#endif

/* A slot index the verifier can bound: the compiler must not drop the mask
 * (it would, knowing the depth was checked), hence the opaque copy. */
static __always_inline __u64 slot(__u32 i)
{
	__u64 v = i;

	asm volatile("" : "+r"(v));
	return v & (UPS_EXIT_DEPTH - 1);
}

/* Drops the calls on top of st whose sp is below sp (or equal to it, with
 * or_equal): frames left without an exit.  Returns how many. */
static __always_inline __u32 drop_left_frames(struct ups_pending_stack *st, __u64 sp,
					      int or_equal)
{
	__u32 depth = st->depth, n = 0;

	if (depth > UPS_EXIT_DEPTH)
		depth = UPS_EXIT_DEPTH;
	/* A bounded loop (5.3+); kernels without them need it unrolled, at
	 * 5 KiB of code per program. */
#ifdef UPS_UNROLL_LOOPS
#pragma unroll
#else
#pragma clang loop unroll(disable)
#endif
	for (int i = 0; i < UPS_EXIT_DEPTH; i++) {
		__u64 top_sp;
		if (depth == 0)
			break;
		top_sp = st->calls[slot(depth - 1)].sp;
		if (top_sp > sp || (!or_equal && top_sp == sp))
			break;
		depth--;
		n++;
	}
	st->depth = depth;
	return n;
}

static __always_inline void count_exit_problems(void *ctx, __u32 unwound, __u32 untracked)
{
	struct ups_probe_counters *c;

	if (!unwound && !untracked)
		return;
	c = ups_counters(ctx);
	if (c) {
		c->unwound += unwound;
		c->untracked += untracked;
	}
}

/* call_return's exit probes: a record naming the calls just dropped from st
 * (its entries [depth, depth + n), still in place), seen at `at`.  Never
 * wrapped with a stack: it is no hit. */
static __always_inline void emit_unwound(void *ctx, __u64 pid_tgid,
					 const struct ups_pending_stack *st, __u32 n, __u64 at)
{
	struct rec_call_unwound *rec;

	if (!n)
		return;
	rec = UPS_RESERVE(ctx, call_return_buf, struct rec_call_unwound);
	if (!rec)
		return;
	ups_fill_envelope(ctx, &rec->env, pid_tgid, UPS_REC_CALL_UNWOUND);
	rec->u.at_ns = at;
	rec->u.from = st->depth;
	rec->u.to = st->depth + n;
#pragma unroll
	for (int i = 0; i < UPS_EXIT_DEPTH; i++)
		rec->u.entry_ns[i] = st->calls[i].entry_ns;
#pragma unroll
	for (int i = UPS_EXIT_DEPTH; i < UPS_UNWOUND_MAX; i++)
		rec->u.entry_ns[i] = 0;   /* the legacy objects' smaller stack */
	UPS_SUBMIT_PLAIN(ctx, call_return_buf, rec);
}

/* The entry half of both exit-probe programs; with_records (a constant:
 * call_return's) also writes the calls it finds unwound. */
static __always_inline int exit_entry_of(void *ctx, int with_records)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct ups_entry_key key = { .tid = (__u32)pid_tgid, .probe_id = ups_probe_id(ctx) };
	struct ups_pending_stack *st;
	__u64 sp = UPS_SP(ctx), now;
	__u32 unwound, depth;
	PENDING_ZERO_SPACE;

	if (!ups_enter(ctx, pid_tgid))
		return 0;
	now = bpf_ktime_get_ns();
	st = UPS_LOOKUP_OR_INIT(&pending_calls, &key, PENDING_ZERO);
	if (!st)
		return 0;
	/* A call still pending at this sp or below was left without an exit. */
	unwound = drop_left_frames(st, sp, 1);
	if (with_records)
		emit_unwound(ctx, pid_tgid, st, unwound, now);
	depth = st->depth;
	if (depth >= UPS_EXIT_DEPTH) {
		count_exit_problems(ctx, unwound, 1);
		return 0;
	}
	st->calls[slot(depth)].sp = sp;
	st->calls[slot(depth)].entry_ns = now;
	st->depth = depth + 1;
	count_exit_problems(ctx, unwound, 0);
	return 0;
}

SEC("uprobe/exit_entry")
int exit_entry(void *ctx)
{
	return exit_entry_of(ctx, 0);
}

SEC("uprobe/call_return_exit_entry")
int call_return_exit_entry(void *ctx)
{
	return exit_entry_of(ctx, 1);
}

/* At an exit site: the entry time of the call returning now, or 0 when its
 * entry was not kept (attached mid-call, stack full, filtered, evicted). */
static __always_inline __u64 take_exit(void *ctx, __u64 pid_tgid, int with_records)
{
	struct ups_entry_key key = { .tid = (__u32)pid_tgid, .probe_id = ups_probe_id(ctx) };
	struct ups_pending_stack *st;
	__u64 sp = UPS_SP(ctx), entry = 0;
	__u32 depth, unwound;

	if (UPS_CFG(lone_ret))
		return lone_call(ctx, pid_tgid);
	st = bpf_map_lookup_elem(&pending_calls, &key);
	if (!st || ups_stopped())
		return 0;
	unwound = drop_left_frames(st, sp, 0);
	count_exit_problems(ctx, unwound, 0);
	if (with_records && unwound)
		emit_unwound(ctx, pid_tgid, st, unwound, bpf_ktime_get_ns());
	depth = st->depth;
	if (depth && depth <= UPS_EXIT_DEPTH && st->calls[slot(depth - 1)].sp == sp) {
		entry = st->calls[slot(depth - 1)].entry_ns;
		st->depth = depth - 1;
	}
	return entry;
}

SEC("uprobe/call_return_exit")
int call_return_exit(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 entry = take_exit(ctx, pid_tgid, 1);

	if (entry)
		emit_return(ctx, pid_tgid, entry);
	return 0;
}

static __always_inline __u32 log2_slot(__u64 v)
{
	__u32 slot = 0;

#pragma unroll
	for (int shift = 32; shift > 0; shift >>= 1) {
		if (v >= (1ULL << shift)) {
			v >>= shift;
			slot += shift;
		}
	}
	return slot < UPS_HIST_SLOTS ? slot : UPS_HIST_SLOTS - 1;
}

/* call_latency, at its uretprobe or at an exit site: one more call in the
 * probe's log2 slot of the duration. */
static __always_inline void count_latency(void *ctx, __u64 entry)
{
	__u32 key = ups_probe_id(ctx) * UPS_HIST_SLOTS + log2_slot(duration_since(entry));
	__u64 *count = bpf_map_lookup_elem(&latency_hist, &key);

	if (count)
		*count += 1;
}

SEC("uprobe/call_latency_entry")
int call_latency_entry(void *ctx)
{
	return store_entry(ctx);
}

SEC("uretprobe/call_latency")
int call_latency(void *ctx)
{
	__u64 entry = take_uretprobe_entry(ctx, bpf_get_current_pid_tgid());

	if (entry)
		count_latency(ctx, entry);
	return 0;
}

SEC("uprobe/call_latency_exit")
int call_latency_exit(void *ctx)
{
	__u64 entry = take_exit(ctx, bpf_get_current_pid_tgid(), 0);

	if (entry)
		count_latency(ctx, entry);
	return 0;
}

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
 * 16 bytes first (a sockaddr_in may end a mapping), the rest by family. */
static __always_inline void read_peer(struct ups_traffic_sock *s, __u64 uaddr, __u32 len)
{
	__u8 sa[28] = {};
	const void *u = (const void *)UPS_UNTAG(uaddr);
	__u16 family;

	if (!uaddr || len < 2 || ups_probe_read_user(sa, 16, u))
		return;
	family = sa[0] | (__u16)sa[1] << 8;
	if ((family == 2 && len < 8) || (family == 10 && len < 24))
		return;
	s->family = family;
	if (family == 2) {               /* AF_INET */
		s->port = (__u16)sa[2] << 8 | sa[3];
		__builtin_memcpy(s->addr, sa + 4, 4);
	} else if (family == 10) {       /* AF_INET6 */
		if (ups_probe_read_user(sa, sizeof(sa), u))
			return;
		s->port = (__u16)sa[2] << 8 | sa[3];
		__builtin_memcpy(s->addr, sa + 8, 16);
	} else if (family == 1) {        /* AF_UNIX */
		/* an unbound peer's is the family alone: no path */
		if (len > 2 && !ups_probe_read_user(sa, 18, u))
			__builtin_memcpy(s->addr, sa + 2, 16);
	}
}

/* The length the kernel wrote at ulen (recvfrom's and accept's addrlen; read
 * only), 0 when there is none. */
static __always_inline __u32 filled_len(__u64 ulen)
{
	__u32 len = 0;

	if (!ulen || ups_probe_read_user(&len, sizeof(len), (const void *)UPS_UNTAG(ulen)))
		return 0;
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
		read_peer(&s, bsd ? f[4] : f[3], UPS_SOCKADDR_ANY);
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
					     __u16 type, __u64 uaddr, __u32 ulen)
{
	struct ups_traffic_sock s = {};

	s.sock_id = bpf_ktime_get_ns();
	s.family = family;
	s.type = type;
	read_peer(&s, uaddr, ulen);
	if (!s.family || traffic_family(s.family))   /* 0: not known yet */
		bpf_map_update_elem(&traffic_socks, k, &s, BPF_ANY);
	else    /* the fd is no (network) socket now, whatever it was */
		bpf_map_delete_elem(&traffic_socks, k);
}

/* Returns 1 when the call counted on fd (a known socket, or one whose
 * address says it is traffic), else 0. */
static __always_inline int traffic_count(void *ctx, __u64 pid_tgid, __u32 fd, __s64 bytes,
					 int tx, __u64 uaddr, __u32 ulen)
{
	struct ups_traffic_sock_key sk = { .pid = pid_tgid >> 32, .fd = fd };
	struct ups_traffic_sock *s = bpf_map_lookup_elem(&traffic_socks, &sk);
	struct ups_traffic_key k = {};
	struct ups_traffic_value *v;
	__u32 zero = 0, *gen;

	if (bytes <= 0)
		return 0;
	if (s)
		k.sock = *s;
	else if (!uaddr)
		return 0;    /* not a socket we know: a file, a pipe */
	if (uaddr) {
		struct ups_traffic_sock peer = k.sock;

		read_peer(&peer, uaddr, ulen);    /* sendto/recvfrom: this datagram's peer */
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
	if (tx) {
		__sync_fetch_and_add(&v->tx_bytes, bytes);
		__sync_fetch_and_add(&v->tx_calls, 1);
	} else {
		__sync_fetch_and_add(&v->rx_bytes, bytes);
		__sync_fetch_and_add(&v->rx_calls, 1);
	}
	return 1;
}

/* The bytes of a sendmmsg/recvmmsg that returned n messages: the msg_len of
 * vec[0..n-1] (read only; the first UPS_TRAFFIC_MMSG_MAX). */
static __always_inline __s64 mmsg_bytes(__u64 vec, __s64 n)
{
	__s64 sum = 0;

	if (!vec)
		return 0;
#pragma unroll
	for (int i = 0; i < UPS_TRAFFIC_MMSG_MAX; i++) {
		__u32 len = 0;

		if (i >= n || ups_probe_read_user(&len, sizeof(len), (const void *)UPS_UNTAG(
				vec + (__u64)i * UPS_MMSGHDR_SIZE + UPS_MMSGHDR_LEN_AT)))
			break;
		sum += len;
	}
	return sum;
}

/* splice(fd_in, …, fd_out, …): bytes out of a socket fd_out, else into a
 * socket fd_in (args: fd_in, fd_out). */
static __always_inline void traffic_splice(void *ctx, __u64 pid_tgid, const __u64 *args,
					   __s64 ret)
{
	if (!traffic_count(ctx, pid_tgid, (__u32)args[1], ret, 1, 0, 0))
		traffic_count(ctx, pid_tgid, (__u32)args[0], ret, 0, 0, 0);
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
		traffic_new_sock(&sk, (__u16)args[0], (__u16)(args[1] & 0xf), 0, 0);
	}
}

static __always_inline int traffic_exit_at(void *ctx, __u64 sp, int uret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct ups_traffic_sock_key sk = { .pid = pid_tgid >> 32 };
	__s64 ret = (__s64)UPS_RET(ctx);
	__u32 op = UPS_CFG(traffic_op);
	struct ups_agg_entry e;

	if (!take_agg_entry(ctx, pid_tgid, sp, uret, &e)) {
		/* an accept() blocked since before the attach: its new fd is a
		 * socket all the same (family, type and peer unknown) */
		if (op == UPS_TRAFFIC_ACCEPT && ret >= 0 && ups_pid_ok(pid_tgid)) {
			sk.fd = (__u32)ret;
			traffic_new_sock(&sk, 0, 0, 0, 0);
		}
		return 0;
	}
	sk.fd = (__u32)e.args[0];
	if (op == UPS_TRAFFIC_TX || op == UPS_TRAFFIC_TX_ADDR) {
		/* sendto: the address and its length (register 5) as given */
		traffic_count(ctx, pid_tgid, sk.fd, ret, 1, op == UPS_TRAFFIC_TX_ADDR ? e.args[2] : 0,
			      (__u32)e.args[1]);
	} else if (op == UPS_TRAFFIC_RX || op == UPS_TRAFFIC_RX_ADDR) {
		/* recvfrom: the address only as long as the kernel's addrlen */
		traffic_count(ctx, pid_tgid, sk.fd, ret, 0, op == UPS_TRAFFIC_RX_ADDR ? e.args[2] : 0,
			      op == UPS_TRAFFIC_RX_ADDR ? filled_len(e.args[1]) : 0);
	} else if (op == UPS_TRAFFIC_TX_MMSG || op == UPS_TRAFFIC_RX_MMSG) {
		traffic_count(ctx, pid_tgid, sk.fd, mmsg_bytes(e.args[1], ret),
			      op == UPS_TRAFFIC_TX_MMSG, 0, 0);
	} else if (op == UPS_TRAFFIC_SPLICE) {
		traffic_splice(ctx, pid_tgid, e.args, ret);
	} else if (op == UPS_TRAFFIC_SOCKETPAIR && ret == 0) {
		traffic_socketpair(sk.pid, e.args);
	} else if (op == UPS_TRAFFIC_SOCKET && ret >= 0) {
		sk.fd = (__u32)ret;
		traffic_new_sock(&sk, (__u16)e.args[0], (__u16)(e.args[1] & 0xf), 0, 0);
	} else if (op == UPS_TRAFFIC_ACCEPT && ret >= 0) {
		/* the listening socket's family when accept gives no address
		 * (addr or addrlen NULL); the peer only as long as the kernel's
		 * addrlen (an unbound unix peer's is 2: the family alone) */
		struct ups_traffic_sock *l;

		sk.fd = (__u32)e.args[0];
		l = bpf_map_lookup_elem(&traffic_socks, &sk);
		sk.fd = (__u32)ret;
		traffic_new_sock(&sk, l ? l->family : 0, UPS_SOCK_STREAM, e.args[1],
				 filled_len(e.args[2]));
	} else if (op == UPS_TRAFFIC_CONNECT) {
		/* the peer, also for a non-blocking connect still in progress (-1) */
		struct ups_traffic_sock *s = bpf_map_lookup_elem(&traffic_socks, &sk);
		if (s)
			read_peer(s, e.args[1], (__u32)e.args[2]);
		else
			traffic_new_sock(&sk, 0, 0, e.args[1], (__u32)e.args[2]);
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

SEC("uprobe/call_args")
int call_args(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct rec_call_args *rec;

	if (!ups_enter(ctx, pid_tgid))
		return 0;
	rec = UPS_RESERVE(ctx, call_args_buf, struct rec_call_args);
	if (!rec)
		return 0;
	ups_fill_envelope(ctx, &rec->env, pid_tgid, UPS_REC_CALL_ARGS);
	rec->a.r.pc = UPS_PC(ctx);
#pragma unroll
	for (int i = 0; i < 10; i++)
		rec->a.r.regs[i] = i < UPS_NUM_ARG_REGS ? UPS_ARG(ctx, i) : 0;
	rec->a.pad = 0;
#pragma unroll
	for (int k = 0; k < UPS_ARG_STRINGS; k++) {
		/* Constants to the verifier: it prunes unused slots. */
		__u8 reg = UPS_CFG_AT(string_reg, k);
		rec->a.string_pos[k] = UPS_CFG_AT(string_pos, k);
		rec->a.strings[k][0] = 0;
		/* From the copied registers: indexing the context by a variable
		 * would be a modified-ctx dereference the verifier refuses. */
		if (reg >= UPS_NUM_ARG_REGS)
			continue;
		if (UPS_CFG(string_native) & (1u << k))
			ups_read_cstring(rec->a.strings[k], UPS_ARG_STRING_LEN,
					 UPS_UNTAG(rec->a.r.regs[reg]));
		else
			ups_read_jstring(rec->a.strings[k], UPS_ARG_STRING_LEN,
					 UPS_UNTAG(UPS_REF(rec->a.r.regs[reg])));
	}
	UPS_SUBMIT(ctx, call_args_buf, rec);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
