/* target_sendloop — the loop `make bench BENCH=traffic` measures: after the go
 * line, a UDP socket connected to one bound on 127.0.0.1, then N send()s of
 * one byte each (the receiver never reads: loopback drops what its buffer
 * cannot hold, and every send still returns 1).  Exits 0 when every send did.
 *
 *   target_sendloop [--go-fifo PATH] N */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "go_fifo.h"

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int argi = go_fifo_wait(argc, argv), r, s;
	long n;

	if (argc - argi != 1) {
		fprintf(stderr, "usage: target_sendloop [--go-fifo PATH] N\n");
		return 2;
	}
	n = atol(argv[argi]);
	r = socket(AF_INET, SOCK_DGRAM, 0);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (r < 0 || s < 0 || bind(r, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(r, (struct sockaddr *)&a, &len) < 0 ||
	    connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("target_sendloop");
		return 3;
	}
	for (long i = 0; i < n; i++)
		if (send(s, "x", 1, 0) != 1)
			return 1;
	return 0;
}
