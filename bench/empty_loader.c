/* empty_loader — attach bench/empty_uprobe.bpf.o's empty programs to one
 * function of one process and wait: the bare kernel cost of a uprobe hit.
 *
 *   empty_loader OBJ BINARY FILE_OFFSET PID entry|return|both|exit:EXIT_OFFSET
 *
 * exit:EXIT_OFFSET: the empty entry program at FILE_OFFSET and again at the
 * return instruction at EXIT_OFFSET (the floor of exit probes: two uprobes).
 * Prints "empty_loader: attached" on stderr once every link is in place, then
 * waits for SIGINT or SIGTERM (or for PID to exit) and detaches. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <bpf/libbpf.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
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

static int usage(void)
{
	fprintf(stderr, "usage: empty_loader OBJ BINARY FILE_OFFSET PID "
			"entry|return|both|exit:EXIT_OFFSET\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct bpf_link *links[2] = { NULL, NULL };
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	struct bpf_object *obj;
	int rc = 1;

	if (argc != 6)
		return usage();
	size_t offset = strtoul(argv[3], NULL, 0);
	pid_t pid = (pid_t)atoi(argv[4]);
	const char *mode = argv[5];
	bool at_exit = !strncmp(mode, "exit:", 5);
	size_t exit_offset = at_exit ? strtoul(mode + 5, NULL, 0) : 0;
	bool entry = !strcmp(mode, "entry") || !strcmp(mode, "both") || at_exit;
	bool ret = !strcmp(mode, "return") || !strcmp(mode, "both");
	if (!entry && !ret)
		return usage();

	setrlimit(RLIMIT_MEMLOCK, &unlimited);
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj || bpf_object__load(obj)) {
		fprintf(stderr, "empty_loader: cannot load %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	if (entry && !(links[0] = attach(obj, "empty_entry", false, pid, argv[2], offset)))
		goto out;
	if (ret && !(links[1] = attach(obj, "empty_return", true, pid, argv[2], offset)))
		goto out;
	if (at_exit &&
	    !(links[1] = attach(obj, "empty_entry", false, pid, argv[2], exit_offset)))
		goto out;
	fprintf(stderr, "empty_loader: attached\n");
	while (!stop && kill(pid, 0) == 0)
		usleep(20000);
	rc = 0;
out:
	bpf_link__destroy(links[0]);
	bpf_link__destroy(links[1]);
	bpf_object__close(obj);
	return rc;
}
