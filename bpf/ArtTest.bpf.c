// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* ArtTest — upstream's ART offsets-API test programs (§3.7, debuggable
 * builds upstream):
 *   update_device_idle_temp_allowlist  AOT code: ProcessManagement's newest
 *       record with method_identifier = the probed pc
 *   start_activity_as_user             JIT stub of ActivityTaskManagerService
 *       .startActivityAsUser(IApplicationThread, String callingPackage, String,
 *       Intent, String, IBinder, String, int requestCode, int startFlags,
 *       ProfilerInfo, Bundle, int userId, boolean validateIncomingUser).  In the
 *       stub x0 holds the stub frame's size and [sp] the method identifier; the
 *       managed out-args area starts x0 bytes above the stub's sp. */
#include "ups_bpf.h"

UPS_OUTPUT(output_buf_aot);
UPS_OUTPUT(output_buf_jit);

/* updateDeviceIdleTempAllowlist slots, as in ProcessManagement. */
#define IDLE_SLOT_TYPE 32
#define IDLE_SLOT_REASON_CODE 36
#define IDLE_SLOT_REASON 40
#define IDLE_SLOT_CALLING_UID 44

SEC("uprobe/update_device_idle_temp_allowlist")
int update_device_idle_temp_allowlist(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rec_update_device_idle *rec;

	if (!ups_enter(ctx, id))
		return 0;
	rec = UPS_RESERVE(ctx, output_buf_aot, struct rec_update_device_idle);
	if (!rec)
		return 0;
	UPS_BEGIN(ctx, rec, id, UPS_REC_ART_TEST_AOT);
	rec->p.method_identifier = UPS_PC(ctx);
	rec->p.changing_uid = UPS_INT(UPS_ARG(ctx, 3));
	rec->p.adding = (__u32)UPS_ARG(ctx, 4) != 0;
	rec->p.duration_ms = (__s64)UPS_ARG(ctx, 5);
	rec->p.type = (__s32)UPS_ARG_OR_STACK32(ctx, 6, IDLE_SLOT_TYPE);
	rec->p.reason_code = (__s32)UPS_ARG_OR_STACK32(ctx, 7, IDLE_SLOT_REASON_CODE);
	ups_read_jstring(rec->p.reason, UPS_LONG_STR_LEN, UPS_STACK_U32(ctx, IDLE_SLOT_REASON));
	rec->p.calling_uid = (__s32)UPS_STACK_U32(ctx, IDLE_SLOT_CALLING_UID);
	UPS_SUBMIT(ctx, output_buf_aot, rec);
	return 0;
}

/* startActivityAsUser slots in the managed frame. */
#define SAU_SLOT_REQUEST_CODE 40
#define SAU_SLOT_START_FLAGS 44
#define SAU_SLOT_USER_ID 56
#define SAU_SLOT_VALIDATE_INCOMING_USER 60

SEC("uprobe/start_activity_as_user")
int start_activity_as_user(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 x0 = UPS_ARG(ctx, 0);
	__u64 frame = UPS_STACK_BASE(ctx) + x0;
	struct rec_start_activity_as_user *rec;

	if (!ups_enter(ctx, id))
		return 0;
	rec = UPS_RESERVE(ctx, output_buf_jit, struct rec_start_activity_as_user);
	if (!rec)
		return 0;
	UPS_BEGIN(ctx, rec, id, UPS_REC_START_ACTIVITY_AS_USER);
	rec->p.method_identifier = ups_read_u64(UPS_STACK_BASE(ctx));
	rec->p.x0 = ups_read_u64(x0);
	ups_read_jstring(rec->p.calling_package, UPS_STR_LEN, UPS_REF(UPS_ARG(ctx, 3)));
	rec->p.request_code = (__s32)ups_read_u32(frame + SAU_SLOT_REQUEST_CODE);
	rec->p.start_flags = (__s32)ups_read_u32(frame + SAU_SLOT_START_FLAGS);
	rec->p.user_id = (__s32)ups_read_u32(frame + SAU_SLOT_USER_ID);
	rec->p.validate_incoming_user =
		(__s32)ups_read_u32(frame + SAU_SLOT_VALIDATE_INCOMING_USER);
	UPS_SUBMIT(ctx, output_buf_jit, rec);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
