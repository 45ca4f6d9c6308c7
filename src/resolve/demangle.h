/* demangle.h — an Itanium C++ ABI demangler for native trace patterns (a user
 * writes "libbinder.so:android::IPCThreadState::executeCommand*").
 *
 * Output follows GNU c++filt (libiberty) spelling: "char const*", "> >",
 * "(anonymous namespace)", "{lambda(int)#1}", "{unnamed type#1}",
 * "[abi:cxx11]", " [clone .cold]", "non-virtual thunk to ...", std::string
 * and friends written out in full, argument packs ("J...E") and their
 * expansions ("Dp", "sp"), "decltype (...)" and expressions in template
 * arguments, "vtable for A" and the other special names.  Strict: a form it
 * does not handle (new, throw, fold and braced expressions, vector types,
 * float and enum literals, a pack named outside an expansion, ...) gives
 * -ENOTSUP, never a wrong name; test/unit/test_demangle.c compares it with
 * c++filt over every symbol of real C++ libraries (Android 11's libbinder and
 * libutils: all of them).  Hostile input: bounded recursion depth, node
 * count, input and output length. */
#ifndef UPROBESTATS_RESOLVE_DEMANGLE_H
#define UPROBESTATS_RESOLVE_DEMANGLE_H

#include <stddef.h>

#define DEMANGLE_MAX_IN 4096

/* -ENOMEM too, when the workspace cannot be allocated. */

/* 0 with out holding the demangled name; *name_start and *name_end (may be NULL)
 * delimit the qualified function name inside it (no return type, no
 * parameters: "A::f" in "void A::f<int>(int) const" gives "A::f<int>").
 * -EINVAL: not a mangled name (no "_Z") or malformed; -ENOTSUP: a form not
 * handled; -ENAMETOOLONG: longer than size or DEMANGLE_MAX_IN. */
int demangle(const char *mangled, char *out, size_t size, size_t *name_start,
	     size_t *name_end);

/* The same with a reusable workspace (about 200 KiB: node, list and substitution
 * pools), for demangling many names: demangle() allocates one per call. */
struct demangler;
struct demangler *demangler_new(void);   /* NULL on OOM */
void demangler_free(struct demangler *w);
int demangle_with(struct demangler *w, const char *mangled, char *out, size_t size,
		  size_t *name_start, size_t *name_end);

#endif
