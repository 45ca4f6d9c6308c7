// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Binder — upstream's binder transaction program (§3.5) on
 * android.os.Binder.execTransactInternal(int code, Parcel, Parcel, int flags,
 * int callingUid): a record for each transaction whose interface descriptor
 * is a key of `interfaces` and whose code is in that key's list.  User space
 * fills `interfaces` from the config's binder_transaction_filters before any
 * probe is attached. */
#include "ups_bpf.h"

UPS_OUTPUT(output_buf);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 5000);
	__type(key, struct binder_interface_key);
	__type(value, struct binder_codes);
} interfaces SEC(".maps");

/* The key is built in map memory: the string copy writes at a variable
 * offset, which older verifiers refuse on the stack.  A legacy object builds
 * it on the stack instead: its string copy writes only at fixed offsets, and
 * a map value as a map helper's key needs 4.18. */
#ifndef UPS_LEGACY
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct binder_interface_key);
} binder_key_scratch SEC(".maps");
#endif

#define BINDER_DESCRIPTOR_OFF 8   /* Binder.mDescriptor */
#define TRANSACT_SLOT_CALLING_UID 28 /* this@8, code@12, data@16, reply@20, flags@24 */

static __always_inline int code_listed(const struct binder_codes *v, __u64 code)
{
#pragma unroll
	for (int i = 0; i < UPS_BINDER_MAX_CODES; i++) {
		if (v->codes[i] == 0)
			return 0;
		if (v->codes[i] == code)
			return 1;
	}
	return 0;
}

SEC("uprobe/exec_transact_internal")
int exec_transact_internal(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 code = (__u32)UPS_ARG(ctx, 2);
	struct binder_interface_key *key;
	struct rec_binder_transaction *rec;
	struct binder_codes *codes;
#ifdef UPS_LEGACY
	struct binder_interface_key stack_key;
#else
	__u32 zero = 0;
#endif

	if (!ups_pid_ok(id))
		return 0;
#ifdef UPS_LEGACY
	key = &stack_key;
#else
	key = bpf_map_lookup_elem(&binder_key_scratch, &zero);
	if (!key)
		return 0;
#endif
	__builtin_memset(key, 0, sizeof(*key));
	ups_read_jstring_field(key->interface_descriptor, UPS_STR_LEN,
			       UPS_REF(UPS_ARG(ctx, 1)), BINDER_DESCRIPTOR_OFF);
	codes = bpf_map_lookup_elem(&interfaces, key);
	if (!codes || !code_listed(codes, code))
		return 0;
	ups_count_hit(ctx);
	rec = UPS_RESERVE(ctx, output_buf, struct rec_binder_transaction);
	if (!rec)
		return 0;
	UPS_BEGIN(ctx, rec, id, UPS_REC_BINDER_TRANSACTION);
	__builtin_memcpy(rec->p.interface_descriptor, key->interface_descriptor, UPS_STR_LEN);
	rec->p.code = code;
	rec->p.calling_uid = (__s32)UPS_ARG_OR_STACK32(ctx, 6, TRANSACT_SLOT_CALLING_UID);
	rec->p.timestamp_ns = rec->env.ktime_ns;
	UPS_SUBMIT(ctx, output_buf, rec);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
