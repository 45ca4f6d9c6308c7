/* config_testdata.h — the real configs in ../shared/testdata/configs and
 * the field-numbering era each one was written for (era B: probe-level
 * bpf_map, as the older upstream test configs still use). */
#ifndef UPROBESTATS_TEST_CONFIG_TESTDATA_H
#define UPROBESTATS_TEST_CONFIG_TESTDATA_H

#include "config/config.h"

struct testdata_config {
	const char *path;      /* relative to $UPROBESTATS_TESTDATA */
	enum config_era era;
	unsigned n_probes;
};

static const struct testdata_config testdata_configs[] = {
	{ "configs/CalyxOS/bitmap_snapshot.textproto", CONFIG_ERA_CURRENT, 2 },
	{ "configs/CalyxOS/test_bss_noteEvent.textproto", CONFIG_ERA_B, 1 },
	{ "configs/CalyxOS/test_cm_addCall.textproto", CONFIG_ERA_B, 1 },
	{ "configs/CalyxOS/test_updateDeviceIdleTempAllowlist.textproto", CONFIG_ERA_CURRENT, 1 },
	{ "configs/PixelOS-AOSP/ams_updateDeviceIdletempAllowlist.textproto",
	  CONFIG_ERA_CURRENT, 1 },
	{ "configs/PixelOS-AOSP/atms_startActivityAsUser.textproto", CONFIG_ERA_CURRENT, 1 },
	{ "configs/PixelOS-AOSP/binder.textproto", CONFIG_ERA_CURRENT, 1 },
	{ "configs/PixelOS-AOSP/bitmap_snapshot.textproto", CONFIG_ERA_CURRENT, 4 },
	{ "configs/PixelOS-AOSP/disruptive_app.textproto", CONFIG_ERA_CURRENT, 2 },
	{ "configs/PixelOS-AOSP/generic_instrumentation_primitive_args.textproto",
	  CONFIG_ERA_CURRENT, 1 },
	{ "configs/PixelOS-AOSP/generic_instrumentation_primitive_args_aot.textproto",
	  CONFIG_ERA_CURRENT, 1 },
	{ "configs/PixelOS-AOSP/resolve_process_custom.textproto", CONFIG_ERA_CURRENT, 1 },
	{ "configs/PixelOS-AOSP/resolve_process_framework.textproto", CONFIG_ERA_CURRENT, 1 },
	{ "configs/PixelOS-AOSP/runtime_permission.textproto", CONFIG_ERA_CURRENT, 2 },
	{ "configs/PixelOS-AOSP/test_ams_onServiceInfoChangedLocked.textproto", CONFIG_ERA_B, 1 },
	{ "configs/PixelOS-AOSP/test_bss_noteScreenState.textproto", CONFIG_ERA_CURRENT, 1 },
	{ "configs/PixelOS-AOSP/test_bss_setBatteryState_artApi.textproto", CONFIG_ERA_CURRENT, 1 },
	{ "configs/PixelOS-AOSP/test_bss_setBatteryState_oatdump.textproto",
	  CONFIG_ERA_CURRENT, 1 },
	{ "configs/PixelOS-AOSP/test_cm_addCall.textproto", CONFIG_ERA_B, 1 },
	{ "configs/PixelOS-AOSP/test_slog.textproto", CONFIG_ERA_B, 1 },
	{ "configs/PixelOS-AOSP/test_tsi_placeCall.textproto", CONFIG_ERA_B, 1 },
};

#define N_TESTDATA_CONFIGS (sizeof(testdata_configs) / sizeof(testdata_configs[0]))

#endif
