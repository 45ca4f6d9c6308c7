/* method_key.h — a probe's method as the key line of an ART method trace
 * names it (vocab/event.h: probe_desc.method_key), four fields joined by
 * tabs: class, method, signature, source file.
 *   Java   "void com.a.B$C.run(int, java.lang.String)" ->
 *          "com.a.B$C\trun\t(ILjava/lang/String;)V\t<source>" (ART's dotted
 *          class name and dex signature, as its own method tracing writes);
 *   native "_ZN7android6Parcel9writeInt32Ei" in /system/lib64/libbinder.so ->
 *          "libbinder.so\tandroid::Parcel::writeInt32\t(int)\t" (the library,
 *          the demangled name, its parameter list and qualifiers); a C symbol
 *          ("write") gets "()" (its parameters are not known).
 * Tabs and line breaks inside a field become spaces.  The strings are
 * malloc'ed (free()); NULL when out of memory or the signature does not
 * parse. */
#ifndef UPROBESTATS_PLAN_METHOD_KEY_H
#define UPROBESTATS_PLAN_METHOD_KEY_H

char *method_key_java(const char *pretty_signature, const char *source_file);
char *method_key_native(const char *path, const char *symbol);

#endif
