/* fuzz_oatdump — both oatdump output parsers (classic text and JSON lines)
 * and the signature lookup over arbitrary text.
 * Seeds: a cut-down real oatdump text output (Compiler Explorer, v239), an
 * Android 10/11-style text sample and JSON lines with log noise. */
#include <stdint.h>

#include "resolve/oatdump.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct oatdump_output o;
	struct err e;

	if (!oatdump_parse_text((const char *)data, size, &o, &e)) {
		if (o.n)
			oatdump_find(&o, o.v[0].signature);
		oatdump_find(&o, "void a.B.c(int, long)");
		oatdump_output_free(&o);
	}
	if (!oatdump_parse_json((const char *)data, size, &o, &e)) {
		oatdump_find(&o, "void a.B.<init>()");
		oatdump_output_free(&o);
	}
	return 0;
}
