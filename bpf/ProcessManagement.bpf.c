// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* ProcessManagement — upstream's system_server programs (§3.2):
 *   set_uid_temp_allowlist_state     OomAdjuster.setUidTempAllowlistStateLSP(int, boolean)
 *   update_device_idle_temp_allowlist ActivityManagerService$LocalService
 *       .updateDeviceIdleTempAllowlist(int[], int, boolean, long, int, int, String, int),
 *       newest record (method_identifier first); _legacy writes the older record
 *   set_pid / make_active / on_process_active  ProcessRecord/ProcessProfileRecord
 *       pid, uid and process name at upstream's hard-coded field offsets. */
#include "ups_bpf.h"

UPS_OUTPUT(output_buf);
UPS_OUTPUT(update_device_idle_temp_allowlist_records);
UPS_OUTPUT(process_change_output_buf);

SEC("uprobe/set_uid_temp_allowlist_state")
int set_uid_temp_allowlist_state(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rec_set_uid_temp_allowlist_state *rec;

	if (!ups_enter(ctx, id))
		return 0;
	rec = UPS_RESERVE(ctx, output_buf, struct rec_set_uid_temp_allowlist_state);
	if (!rec)
		return 0;
	UPS_BEGIN(ctx, rec, id, UPS_REC_SET_UID_TEMP_ALLOWLIST_STATE);
	rec->p.uid = (__u32)UPS_ARG(ctx, 2);
	rec->p.on_allowlist = (__u32)UPS_ARG(ctx, 3) != 0;
	UPS_SUBMIT(ctx, output_buf, rec);
	return 0;
}

/* Out-args slots of updateDeviceIdleTempAllowlist: this@8, int[]@12, int@16,
 * boolean@20, long@24, int type@32, int reasonCode@36, String reason@40,
 * int callingUid@44. */
#define IDLE_SLOT_TYPE 32
#define IDLE_SLOT_REASON_CODE 36
#define IDLE_SLOT_REASON 40
#define IDLE_SLOT_CALLING_UID 44

/* The fields both record layouts share, read the same way. */
#define FILL_IDLE_FIELDS(ctx, p)                                                    \
	do {                                                                        \
		(p)->changing_uid = UPS_INT(UPS_ARG(ctx, 3));                       \
		(p)->adding = (__u32)UPS_ARG(ctx, 4) != 0;                           \
		(p)->duration_ms = (__s64)UPS_ARG(ctx, 5);                           \
		(p)->type = (__s32)UPS_ARG_OR_STACK32(ctx, 6, IDLE_SLOT_TYPE);       \
		(p)->reason_code = (__s32)UPS_ARG_OR_STACK32(ctx, 7, IDLE_SLOT_REASON_CODE); \
		ups_read_jstring((p)->reason, sizeof((p)->reason),                    \
				 UPS_STACK_U32(ctx, IDLE_SLOT_REASON));               \
		(p)->calling_uid = (__s32)UPS_STACK_U32(ctx, IDLE_SLOT_CALLING_UID); \
	} while (0)

SEC("uprobe/update_device_idle_temp_allowlist")
int update_device_idle_temp_allowlist(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rec_update_device_idle *rec;

	if (!ups_enter(ctx, id))
		return 0;
	rec = UPS_RESERVE(ctx, update_device_idle_temp_allowlist_records, struct rec_update_device_idle);
	if (!rec)
		return 0;
	UPS_BEGIN(ctx, rec, id, UPS_REC_UPDATE_DEVICE_IDLE);
	rec->p.method_identifier = UPS_PC(ctx);
	FILL_IDLE_FIELDS(ctx, &rec->p);
	UPS_SUBMIT(ctx, update_device_idle_temp_allowlist_records, rec);
	return 0;
}

SEC("uprobe/update_device_idle_temp_allowlist_legacy")
int update_device_idle_temp_allowlist_legacy(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rec_update_device_idle_legacy *rec;

	if (!ups_enter(ctx, id))
		return 0;
	rec = UPS_RESERVE(ctx, update_device_idle_temp_allowlist_records,
			  struct rec_update_device_idle_legacy);
	if (!rec)
		return 0;
	UPS_BEGIN(ctx, rec, id, UPS_REC_UPDATE_DEVICE_IDLE_LEGACY);
	FILL_IDLE_FIELDS(ctx, &rec->p);
	UPS_SUBMIT(ctx, update_device_idle_temp_allowlist_records, rec);
	return 0;
}

/* Hard-coded field offsets from upstream; they depend on the Android build. */
#define PR_NAME_OFF 0xa0             /* ProcessRecord.processName (String) */
#define SET_PID_UID_OFF 0xf4         /* set_pid: uid */
#define MAKE_ACTIVE_PID_OFF 0xe4     /* make_active: mPid */
#define MAKE_ACTIVE_UID_OFF 0xf0     /* make_active: uid */
#define PPR_APP_OFF 0x8              /* ProcessProfileRecord.mApp */
#define PPR_APP_PID_OFF 524          /* on_process_active: mApp pid */
#define PPR_APP_UID_OFF 532          /* on_process_active: mApp uid */
#define PPR_APP_NAME_OFF 52          /* on_process_active: mApp processName */

static __always_inline struct rec_process_change *process_change_begin(void *ctx, __u64 id)
{
	struct rec_process_change *rec;

	if (!ups_enter(ctx, id))
		return 0;
	rec = UPS_RESERVE(ctx, process_change_output_buf, struct rec_process_change);
	if (rec)
		UPS_BEGIN(ctx, rec, id, UPS_REC_PROCESS_CHANGE);
	return rec;
}

/* ProcessRecord.setPid(int): this = x1, pid = x2. */
SEC("uprobe/set_pid")
int set_pid(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rec_process_change *rec = process_change_begin(ctx, id);
	__u64 pr = UPS_REF(UPS_ARG(ctx, 1));

	if (!rec)
		return 0;
	rec->p.pid = UPS_INT(UPS_ARG(ctx, 2));
	rec->p.uid = (__s32)ups_read_u32(pr + SET_PID_UID_OFF);
	ups_read_jstring_field(rec->p.process_name, sizeof(rec->p.process_name), pr, PR_NAME_OFF);
	UPS_SUBMIT(ctx, process_change_output_buf, rec);
	return 0;
}

/* ProcessRecord.makeActive(...): this = x1. */
SEC("uprobe/make_active")
int make_active(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rec_process_change *rec = process_change_begin(ctx, id);
	__u64 pr = UPS_REF(UPS_ARG(ctx, 1));

	if (!rec)
		return 0;
	rec->p.pid = (__s32)ups_read_u32(pr + MAKE_ACTIVE_PID_OFF);
	rec->p.uid = (__s32)ups_read_u32(pr + MAKE_ACTIVE_UID_OFF);
	ups_read_jstring_field(rec->p.process_name, sizeof(rec->p.process_name), pr, PR_NAME_OFF);
	UPS_SUBMIT(ctx, process_change_output_buf, rec);
	return 0;
}

/* ProcessProfileRecord.onProcessActive(...): this = x1, its ProcessRecord at +8. */
SEC("uprobe/on_process_active")
int on_process_active(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rec_process_change *rec = process_change_begin(ctx, id);
	__u64 app;

	if (!rec)
		return 0;
	app = ups_read_ref(UPS_REF(UPS_ARG(ctx, 1)), PPR_APP_OFF);
	if (app) {
		rec->p.pid = (__s32)ups_read_u32(app + PPR_APP_PID_OFF);
		rec->p.uid = (__s32)ups_read_u32(app + PPR_APP_UID_OFF);
		ups_read_jstring_field(rec->p.process_name, sizeof(rec->p.process_name), app,
				       PPR_APP_NAME_OFF);
	}
	UPS_SUBMIT(ctx, process_change_output_buf, rec);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
