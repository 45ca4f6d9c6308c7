/* verifier_log.h — the line of a BPF verifier log that says why a program was
 * refused: the last one that is not the statistics the verifier appends
 * ("processed N insns …", "verification time …", "stack depth …"). */
#ifndef UPROBESTATS_PROBE_VERIFIER_LOG_H
#define UPROBESTATS_PROBE_VERIFIER_LOG_H

#include <stddef.h>

/* Copies that line of log[0..size) (NUL-terminated or not) into out[cap];
 * "" when there is none. */
void verifier_log_reason(const char *log, size_t size, char *out, size_t cap);

#endif
