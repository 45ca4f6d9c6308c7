// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Accessibility — upstream's a11y permission signals (§3.6):
 *   grant_runtime_permission  PermissionManagerService.grantRuntimePermission(
 *       String packageName, String permName, String, int)
 *   dispatch_gesture          Binder.execTransactInternal(int code, Parcel, Parcel,
 *       int, int callingUid), for the IAccessibilityServiceConnection interface only */
#include "ups_bpf.h"

UPS_OUTPUT(output_buf);

#define BINDER_DESCRIPTOR_OFF 8      /* Binder.mDescriptor */
#define TRANSACT_SLOT_CALLING_UID 28 /* this@8, code@12, data@16, reply@20, flags@24 */

SEC("uprobe/grant_runtime_permission")
int grant_runtime_permission(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rec_accessibility_event *rec;

	if (!ups_enter(ctx, id))
		return 0;
	rec = UPS_RESERVE(ctx, output_buf, struct rec_accessibility_event);
	if (!rec)
		return 0;
	UPS_BEGIN(ctx, rec, id, UPS_REC_ACCESSIBILITY_EVENT);
	rec->p.variant = A11Y_VARIANT_PERMISSION_GRANT;
	rec->p.timestamp_ns = rec->env.ktime_ns;
	ups_read_jstring(rec->p.package_name, UPS_STR_LEN, UPS_REF(UPS_ARG(ctx, 2)));
	ups_read_jstring(rec->p.permission_name, UPS_STR_LEN, UPS_REF(UPS_ARG(ctx, 3)));
	UPS_SUBMIT(ctx, output_buf, rec);
	return 0;
}

/* "android.accessibilityservice.IAccessibilityServiceConnection": 60 chars,
 * compared as little-endian 8-byte words (the last one zero-padded).  Kept as
 * immediates: .rodata holds only the per-probe config. */
#define A11Y_DESCRIPTOR_LEN 60
#define A11Y_DESCRIPTOR_WORDS 8

static __always_inline __u64 a11y_word(int i)
{
	switch (i) {
	case 0: return 0x2e64696f72646e61ULL; /* "android." */
	case 1: return 0x6269737365636361ULL; /* "accessib" */
	case 2: return 0x7265737974696c69ULL; /* "ilityser" */
	case 3: return 0x6341492e65636976ULL; /* "vice.IAc" */
	case 4: return 0x6c69626973736563ULL; /* "cessibil" */
	case 5: return 0x6976726553797469ULL; /* "ityServi" */
	case 6: return 0x63656e6e6f436563ULL; /* "ceConnec" */
	default: return 0x000000006e6f6974ULL; /* "tion" */
	}
}

/* True when the binder's descriptor is exactly the a11y connection interface.
 * Every binder transaction of system_server passes here: the length and the
 * compression flag are checked before any characters are read. */
static __always_inline int is_a11y_connection(__u64 binder)
{
	__u64 str = ups_read_ref(binder, BINDER_DESCRIPTOR_OFF);
	__u64 words[A11Y_DESCRIPTOR_WORDS] = {};
	__u32 count;

	if (!str)
		return 0;
	count = ups_read_u32(str + UPS_JSTR_COUNT_OFF);
	if (count != (A11Y_DESCRIPTOR_LEN << 1))   /* compressed, 60 chars */
		return 0;
	if (ups_probe_read_user(words, A11Y_DESCRIPTOR_LEN,
				(const void *)(str + UPS_JSTR_DATA_OFF)) < 0)
		return 0;
#pragma unroll
	for (int i = 0; i < A11Y_DESCRIPTOR_WORDS; i++)
		if (words[i] != a11y_word(i))
			return 0;
	return 1;
}

SEC("uprobe/dispatch_gesture")
int dispatch_gesture(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rec_accessibility_event *rec;

	if (!ups_pid_ok(id) || !is_a11y_connection(UPS_REF(UPS_ARG(ctx, 1))))
		return 0;
	ups_count_hit(ctx);
	rec = UPS_RESERVE(ctx, output_buf, struct rec_accessibility_event);
	if (!rec)
		return 0;
	UPS_BEGIN(ctx, rec, id, UPS_REC_ACCESSIBILITY_EVENT);
	rec->p.variant = A11Y_VARIANT_SERVICE_CONNECTION;
	rec->p.timestamp_ns = rec->env.ktime_ns;
	rec->p.uid = (__s32)UPS_ARG_OR_STACK32(ctx, 6, TRANSACT_SLOT_CALLING_UID);
	rec->p.code = UPS_INT(UPS_ARG(ctx, 2));
	UPS_SUBMIT(ctx, output_buf, rec);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
