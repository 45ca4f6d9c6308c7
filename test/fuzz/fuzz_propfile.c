/* fuzz_propfile — both /dev/__properties__ parsers over arbitrary bytes: the
 * input is read as a property area and as a property_info file, and every
 * name shape the lookups branch on is tried.
 * Seeds: test/fixtures/props/mkprops.py writes them (areas with short, long
 * and dirty values; a property_info with prefix, exact and default rules). */
#include <stddef.h>
#include <stdint.h>

#include "sys/propfile.h"

static const char *const names[] = {
	"ro.build.type", "ro.build.version.sdk", "ro.product.cpu.abilist", "ro.debuggable",
	"ro.boot.hardware", "ro.bootloader", "debug.updating", "sys.boot_completed",
	"ro.gone.thing", "a", "a.b.c.d.e.f.g.h", "ro..x", ".", "ro.",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char value[4096];
	char tiny[8];
	const char *ctx;
	struct err e;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		prop_area_get(data, size, "fuzz", names[i], value, sizeof(value), &e);
		prop_area_get(data, size, "fuzz", names[i], tiny, sizeof(tiny), &e);
		prop_info_context(data, size, "fuzz", names[i], &ctx, &e);
	}
	return 0;
}
