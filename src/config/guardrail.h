/* guardrail.h — the user-build allowlist (reference §6).
 *
 * On Android user builds (ro.build.type = "user") only methods under the
 * allowlisted class prefixes may be probed.  The "full method name" is
 * fully_qualified_class_name + "." + method_name when given, else the name
 * part of a Java method_signature ("a.b.C.m"); a native (ELF symbol) probe
 * has no Java name and is refused.  Every probe of every task must pass;
 * each refusal is a CP_GUARDRAIL problem naming the method and the rule.
 *
 * Deliberate difference from upstream's Rust daemon: a probe with
 * prog_Accessibility_uprobe_dispatch_gesture is allowed by itself (its target
 * is Binder.execTransactInternal), but it does not wave the rest of the
 * config through. */
#ifndef UPROBESTATS_CONFIG_GUARDRAIL_H
#define UPROBESTATS_CONFIG_GUARDRAIL_H

#include <stdbool.h>

#include "config/config.h"
#include "config/problems.h"

enum guardrail_mode {
	GUARDRAIL_AUTO = 0,   /* on for Android user builds (and unknown Android builds) */
	GUARDRAIL_OFF,        /* never */
	GUARDRAIL_USER,       /* always, as on a user build */
};

/* Which upstream allowlist (and matching rule) to apply. */
enum guardrail_list {
	GUARDRAIL_LIST_NEWEST = 0,  /* Rust daemon: 7 prefixes; ==, '(', '.', '$' */
	GUARDRAIL_LIST_CPP_V1,      /* Guardrail.cpp@21253f69: 3 prefixes; '.', '$' */
	GUARDRAIL_LIST_CPP_V2,      /* Guardrail.cpp@2fafaeea: 4 prefixes; ==, '.', '$' */
	GUARDRAIL_LIST_RUST,        /* rust/src/guardrail.rs: 4 prefixes; ==, '(', '.', '$' */
};

struct guardrail_opts {
	enum guardrail_mode mode;
	enum guardrail_list list;
	bool on_android;            /* running on an Android device */
	const char *build_type;     /* ro.build.type, NULL when unreadable or off Android */
};

/* Is the guardrail on for these options?  AUTO: on when on_android and the
 * build type is "user" or could not be read (fail closed, as upstream's
 * Rust does); off Android it is off. */
bool guardrail_active(const struct guardrail_opts *o);

/* Append a CP_GUARDRAIL problem for every refused probe.  Returns the number
 * of refusals (0 when inactive), or -ENOMEM. */
int config_guardrail_check(const struct uprobestats_config *cfg,
			   const struct guardrail_opts *o, struct config_problems *out);

/* Parse "auto|off|user" and "newest|cpp-v1|cpp-v2|rust"; -EINVAL otherwise. */
int guardrail_mode_parse(const char *s, enum guardrail_mode *out);
int guardrail_list_parse(const char *s, enum guardrail_list *out);
const char *guardrail_list_name(enum guardrail_list l);

/* Does this list allow the full method name (e.g. "a.b.C.m")? */
bool guardrail_allows(enum guardrail_list l, const char *name, size_t len);

#endif
