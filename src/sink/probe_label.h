/* probe_label.h — the short name people see for a probe (text lines, trace
 * slices, summary rows): the pair's slice name if set, else "Class.method"
 * cut from a Java signature, else the native symbol as configured. */
#ifndef UPROBESTATS_SINK_PROBE_LABEL_H
#define UPROBESTATS_SINK_PROBE_LABEL_H

#include <stddef.h>

#include "vocab/event.h"

struct label {
	const char *s;   /* points into the probe_desc's strings: not NUL-terminated */
	size_t n;
};

/* "void com.a.B$C.m(int, long)" -> "B$C.m"; "malloc" -> "malloc";
 * NULL probe or method -> the program name, or "?". */
struct label probe_label(const struct probe_desc *p);

#endif
