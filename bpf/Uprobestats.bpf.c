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
 * return value, the entry time, the duration and the sp at the entry (an
 * exit site's own, the one its entry had; a uretprobe's less what the
 * return popped). */
static __always_inline void emit_return(void *ctx, __u64 pid_tgid, __u64 entry, __u64 entry_sp)
{
	struct rec_call_return *rec = UPS_RESERVE(ctx, call_return_buf, struct rec_call_return);

	if (!rec)
		return;
	ups_fill_envelope(ctx, &rec->env, pid_tgid, UPS_REC_CALL_RETURN);
	rec->r.return_value = UPS_RET(ctx);
	rec->r.entry_ns = UPS_CFG(lone_ret) ? rec->env.ktime_ns : entry;
	rec->r.duration_ns = rec->env.ktime_ns - rec->r.entry_ns;
	rec->r.entry_sp = entry_sp;
	UPS_SUBMIT(ctx, call_return_buf, rec);
}

SEC("uretprobe/call_return")
int call_return(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u64 entry = take_uretprobe_entry(ctx, pid_tgid);

	if (entry)
		emit_return(ctx, pid_tgid, entry, UPS_SP(ctx) - UPS_RET_POPS);
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
		rec->u.calls[i] = st->calls[i];
#pragma unroll
	for (int i = UPS_EXIT_DEPTH; i < UPS_UNWOUND_MAX; i++)
		rec->u.calls[i] = (struct ups_pending_call){ 0 }; /* the legacy objects' smaller stack */
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
		emit_return(ctx, pid_tgid, entry, UPS_SP(ctx));
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

#include "ups_aggregate.bpf.h"
#include "ups_traffic.bpf.h"

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
