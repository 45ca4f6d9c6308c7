/* cmd_doctor.c — `uprobestats doctor [--json]`: what this device offers and
 * which path the tool will take for each (src/sys/doctor.c). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "config/guardrail.h"
#include "probe/attach.h"
#include "sys/doctor.h"
#include "sys/privilege.h"

int cmd_doctor(int argc, char **argv)
{
	static const struct option long_opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "guardrail", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct doctor_opts o = { .tracefs_fallback = true,
				 .probe_uprobe_multi = uprobe_multi_detect };
	enum guardrail_mode gm = GUARDRAIL_AUTO;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "jh", long_opts, NULL)) != -1) {
		switch (c) {
		case 'j': o.json = true; break;
		case 'g':
			if (guardrail_mode_parse(optarg, &gm) < 0) {
				p_err("--guardrail takes auto, off or user, not '%s'", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h': cmd_help(0, NULL); return EXIT_OK;
		default: return EXIT_USAGE;
		}
	}
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
