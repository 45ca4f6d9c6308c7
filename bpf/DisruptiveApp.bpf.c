// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* DisruptiveApp — upstream's disruptive-app signals (§3.4):
 *   bind_service_locked  ActiveServices.bindServiceLocked(IApplicationThread, IBinder,
 *       Intent, String, IServiceConnection, long flags, String, boolean, int, String,
 *       IApplicationThread, String callingPackage, int): only binds that carry
 *       BIND_ALLOW_BACKGROUND_ACTIVITY_STARTS, as the newest upstream filters
 *   set_component_enabled_setting  PackageManagerService$IPackageManagerImpl
 *       .setComponentEnabledSetting(ComponentName, int newState, int, int, String) */
#include "ups_bpf.h"

UPS_OUTPUT(BindServiceLocked_output_buf);
UPS_OUTPUT(ComponentEnabledSetting_output_buf);

#define INTENT_ACTION_OFF 8          /* Intent.mAction */
#define INTENT_COMPONENT_OFF 20      /* Intent.mComponent */
#define INTENT_PACKAGE_OFF 48        /* Intent.mPackage */
#define COMPONENT_NAME_CLASS_OFF 8   /* ComponentName.mClass */
#define COMPONENT_NAME_PACKAGE_OFF 12 /* ComponentName.mPackage */

#define BIND_ALLOW_BACKGROUND_ACTIVITY_STARTS 0x00100000

/* bindServiceLocked out-args slots: this@8, five references @12..@28,
 * long flags@32, String@40, boolean@44, int@48, String@52, ref@56,
 * String callingPackage@60. */
#define BIND_SLOT_FLAGS 32
#define BIND_SLOT_CALLING_PACKAGE 60

SEC("uprobe/bind_service_locked")
int bind_service_locked(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__s64 flags = (__s64)UPS_ARG_OR_STACK64(ctx, 7, BIND_SLOT_FLAGS);
	struct rec_bind_service_locked *rec;
	__u64 intent, component;

	if (!ups_pid_ok(id) || !(flags & BIND_ALLOW_BACKGROUND_ACTIVITY_STARTS))
		return 0;
	ups_count_hit(ctx);
	rec = UPS_RESERVE(ctx, BindServiceLocked_output_buf, struct rec_bind_service_locked);
	if (!rec)
		return 0;
	UPS_BEGIN(ctx, rec, id, UPS_REC_BIND_SERVICE_LOCKED);
	rec->p.bind_flags = flags;
	intent = UPS_REF(UPS_ARG(ctx, 4));
	if (intent) {
		ups_read_jstring_field(rec->p.intent_action, UPS_STR_LEN, intent,
				       INTENT_ACTION_OFF);
		ups_read_jstring_field(rec->p.intent_package, UPS_STR_LEN, intent,
				       INTENT_PACKAGE_OFF);
		component = ups_read_ref(intent, INTENT_COMPONENT_OFF);
		if (component) {
			ups_read_jstring_field(rec->p.intent_component_name_package, UPS_STR_LEN,
					       component, COMPONENT_NAME_PACKAGE_OFF);
			ups_read_jstring_field(rec->p.intent_component_name_class, UPS_STR_LEN,
					       component, COMPONENT_NAME_CLASS_OFF);
		}
	}
	ups_read_jstring(rec->p.calling_package, UPS_STR_LEN,
			 UPS_STACK_U32(ctx, BIND_SLOT_CALLING_PACKAGE));
	UPS_SUBMIT(ctx, BindServiceLocked_output_buf, rec);
	return 0;
}

/* setComponentEnabledSetting out-args slots: this@8, ComponentName@12,
 * newState@16, flags@20, userId@24, String callingPackage@28. */
#define CES_SLOT_CALLING_PACKAGE 28

SEC("uprobe/set_component_enabled_setting")
int set_component_enabled_setting(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rec_component_enabled_setting *rec;
	__u64 component;

	if (!ups_enter(ctx, id))
		return 0;
	rec = UPS_RESERVE(ctx, ComponentEnabledSetting_output_buf,
			  struct rec_component_enabled_setting);
	if (!rec)
		return 0;
	UPS_BEGIN(ctx, rec, id, UPS_REC_COMPONENT_ENABLED_SETTING);
	component = UPS_REF(UPS_ARG(ctx, 2));
	ups_read_jstring_field(rec->p.class_name, UPS_STR_LEN, component,
			       COMPONENT_NAME_CLASS_OFF);
	ups_read_jstring_field(rec->p.package_name, UPS_STR_LEN, component,
			       COMPONENT_NAME_PACKAGE_OFF);
	rec->p.new_state = UPS_INT(UPS_ARG(ctx, 3));
	ups_read_jstring(rec->p.calling_package_name, UPS_STR_LEN,
			 UPS_ARG_OR_STACK32(ctx, 6, CES_SLOT_CALLING_PACKAGE));
	UPS_SUBMIT(ctx, ComponentEnabledSetting_output_buf, rec);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
