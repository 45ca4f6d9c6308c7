/* go_fifo.h — how every test target waits at its start line: with
 * "--go-fifo PATH" as its first two arguments it blocks until a line can be
 * read from the FIFO, so the test attaches uprobestats before any call. */
#ifndef UPROBESTATS_TEST_GO_FIFO_H
#define UPROBESTATS_TEST_GO_FIFO_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Consumes "--go-fifo PATH" from argv (returns the index of the first other
 * argument) and waits for the go line; exits 1 if the FIFO cannot be read. */
static int go_fifo_wait(int argc, char **argv)
{
	char line[16];
	FILE *f;

	if (argc < 3 || strcmp(argv[1], "--go-fifo") != 0)
		return 1;
	f = fopen(argv[2], "r");
	if (!f || !fgets(line, sizeof(line), f)) {
		perror(argv[2]);
		exit(1);
	}
	fclose(f);
	return 3;
}

#endif
