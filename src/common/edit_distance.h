/* edit_distance.h — the one Levenshtein distance (insert, delete, substitute
 * one byte), exact for names of any length; the nearest-name suggestions of
 * the config schema, process names and trace patterns all use it. */
#ifndef UPROBESTATS_COMMON_EDIT_DISTANCE_H
#define UPROBESTATS_COMMON_EDIT_DISTANCE_H

#include <stddef.h>

/* The distance between a[0..la) and b[0..lb); SIZE_MAX only when the row it
 * needs (one per byte of the shorter, on the heap past 256) cannot be had. */
size_t edit_distance(const char *a, size_t la, const char *b, size_t lb);

#endif
