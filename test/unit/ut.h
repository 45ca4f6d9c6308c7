/* ut.h — the unit-test harness: tests register themselves, ut_main.c runs them.
 *
 *   UT_TEST(parses_empty_config) { UT_ASSERT(x == 1); UT_EQ_INT(a, b); ... }
 *
 * A failed assertion records the failure and returns from the test.  Tests find
 * shared test data through ut_testdata("oat/android-11/...") which resolves
 * against $UPROBESTATS_TESTDATA (the Makefile sets it to ../shared/testdata). */
#ifndef UPROBESTATS_UT_H
#define UPROBESTATS_UT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef void (*ut_fn)(void);
void ut_register(const char *name, const char *file, ut_fn fn);
void ut_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Returns a static buffer holding $UPROBESTATS_TESTDATA/rel. */
const char *ut_testdata(const char *rel);
/* Returns a path inside a per-run scratch directory (created on first use). */
const char *ut_tmpfile(const char *name);
/* The running test's code cache (code/codecache.h), made on first use and freed
 * when the test returns: what a command's cli_code_cache_new hands the layers
 * below, which make none of their own. */
struct code_cache;
struct code_cache *ut_code_cache(void);
extern int ut_current_failed;

#define UT_TEST(name)                                                          \
	static void name(void);                                                \
	__attribute__((constructor)) static void ut_reg_##name(void)          \
	{                                                                      \
		ut_register(#name, __FILE__, name);                            \
	}                                                                      \
	static void name(void)

#define UT_ASSERT(cond)                                                        \
	do {                                                                   \
		if (!(cond)) {                                                 \
			ut_fail(__FILE__, __LINE__, "assertion failed: %s", #cond); \
			return;                                                \
		}                                                              \
	} while (0)

#define UT_EQ_INT(a, b)                                                        \
	do {                                                                   \
		long long ut_a_ = (long long)(a), ut_b_ = (long long)(b);      \
		if (ut_a_ != ut_b_) {                                          \
			ut_fail(__FILE__, __LINE__, "%s == %s: %lld != %lld",  \
				#a, #b, ut_a_, ut_b_);                         \
			return;                                                \
		}                                                              \
	} while (0)

#define UT_EQ_U64(a, b)                                                        \
	do {                                                                   \
		unsigned long long ut_a_ = (unsigned long long)(a),            \
				   ut_b_ = (unsigned long long)(b);            \
		if (ut_a_ != ut_b_) {                                          \
			ut_fail(__FILE__, __LINE__, "%s == %s: 0x%llx != 0x%llx", \
				#a, #b, ut_a_, ut_b_);                         \
			return;                                                \
		}                                                              \
	} while (0)

#define UT_EQ_STR(a, b)                                                        \
	do {                                                                   \
		const char *ut_a_ = (a), *ut_b_ = (b);                         \
		if (!ut_a_ || !ut_b_ || strcmp(ut_a_, ut_b_) != 0) {           \
			ut_fail(__FILE__, __LINE__, "%s == %s: \"%s\" != \"%s\"", \
				#a, #b, ut_a_ ? ut_a_ : "(null)",              \
				ut_b_ ? ut_b_ : "(null)");                     \
			return;                                                \
		}                                                              \
	} while (0)

/* Substring check, handy for error messages. */
#define UT_CONTAINS(hay, needle)                                               \
	do {                                                                   \
		const char *ut_h_ = (hay), *ut_n_ = (needle);                  \
		if (!ut_h_ || !strstr(ut_h_, ut_n_)) {                         \
			ut_fail(__FILE__, __LINE__, "\"%s\" does not contain \"%s\"", \
				ut_h_ ? ut_h_ : "(null)", ut_n_);              \
			return;                                                \
		}                                                              \
	} while (0)

#endif
