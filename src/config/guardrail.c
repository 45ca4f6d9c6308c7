/* guardrail.c — see guardrail.h.  The prefixes are upstream's, per version. */
#include "config/guardrail.h"

#include <stdio.h>
#include <string.h>

#include "config/signature.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define AM "com.android.server.am."
static const char *const prefixes_cpp_v1[] = {
	AM "CachedAppOptimizer", AM "OomAdjuster", AM "OomAdjusterModernImpl",
};
static const char *const prefixes_four[] = {
	AM "CachedAppOptimizer", AM "OomAdjuster", AM "OomAdjusterModernImpl",
	AM "ActivityManagerService$LocalService.updateDeviceIdleTempAllowlist",
};
static const char *const prefixes_newest[] = {
	AM "CachedAppOptimizer", AM "OomAdjuster", AM "OomAdjusterModernImpl",
	AM "ActivityManagerService$LocalService.updateDeviceIdleTempAllowlist",
	"com.android.server.pm.PackageManagerService$IPackageManagerImpl."
	"setComponentEnabledSetting",
	AM "ActiveServices.bindServiceLocked",
	"com.android.server.pm.permission.PermissionManagerService.grantRuntimePermission",
};
#undef AM

#define DISPATCH_GESTURE "prog_Accessibility_uprobe_dispatch_gesture"

struct list_rule {
	const char *name;
	const char *const *prefixes;
	size_t n;
	bool exact;     /* the name may equal the prefix */
	bool paren;     /* '(' may follow the prefix */
	const char *rule;
};

static const struct list_rule lists[] = {
	[GUARDRAIL_LIST_NEWEST] = { "newest", prefixes_newest, ARRAY_LEN(prefixes_newest), true,
				    true, "prefix followed by '.', '$' or '(' or the whole name" },
	[GUARDRAIL_LIST_CPP_V1] = { "cpp-v1", prefixes_cpp_v1, ARRAY_LEN(prefixes_cpp_v1), false,
				    false, "prefix followed by '.' or '$'" },
	[GUARDRAIL_LIST_CPP_V2] = { "cpp-v2", prefixes_four, ARRAY_LEN(prefixes_four), true,
				    false, "prefix followed by '.' or '$' or the whole name" },
	[GUARDRAIL_LIST_RUST] = { "rust", prefixes_four, ARRAY_LEN(prefixes_four), true, true,
				  "prefix followed by '.', '$' or '(' or the whole name" },
};

static const struct list_rule *rule_of(enum guardrail_list l)
{
	return (size_t)l < ARRAY_LEN(lists) ? &lists[l] : &lists[GUARDRAIL_LIST_NEWEST];
}

bool guardrail_active(const struct guardrail_opts *o)
{
	if (o->mode == GUARDRAIL_OFF)
		return false;
	if (o->mode == GUARDRAIL_USER)
		return true;
	return o->on_android && (!o->build_type || !strcmp(o->build_type, "user"));
}

bool guardrail_allows(enum guardrail_list l, const char *name, size_t len)
{
	const struct list_rule *r = rule_of(l);

	for (size_t i = 0; i < r->n; i++) {
		size_t pl = strlen(r->prefixes[i]);
		if (len < pl || memcmp(name, r->prefixes[i], pl) != 0)
			continue;
		if (len == pl) {
			if (r->exact)
				return true;
			continue;
		}
		if (name[pl] == '.' || name[pl] == '$' || (r->paren && name[pl] == '('))
			return true;
	}
	return false;
}

static const char *why_on(const struct guardrail_opts *o)
{
	if (o->mode == GUARDRAIL_USER)
		return "guardrail forced on";
	return o->build_type ? "ro.build.type=user" : "build type unknown";
}

static int refuse(const struct uprobestats_config *cfg, struct config_problems *out,
		  const struct guardrail_opts *o, size_t ti, size_t pi,
		  const struct src_loc *loc, const char *what, const char *name, size_t len)
{
	const struct list_rule *r = rule_of(o->list);

	return config_problem_add(cfg, out, loc, CP_GUARDRAIL, CS_ERROR, ti, pi,
				  "guardrail (%s): %s %.*s is not under a class prefix the %s "
				  "allowlist permits on user builds (rule: %s)", why_on(o), what,
				  (int)len, name, r->name, r->rule);
}

/* Check one probe: the ART-API name and the signature name, each when given. */
static int check_probe(const struct uprobestats_config *cfg, const struct guardrail_opts *o,
		       size_t ti, size_t pi, struct config_problems *out)
{
	const struct probe_config *p = &cfg->tasks[ti].probes[pi];
	struct method_sig sig;
	bool sig_ok = p->method_signature && sig_parse(p->method_signature, &sig, NULL) == 0;
	bool art = p->fully_qualified_class_name && p->method_name;
	char full[1024];
	int refused = 0;

	if (o->list == GUARDRAIL_LIST_NEWEST && p->bpf_name &&
	    !strcmp(p->bpf_name, DISPATCH_GESTURE))
		return 0;
	if (art) {
		int n = snprintf(full, sizeof(full), "%s.%s", p->fully_qualified_class_name,
				 p->method_name);
		size_t len = n < 0 ? 0 : (size_t)n < sizeof(full) ? (size_t)n : sizeof(full) - 1;
		const struct src_loc *loc = p->fully_qualified_class_name_loc.kind ?
						    &p->fully_qualified_class_name_loc : &p->loc;
		if (!guardrail_allows(o->list, full, len)) {
			if (refuse(cfg, out, o, ti, pi, loc, "method", full, len))
				return -ENOMEM;
			refused++;
		}
	}
	if (sig_ok && (sig.native || !guardrail_allows(o->list, sig.name.p, sig.name.len))) {
		const struct src_loc *loc = p->method_signature_loc.kind ?
						    &p->method_signature_loc : &p->loc;
		if (refuse(cfg, out, o, ti, pi, loc, sig.native ? "native symbol" : "method",
			   sig.name.p, sig.name.len))
			return -ENOMEM;
		refused++;
	}
	if (!refused && !art && !sig_ok) {
		/* Nothing to check against the allowlist means nothing is allowed. */
		if (config_problem_add(cfg, out, &p->loc, CP_GUARDRAIL, CS_ERROR, ti, pi,
				       "guardrail (%s): the probe names no method, so no "
				       "allowlist entry can permit it", why_on(o)))
			return -ENOMEM;
		refused++;
	}
	return refused;
}

int config_guardrail_check(const struct uprobestats_config *cfg,
			   const struct guardrail_opts *o, struct config_problems *out)
{
	int total = 0;

	if (!guardrail_active(o))
		return 0;
	for (size_t ti = 0; ti < cfg->n_tasks; ti++)
		for (size_t pi = 0; pi < cfg->tasks[ti].n_probes; pi++) {
			int rc = check_probe(cfg, o, ti, pi, out);
			if (rc < 0)
				return rc;
			total += rc;
		}
	return total;
}

int guardrail_mode_parse(const char *s, enum guardrail_mode *out)
{
	static const char *const names[] = { "auto", "off", "user" };

	for (size_t i = 0; i < ARRAY_LEN(names); i++)
		if (!strcmp(s, names[i])) {
			*out = (enum guardrail_mode)i;
			return 0;
		}
	return -EINVAL;
}

int guardrail_list_parse(const char *s, enum guardrail_list *out)
{
	for (size_t i = 0; i < ARRAY_LEN(lists); i++)
		if (!strcmp(s, lists[i].name)) {
			*out = (enum guardrail_list)i;
			return 0;
		}
	return -EINVAL;
}

const char *guardrail_list_name(enum guardrail_list l)
{
	return rule_of(l)->name;
}
