/* edit_distance.c — see edit_distance.h. */
#include "common/edit_distance.h"

#include <stdint.h>
#include <stdlib.h>

#define STACK_ROW 256

/* One rolling row over b, the shorter string. */
static size_t rows(const char *a, size_t la, const char *b, size_t lb, size_t *row)
{
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

size_t edit_distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t stack_row[STACK_ROW + 1], *row = stack_row, d;

	if (lb > la) {
		const char *t = a;
		size_t tl = la;
		a = b, la = lb;
		b = t, lb = tl;
	}
	if (lb > STACK_ROW && !(row = lb < SIZE_MAX / sizeof(*row) - 1
				      ? malloc((lb + 1) * sizeof(*row)) : NULL))
		return SIZE_MAX;
	d = rows(a, la, b, lb, row);
	if (row != stack_row)
		free(row);
	return d;
}
