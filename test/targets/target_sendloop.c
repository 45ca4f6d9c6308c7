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
 * With --peers, one unconnected UDP socket sends one byte to each of N peers
 * instead: 127.1.0.0:9, 127.1.0.1:9, ... (i / 256 and i % 256 in the last two
 * bytes, N <= 65536): loopback addresses no one listens on (port 9, discard),
 * so the datagrams reach nobody's socket.
 *
 * With --thread, the N sends are a thread's named "upst-worker"; once it has
 * ended, the process waits (pause) until it is killed.
 *
 * With --mmsg=K, N sendmmsg()s of K one-byte messages each (K <= 1024, the
 * kernel's cap) on the same connected socket instead of the send()s
 * (`make bench BENCH=traffic`: the exit's loop over the messages).
 *
 *   target_sendloop [--go-fifo PATH] N [--dummy6 | --peers | --thread | --mmsg=K] */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "go_fifo.h"

static int sends(int s, long n)
{
	for (long i = 0; i < n; i++)
		if (send(s, "x", 1, 0) != 1)
			return 0;
	return 1;
}

#define MMSG_MAX 1024

/* n sendmmsg()s of k one-byte messages each; 1 when every message went. */
static int sendmmsgs(int s, long n, unsigned int k)
{
	static struct mmsghdr vec[MMSG_MAX];
	static struct iovec iov = { "x", 1 };

	for (unsigned int i = 0; i < k; i++) {
		vec[i].msg_hdr.msg_iov = &iov;
		vec[i].msg_hdr.msg_iovlen = 1;
	}
	for (long i = 0; i < n; i++)
		if (sendmmsg(s, vec, k, 0) != (int)k)
			return 0;
	return 1;
}

static int sock_of_worker;
static long count_of_worker;

static void *worker(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "upst-worker");
	return sends(sock_of_worker, count_of_worker) ? arg : (void *)1;
}

/* n sends from a thread named upst-worker, then a wait to be killed. */
static int in_thread(int s, long n)
{
	pthread_t t;
	void *ret;

	sock_of_worker = s;
	count_of_worker = n;
	if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, &ret) || ret)
		return 1;
	for (;;)
		pause();
}

/* One byte to each of n peers 127.1.I/256.I%256:9 from one unconnected socket. */
static int to_peers(long n)
{
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	if (s < 0 || n > 65536) {
		perror("target_sendloop: --peers");
		return 3;
	}
	for (long i = 0; i < n; i++) {
		struct sockaddr_in p = { .sin_family = AF_INET, .sin_port = htons(9),
					 .sin_addr.s_addr = htonl(0x7f010000u | (uint32_t)i) };
		if (sendto(s, "x", 1, 0, (struct sockaddr *)&p, sizeof(p)) != 1)
			return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	struct sockaddr_in6 a6 = { .sin6_family = AF_INET6, .sin6_port = htons(9) };
	int argi = argc > 2 && !strcmp(argv[1], "--go-fifo") ? 3 : 1, r, s;
	int dummy6 = argc - argi == 2 && !strcmp(argv[argi + 1], "--dummy6");
	int peers = argc - argi == 2 && !strcmp(argv[argi + 1], "--peers");
	int thread = argc - argi == 2 && !strcmp(argv[argi + 1], "--thread");
	int mmsg = argc - argi == 2 && !strncmp(argv[argi + 1], "--mmsg=", 7) ?
		atoi(argv[argi + 1] + 7) : 0;
	long n;

	if ((argc - argi != 1 && !dummy6 && !peers && !thread && !mmsg) || mmsg < 0 ||
	    mmsg > MMSG_MAX) {
		fprintf(stderr, "usage: target_sendloop [--go-fifo PATH] N [--dummy6 | --peers | "
			"--thread | --mmsg=K]\n");
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
	if (peers)
		return to_peers(n);
	r = socket(AF_INET, SOCK_DGRAM, 0);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (r < 0 || s < 0 || bind(r, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    getsockname(r, (struct sockaddr *)&a, &len) < 0 ||
	    connect(s, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("target_sendloop");
		return 3;
	}
	if (thread)
		return in_thread(s, n);
	if (mmsg)
		return sendmmsgs(s, n, (unsigned int)mmsg) ? 0 : 1;
	return sends(s, n) ? 0 : 1;
}
