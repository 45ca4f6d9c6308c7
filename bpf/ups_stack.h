/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* ups_stack.h — --stack on the BPF side: every record of a probe with a stack
 * goes out wrapped in one UPS_REC_STACK record (records.h) that also carries
 * the registers and a bounded slice of the user stack, built in a per-CPU
 * scratch buffer and written with one variable-length output call.
 *
 * Read only: the task's memory is read with bpf_probe_read_user (5.5+),
 * never written.  The wrapped record is copied whole, so the consumer
 * decodes it exactly as when it comes alone.  Included by ups_bpf.h. */
#ifndef UPROBESTATS_BPF_UPS_STACK_H
#define UPROBESTATS_BPF_UPS_STACK_H

struct ups_stack_buf {
	__u8 data[UPS_STACK_SCRATCH];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ups_stack_buf);
} ups_stack_scratch SEC(".maps");

/* UPS_STACK_KERNEL: sized and filled by user space (stack/kwalk.h); one
 * entry when unused. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ups_kwalk_ent);
} ups_kwalk_code SEC(".maps");

/* The search position, kept in map memory so that the verifier does not
 * track it as a constant: every path of a search step then reaches the next
 * step in the same state and is pruned (a tracked position would make the
 * verifier explore 2^bits paths per frame). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} ups_kwalk_pos SEC(".maps");

/* The compiled Java method of (tgid, pc), or NULL: the last entry whose
 * (tgid, start) is <= (tgid, pc), searched in stack_search_bits steps. */
static __always_inline const struct ups_kwalk_ent *ups_kwalk_find(__u32 tgid, __u64 pc)
{
	__u32 zero = 0, bits = UPS_CFG(stack_search_bits), pos;
	const struct ups_kwalk_ent *e;
	__u32 *at = bpf_map_lookup_elem(&ups_kwalk_pos, &zero);

	if (!at)
		return 0;
	*at = 0;
	for (__u32 b = UPS_KWALK_MAX_BITS; b > 0; b--) {
		__u32 cand;

		if (b > bits)
			continue;
		cand = (*at | (1u << (b - 1))) & ((1u << UPS_KWALK_MAX_BITS) - 1);
		e = bpf_map_lookup_elem(&ups_kwalk_code, &cand);
		if (e && (e->tgid < tgid || (e->tgid == tgid && e->start <= pc)))
			*at = cand;
	}
	pos = *at & ((1u << UPS_KWALK_MAX_BITS) - 1);
	e = bpf_map_lookup_elem(&ups_kwalk_code, &pos);
	if (!e || e->tgid != tgid || pc < e->start || pc >= e->end)
		return 0;
	return e;
}

/* Where no frame exists (a function's entry, a return): the return PC and
 * the caller's sp.  Non-zero when [sp] cannot be read. */
static __always_inline int ups_kwalk_entry_ret(void *ctx, __u64 *pc, __u64 *sp)
{
#if defined(__TARGET_ARCH_arm64)
	*pc = ((const struct ups_regs *)ctx)->regs[30];
	return 0;
#else
	if (bpf_probe_read_user(pc, sizeof(*pc), (const void *)*sp))
		return 1;
	*sp += 8;
	return 0;
#endif
}

/* Walks compiled Java frames from the probe.  A probe PC outside known Java
 * code leaves nothing to walk: no PCs, UPS_STACK_F_NATIVE (the caller copies
 * the slice from sp, as copy mode does).  Otherwise the probe sits at a
 * function's first instruction or at a return, where no frame exists, so
 * the return PC is [sp] (x86_64) or lr (arm64); at a uretprobe
 * (stack_after_ret) the function has returned and the PC is already the
 * caller's return PC.  Then, while the PC is in a known compiled method of
 * frame size F, the return PC is at sp+F-8 and the caller's sp is sp+F
 * (art-frames.md 1).  The first PC outside known Java code is recorded and
 * ends the walk (UPS_STACK_F_WALK_END, *end_sp its sp): user space unwinds on
 * from there.  User space checks every return PC into Java code against the
 * exact stack maps.  Returns the PCs written. */
static __always_inline __u32 ups_kwalk(void *ctx, __u64 *pcs, __u32 tgid, __u32 *flags,
				       __u64 *end_sp)
{
	__u32 max = UPS_CFG(stack_frames), after = UPS_CFG(stack_after_ret), n = 0;
	__u64 sp = UPS_SP(ctx), pc = UPS_PC(ctx);

	if (max > UPS_STACK_MAX_FRAMES)
		max = UPS_STACK_MAX_FRAMES;
	if (after)
		*flags |= UPS_STACK_F_AFTER_RET;
	for (__u32 i = 0; i < UPS_STACK_MAX_FRAMES; i++) {
		const struct ups_kwalk_ent *e;
		__u32 fs;

		if (i >= max) {
			*flags |= UPS_STACK_F_WALK_LIMIT;
			break;
		}
		pcs[i] = pc;
		n = i + 1;
		e = ups_kwalk_find(tgid, pc);
		if (!e) {
			if (i == 0) {
				*flags |= UPS_STACK_F_NATIVE;
				return 0;
			}
			*flags |= UPS_STACK_F_WALK_END;
			*end_sp = sp;
			break;
		}
		if (i == 0 && !after) {
			if (ups_kwalk_entry_ret(ctx, &pc, &sp)) {
				*flags |= UPS_STACK_F_READ_FAILED;
				break;
			}
			continue;
		}
		fs = e->frame_size;
		if (fs < 16 || fs > 65536) {     /* a frameless leaf calls nobody */
			*flags |= UPS_STACK_F_WALK_BAD;
			break;
		}
		if (bpf_probe_read_user(&pc, sizeof(pc), (const void *)(sp + fs - 8))) {
			*flags |= UPS_STACK_F_READ_FAILED;
			break;
		}
		sp += fs;
	}
	return n;
}

/* The registers an unwinder needs, in DWARF numbering (records.h). */
static __always_inline void ups_stack_regs(void *ctx, __u64 *regs)
{
#if defined(__TARGET_ARCH_arm64)
	const struct ups_regs *r = ctx;
#pragma unroll
	for (int i = 0; i < 31; i++)
		regs[i] = r->regs[i];
	regs[31] = r->sp;
	regs[32] = r->pc;
#else
	const struct ups_regs *r = ctx;
	regs[0] = r->ax;
	regs[1] = r->dx;
	regs[2] = r->cx;
	regs[3] = r->bx;
	regs[4] = r->si;
	regs[5] = r->di;
	regs[6] = r->bp;
	regs[7] = r->sp;
	regs[8] = r->r8;
	regs[9] = r->r9;
	regs[10] = r->r10;
	regs[11] = r->r11;
	regs[12] = r->r12;
	regs[13] = r->r13;
	regs[14] = r->r14;
	regs[15] = r->r15;
	regs[16] = r->ip;
#endif
}

/* Copies stack_bytes (frozen .rodata, so a constant to the verifier) from sp;
 * when that faults (the stack's top is nearer), what is left of sp's page.
 * Returns the bytes copied. */
static __always_inline __u32 ups_stack_copy(__u8 *dst, __u64 sp, __u32 *flags)
{
	__u32 len = ups_cfg.stack_bytes;
	__u32 room;

	if (len > UPS_STACK_MAX_BYTES)
		len = UPS_STACK_MAX_BYTES;
	if (len && bpf_probe_read_user(dst, len, (const void *)sp) == 0)
		return len;
	room = 4096 - (__u32)(sp & 4095);
	if (room > len)
		room = len;
	room &= 8191;
	if (room && room <= UPS_STACK_MAX_BYTES &&
	    bpf_probe_read_user(dst, room, (const void *)sp) == 0) {
		*flags |= UPS_STACK_F_SHORT;
		return room;
	}
	*flags |= UPS_STACK_F_READ_FAILED;
	return 0;
}

/* Wraps rec (size bytes, a constant at each call site) with the stack and
 * sends it; the caller's own reservation is released.  Returns 1 when sent
 * (or counted as dropped), 0 to let the caller send rec alone. */
static __always_inline int ups_stack_submit(void *ctx, void *ringbuf, void *perfbuf, void *rec,
					    __u32 size)
{
	__u32 zero = 0, off, total;
	__u64 pending;
	struct ups_stack_hdr *h;
	__u8 *buf;

	if (size > UPS_STACK_MAX_INNER)
		return 0;
	buf = bpf_map_lookup_elem(&ups_stack_scratch, &zero);
	if (!buf)
		return 0;
	h = (struct ups_stack_hdr *)buf;
	if (bpf_probe_read_kernel(buf, sizeof(h->env), rec))
		return 0;
	h->env.kind = UPS_REC_STACK;
	h->inner_len = size;
	h->stack_len = 0;
	h->n_pcs = 0;
	h->flags = 0;
	ups_stack_regs(ctx, h->regs);
	off = sizeof(*h);
	if (bpf_probe_read_kernel(buf + off, size, rec))
		return 0;
	off += (size + 7) & ~7u;
	h->stack_addr = UPS_SP(ctx);
	if (UPS_CFG(stack_mode) == UPS_STACK_KERNEL) {
		__u64 end_sp = 0;

		h->n_pcs = ups_kwalk(ctx, (__u64 *)(buf + off), h->env.pid, &h->flags, &end_sp);
		off += (h->n_pcs & 127) * 8;
		if (h->flags & UPS_STACK_F_WALK_END) {
			/* the last Java frame's spill slots, never below sp */
			if (end_sp > UPS_KWALK_LEAD && end_sp - UPS_KWALK_LEAD > h->stack_addr)
				h->stack_addr = end_sp - UPS_KWALK_LEAD;
		} else if (!(h->flags & UPS_STACK_F_NATIVE)) {
			h->stack_addr = 0;
		}
	}
	if (h->stack_addr)
		h->stack_len = ups_stack_copy(buf + off, h->stack_addr, &h->flags);
	total = off + h->stack_len;
	if (total > UPS_STACK_SCRATCH)
		return 0;
	if (ups_cfg.use_perfbuf) {
		if (bpf_perf_event_output(ctx, perfbuf, BPF_F_CURRENT_CPU, buf, total) < 0)
			ups_count_drop(ctx);
		return 1;
	}
	bpf_ringbuf_discard(rec, BPF_RB_NO_WAKEUP);
	pending = bpf_ringbuf_query(ringbuf, BPF_RB_AVAIL_DATA) + total;
	if (bpf_ringbuf_output(ringbuf, buf, total,
			       pending >= ups_cfg.wakeup_bytes ? BPF_RB_FORCE_WAKEUP
								: BPF_RB_NO_WAKEUP) < 0)
		ups_count_drop(ctx);
	return 1;
}

#endif
