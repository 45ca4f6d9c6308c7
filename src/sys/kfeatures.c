#include "sys/kfeatures.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct since {
	const char *name;
	unsigned kver;
};

static const struct since features[KF_COUNT] = {
	[KF_UPROBE_PMU] = { "uprobe PMU", KVER(4, 17) },
	[KF_BPF_CALLS] = { "BPF-to-BPF calls", KVER(4, 16) },
	[KF_BTF] = { "BTF", KVER(4, 18) },
	[KF_GLOBAL_DATA] = { "global data", KVER(5, 2) },
	[KF_LARGE_PROGS] = { "programs over 4096 instructions", KVER(5, 2) },
	[KF_BOUNDED_LOOPS] = { "bounded loops", KVER(5, 3) },
	[KF_PROBE_READ_USER] = { "bpf_probe_read_user", KVER(5, 5) },
	[KF_RINGBUF] = { "BPF ring buffer", KVER(5, 8) },
	[KF_CAP_BPF] = { "CAP_BPF and CAP_PERFMON", KVER(5, 8) },
	[KF_UPROBE_MULTI] = { "uprobe_multi links", KVER(6, 6) },
};

/* Helper id -> first kernel: bcc docs/kernel-versions.md, "Helpers"; the
 * numbering is include/uapi/linux/bpf.h's ___BPF_FUNC_MAPPER order. */
static const struct since helpers[] = {
	[1] = { "map_lookup_elem", KVER(3, 19) },
	[2] = { "map_update_elem", KVER(3, 19) },
	[3] = { "map_delete_elem", KVER(3, 19) },
	[4] = { "probe_read", KVER(4, 1) },
	[5] = { "ktime_get_ns", KVER(4, 1) },
	[6] = { "trace_printk", KVER(4, 1) },
	[7] = { "get_prandom_u32", KVER(4, 1) },
	[8] = { "get_smp_processor_id", KVER(4, 1) },
	[9] = { "skb_store_bytes", KVER(4, 1) },
	[10] = { "l3_csum_replace", KVER(4, 1) },
	[11] = { "l4_csum_replace", KVER(4, 1) },
	[12] = { "tail_call", KVER(4, 2) },
	[13] = { "clone_redirect", KVER(4, 2) },
	[14] = { "get_current_pid_tgid", KVER(4, 2) },
	[15] = { "get_current_uid_gid", KVER(4, 2) },
	[16] = { "get_current_comm", KVER(4, 2) },
	[17] = { "get_cgroup_classid", KVER(4, 3) },
	[18] = { "skb_vlan_push", KVER(4, 3) },
	[19] = { "skb_vlan_pop", KVER(4, 3) },
	[20] = { "skb_get_tunnel_key", KVER(4, 3) },
	[21] = { "skb_set_tunnel_key", KVER(4, 3) },
	[22] = { "perf_event_read", KVER(4, 3) },
	[23] = { "redirect", KVER(4, 4) },
	[24] = { "get_route_realm", KVER(4, 4) },
	[25] = { "perf_event_output", KVER(4, 4) },
	[26] = { "skb_load_bytes", KVER(4, 5) },
	[27] = { "get_stackid", KVER(4, 6) },
	[28] = { "csum_diff", KVER(4, 6) },
	[29] = { "skb_get_tunnel_opt", KVER(4, 6) },
	[30] = { "skb_set_tunnel_opt", KVER(4, 6) },
	[31] = { "skb_change_proto", KVER(4, 8) },
	[32] = { "skb_change_type", KVER(4, 8) },
	[33] = { "skb_under_cgroup", KVER(4, 8) },
	[34] = { "get_hash_recalc", KVER(4, 8) },
	[35] = { "get_current_task", KVER(4, 8) },
	[36] = { "probe_write_user", KVER(4, 8) },
	[37] = { "current_task_under_cgroup", KVER(4, 9) },
	[38] = { "skb_change_tail", KVER(4, 9) },
	[39] = { "skb_pull_data", KVER(4, 9) },
	[40] = { "csum_update", KVER(4, 9) },
	[41] = { "set_hash_invalid", KVER(4, 9) },
	[42] = { "get_numa_node_id", KVER(4, 10) },
	[43] = { "skb_change_head", KVER(4, 10) },
	[44] = { "xdp_adjust_head", KVER(4, 10) },
	[45] = { "probe_read_str", KVER(4, 11) },
	[46] = { "get_socket_cookie", KVER(4, 12) },
	[47] = { "get_socket_uid", KVER(4, 12) },
	[48] = { "set_hash", KVER(4, 13) },
	[49] = { "setsockopt", KVER(4, 13) },
	[50] = { "skb_adjust_room", KVER(4, 13) },
	[51] = { "redirect_map", KVER(4, 14) },
	[52] = { "sk_redirect_map", KVER(4, 14) },
	[53] = { "sock_map_update", KVER(4, 14) },
	[54] = { "xdp_adjust_meta", KVER(4, 15) },
	[55] = { "perf_event_read_value", KVER(4, 15) },
	[56] = { "perf_prog_read_value", KVER(4, 15) },
	[57] = { "getsockopt", KVER(4, 15) },
	[58] = { "override_return", KVER(4, 16) },
	[59] = { "sock_ops_cb_flags_set", KVER(4, 16) },
	[60] = { "msg_redirect_map", KVER(4, 17) },
	[61] = { "msg_apply_bytes", KVER(4, 17) },
	[62] = { "msg_cork_bytes", KVER(4, 17) },
	[63] = { "msg_pull_data", KVER(4, 17) },
	[64] = { "bind", KVER(4, 17) },
	[65] = { "xdp_adjust_tail", KVER(4, 18) },
	[66] = { "skb_get_xfrm_state", KVER(4, 18) },
	[67] = { "get_stack", KVER(4, 18) },
	[68] = { "skb_load_bytes_relative", KVER(4, 18) },
	[69] = { "fib_lookup", KVER(4, 18) },
	[70] = { "sock_hash_update", KVER(4, 18) },
	[71] = { "msg_redirect_hash", KVER(4, 18) },
	[72] = { "sk_redirect_hash", KVER(4, 18) },
	[73] = { "lwt_push_encap", KVER(4, 18) },
	[74] = { "lwt_seg6_store_bytes", KVER(4, 18) },
	[75] = { "lwt_seg6_adjust_srh", KVER(4, 18) },
	[76] = { "lwt_seg6_action", KVER(4, 18) },
	[77] = { "rc_repeat", KVER(4, 18) },
	[78] = { "rc_keydown", KVER(4, 18) },
	[79] = { "skb_cgroup_id", KVER(4, 18) },
	[80] = { "get_current_cgroup_id", KVER(4, 18) },
	[81] = { "get_local_storage", KVER(4, 19) },
	[82] = { "sk_select_reuseport", KVER(4, 19) },
	[83] = { "skb_ancestor_cgroup_id", KVER(4, 19) },
	[84] = { "sk_lookup_tcp", KVER(4, 20) },
	[85] = { "sk_lookup_udp", KVER(4, 20) },
	[86] = { "sk_release", KVER(4, 20) },
	[87] = { "map_push_elem", KVER(4, 20) },
	[88] = { "map_pop_elem", KVER(4, 20) },
	[89] = { "map_peek_elem", KVER(4, 20) },
	[90] = { "msg_push_data", KVER(4, 20) },
	[91] = { "msg_pop_data", KVER(5, 0) },
	[92] = { "rc_pointer_rel", KVER(5, 0) },
	[93] = { "spin_lock", KVER(5, 1) },
	[94] = { "spin_unlock", KVER(5, 1) },
	[95] = { "sk_fullsock", KVER(5, 1) },
	[96] = { "tcp_sock", KVER(5, 1) },
	[97] = { "skb_ecn_set_ce", KVER(5, 1) },
	[98] = { "get_listener_sock", KVER(5, 1) },
	[99] = { "skc_lookup_tcp", KVER(5, 2) },
	[100] = { "tcp_check_syncookie", KVER(5, 2) },
	[101] = { "sysctl_get_name", KVER(5, 2) },
	[102] = { "sysctl_get_current_value", KVER(5, 2) },
	[103] = { "sysctl_get_new_value", KVER(5, 2) },
	[104] = { "sysctl_set_new_value", KVER(5, 2) },
	[105] = { "strtol", KVER(5, 2) },
	[106] = { "strtoul", KVER(5, 2) },
	[107] = { "sk_storage_get", KVER(5, 2) },
	[108] = { "sk_storage_delete", KVER(5, 2) },
	[109] = { "send_signal", KVER(5, 3) },
	[110] = { "tcp_gen_syncookie", KVER(5, 3) },
	[111] = { "skb_output", KVER(5, 5) },
	[112] = { "probe_read_user", KVER(5, 5) },
	[113] = { "probe_read_kernel", KVER(5, 5) },
	[114] = { "probe_read_user_str", KVER(5, 5) },
	[115] = { "probe_read_kernel_str", KVER(5, 5) },
	[116] = { "tcp_send_ack", KVER(5, 5) },
	[117] = { "send_signal_thread", KVER(5, 5) },
	[118] = { "jiffies64", KVER(5, 5) },
	[119] = { "read_branch_records", KVER(5, 6) },
	[120] = { "get_ns_current_pid_tgid", KVER(5, 6) },
	[121] = { "xdp_output", KVER(5, 6) },
	[122] = { "get_netns_cookie", KVER(5, 7) },
	[123] = { "get_current_ancestor_cgroup_id", KVER(5, 7) },
	[124] = { "sk_assign", KVER(5, 7) },
	[125] = { "ktime_get_boot_ns", KVER(5, 8) },
	[126] = { "seq_printf", KVER(5, 7) },
	[127] = { "seq_write", KVER(5, 7) },
	[128] = { "sk_cgroup_id", KVER(5, 7) },
	[129] = { "sk_ancestor_cgroup_id", KVER(5, 7) },
	[130] = { "ringbuf_output", KVER(5, 8) },
	[131] = { "ringbuf_reserve", KVER(5, 8) },
	[132] = { "ringbuf_submit", KVER(5, 8) },
	[133] = { "ringbuf_discard", KVER(5, 8) },
	[134] = { "ringbuf_query", KVER(5, 8) },
};

/* Map type -> first kernel: bcc docs/kernel-versions.md, "Tables (a.k.a. Maps)". */
static const struct since map_types[] = {
	[BPF_MAP_TYPE_HASH] = { "hash", KVER(3, 19) },
	[BPF_MAP_TYPE_ARRAY] = { "array", KVER(3, 19) },
	[BPF_MAP_TYPE_PROG_ARRAY] = { "prog array", KVER(4, 2) },
	[BPF_MAP_TYPE_PERF_EVENT_ARRAY] = { "perf event array", KVER(4, 3) },
	[BPF_MAP_TYPE_PERCPU_HASH] = { "per-CPU hash", KVER(4, 6) },
	[BPF_MAP_TYPE_PERCPU_ARRAY] = { "per-CPU array", KVER(4, 6) },
	[BPF_MAP_TYPE_STACK_TRACE] = { "stack trace", KVER(4, 6) },
	[BPF_MAP_TYPE_CGROUP_ARRAY] = { "cgroup array", KVER(4, 8) },
	[BPF_MAP_TYPE_LRU_HASH] = { "LRU hash", KVER(4, 10) },
	[BPF_MAP_TYPE_LRU_PERCPU_HASH] = { "per-CPU LRU hash", KVER(4, 10) },
	[BPF_MAP_TYPE_LPM_TRIE] = { "LPM trie", KVER(4, 11) },
	[BPF_MAP_TYPE_ARRAY_OF_MAPS] = { "array of maps", KVER(4, 12) },
	[BPF_MAP_TYPE_HASH_OF_MAPS] = { "hash of maps", KVER(4, 12) },
	[BPF_MAP_TYPE_DEVMAP] = { "devmap", KVER(4, 14) },
	[BPF_MAP_TYPE_SOCKMAP] = { "sockmap", KVER(4, 14) },
	[BPF_MAP_TYPE_CPUMAP] = { "cpumap", KVER(4, 15) },
	[BPF_MAP_TYPE_XSKMAP] = { "xskmap", KVER(4, 18) },
	[BPF_MAP_TYPE_SOCKHASH] = { "sockhash", KVER(4, 18) },
	[BPF_MAP_TYPE_CGROUP_STORAGE] = { "cgroup storage", KVER(4, 19) },
	[BPF_MAP_TYPE_REUSEPORT_SOCKARRAY] = { "reuseport sockarray", KVER(4, 19) },
	[BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE] = { "per-CPU cgroup storage", KVER(4, 20) },
	[BPF_MAP_TYPE_QUEUE] = { "queue", KVER(4, 20) },
	[BPF_MAP_TYPE_STACK] = { "stack", KVER(4, 20) },
	[BPF_MAP_TYPE_SK_STORAGE] = { "socket storage", KVER(5, 2) },
	[BPF_MAP_TYPE_DEVMAP_HASH] = { "devmap hash", KVER(5, 4) },
	[BPF_MAP_TYPE_STRUCT_OPS] = { "struct_ops", KVER(5, 6) },
	[BPF_MAP_TYPE_RINGBUF] = { "ring buffer", KVER(5, 8) },
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

const char *kfeature_name(enum kfeature f)
{
	return f < KF_COUNT ? features[f].name : "?";
}

unsigned kfeature_since(enum kfeature f)
{
	return f < KF_COUNT ? features[f].kver : 0;
}

static unsigned lookup(const struct since *t, size_t n, long i, const char **name)
{
	if (name)
		*name = i >= 0 && (size_t)i < n && t[i].name ? t[i].name : "unknown";
	return i >= 0 && (size_t)i < n && t[i].name ? t[i].kver : 0;
}

unsigned kfeatures_helper_since(int id, const char **name)
{
	return lookup(helpers, N_OF(helpers), id, name);
}

unsigned kfeatures_map_type_since(unsigned type, const char **name)
{
	return lookup(map_types, N_OF(map_types), (long)type, name);
}

int kfeatures_parse_version(const char *s, unsigned *kver, struct err *err)
{
	char *end;
	unsigned long major, minor;

	major = strtoul(s, &end, 10);
	if (end == s || *end != '.')
		goto bad;
	s = end + 1;
	minor = strtoul(s, &end, 10);
	if (end == s || (*end && *end != '.' && *end != '-') || major > 255 || minor > 255)
		goto bad;
	*kver = KVER(major, minor);
	if (*kver < KF_OLDEST_KERNEL)
		return err_set(err, -ERANGE, "kernel %lu.%lu is older than the oldest supported, "
			       "%u.%u", major, minor, KVER_MAJOR(KF_OLDEST_KERNEL),
			       KVER_MINOR(KF_OLDEST_KERNEL));
	return 0;
bad:
	return err_set(err, -EINVAL, "kernel version: expected MAJOR.MINOR (like 4.19), "
		       "found '%s'", s);
}

void kfeatures_for_version(unsigned kver, struct kfeatures *out)
{
	memset(out, 0, sizeof(*out));
	out->target = kver;
	for (size_t f = 0; f < KF_COUNT; f++)
		out->has[f] = features[f].kver <= kver;
}

void kfeatures_intersect(struct kfeatures *k, const struct kfeatures *target)
{
	for (size_t f = 0; f < KF_COUNT; f++)
		k->has[f] = k->has[f] && target->has[f];
	k->target = target->target;
}

/* An array map the programs may only read: the kernel support behind
 * .rodata (5.2). */
static bool probe_global_data(bool *denied)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_RDONLY_PROG);
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, sizeof(int), 8, 1, &o);

	if (fd < 0) {
		*denied = errno == EPERM || errno == EACCES;
		return false;
	}
	close(fd);
	return true;
}

/* A kprobe-type program calling bpf_probe_read_user(fp - 8, 8, NULL): it loads
 * only where the helper exists (5.5).  Asked without a verifier log (libbpf's
 * helper probe parses one the kernel writes, which memcheck cannot see). */
static bool probe_read_user_helper(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_1, .imm = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_2, .imm = 8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_probe_read_user },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns,
			       sizeof(insns) / sizeof(insns[0]), NULL);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* CAP_BPF is capability 39: the kernel knows it when cap_last_cap says so. */
static bool probe_cap_bpf(void)
{
	FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "r");
	int last = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &last) != 1)
		last = 0;
	fclose(f);
	return last >= 39;
}

void kfeatures_probe(struct kfeatures *out, int (*multi)(struct err *err))
{
	struct err e = { 0 };

	memset(out, 0, sizeof(*out));
	out->probed = true;
	out->has[KF_UPROBE_PMU] = access("/sys/bus/event_source/devices/uprobe/type", R_OK) == 0;
	out->has[KF_GLOBAL_DATA] = probe_global_data(&out->denied);
	out->has[KF_PROBE_READ_USER] = probe_read_user_helper();
	out->has[KF_RINGBUF] = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL) == 1;
	out->has[KF_CAP_BPF] = probe_cap_bpf();
	out->has[KF_UPROBE_MULTI] = multi && multi(&e) == 0;
	/* No probe of their own: implied by a newer feature that is there. */
	for (size_t f = 0; f < KF_COUNT; f++) {
		if (f == KF_BPF_CALLS || f == KF_BTF || f == KF_LARGE_PROGS ||
		    f == KF_BOUNDED_LOOPS)
			for (size_t g = 0; g < KF_COUNT; g++)
				if (out->has[g] && features[g].kver >= features[f].kver &&
				    g != KF_UPROBE_PMU && g != KF_CAP_BPF)
					out->has[f] = true;
	}
}

bool kfeatures_need_legacy(const struct kfeatures *k, enum kfeature *missing)
{
	static const enum kfeature needed[] = { KF_GLOBAL_DATA, KF_PROBE_READ_USER };

	for (size_t i = 0; i < N_OF(needed); i++) {
		if (!k->has[needed[i]]) {
			if (missing)
				*missing = needed[i];
			return true;
		}
	}
	return false;
}
