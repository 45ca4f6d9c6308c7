#include "probe/legacy_cfg.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define LD_IMM64 (BPF_LD | BPF_IMM | BPF_DW)

static int imm_value(uint32_t field, const struct ups_prog_config *cfg, uint32_t *out)
{
	if (field == UPS_IMM_PROBE_ID)
		*out = cfg->probe_id;
	else if (field == UPS_IMM_FILTER_PIDS)
		*out = cfg->filter_pids;
	else if (field == UPS_IMM_STRING_NATIVE)
		*out = cfg->string_native;
	else if (field == UPS_IMM_AGG_BY)
		*out = cfg->agg_by;
	else if (field == UPS_IMM_AGG_SUM)
		*out = cfg->agg_sum;
	else if (field == UPS_IMM_AGG_HIST)
		*out = cfg->agg_hist;
	else if (field == UPS_IMM_AGG_REGS)
		*out = cfg->agg_regs;
	else if (field == UPS_IMM_TRAFFIC_OP)
		*out = cfg->traffic_op;
	else if (field == UPS_IMM_LONE_RET)
		*out = cfg->lone_ret;
	else if (field >= UPS_IMM_STRING_REG && field < UPS_IMM_STRING_REG + UPS_ARG_STRINGS)
		*out = cfg->string_reg[field - UPS_IMM_STRING_REG];
	else if (field >= UPS_IMM_STRING_POS && field < UPS_IMM_STRING_POS + UPS_ARG_STRINGS)
		*out = cfg->string_pos[field - UPS_IMM_STRING_POS];
	else
		return -EINVAL;
	return 0;
}

int legacy_patch_insns(struct bpf_insn *insns, size_t n, const struct ups_prog_config *cfg,
		       size_t *patched, struct err *err)
{
	*patched = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t v;

		if (insns[i].code != LD_IMM64)
			continue;
		if (i + 1 >= n)
			return err_set(err, -EINVAL, "instruction %zu: 64-bit load without its "
				       "second half", i);
		if (insns[i].src_reg == 0 && (uint32_t)insns[i + 1].imm == UPS_IMM_MAGIC) {
			if (imm_value((uint32_t)insns[i].imm, cfg, &v) < 0)
				return err_set(err, -EINVAL, "instruction %zu: unknown config "
					       "immediate 0x%x (object from another build?)", i,
					       (unsigned)insns[i].imm);
			insns[i].imm = (int32_t)v;
			insns[i + 1].imm = 0;
			(*patched)++;
		}
		i++;   /* the second half of the load */
	}
	return 0;
}

int legacy_patch_object(struct bpf_object *obj, const struct ups_prog_config *cfg,
			struct err *err)
{
	struct bpf_program *prog;

	bpf_object__for_each_program(prog, obj) {
		size_t n = bpf_program__insn_cnt(prog), patched;
		struct bpf_insn *copy = malloc((n ? n : 1) * sizeof(*copy));
		int rc;

		if (!copy)
			return err_set(err, -ENOMEM, "out of memory");
		memcpy(copy, bpf_program__insns(prog), n * sizeof(*copy));
		rc = legacy_patch_insns(copy, n, cfg, &patched, err);
		if (rc < 0) {
			free(copy);
			return err_prefix(err, "program %s", bpf_program__name(prog));
		}
		rc = patched ? bpf_program__set_insns(prog, copy, n) : 0;
		free(copy);
		if (rc < 0)
			return err_set(err, rc, "program %s: setting its instructions: %s",
				       bpf_program__name(prog), strerror(-rc));
	}
	return 0;
}
