/* histogram.h — printing a log2 histogram the way funclatency does. */
#ifndef UPROBESTATS_SINK_HISTOGRAM_H
#define UPROBESTATS_SINK_HISTOGRAM_H

#include <stdint.h>
#include <stdio.h>

#define HIST_SLOTS 64

/* slots[i] counts values in [2^i, 2^(i+1)) ns; printed in usecs when every
 * value is at least 1 us, with a bar of stars scaled to the largest slot. */
void hist_print_log2(FILE *f, const uint64_t slots[HIST_SLOTS], const char *title);
/* The total count and an estimate of the median (the slot's lower bound). */
uint64_t hist_total(const uint64_t slots[HIST_SLOTS]);

#endif
