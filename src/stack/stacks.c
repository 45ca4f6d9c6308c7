#include "stack/stacks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "code/codecache.h"

struct stacks {
	struct code_cache *code;      /* the session's (not owned) */
};

int stack_record_parse(const void *data, size_t size, struct stack_record *out)
{
	const uint8_t *p = data;
	size_t inner_pad, need;

	if (size < sizeof(out->hdr))
		return -EINVAL;
	memcpy(&out->hdr, p, sizeof(out->hdr));
	if (out->hdr.env.kind != UPS_REC_STACK || out->hdr.inner_len < sizeof(struct ups_envelope) ||
	    out->hdr.inner_len > UPS_STACK_MAX_INNER || out->hdr.stack_len > UPS_STACK_MAX_BYTES ||
	    out->hdr.n_pcs > UPS_STACK_MAX_FRAMES)
		return -EINVAL;
	inner_pad = (out->hdr.inner_len + 7u) & ~7u;
	need = sizeof(out->hdr) + inner_pad + (size_t)out->hdr.n_pcs * 8 + out->hdr.stack_len;
	if (size != need)
		return -EINVAL;
	out->inner = p + sizeof(out->hdr);
	out->pcs = (const uint64_t *)(p + sizeof(out->hdr) + inner_pad);
	out->stack = p + sizeof(out->hdr) + inner_pad + (size_t)out->hdr.n_pcs * 8;
	return 0;
}

struct stacks *stacks_new(struct code_cache *code)
{
	struct stacks *s = code ? calloc(1, sizeof(*s)) : NULL;

	if (s)
		s->code = code;
	return s;
}

void stacks_free(struct stacks *s)
{
	free(s);
}

void stacks_prime(struct stacks *s, uint32_t pid)
{
	code_cache_prime(s->code, pid);
}

struct lookup_ctx {
	struct stacks *s;
	uint32_t pid;
	uint64_t time_ns;             /* the record's: its mappings then */
};

static int lookup(void *ctx, uint64_t pc, bool is_return, struct code_info *out)
{
	struct lookup_ctx *lc = ctx;

	return code_cache_lookup_at(lc->s->code, lc->pid, lc->time_ns, pc, is_return, out);
}

static int dex_lookup(void *ctx, uint64_t addr, struct code_info *out)
{
	struct lookup_ctx *lc = ctx;

	return code_cache_dex(lc->s->code, lc->pid, addr, out);
}

/* libart's own frames out of a stack with Java frames (stacks.h). */
static void hide_art_frames(struct stack_trace *t)
{
	size_t w = 1;
	bool java = false;

	for (size_t i = 0; i < t->n; i++)
		java |= t->frames[i].kind == FRAME_JAVA || t->frames[i].kind == FRAME_JIT ||
			t->frames[i].kind == FRAME_INTERPRETED;
	if (!java)
		return;
	for (size_t i = 1; i < t->n; i++)
		if (!t->frames[i].art || t->frames[i].note)
			t->frames[w++] = t->frames[i];
	t->n = t->n ? w : 0;
}

/* A kernel walk that ended without a native caller to unwind on from: why,
 * as the flags say. */
static void kernel_walk_end(const struct stack_record *r, struct stack_trace *out)
{
	uint32_t fl = r->hdr.flags;

	out->end = fl & UPS_STACK_F_WALK_LIMIT ? "frame limit"
		   : fl & UPS_STACK_F_WALK_BAD ? "a Java frame the kernel walk cannot step (no "
						 "frame, or a frame size out of range)"
		   : fl & UPS_STACK_F_READ_FAILED ? "the user stack could not be read"
						    : "end of compiled Java frames";
	if (out->n && (fl & UPS_STACK_F_WALK_BAD))
		out->frames[out->n - 1].note = out->end;
	out->truncated = (fl & UPS_STACK_F_WALK_LIMIT) != 0;
}

void stacks_walk(struct stacks *s, const struct stack_record *r, uint32_t max_frames, bool art_frames,
		 struct stack_trace *out)
{
	struct lookup_ctx lc = { s, r->hdr.env.pid, r->hdr.env.ktime_ns };
	struct unwind_input in = {
#if defined(__aarch64__)
		.arch = UNWIND_ARM64,
#else
		.arch = UNWIND_X86_64,
#endif
		.stack_base = r->hdr.stack_addr,
		.stack = r->stack,
		.stack_len = r->hdr.stack_len,
		.max_frames = max_frames,
		.first_is_return = (r->hdr.flags & UPS_STACK_F_AFTER_RET) != 0,
		.pcs = r->pcs,
		.n_pcs = r->hdr.n_pcs,
		.pcs_continue = (r->hdr.flags & UPS_STACK_F_WALK_END) != 0,
		.dex = dex_lookup,
	};

	memcpy(in.regs, r->hdr.regs, sizeof(in.regs));
	unwind_walk(&in, lookup, &lc, out);
	if (out->end && !strcmp(out->end, UNWIND_END_KWALK))
		kernel_walk_end(r, out);
	else if (r->hdr.flags & UPS_STACK_F_READ_FAILED && out->end &&
		 !strcmp(out->end, "stack slice ends"))
		out->end = "the user stack could not be read";
	if (!art_frames)
		hide_art_frames(out);
}
