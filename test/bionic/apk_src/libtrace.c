/* libtrace — an app library exporting libcutils' trace-marker entry points
 * (atrace_*_body) itself, as an app that links libcutils statically into its own
 * library ships them inside its APK (test_bionic_apk_cmds.py): `sections
 * --libcutils APK!/…/libtrace.so` probes them as it probes libcutils.so.  The bodies
 * only keep their arguments alive: the tool reads them at the entry. */
typedef int int32_t;
typedef long int64_t;

static volatile long sink;

void atrace_begin_body(const char *name)
{
	sink += (long)name;
}

void atrace_end_body(void)
{
	sink++;
}

void atrace_async_begin_body(const char *name, int32_t cookie)
{
	sink += (long)name + cookie;
}

void atrace_async_end_body(const char *name, int32_t cookie)
{
	sink += (long)name - cookie;
}

void atrace_int_body(const char *name, int32_t value)
{
	sink += (long)name + value;
}

void atrace_int64_body(const char *name, int64_t value)
{
	sink += (long)name + value;
}
