/* cmd_objects.c — `uprobestats check-objects [--kernel VERSION] [FILE.o ...]`:
 * the static check of BPF objects against a kernel version (probe/objcheck.h).
 * Without files it checks the legacy objects this binary embeds against the
 * oldest supported kernel: `make test` runs it on every shipped binary. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/mapfile.h"
#include "catalog/catalog.h"
#include "probe/objcheck.h"
#include "sys/kfeatures.h"

static void print_problem(void *ctx, const char *object, const char *problem)
{
	(void)ctx;
	printf("%s: %s\n", object, problem);
}

static int check_embedded(unsigned kver, size_t *objects, size_t *problems)
{
	for (size_t i = 0; i < catalog_object_count(); i++) {
		const struct catalog_object *o = catalog_object_at(i);
		struct err e = { 0 };
		size_t size;
		void *elf;
		int rc = catalog_object_legacy_elf(o, &elf, &size, &e);

		if (rc == 0) {
			rc = objcheck_object(o->name, elf, size, kver, print_problem, NULL, &e);
			free(elf);
		}

		if (rc < 0) {
			p_err("%s", e.msg);
			return EXIT_RUNTIME;
		}
		(*objects)++;
		*problems += (size_t)rc;
	}
	return EXIT_OK;
}

static int check_files(char **files, size_t n, unsigned kver, size_t *objects, size_t *problems)
{
	for (size_t i = 0; i < n; i++) {
		struct mapped_file mf;
		struct err e = { 0 };
		int rc = mapfile_open(files[i], 64u << 20, MAPFILE_REGULAR, &mf, &e);

		if (rc == 0) {
			rc = objcheck_object(files[i], mf.data, mf.size, kver, print_problem, NULL,
					     &e);
			mapfile_close(&mf);
		}
		if (rc < 0) {
			/* a file that is no BPF object: 4, as for any file read as a kind */
			p_err("%s", e.msg);
			return rc == -ENOMEM ? EXIT_RUNTIME : EXIT_RESOLVE;
		}
		(*objects)++;
		*problems += (size_t)rc;
	}
	return EXIT_OK;
}

static int take_kernel(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	if (kfeatures_parse_version(arg, ctx, e) < 0) {
		err_prefix(e, "--kernel");
		return -EINVAL;
	}
	return 0;
}

static const struct opt_row check_objects_row_v[] = {
	{ "kernel", 0, required_argument, take_kernel, 0,
	  OPT_DOC(TRACE, "V", "check against kernel V (default the oldest supported, 4.14)") },
};

const struct opt_rows check_objects_rows = OPT_ROWS(check_objects_row_v);

int cmd_check_objects(int argc, char **argv)
{
	unsigned kver = KF_OLDEST_KERNEL;
	size_t objects = 0, problems = 0;
	const struct opt_use uses[] = { { &check_objects_rows, &kver }, { &cli_help_rows, NULL } };
	int rc = cli_parse_rows(argc, argv, uses, sizeof(uses) / sizeof(uses[0]), CLI_SHORTS_OBJECTS);

	if (rc != EXIT_OK)
		return rc < 0 ? EXIT_OK : rc;
	rc = optind < argc ? check_files(argv + optind, (size_t)(argc - optind), kver, &objects,
					 &problems)
			   : check_embedded(kver, &objects, &problems);
	if (rc != EXIT_OK)
		return rc;
	printf("check-objects: %zu %s object(s), %zu problem(s) for kernel %u.%u\n", objects,
	       optind < argc ? "given" : "embedded legacy", problems, KVER_MAJOR(kver),
	       KVER_MINOR(kver));
	return problems ? EXIT_RUNTIME : EXIT_OK;
}
