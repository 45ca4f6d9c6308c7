/* empty_loader — attach bench/empty_uprobe.bpf.o's empty programs to functions
 * of one process and wait: the bare kernel cost of uprobe hits.
 *
 *   empty_loader OBJ BINARY OFFSETS PID entry|return|both|exit:EXIT_OFFSETS
 *
 * OFFSETS and EXIT_OFFSETS are comma-separated file offsets (one or more).
 * entry: the empty entry program at each of OFFSETS; return: the empty
 * uretprobe program there; both: both.  exit:EXIT_OFFSETS: the empty entry
 * program at each of OFFSETS and again at each return instruction of
 * EXIT_OFFSETS (the floor of exit probes: plain uprobes at every entry and
 * every return site).  Prints "empty_loader: attached" on stderr once every
 * link is in place, then waits for SIGINT or SIGTERM (or for PID to exit)
 * and detaches. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#define MAX_OFFSETS 256

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int usage(void)
{
	fprintf(stderr, "usage: empty_loader OBJ BINARY OFFSET[,OFFSET...] PID "
			"entry|return|both|exit:EXIT_OFFSET[,EXIT_OFFSET...]\n");
	return 2;
}

/* Parses a comma-separated list of offsets into OUT; the count, or -1. */
static int parse_offsets(const char *s, size_t *out)
{
	int n = 0;

	while (*s) {
		char *end;

		if (n == MAX_OFFSETS)
			return -1;
		errno = 0;
		out[n++] = strtoul(s, &end, 0);
		if (errno || end == s || (*end && *end != ','))
			return -1;
		s = *end ? end + 1 : end;
	}
	return n ? n : -1;
}

static struct bpf_link *attach(struct bpf_object *obj, const char *prog_name, bool ret,
			       pid_t pid, const char *binary, size_t offset)
{
	struct bpf_program *prog = bpf_object__find_program_by_name(obj, prog_name);
	LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = ret);
	struct bpf_link *link;

	if (!prog) {
		fprintf(stderr, "empty_loader: no program %s\n", prog_name);
		return NULL;
	}
	link = bpf_program__attach_uprobe_opts(prog, pid, binary, offset, &opts);
	if (!link)
		fprintf(stderr, "empty_loader: attaching %s to %s+0x%zx: %s\n", prog_name, binary,
			offset, strerror(errno));
	return link;
}

/* Attaches PROG_NAME at each of N offsets, appending to LINKS; 0 or -1. */
static int attach_all(struct bpf_object *obj, const char *prog_name, bool ret, pid_t pid,
		      const char *binary, const size_t *offs, int n, struct bpf_link **links,
		      int *n_links)
{
	for (int i = 0; i < n; i++) {
		struct bpf_link *l = attach(obj, prog_name, ret, pid, binary, offs[i]);

		if (!l)
			return -1;
		links[(*n_links)++] = l;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static size_t offs[MAX_OFFSETS], exit_offs[MAX_OFFSETS];
	static struct bpf_link *links[3 * MAX_OFFSETS];
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	struct bpf_object *obj;
	int n_links = 0, n_exits = 0, rc = 1;

	if (argc != 6)
		return usage();
	int n = parse_offsets(argv[3], offs);
	pid_t pid = (pid_t)atoi(argv[4]);
	const char *mode = argv[5];
	bool at_exit = !strncmp(mode, "exit:", 5);
	bool entry = !strcmp(mode, "entry") || !strcmp(mode, "both") || at_exit;
	bool ret = !strcmp(mode, "return") || !strcmp(mode, "both");
	if (at_exit)
		n_exits = parse_offsets(mode + 5, exit_offs);
	if (n < 0 || n_exits < 0 || (!entry && !ret))
		return usage();

	setrlimit(RLIMIT_MEMLOCK, &unlimited);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "empty_loader: cannot load %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (entry && attach_all(obj, "empty_entry", false, pid, argv[2], offs, n, links,
				&n_links) < 0)
		goto out;
	if (ret && attach_all(obj, "empty_return", true, pid, argv[2], offs, n, links,
			      &n_links) < 0)
		goto out;
	if (attach_all(obj, "empty_entry", false, pid, argv[2], exit_offs, n_exits, links,
		       &n_links) < 0)
		goto out;
	fprintf(stderr, "empty_loader: attached %d link(s)\n", n_links);
	while (!stop && kill(pid, 0) == 0)
		usleep(20000);
	rc = 0;
out:
	for (int i = 0; i < n_links; i++)
		bpf_link__destroy(links[i]);
	bpf_object__close(obj);
	return rc;
}
