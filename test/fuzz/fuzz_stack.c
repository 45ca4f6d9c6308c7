/* fuzz_stack — a stack record as the kernel hands it over: stack_record_parse
 * (the exact-length check) and, when it passes, the unwinder over the
 * record's registers and stack bytes with a lookup whose answers (kind,
 * frame size, CFI rule offsets, stack-map hits) come from the PC's bits, so
 * every stepping rule meets hostile stacks and hostile code descriptions.
 * Kernel-walk records (PCs, then a slice to unwind on from) go through the
 * same walk.  Seeds: records of real --stack runs on target_stack, in both
 * modes. */
#include <stdint.h>
#include <string.h>

#include "stack/stacks.h"
#include "stack/unwind.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int lookup(void *ctx, uint64_t pc, bool is_return, struct code_info *ci)
{
	(void)ctx;
	ci->kind = (enum frame_kind)(pc % 5);
	ci->frame_size = (uint32_t)((pc >> 3) & 0xff0);
	ci->core_spill_mask = (uint32_t)(pc >> 12);
	ci->frameless = (pc >> 20) & 1;
	ci->at_start = !is_return && ((pc >> 21) & 1);
	ci->stack_map_hit = (pc >> 22) & 1;
	ci->file_has_cfi = (pc >> 23) & 1;
	ci->has_cfi = (pc >> 24) & 1;
	ci->cfi_error = ci->has_cfi ? 0 : -2;
	if (ci->has_cfi) {
		ci->cfi.cfa_reg = (uint32_t)((pc >> 25) % 40);
		ci->cfi.cfa_off = (int64_t)((pc >> 31) & 0xff) - 64;
		ci->cfi.ra_reg = (uint32_t)((pc >> 39) % 40);
		for (int r = 0; r < CFI_MAX_REGS; r++) {
			ci->cfi.regs[r].kind = (uint8_t)((pc >> (r % 48)) % 7);
			ci->cfi.regs[r].reg = (uint16_t)((pc >> 8) % 40);
			ci->cfi.regs[r].off = (int64_t)((pc >> 16) & 0x7f) - 64;
		}
	}
	return (pc >> 45) & 1 ? -1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct stack_record r;
	static struct stack_trace st;
	struct unwind_input in;

	if (stack_record_parse(data, size, &r) < 0)
		return 0;
	memset(&in, 0, sizeof(in));
	in.arch = (r.hdr.flags & 1) ? UNWIND_ARM64 : UNWIND_X86_64;
	memcpy(in.regs, r.hdr.regs, sizeof(in.regs));
	in.stack_base = r.hdr.stack_addr;
	in.stack = r.stack;
	in.stack_len = r.hdr.stack_len;
	in.max_frames = UNWIND_MAX_FRAMES;
	in.first_is_return = (r.hdr.flags & UPS_STACK_F_AFTER_RET) != 0;
	in.pcs = r.pcs;
	in.n_pcs = r.hdr.n_pcs;
	in.pcs_continue = (r.hdr.flags & UPS_STACK_F_WALK_END) != 0;
	unwind_walk(&in, lookup, NULL, &st);
	return 0;
}
