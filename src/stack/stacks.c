#include "stack/stacks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stack/codemap.h"

struct stacks {
	struct codemap *map;
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
	    out->hdr.n_pcs > UPS_STACK_MAX_FRAMES || (out->hdr.n_pcs && out->hdr.stack_len))
		return -EINVAL;
	inner_pad = (out->hdr.inner_len + 7u) & ~7u;
	need = sizeof(out->hdr) + inner_pad + (size_t)out->hdr.n_pcs * 8 + out->hdr.stack_len;
	if (size != need)
		return -EINVAL;
	out->inner = p + sizeof(out->hdr);
	out->pcs = (const uint64_t *)(p + sizeof(out->hdr) + inner_pad);
	out->stack = p + sizeof(out->hdr) + inner_pad;
	return 0;
}

struct stacks *stacks_new(const char *proc_dir)
{
	struct stacks *s = calloc(1, sizeof(*s));

	if (s && !(s->map = codemap_new(proc_dir))) {
		free(s);
		s = NULL;
	}
	return s;
}

void stacks_free(struct stacks *s)
{
	if (!s)
		return;
	codemap_free(s->map);
	free(s);
}

void stacks_prime(struct stacks *s, uint32_t pid)
{
	codemap_prime(s->map, pid);
}

struct lookup_ctx {
	struct stacks *s;
	uint32_t pid;
};

static int lookup(void *ctx, uint64_t pc, bool is_return, struct code_info *out)
{
	struct lookup_ctx *lc = ctx;

	return codemap_lookup(lc->s->map, lc->pid, pc, is_return, out);
}

/* Why a kernel-walked PC cannot stand as frame i (NULL: it can).  The walk
 * assumed the probe sits where no frame exists (a function's first
 * instruction or a return); a return PC into Java code must be exactly a
 * Default/OSR stack map's (art-frames.md §6.5). */
static const char *kernel_frame_refused(const struct code_info *ci, bool is_return)
{
	if (ci->kind != FRAME_JAVA)
		return NULL;
	if (!is_return && !ci->at_start && !ci->at_exit && !ci->frameless)
		return "probe inside a framed Java method: the kernel walk cannot step from here";
	if (is_return && !ci->stack_map_hit)
		return "return PC matches no stack map";
	return NULL;
}

/* Kernel walk: the PCs are already the frames; each is described, and the
 * walk's own end (a PC outside known Java code) is the last frame's note. */
static void symbolize_pcs(struct stacks *s, const struct stack_record *r, uint32_t max,
			  struct stack_trace *out)
{
	struct lookup_ctx lc = { s, r->hdr.env.pid };
	const char *refused = NULL;

	out->end = r->hdr.flags & UPS_STACK_F_WALK_LIMIT ? "frame limit"
		   : r->hdr.flags & UPS_STACK_F_WALK_BAD ? "return PC matches no stack map"
		   : r->hdr.flags & UPS_STACK_F_READ_FAILED ? "the user stack could not be read"
							      : "end of compiled Java frames";
	for (uint32_t i = 0; i < r->hdr.n_pcs && out->n < max && !refused; i++) {
		struct code_info ci = { .dex_pc = UINT32_MAX };
		struct stack_frame *f = &out->frames[out->n++];
		uint64_t pc;

		bool is_return = i > 0 || (r->hdr.flags & UPS_STACK_F_AFTER_RET);

		memcpy(&pc, r->pcs + i, sizeof(pc));
		lookup(&lc, pc, is_return, &ci);
		refused = kernel_frame_refused(&ci, is_return);
		*f = (struct stack_frame){ .pc = pc, .kind = ci.kind, .file = ci.file,
					   .offset = ci.offset, .symbol = ci.symbol,
					   .symbol_off = ci.symbol_off,
					   .dex_pc = ci.kind == FRAME_JAVA ? ci.dex_pc : UINT32_MAX,
					   .line = ci.line,
					   .note = ci.kind == FRAME_UNKNOWN ? ci.why : refused };
	}
	if (refused)
		out->end = refused;
	else if (out->n && (r->hdr.flags & UPS_STACK_F_WALK_BAD))
		out->frames[out->n - 1].note = out->end;
	out->truncated = (r->hdr.flags & UPS_STACK_F_WALK_LIMIT) != 0;
}

void stacks_walk(struct stacks *s, const struct stack_record *r, uint32_t max_frames,
		 struct stack_trace *out)
{
	struct lookup_ctx lc = { s, r->hdr.env.pid };
	struct unwind_input in = {
#if defined(__aarch64__)
		.arch = UNWIND_ARM64,
		.stack_base = r->hdr.regs[31],
#else
		.arch = UNWIND_X86_64,
		.stack_base = r->hdr.regs[7],
#endif
		.stack = r->stack,
		.stack_len = r->hdr.stack_len,
		.max_frames = max_frames,
	};

	out->n = 0;
	out->truncated = false;
	out->end = NULL;
	if (r->hdr.n_pcs) {
		symbolize_pcs(s, r, max_frames ? max_frames : UNWIND_MAX_FRAMES, out);
		return;
	}
	memcpy(in.regs, r->hdr.regs, sizeof(in.regs));
	unwind_walk(&in, lookup, &lc, out);
	if (r->hdr.flags & UPS_STACK_F_READ_FAILED && out->end &&
	    !strcmp(out->end, "stack slice ends"))
		out->end = "the user stack could not be read";
}
