/* vmtest — the e2e scenarios of test/e2e/ as one static program, for machines without
 * python: the arm64 VM of `make test-arm64` (test/vm/init runs it).
 *
 *   vmtest --name NAME --bin UPROBESTATS --targets DIR [--art ODEX:INIT_OFF:GET_OFF]
 *          [--tmp DIR] [FILTER]
 *
 * Runs every scenario whose name contains FILTER, each in a fresh directory under
 * --tmp (default /tmp), prints "ok NAME (T s)" or "FAIL NAME: why" for each ("skip
 * NAME: why" for one this machine cannot run, counted in neither) and ends with
 * "NAME: N passed, N failed".  Exits 1 if any failed.  Needs root (uprobes). */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vmtest.h"

struct options {
	const char *name, *tmp, *filter;
	const char *legacy_pass;  /* --legacy-pass VERSION: every case again with it */
	struct vmenv env;
};

static void usage(void)
{
	fprintf(stderr, "usage: vmtest --name NAME --bin UPROBESTATS --targets DIR "
			"[--art ODEX:INIT_OFF:GET_OFF] "
			"[--art-exits IS_ENABLED_OFF:SET_ALLOWED_OFF] [--art-lone OFF] [--tmp DIR] "
			"[--legacy-pass VERSION] [FILTER]\n");
	exit(2);
}

static int parse_art(const char *spec, struct vmenv *env)
{
	static char odex[VM_PATH_MAX];
	const char *c2 = strrchr(spec, ':');
	const char *c1 = c2 ? memrchr(spec, ':', (size_t)(c2 - spec)) : NULL;
	char *end;

	if (!c1 || (size_t)(c1 - spec) >= sizeof(odex))
		return -1;
	memcpy(odex, spec, (size_t)(c1 - spec));
	odex[c1 - spec] = '\0';
	env->art_odex = odex;
	env->art_init_off = strtoul(c1 + 1, &end, 0);
	if (end != c2)
		return -1;
	env->art_get_off = strtoul(c2 + 1, &end, 0);
	return *end == '\0' && env->art_init_off && env->art_get_off ? 0 : -1;
}

static int parse_art_exits(const char *spec, struct vmenv *env)
{
	char *end;

	env->art_is_enabled_off = strtoul(spec, &end, 0);
	if (*end != ':')
		return -1;
	env->art_set_allowed_off = strtoul(end + 1, &end, 0);
	return *end == '\0' && env->art_is_enabled_off && env->art_set_allowed_off ? 0 : -1;
}

static void parse_options(int argc, char **argv, struct options *o)
{
	memset(o, 0, sizeof(*o));
	o->tmp = "/tmp";
	o->filter = "";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (a[0] != '-') {
			o->filter = a;
			continue;
		}
		if (!v)
			usage();
		if (!strcmp(a, "--name"))
			o->name = v;
		else if (!strcmp(a, "--bin"))
			o->env.bin = v;
		else if (!strcmp(a, "--targets"))
			o->env.targets = v;
		else if (!strcmp(a, "--tmp"))
			o->tmp = v;
		else if (!strcmp(a, "--legacy-pass"))
			o->legacy_pass = v;
		else if (!strcmp(a, "--art") && parse_art(v, &o->env) < 0)
			fprintf(stderr, "vmtest: --art %s: expected ODEX:INIT_OFF:GET_OFF\n", v),
			    exit(2);
		else if (!strcmp(a, "--art-exits") && parse_art_exits(v, &o->env) < 0)
			fprintf(stderr, "vmtest: --art-exits %s: expected IS_ENABLED_OFF:"
					"SET_ALLOWED_OFF\n", v), exit(2);
		else if (!strcmp(a, "--art-lone"))
			o->env.art_lone_off = strtoul(v, NULL, 0);
		else if (strcmp(a, "--art") && strcmp(a, "--art-exits"))
			usage();
		i++;
	}
	if (!o->name || !o->env.bin || !o->env.targets)
		usage();
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Runs one case in its own directory; the directory is removed when it passes.
 * 1 passed, 0 skipped, -1 failed. */
static int run_case(const struct options *o, const struct vmcase *c, const char *label)
{
	struct tc t = { .env = &o->env, .name = c->name };
	long long t0 = now_ms();

	/* mkdtemp's template ends in six 'X's. */
	snprintf(t.dir, sizeof(t.dir), "%s/vmtest.", o->tmp);
	size_t end = strlen(t.dir);
	if (end + 6 < sizeof(t.dir)) {
		memset(t.dir + end, 'X', 6);
		t.dir[end + 6] = '\0';
	}
	if (!mkdtemp(t.dir)) {
		printf("FAIL %s%s: cannot create a directory under %s\n", label, c->name, o->tmp);
		return -1;
	}
	if (!strncmp(c->name, "art.", 4) && !o->env.art_odex)
		tc_fail(&t, "no --art ODEX:INIT_OFF:GET_OFF given");
	else
		c->run(&t);
	double secs = (double)(now_ms() - t0) / 1000.0;
	if (t.failed) {
		printf("FAIL %s%s: %s (%.1fs; files kept in %s)\n", label, c->name, t.msg, secs,
		       t.dir);
	} else if (t.skipped) {
		printf("skip %s%s: %s (%.1fs)\n", label, c->name, t.msg, secs);
		nftw(t.dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	} else {
		printf("ok   %s%s (%.1fs)\n", label, c->name, secs);
		nftw(t.dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	}
	fflush(stdout);
	return t.failed ? -1 : t.skipped ? 0 : 1;
}

int main(int argc, char **argv)
{
	static const struct vmcase *const groups[] = { vm_native_cases, vm_kernel_cases,
						       vm_programs_cases, vm_art_cases,
						       vm_exits_cases, vm_stack_cases,
						       vm_jit_cases, vm_trace_cases,
						       vm_bionic_cases, vm_traffic_cases,
						       vm_apk_cases, vm_suspend_cases };
	struct options o;
	int passed = 0, failed = 0;

	parse_options(argc, argv, &o);
	o.env.argv0 = argv[0];
	o.env.argv0_size = strlen(argv[0]) + 1;
	o.env.argv0_orig = strdup(argv[0]);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Round 1 as the kernel offers; round 2 (--legacy-pass) as an old kernel would. */
	for (int round = 0; round < (o.legacy_pass ? 2 : 1); round++) {
		char label[32] = "";
		if (round) {
			o.env.target_kernel = o.legacy_pass;
			snprintf(label, sizeof(label), "%s:", o.legacy_pass);
		}
		for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
			for (const struct vmcase *c = groups[g]; c->name; c++) {
				if (!strstr(c->name, o.filter))
					continue;
				int r = run_case(&o, c, label);
				passed += r > 0;
				failed += r < 0;
			}
		}
	}
	printf("%s: %d passed, %d failed\n", o.name, passed, failed);
	return failed ? 1 : 0;
}
