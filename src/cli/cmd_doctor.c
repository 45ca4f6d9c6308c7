/* cmd_doctor.c — `uprobestats doctor [--json]`: what this device offers and
 * which path the tool will take for each (src/sys/doctor.c). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "config/guardrail.h"
#include "probe/attach.h"
#include "sys/doctor.h"
#include "sys/privilege.h"

struct doctor_cli {
	struct doctor_opts o;
	enum guardrail_mode guardrail;
};

static int take_json(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	((struct doctor_cli *)ctx)->o.json = true;
	return 0;
}

/* --format json|text, as the commands that write events take it. */
static int take_format(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	if (strcmp(arg, "json") && strcmp(arg, "text"))
		return err_set(e, -EINVAL, "--format takes text or json, not '%s'", arg);
	((struct doctor_cli *)ctx)->o.json = !strcmp(arg, "json");
	return 0;
}

static int take_guardrail(void *ctx, const struct opt_row *row, const char *arg, struct err *e)
{
	if (guardrail_mode_parse(arg, &((struct doctor_cli *)ctx)->guardrail) < 0)
		return err_set(e, -EINVAL, "--guardrail takes auto, off or user, not '%s'", arg);
	return 0;
}

static const struct opt_row doctor_row_v[] = {
	{ "json", 'j', no_argument, take_json, 0,
	  OPT_DOC(OUTPUT, "", "the report as one JSON object") },
	{ "format", 0, required_argument, take_format, 0,
	  OPT_DOC(OUTPUT, "text|json", "the report as text (the default) or JSON (as --json)") },
	{ "guardrail", 0, required_argument, take_guardrail, 0,
	  OPT_DOC(ANDROID, "auto|off|user", "the allowlist the report assumes (auto: the device's)") },
};

const struct opt_rows doctor_rows = OPT_ROWS(doctor_row_v);

int cmd_doctor(int argc, char **argv)
{
	struct doctor_cli c = { .o = { .tracefs_fallback = true,
				       .probe_uprobe_multi = uprobe_multi_detect },
				.guardrail = GUARDRAIL_AUTO };
	struct doctor_opts o;
	enum guardrail_mode gm;
	const struct opt_use uses[] = { { &doctor_rows, &c }, { &cli_help_rows, NULL } };
	int rc = cli_parse_rows(argc, argv, uses, sizeof(uses) / sizeof(uses[0]), CLI_SHORTS_DOCTOR);

	if (rc != EXIT_OK)
		return rc < 0 ? EXIT_OK : rc;
	o = c.o;
	gm = c.guardrail;
	if (optind != argc) {
		p_err("doctor takes no arguments");
		return EXIT_USAGE;
	}
	o.guardrail = gm == GUARDRAIL_OFF ? DOCTOR_GUARDRAIL_OFF
		      : gm == GUARDRAIL_USER ? DOCTOR_GUARDRAIL_ON : DOCTOR_GUARDRAIL_AUTO;
	rc = doctor_run(stdout, &o);
	fflush(stdout);
	if (rc == 0)
		return EXIT_OK;
	/* Not ready: a privilege problem, or something the kernel lacks. */
	struct priv_facts f;
	struct priv_report r;
	priv_gather(NULL, &f);
	priv_evaluate(&f, NULL, &r);
	return r.verdict == PRIV_DENIED ? EXIT_PRIVILEGE : EXIT_RUNTIME;
}
