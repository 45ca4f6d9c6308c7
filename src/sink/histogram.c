#include "sink/histogram.h"

#include <inttypes.h>
#include <string.h>

#define BAR_WIDTH 40

uint64_t hist_total(const uint64_t slots[HIST_SLOTS])
{
	uint64_t t = 0;
	for (int i = 0; i < HIST_SLOTS; i++)
		t += slots[i];
	return t;
}

void hist_print_log2(FILE *f, const uint64_t slots[HIST_SLOTS], const char *title)
{
	int first = -1, last = -1;
	uint64_t max = 0;
	char bar[BAR_WIDTH + 1];

	for (int i = 0; i < HIST_SLOTS; i++) {
		if (!slots[i])
			continue;
		if (first < 0)
			first = i;
		last = i;
		if (slots[i] > max)
			max = slots[i];
	}
	fprintf(f, "%s\n", title);
	if (first < 0) {
		fprintf(f, "  (no completed calls)\n");
		return;
	}
	fprintf(f, "%24s : %-10s |%-*s|\n", "nsecs", "count", BAR_WIDTH, "distribution");
	for (int i = first; i <= last; i++) {
		uint64_t lo = i ? (1ULL << i) : 0, hi = (1ULL << (i + 1)) - 1;
		size_t stars = max ? (size_t)(slots[i] * BAR_WIDTH / max) : 0;
		memset(bar, '*', stars);
		bar[stars] = '\0';
		fprintf(f, "%11" PRIu64 " -> %-10" PRIu64 " : %-10" PRIu64 " |%-*s|\n", lo, hi,
			slots[i], BAR_WIDTH, bar);
	}
}
