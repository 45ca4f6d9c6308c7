/* ut_main.c — runs every registered unit test (optionally only those whose
 * name contains argv[1]) and ends with the line "N passed, N failed". */
#include "ut.h"

#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "code/codecache.h"

struct ut_case {
	const char *name;
	const char *file;
	ut_fn fn;
};

static struct ut_case *cases;
static size_t n_cases, cap_cases;
static struct code_cache *test_code;
int ut_current_failed;

void ut_register(const char *name, const char *file, ut_fn fn)
{
	if (n_cases == cap_cases) {
		cap_cases = cap_cases ? cap_cases * 2 : 64;
		cases = realloc(cases, cap_cases * sizeof(*cases));
		if (!cases)
			abort();
	}
	cases[n_cases++] = (struct ut_case){ name, file, fn };
}

void ut_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "    %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	ut_current_failed = 1;
}

const char *ut_testdata(const char *rel)
{
	static char buf[4096];
	const char *root = getenv("UPROBESTATS_TESTDATA");
	snprintf(buf, sizeof(buf), "%s/%s", root ? root : "../shared/testdata", rel);
	return buf;
}

const char *ut_tmpfile(const char *name)
{
	static char dir[256];
	static char buf[4096];
	if (!dir[0]) {
		/* mkdtemp's template ends in six 'X's. */
		snprintf(dir, sizeof(dir), "/tmp/uprobestats-ut.");
		memset(dir + strlen(dir), 'X', 6);
		dir[strlen("/tmp/uprobestats-ut.") + 6] = '\0';
		if (!mkdtemp(dir))
			abort();
	}
	snprintf(buf, sizeof(buf), "%s/%s", dir, name);
	return buf;
}

struct code_cache *ut_code_cache(void)
{
	if (!test_code && !(test_code = code_cache_new(NULL)))
		abort();
	return test_code;
}

int main(int argc, char **argv)
{
	const char *filter = argc > 1 ? argv[1] : NULL;
	size_t passed = 0, failed = 0;

	for (size_t i = 0; i < n_cases; i++) {
		if (filter && !strstr(cases[i].name, filter))
			continue;
		ut_current_failed = 0;
		cases[i].fn();
		code_cache_free(test_code);
		test_code = NULL;
		if (ut_current_failed) {
			failed++;
			fprintf(stderr, "FAIL %s (%s)\n", cases[i].name, cases[i].file);
		} else {
			passed++;
			if (getenv("UT_VERBOSE"))
				fprintf(stderr, "ok   %s\n", cases[i].name);
		}
	}
	free(cases);
	printf("unit: %zu passed, %zu failed\n", passed, failed);
	return failed ? 1 : 0;
}
