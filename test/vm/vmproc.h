/* vmproc.h — processes and files for the VM runner: starting a program with its
 * output in files, waiting with a deadline, reading a whole file, and a statsd
 * stand-in (an AF_UNIX datagram socket) drained while waiting. */
#ifndef UPS_VMPROC_H
#define UPS_VMPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define VM_PATH_MAX 512

/* A statsd stand-in: datagrams received on a bound AF_UNIX socket, kept in order. */
struct statsd_rx {
	int fd;
	char path[VM_PATH_MAX];
	unsigned char **dgram;
	size_t *len;
	int count, cap;
};

/* What spawn() does in the child before exec. */
enum spawn_flags {
	SPAWN_NONE = 0,
	/* A private mount namespace with /dev/null bound over /sys/kernel/btf/vmlinux:
	 * the program sees no kernel BTF (exits 125 if that cannot be set up). */
	SPAWN_NO_BTF = 1,
};

/* Starts PATH with ARGV (ARGV[0] may differ from PATH: the process name), stdout and
 * stderr appended to OUT/ERR (NULL: /dev/null).  The pid, or -1 with errno. */
pid_t spawn(const char *path, char *const argv[], const char *out, const char *err,
	    enum spawn_flags flags);

/* Waits up to TIMEOUT_MS for PID, draining RX (may be NULL) meanwhile.  The exit code
 * (128+signal when killed by one), or -1 on timeout: then PID is killed and reaped. */
int wait_exit(pid_t pid, int timeout_ms, struct statsd_rx *rx);
/* 1 with *CODE set (as wait_exit() gives it) if PID has exited and is now reaped,
 * 0 while it runs, -1 on error. */
int reap_if_exited(pid_t pid, int *code);
/* Sends SIG to PID if it still runs (not yet reaped). */
void kill_quietly(pid_t pid, int sig);

/* The whole file, NUL-terminated (empty string when it does not exist); free() it. */
char *read_file(const char *path, size_t *len);
long long now_ms(void);
void sleep_ms(int ms);

int statsd_rx_open(struct statsd_rx *rx, const char *path);
/* Reads every queued datagram; 0 or -1. */
int statsd_rx_drain(struct statsd_rx *rx);
void statsd_rx_close(struct statsd_rx *rx);

/* One statsd atom as shared/reference/statsd-wire.md lays it out: the atom id and
 * its int32/int64/bool values (strings are not used by these tests). */
#define ATOM_MAX_VALUES 16
struct atom {
	int id;
	int nvalues;
	long long values[ATOM_MAX_VALUES];
};
/* Decodes one datagram; 0, 1 for a datagram that is not an atom (a 24-byte loss
 * report), or -1 with WHY set. */
int statsd_decode(const unsigned char *d, size_t len, struct atom *a, const char **why);

#endif
