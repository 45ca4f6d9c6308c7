/* java_sig.h — Java method signatures as configs write them, turned into dex
 * descriptors.
 *
 * Two input forms (both from UprobeStats configs):
 *   method_signature:  "void com.foo.Bar$Baz.qux(int[], java.lang.String)"
 *                      (ART's PrettyMethod form; modifiers before the return
 *                      type, generics, "T..." varargs, parameter names and
 *                      spacing variants are tolerated);
 *   parts:             fully_qualified_class_name + method_name +
 *                      fully_qualified_parameters (no return type).
 * Types map as InversePrettyDescriptor does: primitives to one letter,
 * "[]" pairs to leading '[', everything else to "L" + '/'-separated name +
 * ";" ('$' kept).  A type already written as a descriptor ("[I",
 * "Ljava/lang/String;") is taken as is.
 * Names: every dex SimpleName character is accepted ('$', '-', '_', digits
 * first, the non-ASCII ranges of the dex format, and dex 040's spaces);
 * anything else is refused.  Supplementary characters are turned into the
 * MUTF-8 surrogate pairs dex stores.  In the text form the return type is the
 * first word after modifiers and everything up to '(' is <class>.<method>, so
 * class and method names may hold spaces; a return type with a space must be a
 * descriptor there ("La/My Class;"), a parameter type with a space is found
 * by the resolver's second reading (java_sig_parse_whole_params) or written as
 * a descriptor.  The parts form takes each field whole. */
#ifndef UPROBESTATS_RESOLVE_JAVA_SIG_H
#define UPROBESTATS_RESOLVE_JAVA_SIG_H

#include <stdbool.h>
#include <stddef.h>

#include "common/arena.h"
#include "common/err.h"

struct java_sig {
	char *class_desc;           /* "Lcom/foo/Bar$Baz;" */
	char *class_name;           /* "com.foo.Bar$Baz" as given (dots) */
	char *name;                 /* "qux", "<init>", "<clinit>" */
	char *ret_desc;             /* NULL when the form has no return type */
	char **params;              /* descriptors */
	size_t n_params;
	bool params_given;          /* false: the parts form gave no parameter list */
};

/* All strings are allocated from a. */
int java_sig_parse(const char *text, struct arena *a, struct java_sig *out, struct err *err);
/* The text form with each parameter taken whole, spaces included (a dex 040
 * type name such as "a.My Class", which java_sig_parse reads as type "a.My"
 * with the parameter name "Class"); java_resolve() tries it when the usual
 * reading names no method and this one reads other parameter types. */
int java_sig_parse_whole_params(const char *text, struct arena *a, struct java_sig *out,
				struct err *err);
int java_sig_from_parts(const char *class_name, const char *method, const char *const *params,
			size_t n_params, bool params_given, struct arena *a, struct java_sig *out,
			struct err *err);

/* One Java type ("int[][]", "java.lang.String...", "Map<K, V>") to a
 * descriptor in buf; 0, -EINVAL (not a type) or -ENAMETOOLONG. */
int java_type_to_descriptor(const char *type, char *buf, size_t size);

/* Alternative class descriptors for a canonical name ("a.Outer.Inner" meant
 * as "a.Outer$Inner"): variant k (1-based) turns the k rightmost dots of the
 * class name into '$'.  NULL when there is no such variant. */
char *java_sig_class_variant(const struct java_sig *s, unsigned k, struct arena *a);

/* "void com.foo.Bar.qux(int[], java.lang.String)" (or "com.foo.Bar.qux(...)"
 * without a return type / "(...)" without params), for messages. */
char *java_sig_pretty(const struct java_sig *s, struct arena *a);

#endif
