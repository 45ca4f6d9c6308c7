/* oat_testlib.h — helpers shared by the oat/dex unit tests: the list of real
 * test files, a tiny JSON-lines field reader for oat-expected/, and file
 * copies to corrupt.  Header-only (static functions) so that every test file
 * stays self-contained. */
#ifndef UPROBESTATS_TEST_OAT_TESTLIB_H
#define UPROBESTATS_TEST_OAT_TESTLIB_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mapfile.h"

#define TD_A10 "oat/android-10/arm64/google_coral_QD1A.190821.011.C4/"
#define TD_A10R "oat/android-10/arm64/realme_RMX2051CN_qssi_QKQ1.191117.002/"
#define TD_A11 "oat/android-11/arm64/xiaomi_sweet_vendor_MIUI12.5.8_RKFMIXM/"
#define TD_A11X "oat/android-11/x86_64/aosp_x86_64_RP1A.201105.002_eng/"
#define TD_A11X86 "oat/android-11/x86/aosp_x86_64_RP1A.201105.002_eng/"
#define TD_A13 "oat/android-13/arm64/realme_ice_ossi_TP1A.220905.001/"
#define TD_A13ARM "oat/android-13/arm/realme_ice_ossi_TP1A.220905.001/"
#define TD_A14 "oat/android-14/arm64/sony_pdx245_sm8650_main-branch/"
#define TD_A15 "oat/android-15/arm64/sony_pdx245_XQ-EC72_69.1.A.2.78/"

/* Every oat/odex in the shared test data (relative to it). */
static const char *const TD_ALL_OATS[] __attribute__((unused)) = {
	"oat/android-10/arm/google_coral_QD1A.190821.011.C4/"
	"com.google.android.camera.experimental2019.odex",
	"oat/android-10/arm/realme_RMX2051CN_qssi_QKQ1.191117.002/"
	"vendor.qti.hardware.data.iwlan-V1.0-java.odex",
	TD_A10 "CACertService.odex", TD_A10 "CneApp.odex", TD_A10 "IWlanService.odex",
	TD_A10 "TimeService.odex", TD_A10 "TrustZoneAccessService.odex",
	TD_A10 "com.google.android.camera.experimental2019.odex",
	TD_A10R "RfToolkit.odex", TD_A10R "vendor.qti.hardware.data.iwlan-V1.0-java.odex",
	TD_A11 "CACertService.odex", TD_A11 "CneApp.odex", TD_A11 "IWlanService.odex",
	TD_A11 "TimeService.odex", TD_A11 "com.qualcomm.qti.improvetouch.service.odex",
	TD_A11X86 "com.android.location.provider.odex",
	TD_A11X "boot-ext.oat", TD_A11X "boot-framework-atb-backward-compatibility.oat",
	TD_A11X "boot-ims-common.oat", TD_A11X "boot-telephony-common.oat",
	TD_A11X "boot-voip-common.oat", TD_A11X "com.android.location.provider.odex",
	TD_A13ARM "apex@com.android.permission@javalib@service-permission.jar@classes.odex",
	TD_A13ARM "com.android.location.provider.odex", TD_A13ARM "javax.obex.odex",
	TD_A13ARM "org.apache.http.legacy.odex",
	TD_A13 "QtiTelephony.odex",
	TD_A13 "apex@com.android.permission@javalib@service-permission.jar@classes.odex",
	TD_A13 "boot-ext.oat", TD_A13 "boot-okhttp.oat",
	TD_A13 "com.android.location.provider.odex",
	TD_A13 "ims.odex", TD_A13 "javax.obex.odex", TD_A13 "org.apache.http.legacy.odex",
	TD_A14 "CneApp.odex", TD_A14 "EuiccMemoryReset.odex",
	TD_A14 "HotwordEnrollmentOKGoogleHEXAGON_WIDEBAND.odex", TD_A14 "uimgbaservice.odex",
	TD_A15 "apex@com.android.media@javalib@service-media-s.jar@classes.odex",
	TD_A15 "boot-ims-common.oat", TD_A15 "com.android.media.remotedisplay.odex",
	TD_A15 "com.qti.location.sdk.odex", TD_A15 "ims.odex", TD_A15 "qcrilmsgtunnel.odex",
	TD_A15 "qti-telephony-common.odex",
};
#define TD_N_OATS (sizeof(TD_ALL_OATS) / sizeof(TD_ALL_OATS[0]))

/* The files oat-expected/ describes (compiled methods present). */
static const char *const TD_COMPILED[] __attribute__((unused)) = {
	TD_A10 "CACertService.odex", TD_A10 "TrustZoneAccessService.odex",
	TD_A10R "RfToolkit.odex",
	TD_A11 "CACertService.odex", TD_A11 "CneApp.odex",
	TD_A11 "com.qualcomm.qti.improvetouch.service.odex",
	TD_A11X86 "com.android.location.provider.odex",
	TD_A11X "com.android.location.provider.odex", TD_A11X "boot-ext.oat",
	TD_A11X "boot-voip-common.oat",
	TD_A13 "com.android.location.provider.odex", TD_A13 "boot-okhttp.oat",
	TD_A13 "org.apache.http.legacy.odex", TD_A13 "boot-ext.oat",
	TD_A13 "apex@com.android.permission@javalib@service-permission.jar@classes.odex",
	TD_A13ARM "com.android.location.provider.odex", TD_A13ARM "org.apache.http.legacy.odex",
	TD_A13ARM "apex@com.android.permission@javalib@service-permission.jar@classes.odex",
	TD_A15 "apex@com.android.media@javalib@service-media-s.jar@classes.odex",
};
#define TD_N_COMPILED (sizeof(TD_COMPILED) / sizeof(TD_COMPILED[0]))

/* Finds "key": in a JSON object line and returns the text after the colon. */
static const char *jfind(const char *line, const char *key)
{
	char pat[96];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = strstr(line, pat);
	return p ? p + strlen(pat) : NULL;
}

/* A number field; false when absent or null. */
static bool __attribute__((unused)) jnum(const char *line, const char *key, long long *v)
{
	const char *p = jfind(line, key);
	if (!p || strncmp(p, "null", 4) == 0)
		return false;
	*v = strtoll(p, NULL, 10);
	return true;
}

/* A string field (no escapes besides \" and \\ expected); false when null. */
static bool __attribute__((unused)) jstr(const char *line, const char *key, char *buf,
					  size_t size)
{
	const char *p = jfind(line, key);
	size_t n = 0;

	if (!p || *p != '"')
		return false;
	for (p++; *p && *p != '"' && n + 1 < size; p++) {
		if (*p == '\\' && p[1])
			p++;
		buf[n++] = *p;
	}
	buf[n] = 0;
	return true;
}

/* A private, writable copy of a test file. */
static uint8_t *__attribute__((unused)) td_copy(const char *path, size_t *len)
{
	struct mapped_file mf;
	struct err e = { 0 };
	uint8_t *buf;

	if (mapfile_open(path, 0, 0, &mf, &e))
		return NULL;
	buf = malloc(mf.size);
	if (buf)
		memcpy(buf, mf.data, mf.size);
	*len = mf.size;
	mapfile_close(&mf);
	return buf;
}

#endif
