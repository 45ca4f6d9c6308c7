/* test_catalog_names.c — every program and map that a public upstream config names
 * is known to the catalog.  The names were collected from the UprobeStats config
 * textprotos of the PixelOS-AOSP, LMODroid, CalyxOS, omnirom and LineageOS trees
 * (52 files, 2026-11-25), plus the programs and maps upstream's sources define that
 * no config there happens to name.  Config files themselves are not in the repo;
 * names are facts. */
#include "ut.h"

#include "catalog/catalog.h"

/* bpf_name values of those configs. */
static const char *const CONFIG_PROGRAMS[] = {
	"prog_Accessibility_uprobe_dispatch_gesture",
	"prog_Accessibility_uprobe_grant_runtime_permission",
	"prog_ArtTest_uprobe_start_activity_as_user",
	"prog_ArtTest_uprobe_update_device_idle_temp_allowlist",
	"prog_BinderExecTransactInternal_uprobe_activity_task_manager_startActivity",
	"prog_Binder_uprobe_exec_transact_internal",
	"prog_BitmapAllocation_uprobe_activity_perform_start",
	"prog_BitmapAllocation_uprobe_apply_free_function",
	"prog_BitmapAllocation_uprobe_bitmap_constructor_heap",
	"prog_BitmapAllocation_uprobe_bitmap_creation",
	"prog_BitmapAllocation_uprobe_bitmap_creation_for_snapshot",
	"prog_BitmapAllocation_uprobe_create_scaled_bitmap",
	"prog_DisruptiveApp_uprobe_bind_service_locked",
	"prog_DisruptiveApp_uprobe_set_component_enabled_setting",
	"prog_GenericInstrumentation_uprobe_call",
	"prog_GenericInstrumentation_uprobe_call_detail",
	"prog_GenericInstrumentation_uprobe_call_timestamp",
	"prog_GenericInstrumentation_uprobe_call_timestamp_1",
	"prog_MalwareSignal_uprobe_add_bound_client_uid",
	"prog_MalwareSignal_uprobe_set_component_enabled_setting",
	"prog_ProcessManagement_uprobe_set_uid_temp_allowlist_state",
	"prog_ProcessManagement_uprobe_update_device_idle_temp_allowlist",
	/* defined upstream, named by no collected config */
	"prog_GenericInstrumentation_uprobe_call_timestamp_2",
	"prog_GenericInstrumentation_uprobe_call_timestamp_5",
	"prog_ProcessManagement_uprobe_set_pid",
	"prog_ProcessManagement_uprobe_make_active",
	"prog_ProcessManagement_uprobe_on_process_active",
};

/* bpf_maps / bpf_map values of those configs, and the other upstream maps. */
static const char *const CONFIG_MAPS[] = {
	"map_ArtTest_output_buf_aot",
	"map_ArtTest_output_buf_jit",
	"map_BinderExecTransactInternal_output_buf",
	"map_Binder_output_buf",
	"map_BitmapAllocation_output",
	"map_BitmapAllocation_output_buf",
	"map_GenericInstrumentation_call_detail_buf",
	"map_GenericInstrumentation_call_timestamp_buf",
	"map_GenericInstrumentation_output_buf",
	"map_MalwareSignal_output_buf",
	"map_ProcessManagement_output_buf",
	"map_ProcessManagement_update_device_idle_temp_allowlist_records",
	/* defined upstream, named by no collected config */
	"map_ProcessManagement_process_change_output_buf",
	"map_DisruptiveApp_BindServiceLocked_output_buf",
	"map_DisruptiveApp_ComponentEnabledSetting_output_buf",
	"map_Accessibility_output_buf",
};

UT_TEST(catalog_knows_every_upstream_program)
{
	for (size_t i = 0; i < sizeof(CONFIG_PROGRAMS) / sizeof(CONFIG_PROGRAMS[0]); i++) {
		const struct catalog_object *o;
		const struct catalog_program *p;
		if (catalog_find_program(CONFIG_PROGRAMS[i], &o, &p) != 0)
			ut_fail(__FILE__, __LINE__, "unknown program %s", CONFIG_PROGRAMS[i]);
		else
			UT_ASSERT(catalog_has_program(CONFIG_PROGRAMS[i], NULL));
	}
	/* and the lookup is not just a prefix match */
	UT_ASSERT(!catalog_has_program("prog_MalwareSignal_uprobe_nope", NULL));
	UT_ASSERT(!catalog_has_program("prog_BinderExecTransactInternal_uprobe_exec_transact_"
				       "internal", NULL));
	UT_ASSERT(!catalog_has_program("prog_BinderX_uprobe_exec_transact_internal", NULL));
}

UT_TEST(catalog_knows_every_upstream_map)
{
	for (size_t i = 0; i < sizeof(CONFIG_MAPS) / sizeof(CONFIG_MAPS[0]); i++)
		if (!catalog_has_map(CONFIG_MAPS[i], NULL))
			ut_fail(__FILE__, __LINE__, "unknown map %s", CONFIG_MAPS[i]);
	UT_ASSERT(!catalog_has_map("map_MalwareSignal_output", NULL));
	UT_ASSERT(!catalog_has_map("map_BinderExecTransactInternal_call_detail_buf", NULL));
}
