// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* GenericInstrumentation — upstream's generic programs: call_detail records
 * the pc and the first ten argument registers; call_timestamp[_1.._5] record
 * an event id and the monotonic time. */
#include "ups_bpf.h"

UPS_OUTPUT(call_detail_buf);
UPS_OUTPUT(call_timestamp_buf);
UPS_OUTPUT(output_buf);  /* the early `call` program's map */

static __always_inline void fill_call_result(void *ctx, struct call_result *r)
{
	r->pc = UPS_PC(ctx);
#pragma unroll
	for (int i = 0; i < 10; i++)
		r->regs[i] = i < UPS_NUM_ARG_REGS ? UPS_ARG(ctx, i) : 0;
}

SEC("uprobe/call_detail")
int call_detail(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct rec_call_detail *rec;

	if (!ups_enter(ctx, pid_tgid))
		return 0;
	rec = UPS_RESERVE(ctx, call_detail_buf, struct rec_call_detail);
	if (!rec)
		return 0;
	ups_fill_envelope(ctx, &rec->env, pid_tgid, UPS_REC_CALL_DETAIL);
	fill_call_result(ctx, &rec->r);
	UPS_SUBMIT(ctx, call_detail_buf, rec);
	return 0;
}

/* The early name of call_detail (upstream @be0ff2c9): same CallResult, its
 * own output_buf map. */
SEC("uprobe/call")
int call(void *ctx)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct rec_call_detail *rec;

	if (!ups_enter(ctx, pid_tgid))
		return 0;
	rec = UPS_RESERVE(ctx, output_buf, struct rec_call_detail);
	if (!rec)
		return 0;
	ups_fill_envelope(ctx, &rec->env, pid_tgid, UPS_REC_CALL_DETAIL);
	fill_call_result(ctx, &rec->r);
	UPS_SUBMIT(ctx, output_buf, rec);
	return 0;
}

static __always_inline int record_timestamp(void *ctx, __u32 event)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct rec_call_timestamp *rec;

	if (!ups_enter(ctx, pid_tgid))
		return 0;
	rec = UPS_RESERVE(ctx, call_timestamp_buf, struct rec_call_timestamp);
	if (!rec)
		return 0;
	ups_fill_envelope(ctx, &rec->env, pid_tgid, UPS_REC_CALL_TIMESTAMP);
	rec->t.event = event;
	rec->t.pad = 0;
	rec->t.timestamp_ns = rec->env.ktime_ns;
	UPS_SUBMIT(ctx, call_timestamp_buf, rec);
	return 0;
}

SEC("uprobe/call_timestamp")
int call_timestamp(void *ctx) { return record_timestamp(ctx, 0); }
SEC("uprobe/call_timestamp_1")
int call_timestamp_1(void *ctx) { return record_timestamp(ctx, 1); }
SEC("uprobe/call_timestamp_2")
int call_timestamp_2(void *ctx) { return record_timestamp(ctx, 2); }
SEC("uprobe/call_timestamp_3")
int call_timestamp_3(void *ctx) { return record_timestamp(ctx, 3); }
SEC("uprobe/call_timestamp_4")
int call_timestamp_4(void *ctx) { return record_timestamp(ctx, 4); }
SEC("uprobe/call_timestamp_5")
int call_timestamp_5(void *ctx) { return record_timestamp(ctx, 5); }

char LICENSE[] SEC("license") = "Dual BSD/GPL";
