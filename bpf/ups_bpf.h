/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ups_bpf.h — what every uprobestats BPF program shares: register access per
 * architecture without kernel headers or BTF, the per-probe config and
 * counters, the pid filter, and ring-buffer submission with batched wakeups.
 * BPF side only. */
#ifndef UPROBESTATS_BPF_UPS_BPF_H
#define UPROBESTATS_BPF_UPS_BPF_H

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "records.h"

/* The kernel's pt_regs as a uprobe program sees it.  Declared here so the
 * objects need neither vmlinux.h nor the target's asm headers. */
#if defined(__TARGET_ARCH_arm64)
struct ups_regs {
	__u64 regs[31];
	__u64 sp;
	__u64 pc;
	__u64 pstate;
};
#define UPS_ARG(ctx, i) (((const struct ups_regs *)(ctx))->regs[i])
#define UPS_PC(ctx) (((const struct ups_regs *)(ctx))->pc)
#define UPS_SP(ctx) (((const struct ups_regs *)(ctx))->sp)
#define UPS_RET(ctx) (((const struct ups_regs *)(ctx))->regs[0])
#define UPS_NUM_ARG_REGS 8
/* Bytes a return pops: the sp after it less this is the sp at the entry. */
#define UPS_RET_POPS 0
#elif defined(__TARGET_ARCH_x86)
struct ups_regs {
	__u64 r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	__u64 ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp, ss;
};
static __always_inline __u64 ups_x86_arg(const struct ups_regs *r, int i)
{
	switch (i) {
	case 0: return r->di;
	case 1: return r->si;
	case 2: return r->dx;
	case 3: return r->cx;
	case 4: return r->r8;
	case 5: return r->r9;
	default: return 0;
	}
}
#define UPS_ARG(ctx, i) ups_x86_arg((const struct ups_regs *)(ctx), (i))
#define UPS_PC(ctx) (((const struct ups_regs *)(ctx))->ip)
#define UPS_SP(ctx) (((const struct ups_regs *)(ctx))->sp)
#define UPS_RET(ctx) (((const struct ups_regs *)(ctx))->ax)
#define UPS_NUM_ARG_REGS 6
#define UPS_RET_POPS 8           /* `ret` pops the return address */
#else
#error "define __TARGET_ARCH_arm64 or __TARGET_ARCH_x86"
#endif

/* The per-probe config: frozen .rodata, or in a legacy object (kernels
 * before 5.5: no global data before 5.2) immediates that user space patches
 * before load (records.h, UPS_IMM_MAGIC).  Either way the verifier sees
 * constants.  UPS_CFG(field) reads a scalar, UPS_CFG_AT(field, k) an array
 * element (k a constant once unrolled). */
#ifdef UPS_LEGACY
/* No bounded loops before 5.3: every loop of a legacy object is unrolled. */
#define UPS_UNROLL_LOOPS
#define UPS_IMM(field)                                                          \
	({                                                                      \
		__u64 __v;                                                      \
		__asm__ volatile("%0 = %1 ll"                                   \
				 : "=r"(__v)                                    \
				 : "i"(((__u64)UPS_IMM_MAGIC << 32) | (field))); \
		__v;                                                            \
	})
#define UPS_IMM_probe_id UPS_IMM_PROBE_ID
#define UPS_IMM_filter_pids UPS_IMM_FILTER_PIDS
#define UPS_IMM_string_native UPS_IMM_STRING_NATIVE
#define UPS_IMM_agg_by UPS_IMM_AGG_BY
#define UPS_IMM_agg_sum UPS_IMM_AGG_SUM
#define UPS_IMM_agg_hist UPS_IMM_AGG_HIST
#define UPS_IMM_agg_regs UPS_IMM_AGG_REGS
#define UPS_IMM_traffic_op UPS_IMM_TRAFFIC_OP
#define UPS_IMM_lone_ret UPS_IMM_LONE_RET
#define UPS_CFG(field) ((__u32)UPS_IMM(UPS_IMM_##field))

static __always_inline __u8 ups_cfg_string_reg(int k)
{
	switch (k) {
	case 0: return (__u8)UPS_IMM(UPS_IMM_STRING_REG + 0);
	case 1: return (__u8)UPS_IMM(UPS_IMM_STRING_REG + 1);
	case 2: return (__u8)UPS_IMM(UPS_IMM_STRING_REG + 2);
	default: return (__u8)UPS_IMM(UPS_IMM_STRING_REG + 3);
	}
}

static __always_inline __u8 ups_cfg_string_pos(int k)
{
	switch (k) {
	case 0: return (__u8)UPS_IMM(UPS_IMM_STRING_POS + 0);
	case 1: return (__u8)UPS_IMM(UPS_IMM_STRING_POS + 1);
	case 2: return (__u8)UPS_IMM(UPS_IMM_STRING_POS + 2);
	default: return (__u8)UPS_IMM(UPS_IMM_STRING_POS + 3);
	}
}
_Static_assert(UPS_ARG_STRINGS == 4, "ups_cfg_string_reg/pos cover 4 strings");
#define UPS_CFG_AT(field, k) ups_cfg_##field(k)
#else
const volatile struct ups_prog_config ups_cfg = {};
#define UPS_CFG(field) (ups_cfg.field)
#define UPS_CFG_AT(field, k) (ups_cfg.field[k])
#endif

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1); /* resized to the run's probe count before load */
	__type(key, __u32);
	__type(value, struct ups_probe_counters);
} probe_counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1); /* resized before load */
	__type(key, __u32);
	__type(value, __u8);
} target_pids SEC(".maps");

/* Entry 0 turns to 1 when the run stops (Ctrl-C, SIGTERM, --duration):
 * from then on every program returns at once, so while the probes are torn
 * down after the command has returned (one perf event after the other on
 * kernels without uprobe_multi) a hit costs the traced process only its trap,
 * and the counters the summary read stay exact.  One per object, shared by
 * its copies. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ups_stop SEC(".maps");

static __always_inline int ups_stopped(void)
{
	__u32 zero = 0;
	__u32 *stop = bpf_map_lookup_elem(&ups_stop, &zero);

	return !stop || *stop;
}

/* Which probe fired.  A probe with its own copy of the object has its id in
 * the config; probes that share one copy (one uprobe_multi link over many
 * offsets of a file: trace over thousands of methods) each get their id as
 * the link's cookie for that offset (6.6+; frozen .rodata prunes the helper
 * call on kernels that lack it). */
static __always_inline __u32 ups_probe_id(void *ctx)
{
#ifndef UPS_LEGACY
	if (UPS_CFG(probe_from_cookie))
		return (__u32)bpf_get_attach_cookie(ctx);
#endif
	return UPS_CFG(probe_id);
}

static __always_inline struct ups_probe_counters *ups_counters(void *ctx)
{
	__u32 key = ups_probe_id(ctx);
	return bpf_map_lookup_elem(&probe_counters, &key);
}

/* The tgid filter alone (when asked for), after the stop flag.  Returns 0
 * to skip. */
static __always_inline int ups_pid_ok(__u64 pid_tgid)
{
	if (ups_stopped())
		return 0;
	if (UPS_CFG(filter_pids)) {
		__u32 tgid = pid_tgid >> 32;
		if (!bpf_map_lookup_elem(&target_pids, &tgid))
			return 0;
	}
	return 1;
}

static __always_inline void ups_count_hit(void *ctx)
{
	struct ups_probe_counters *c = ups_counters(ctx);
	if (c)
		c->hits++;
}

/* Filters by tgid when asked to and counts the hit.  Returns 0 to skip.
 * Programs with a filter of their own (binder interface, flags) call
 * ups_pid_ok() first and ups_count_hit() once their filter passed, so a hit
 * always means "a record was due". */
static __always_inline int ups_enter(void *ctx, __u64 pid_tgid)
{
	if (!ups_pid_ok(pid_tgid))
		return 0;
	ups_count_hit(ctx);
	return 1;
}

static __always_inline void ups_count_drop(void *ctx)
{
	struct ups_probe_counters *c = ups_counters(ctx);
	if (c)
		c->drops++;
}

/* The value at key in map, created from init when missing (init is evaluated
 * only then: a zeroed value may cost a lookup or filling a stack copy; NULL
 * creates nothing).  BPF_NOEXIST, not BPF_ANY: values are only ever created
 * here, so one that exists by the time of the update was created meanwhile
 * and is live state (a thread's calls in flight) that must not be reset; the
 * second lookup returns whichever is there.  NULL when the map has no room. */
#define UPS_LOOKUP_OR_INIT(map, key, init)                                    \
	({                                                                    \
		void *ups_v_ = bpf_map_lookup_elem((map), (key));             \
		if (!ups_v_) {                                                \
			const void *ups_i_ = (init);                          \
			if (ups_i_) {                                         \
				bpf_map_update_elem((map), (key), ups_i_,     \
						    BPF_NOEXIST);             \
				ups_v_ = bpf_map_lookup_elem((map), (key));   \
			}                                                     \
		}                                                             \
		ups_v_;                                                       \
	})

static __always_inline void ups_fill_envelope(void *ctx, struct ups_envelope *env,
					      __u64 pid_tgid, __u32 kind)
{
	env->ktime_ns = bpf_ktime_get_ns();
	env->pid = pid_tgid >> 32;
	env->tid = (__u32)pid_tgid;
	env->probe_id = ups_probe_id(ctx);
	env->kind = kind;
	bpf_get_current_comm(env->comm, sizeof(env->comm));
}

/* Where a record is built when it goes to a perf buffer (every record of a
 * legacy object; with --force-perfbuf or before 5.8, a normal object's). */
#define UPS_MAX_RECORD 1024

struct ups_scratch_buf {
	__u8 data[UPS_MAX_RECORD];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ups_scratch_buf);
} ups_scratch SEC(".maps");

/* This CPU's scratch record of size bytes, or NULL when it does not fit. */
static __always_inline void *ups_scratch_get(__u32 size)
{
	__u32 zero = 0;

	return size <= UPS_MAX_RECORD ? bpf_map_lookup_elem(&ups_scratch, &zero) : 0;
}

/* Output of a legacy object: the perf event array only (the ring buffer
 * needs 5.8, and the verifier of an old kernel refuses an unknown helper even
 * on a branch a constant would prune).  Same names, same records. */
#ifdef UPS_LEGACY
#define UPS_OUTPUT(name)                                    \
	struct {                                            \
		__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);\
		__uint(key_size, sizeof(__u32));            \
		__uint(value_size, sizeof(__u32));          \
	} name##_perf SEC(".maps")

static __always_inline void *ups_reserve_counted(void *ctx, __u32 size)
{
	void *rec = ups_scratch_get(size);

	if (!rec)
		ups_count_drop(ctx);
	return rec;
}

#define UPS_RESERVE(ctx, name, T) ((T *)ups_reserve_counted((ctx), sizeof(T)))

static __always_inline void ups_submit_perf(void *ctx, void *perfbuf, void *rec, __u32 size)
{
	if (bpf_perf_event_output(ctx, perfbuf, BPF_F_CURRENT_CPU, rec, size) < 0)
		ups_count_drop(ctx);
}

#define UPS_SUBMIT(ctx, name, rec) ups_submit_perf((ctx), &name##_perf, (rec), sizeof(*(rec)))
#define UPS_SUBMIT_PLAIN(ctx, name, rec) UPS_SUBMIT(ctx, name, rec)
#else
/* Output: every record goes to a ring buffer (5.8+) or, when the kernel has
 * none (or --force-perfbuf), to a perf event array with the same record.
 * UPS_OUTPUT(name) declares both; only one of them is created at load time
 * (the other is stood in for by a 1-entry array so its relocation resolves),
 * and the choice is the frozen UPS_CFG(use_perfbuf), so the verifier prunes
 * the branch the kernel cannot run. */
#define UPS_OUTPUT(name)                                    \
	struct {                                            \
		__uint(type, BPF_MAP_TYPE_RINGBUF);         \
		__uint(max_entries, 4096);                  \
	} name SEC(".maps");                                \
	struct {                                            \
		__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);\
		__uint(key_size, sizeof(__u32));            \
		__uint(value_size, sizeof(__u32));          \
	} name##_perf SEC(".maps")

static __always_inline void *ups_reserve_impl(void *ringbuf, __u32 size)
{
	if (UPS_CFG(use_perfbuf))
		return ups_scratch_get(size);
	return bpf_ringbuf_reserve(ringbuf, size, 0);
}

/* Reserve space for one record of type T in output `name`; counts a drop and
 * returns NULL when the ring is full. */
#define UPS_RESERVE(ctx, name, T) ((T *)ups_reserve_counted((ctx), &name, sizeof(T)))

static __always_inline void *ups_reserve_counted(void *ctx, void *ringbuf, __u32 size)
{
	void *rec = ups_reserve_impl(ringbuf, size);
	if (!rec)
		ups_count_drop(ctx);
	return rec;
}

/* Wake the consumer only once wakeup_bytes are pending: one wakeup per batch
 * instead of per record (per-record wakeups cost ~6 us a hit).  The consumer
 * also drains on a short timer, which bounds the latency of small batches. */
static __always_inline void ups_submit_impl(void *ctx, void *ringbuf, void *perfbuf, void *rec,
					    __u32 size)
{
	if (UPS_CFG(use_perfbuf)) {
		if (bpf_perf_event_output(ctx, perfbuf, BPF_F_CURRENT_CPU, rec, size) < 0)
			ups_count_drop(ctx);
		return;
	}
	__u64 pending = bpf_ringbuf_query(ringbuf, BPF_RB_AVAIL_DATA);
	bpf_ringbuf_submit(rec, pending >= UPS_CFG(wakeup_bytes) ? BPF_RB_FORCE_WAKEUP
								: BPF_RB_NO_WAKEUP);
}

#include "ups_stack.h"

/* With --stack (frozen .rodata: pruned otherwise) the record goes out
 * wrapped with its call stack (ups_stack.h). */
#define UPS_SUBMIT(ctx, name, rec)                                                                 \
	do {                                                                                       \
		if (!UPS_CFG(stack_mode) ||                                                         \
		    !ups_stack_submit((ctx), &name, &name##_perf, (rec), sizeof(*(rec))))          \
			ups_submit_impl((ctx), &name, &name##_perf, (rec), sizeof(*(rec)));        \
	} while (0)
/* A record that is no hit (never wrapped with a call stack). */
#define UPS_SUBMIT_PLAIN(ctx, name, rec) \
	ups_submit_impl((ctx), &name, &name##_perf, (rec), sizeof(*(rec)))
#endif

/* Zeroes a reserved record (neither ring nor scratch memory is zeroed, and a
 * record must never carry stale bytes) and fills its envelope. */
#define UPS_BEGIN(ctx, rec, pid_tgid, kind)                              \
	do {                                                             \
		__builtin_memset((rec), 0, sizeof(*(rec)));              \
		ups_fill_envelope((ctx), &(rec)->env, (pid_tgid), (kind)); \
	} while (0)

#include "ups_art.h"

#endif
