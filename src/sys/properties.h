/* properties.h — Android system properties, read the way bionic does:
 * property_info names the area file (SELinux context) that holds a property,
 * the area holds its value.  Older layouts are handled too: per-context areas
 * without property_info (Android 7: every area is searched) and the single
 * area file of Android 6 and earlier.
 *
 * When the areas cannot be read (SELinux, an unexpected layout, a corrupt
 * file) `getprop NAME` is run instead.  Off Android (no property store and no
 * getprop) every lookup answers -ENOENT with source PROPS_SOURCE_NONE: that is
 * a normal answer, not an error. */
#ifndef UPROBESTATS_SYS_PROPERTIES_H
#define UPROBESTATS_SYS_PROPERTIES_H

#include <stdbool.h>
#include <stddef.h>

#include "common/err.h"
#include "sys/sysroot.h"

/* Long enough for any value bionic stores (long values are for ro.* only). */
#define PROPS_VALUE_MAX 4096

enum props_source {
	PROPS_SOURCE_NONE = 0,   /* no property store: not Android */
	PROPS_SOURCE_AREA,       /* read from the property areas */
	PROPS_SOURCE_GETPROP,    /* answered by running getprop */
};

/* Value of name into buf.  Returns 0; -ENOENT when the property is not set or
 * there is no property store (*src tells which, err says why); -ERANGE when
 * buf is too small; another negative code with err naming the file and the
 * problem when the store is there but neither it nor getprop could answer. */
int props_get(const struct sys_paths *paths, const char *name, char *buf, size_t size,
	      enum props_source *src, struct err *err);

const char *props_source_name(enum props_source s);

/* The handful of properties the tool's decisions depend on. */
struct android_info {
	bool on_android;             /* a property store exists */
	enum props_source source;    /* where the answers came from */
	char build_type[64];         /* ro.build.type: "user", "userdebug", "eng"; "" if unknown */
	char sdk[16];                /* ro.build.version.sdk, "" if unknown */
	int sdk_int;                 /* 0 if unknown */
	char release[32];            /* ro.build.version.release */
	char abi[32];                /* ro.product.cpu.abi */
	int debuggable;              /* ro.debuggable: 1, 0, or -1 if unknown */
	char problem[ERR_MSG_MAX];   /* first read error, "" if none */
};

/* Reads them all; never fails: what cannot be read stays unknown and the first
 * real error (not a plain "not set") is kept in info->problem. */
void android_info_read(const struct sys_paths *paths, struct android_info *info);

#endif
