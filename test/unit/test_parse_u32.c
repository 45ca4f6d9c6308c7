#include "ut.h"

#include <errno.h>
#include <stdint.h>

#include "common/parse_u32.h"

UT_TEST(parse_u32_takes_decimal_and_hex_in_range)
{
	uint32_t v = 0;
	UT_EQ_INT(parse_u32("42", 0, 100, &v), 0);
	UT_EQ_U64(v, 42);
	UT_EQ_INT(parse_u32("0x10", 0, 100, &v), 0);
	UT_EQ_U64(v, 16);
	UT_EQ_INT(parse_u32("0X1f", 0, 100, &v), 0);
	UT_EQ_U64(v, 31);
	UT_EQ_INT(parse_u32("010", 0, 100, &v), 0);   /* decimal, never octal */
	UT_EQ_U64(v, 10);
	UT_EQ_INT(parse_u32("4294967295", 0, UINT32_MAX, &v), 0);
	UT_EQ_U64(v, UINT32_MAX);
	UT_EQ_INT(parse_u32("0", 0, 0, &v), 0);
	UT_EQ_U64(v, 0);
}

UT_TEST(parse_u32_refuses_everything_else)
{
	const char *bad[] = { "", "-1", "+1", " 1", "1 ", "1x", "0x", "x1", "1.5", "4294967296",
			      "99999999999999999999", "0xfffffffff", "0x-1", "1e3" };
	uint32_t v = 7;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		UT_EQ_INT(parse_u32(bad[i], 0, UINT32_MAX, &v), -EINVAL);
	UT_EQ_INT(parse_u32(NULL, 0, 1, &v), -EINVAL);
	UT_EQ_INT(parse_u32("0", 1, 10, &v), -EINVAL);
	UT_EQ_INT(parse_u32("11", 1, 10, &v), -EINVAL);
	UT_EQ_U64(v, 7);
}

UT_TEST(parse_u32_arg_names_option_range_and_text)
{
	struct err e = { 0 };
	uint32_t v = 0;

	UT_EQ_INT(parse_u32_arg("5", 1, 10, "--flush-ms", "milliseconds", &v, &e), 0);
	UT_EQ_U64(v, 5);
	UT_EQ_INT(parse_u32_arg("0", 1, 10000, "--flush-ms", "milliseconds", &v, &e), -EINVAL);
	UT_EQ_STR(e.msg, "--flush-ms takes milliseconds from 1 to 10000, not '0'");
	UT_EQ_INT(parse_u32_arg("lots", 1, 64, "--stack", "a number of frames", &v, &e),
		  -EINVAL);
	UT_EQ_STR(e.msg, "--stack takes a number of frames from 1 to 64, not 'lots'");
	UT_EQ_U64(v, 5);
}
