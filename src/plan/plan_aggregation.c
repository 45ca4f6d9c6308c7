/* plan_aggregation.c — plan_aggregation() (declared in plan.h): a probe's
 * Aggregation field checked and mapped to registers.  Apart from the run-wide
 * queries of aggregation.c so that plan.c needs no header of this folder
 * that needs plan.h back. */
#include "plan/aggregation.h"

#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "records.h"

/* Registers a program can read an argument from: rdi..r9, x0..x7. */
static int arg_regs(uint16_t machine)
{
	return machine == EM_AARCH64 ? 8 : 6;
}

static int arg_register(const struct plan_probe *p, const char *what, int32_t pos,
			struct err *err)
{
	int reg = plan_arg_register(p->abi, pos);

	if (reg < 0 || reg >= arg_regs(p->machine))
		return err_set(err, PLAN_BAD_POSITION, "task %u probe %u: aggregation %s argument %d is not "
			       "in a register (%s)", p->desc.task_index, p->desc.probe_index,
			       what, pos, pos < 0 ? "a position counts from 0"
			       : "the programs read register arguments only");
	return reg;
}

static int map_value(struct plan_probe *p, const char *what, bool has, int32_t v,
		     bool has_arg, int32_t pos, uint32_t *out, int *reg, struct err *err)
{
	*out = UPS_AGG_VAL_NONE;
	*reg = UPS_AGG_NO_REG;
	if (!has || v == AGG_VALUE_NONE)
		return has_arg ? err_set(err, -EINVAL, "task %u probe %u: aggregation %s_arg "
					 "without %s: ARG", p->desc.task_index,
					 p->desc.probe_index, what, what) : 0;
	if (v == AGG_VALUE_ARG) {
		if (!has_arg)
			return err_set(err, -EINVAL, "task %u probe %u: aggregation %s: ARG needs "
				       "%s_arg", p->desc.task_index, p->desc.probe_index, what, what);
		*reg = arg_register(p, what, pos, err);
		*out = UPS_AGG_VAL_ARG;
		return *reg < 0 ? *reg : 0;
	}
	if (v == AGG_VALUE_RET || v == AGG_VALUE_LATENCY) {
		*out = v == AGG_VALUE_RET ? UPS_AGG_VAL_RET : UPS_AGG_VAL_LATENCY;
		return 0;
	}
	return err_set(err, -EINVAL, "task %u probe %u: aggregation %s: unknown value %d",
		       p->desc.task_index, p->desc.probe_index, what, v);
}

static int map_keys(struct plan_probe *p, int *reg, struct err *err)
{
	const struct probe_config *pc = p->cfg;
	static const uint32_t bit[] = { [AGG_KEY_PID] = UPS_AGG_BY_PID,
					[AGG_KEY_TID] = UPS_AGG_BY_TID,
					[AGG_KEY_UID] = UPS_AGG_BY_UID,
					[AGG_KEY_ARG] = UPS_AGG_BY_ARG,
					[AGG_KEY_RET] = UPS_AGG_BY_RET,
					[AGG_KEY_COMM] = UPS_AGG_BY_COMM,
					[AGG_KEY_PROCESS] = UPS_AGG_BY_PROCESS };

	*reg = UPS_AGG_NO_REG;
	for (size_t i = 0; i < pc->agg_by.n; i++) {
		int32_t k = pc->agg_by.v[i];
		if (k <= AGG_KEY_UNKNOWN || k > AGG_KEY_PROCESS)
			return err_set(err, -EINVAL, "task %u probe %u: aggregation by: unknown key "
				       "%d", p->desc.task_index, p->desc.probe_index, k);
		p->agg_by |= bit[k];
	}
	if (!(p->agg_by & UPS_AGG_BY_ARG))
		return pc->has_agg_by_arg ? err_set(err, -EINVAL, "task %u probe %u: aggregation "
						    "by_arg without by: ARG", p->desc.task_index,
						    p->desc.probe_index) : 0;
	if (!pc->has_agg_by_arg)
		return err_set(err, -EINVAL, "task %u probe %u: aggregation by: ARG needs by_arg",
			       p->desc.task_index, p->desc.probe_index);
	*reg = arg_register(p, "by", pc->agg_by_arg, err);
	return *reg < 0 ? *reg : 0;
}

static bool needs_return(const struct plan_probe *p)
{
	return (p->agg_by & UPS_AGG_BY_RET) || p->agg_sum == UPS_AGG_VAL_RET ||
	       p->agg_sum == UPS_AGG_VAL_LATENCY || p->agg_hist == UPS_AGG_VAL_RET ||
	       p->agg_hist == UPS_AGG_VAL_LATENCY;
}

/* libc's function -> what traffic does at its return. */
static uint32_t traffic_op_of(const char *symbol)
{
	static const struct { const char *name; uint32_t op; } ops[] = {
		{ "send", UPS_TRAFFIC_TX },        { "write", UPS_TRAFFIC_TX },
		{ "writev", UPS_TRAFFIC_TX },      { "sendmsg", UPS_TRAFFIC_TX_MSG },
		{ "sendto", UPS_TRAFFIC_TX_ADDR }, { "recv", UPS_TRAFFIC_RX },
		{ "read", UPS_TRAFFIC_RX },        { "readv", UPS_TRAFFIC_RX },
		{ "recvmsg", UPS_TRAFFIC_RX_MSG },     { "recvfrom", UPS_TRAFFIC_RX_ADDR },
		{ "socket", UPS_TRAFFIC_SOCKET },  { "connect", UPS_TRAFFIC_CONNECT },
		{ "accept", UPS_TRAFFIC_ACCEPT },  { "accept4", UPS_TRAFFIC_ACCEPT },
		{ "close", UPS_TRAFFIC_CLOSE },     { "getaddrinfo", UPS_TRAFFIC_LOOKUP },
		{ "android_getaddrinfofornet", UPS_TRAFFIC_LOOKUP_BSD },
		{ "sendfile", UPS_TRAFFIC_TX },    { "splice", UPS_TRAFFIC_SPLICE },
		{ "sendmmsg", UPS_TRAFFIC_TX_MMSG }, { "recvmmsg", UPS_TRAFFIC_RX_MMSG },
		{ "socketpair", UPS_TRAFFIC_SOCKETPAIR },
	};
	size_t len;

	if (!symbol)
		return UPS_TRAFFIC_NONE;
	if (!strncmp(symbol, "__", 2))
		symbol += 2;          /* bionic's system calls behind connect, sendmsg */
	len = strcspn(symbol, "@");   /* "send@@GLIBC_2.2.5" */
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strlen(ops[i].name) == len && !strncmp(symbol, ops[i].name, len))
			return ops[i].op;
	return UPS_TRAFFIC_NONE;
}

/* The traffic program: its op from the probed function; the arguments its
 * entry half keeps: registers 0, 1 and 4 (fd or domain; buffer, type or
 * mmsghdr vector); sendto's and recvfrom's 0, 5 and 4 (fd, addrlen (recvfrom:
 * its pointer, the length the kernel wrote read at the return), address);
 * connect's and accept's 0, 1 and 2 (fd, sockaddr, addrlen or its pointer); sendmsg's and
 * recvmsg's 0 and 1 (fd, msghdr; the entry adds its msg_name and msg_namelen); splice's 0 and 2
 * (fd_in, fd_out); socketpair's 0, 1 and 3 (domain, type, sv); for a lookup
 * the name and the result pointer (register 3, bionic's
 * android_getaddrinfofornet 5). */
static int plan_traffic(struct plan_probe *p, struct err *err)
{
	p->traffic_op = traffic_op_of(p->cfg->method_signature);
	if (p->traffic_op == UPS_TRAFFIC_NONE)
		return err_set(err, -EINVAL, "task %u probe %u: %s counts libc's send, sendto, "
			       "sendmsg, sendmmsg, write, writev, sendfile, splice, recv, "
			       "recvfrom, recvmsg, recvmmsg, read, readv, socket, socketpair, "
			       "connect, accept, accept4, close, getaddrinfo and "
			       "android_getaddrinfofornet, not '%s'",
			       p->desc.task_index, p->desc.probe_index, p->program_name,
			       p->cfg->method_signature ? p->cfg->method_signature : "");
	if (p->machine == EM_X86_64 && p->abi != ARG_ABI_NATIVE)
		return err_set(err, -EINVAL, "task %u probe %u: %s probes native libc functions",
			       p->desc.task_index, p->desc.probe_index, p->program_name);
	if (p->traffic_op == UPS_TRAFFIC_LOOKUP || p->traffic_op == UPS_TRAFFIC_LOOKUP_BSD) {
		/* struct addrinfo's layout in records.h is the 64-bit one */
		if (p->machine != EM_X86_64 && p->machine != EM_AARCH64)
			return err_set(err, -EINVAL, "task %u probe %u: %s reads a 64-bit "
				       "struct addrinfo; %s is not x86_64 or arm64",
				       p->desc.task_index, p->desc.probe_index, p->program_name,
				       p->path);
		p->agg_regs = 0u | (p->traffic_op == UPS_TRAFFIC_LOOKUP ? 3u : 5u) << 8 |
			      0xffu << 16;
		return 0;
	}
	if (p->traffic_op == UPS_TRAFFIC_SPLICE)
		p->agg_regs = 0u | 2u << 8 | 0xffu << 16;
	else if (p->traffic_op == UPS_TRAFFIC_SOCKETPAIR)
		p->agg_regs = 0u | 1u << 8 | 3u << 16;
	else if (p->traffic_op == UPS_TRAFFIC_TX_ADDR || p->traffic_op == UPS_TRAFFIC_RX_ADDR)
		p->agg_regs = 0u | 5u << 8 | 4u << 16;
	else if (p->traffic_op == UPS_TRAFFIC_CONNECT || p->traffic_op == UPS_TRAFFIC_ACCEPT)
		p->agg_regs = 0u | 1u << 8 | 2u << 16;
	else if (p->traffic_op == UPS_TRAFFIC_TX_MSG || p->traffic_op == UPS_TRAFFIC_RX_MSG)
		p->agg_regs = 0u | 1u << 8 | 0xffu << 16;   /* args[2]: msg_name, at the entry */
	else
		p->agg_regs = 0u | 1u << 8 | 4u << 16;
	return 0;
}

int plan_aggregation(struct plan_probe *p, struct err *err)
{
	const struct probe_config *pc = p->cfg;
	int key_reg, sum_reg, hist_reg, rc;

	if (p->prog->traffic)
		return plan_traffic(p, err);
	if (!p->prog->aggregate)
		return pc->has_aggregation
		       ? err_set(err, -EINVAL, "task %u probe %u: an aggregation needs "
				 "prog_Uprobestats_uprobe_aggregate or prog_Uprobestats_uretprobe_"
				 "aggregate_return, not %s", p->desc.task_index,
				 p->desc.probe_index, p->program_name) : 0;
	if ((pc->has_agg_interval && pc->agg_interval_seconds < 0) ||
	    (pc->has_agg_max_keys && (pc->agg_max_keys < 1 ||
				      (uint32_t)pc->agg_max_keys > AGG_MAX_KEYS_LIMIT)))
		return err_set(err, -EINVAL, "task %u probe %u: aggregation interval_seconds must "
			       "be >= 0 and max_keys 1..%u", p->desc.task_index, p->desc.probe_index,
			       AGG_MAX_KEYS_LIMIT);
	rc = map_keys(p, &key_reg, err);
	if (rc == 0)
		rc = map_value(p, "sum", pc->has_agg_sum, pc->agg_sum, pc->has_agg_sum_arg,
			       pc->agg_sum_arg, &p->agg_sum, &sum_reg, err);
	if (rc == 0)
		rc = map_value(p, "hist", pc->has_agg_hist, pc->agg_hist, pc->has_agg_hist_arg,
			       pc->agg_hist_arg, &p->agg_hist, &hist_reg, err);
	if (rc < 0)
		return rc;
	if (needs_return(p) && !p->prog->is_return)
		return err_set(err, -EINVAL, "task %u probe %u: the return value and the latency "
			       "exist at the return: use prog_Uprobestats_uretprobe_aggregate_return",
			       p->desc.task_index, p->desc.probe_index);
	p->agg_regs = (uint32_t)key_reg | (uint32_t)sum_reg << 8 | (uint32_t)hist_reg << 16;
	p->agg_by_arg = pc->agg_by_arg;
	p->agg_sum_arg = pc->agg_sum_arg;
	p->agg_hist_arg = pc->agg_hist_arg;
	return 0;
}
