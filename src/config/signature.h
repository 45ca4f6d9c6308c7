/* signature.h — reading a probe's method identity: the parts of a Java
 * method_signature as oatdump prints it ("void a.b.C.m(int, java.lang.String)"),
 * or an ELF symbol name (no spaces, no parentheses) for a native probe. */
#ifndef UPROBESTATS_CONFIG_SIGNATURE_H
#define UPROBESTATS_CONFIG_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>

/* At most this many parameters are split out (Java allows 255). */
#define SIG_MAX_PARAMS 255

struct span {
	const char *p;
	size_t len;
};

struct method_sig {
	bool native;                /* an ELF symbol: name only */
	struct span ret;            /* "void" */
	struct span name;           /* "a.b.C.m" (class + '.' + method) or the symbol */
	struct span params[SIG_MAX_PARAMS];
	size_t n_params;
};

/* 0, or -1 when s is neither form (what is wrong goes to why, if non-NULL). */
int sig_parse(const char *s, struct method_sig *out, const char **why);

/* The class part of a Java name ("a.b.C" of "a.b.C.m"). */
struct span sig_class(const struct method_sig *s);

/* Java primitive (int, long, boolean, byte, char, short, float, double)? */
bool sig_is_primitive(const char *type, size_t len);
/* float or double (passed in FP registers, not the x registers programs read)? */
bool sig_is_floating(const char *type, size_t len);

#endif
