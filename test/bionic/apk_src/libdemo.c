/* libdemo — the app library of test_bionic_apk.py, stored in an APK and loaded by
 * bionic's linker straight from it.  demo_fn(i) returns 3 * i + 8 + DEMO_BIAS
 * (DEMO_BIAS tells two same-named builds in two APKs apart). */
#ifndef DEMO_BIAS
#define DEMO_BIAS 0
#endif

__attribute__((noinline)) int demo_leaf(int x)
{
	__asm__ volatile("");
	return x * 3 + 1;
}

__attribute__((noinline)) int demo_fn(int x)
{
	return demo_leaf(x) + 7 + DEMO_BIAS;
}

/* apk_agg(k, v, tag) returns 100 * k + v: the APK test of --args and the in-kernel
 * aggregations (test_bionic_apk_cmds.py, through apk_app). */
__attribute__((noinline)) long apk_agg(long k, long v, const char *tag)
{
	__asm__ volatile("" : : "r"(tag) : "memory");
	return 100 * k + v;
}
