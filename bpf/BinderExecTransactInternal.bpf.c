// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* BinderExecTransactInternal — CalyxOS's program before upstream's Binder (§3.5):
 *   activity_task_manager_startActivity  android.os.Binder.execTransactInternal(int code,
 *       Parcel, Parcel, int flags, int callingUid)
 * hard-wired, as upstream, to code 1 of interface "android.app.IActivityTaskManager"
 * (IActivityTaskManager.startActivity): a 4-byte record with the calling uid, which
 * upstream's user space wrote as atom 915 (test_uprobestats_atom_reported). */
#include "ups_bpf.h"

UPS_OUTPUT(output_buf);

#define BINDER_DESCRIPTOR_OFF 8   /* Binder.mDescriptor */
#define TRANSACT_SLOT_CALLING_UID 28 /* this@8, code@12, data@16, reply@20, flags@24 */
#define TARGET_CODE 1             /* IActivityTaskManager.startActivity */
#define DESCRIPTOR_LEN 64         /* upstream's MAX_STRING_LENGTH here */

struct descriptor_buf {
	char s[DESCRIPTOR_LEN];
};

/* The descriptor is read into map memory: the string copy writes at a variable
 * offset, which older verifiers refuse on the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct descriptor_buf);
} descriptor_scratch SEC(".maps");

/* "android.app.IActivityTaskManager" (32 bytes, then NUL) as four little-endian
 * words, compared without a string in .rodata. */
#define W8(a, b, c, d, e, f, g, h)                                                       \
	((__u64)(a) | (__u64)(b) << 8 | (__u64)(c) << 16 | (__u64)(d) << 24 |             \
	 (__u64)(e) << 32 | (__u64)(f) << 40 | (__u64)(g) << 48 | (__u64)(h) << 56)

static __always_inline int is_activity_task_manager(const struct descriptor_buf *d)
{
	const __u64 *w = (const __u64 *)d->s;

	return w[0] == W8('a', 'n', 'd', 'r', 'o', 'i', 'd', '.') &&
	       w[1] == W8('a', 'p', 'p', '.', 'I', 'A', 'c', 't') &&
	       w[2] == W8('i', 'v', 'i', 't', 'y', 'T', 'a', 's') &&
	       w[3] == W8('k', 'M', 'a', 'n', 'a', 'g', 'e', 'r') && d->s[32] == 0;
}

SEC("uprobe/activity_task_manager_startActivity")
int activity_task_manager_startActivity(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rec_binder_start_activity *rec;
	struct descriptor_buf *d;
	__u32 zero = 0;

	if (!ups_pid_ok(id) || (__u32)UPS_ARG(ctx, 2) != TARGET_CODE)
		return 0;
	d = bpf_map_lookup_elem(&descriptor_scratch, &zero);
	if (!d)
		return 0;
	__builtin_memset(d, 0, sizeof(*d));
	ups_read_jstring_field(d->s, DESCRIPTOR_LEN, UPS_REF(UPS_ARG(ctx, 1)),
			       BINDER_DESCRIPTOR_OFF);
	if (!is_activity_task_manager(d))
		return 0;
	ups_count_hit(ctx);
	rec = UPS_RESERVE(ctx, output_buf, struct rec_binder_start_activity);
	if (!rec)
		return 0;
	UPS_BEGIN(ctx, rec, id, UPS_REC_BINDER_START_ACTIVITY);
	rec->p.calling_uid = (__s32)UPS_ARG_OR_STACK32(ctx, 6, TRANSACT_SLOT_CALLING_UID);
	UPS_SUBMIT(ctx, output_buf, rec);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
