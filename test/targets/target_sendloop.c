/* target_sendloop — the loop `make bench BENCH=traffic` measures: after the go
 * line, a UDP socket connected to one bound on 127.0.0.1, then N send()s of
 * one byte each (the receiver never reads: loopback drops what its buffer
 * cannot hold, and every send still returns 1).  Exits 0 when every send did.
 *
 * With --dummy6, first a network namespace of its own with a veth pair
 * (upst6, upst6p; some kernels have no dummy driver), upst6 holding
 * fd00:5::1/64; the socket is connected to [fd00:5::2]:9 instead (out of
 * upst6: no neighbour answers, the datagrams are dropped), and the process
 * stays 1.5 s after the loop (so a --interval 1 reader sees it alive).
 *
 *   target_sendloop [--go-fifo PATH] N [--dummy6] */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "go_fifo.h"

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(9) };
	int argi = argc > 2 && !strcmp(argv[1], "--go-fifo") ? 3 : 1, r, s;
	int dummy6 = argc - argi == 2 && !strcmp(argv[argi + 1], "--dummy6");
	long n;

	if (argc - argi != 1 && !dummy6) {
		fprintf(stderr, "usage: target_sendloop [--go-fifo PATH] N [--dummy6]\n");
		return 2;
	}
	if (dummy6 && (unshare(CLONE_NEWNET) < 0 ||
		       system("ip link add upst6 type veth peer name upst6p && "
			      "ip link set upst6 up && ip link set upst6p up && "
			      "ip -6 addr add fd00:5::1/64 dev upst6 nodad") != 0)) {
		perror("target_sendloop: dummy6");
		return 3;
	}
	argi = go_fifo_wait(argc, argv);
	n = atol(argv[argi]);
	if (dummy6) {
		s = socket(AF_INET6, SOCK_DGRAM, 0);
		inet_pton(AF_INET6, "fd00:5::2", &a6.sin6_addr);
		if (s < 0 || connect(s, (struct sockaddr *)&a6, sizeof(a6)) < 0) {
			perror("target_sendloop: connect");
			return 3;
		}
		for (long i = 0; i < n; i++)
			if (send(s, "x", 1, 0) != 1)
				return 1;
		usleep(1500000);
		return 0;
	}
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
