#include "probe/attach.h"

#include <errno.h>
#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define UPROBE_PMU_DIR "/sys/bus/event_source/devices/uprobe"

static int read_small_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

int uprobe_pmu_detect(struct uprobe_pmu *pmu, struct err *err)
{
	char buf[64];
	char *end;
	int rc;

	pmu->type = -1;
	pmu->retprobe_bit = 0;
	rc = read_small_file(UPROBE_PMU_DIR "/type", buf, sizeof(buf));
	if (rc < 0)
		return err_set(err, rc, "%s/type: %s (kernel without the uprobe PMU, < 4.17?)",
			       UPROBE_PMU_DIR, strerror(-rc));
	errno = 0;
	long type = strtol(buf, &end, 10);
	if (errno || end == buf || type < 0)
		return err_set(err, -EINVAL, "%s/type: expected a number, found \"%s\"",
			       UPROBE_PMU_DIR, buf);
	pmu->type = (int)type;
	/* "config:0" on every kernel so far; read it rather than assume. */
	if (read_small_file(UPROBE_PMU_DIR "/format/retprobe", buf, sizeof(buf)) == 0 &&
	    strncmp(buf, "config:", 7) == 0)
		pmu->retprobe_bit = atoi(buf + 7);
	return 0;
}

static int perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu)
{
	return (int)syscall(__NR_perf_event_open, attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

const char *uprobe_strerror(int e)
{
	if (e == UPROBE_ENOTSUPP)
		return "the kernel refused a uprobe there: the instruction at that offset cannot "
		       "be probed (ENOTSUPP)";
	if (e == EMFILE)
		return "Too many open files (each probe and process needs a file descriptor)";
	return strerror(e);
}

static const char *attach_hint(int e)
{
	switch (e) {
	case EPERM:
	case EACCES:
		return " (needs root or CAP_PERFMON+CAP_BPF; check kernel.perf_event_paranoid)";
	case ESRCH:
		return " (the process exited)";
	case ENOENT:
		return " (file missing or not visible in this mount namespace)";
	case EINVAL:
		return " (offset outside the file or not on an instruction boundary?)";
	default:
		return "";
	}
}

/* ---- binding a program to a perf event ----------------------------------- */

static int link_create_perf(int prog_fd, int perf_fd, uint64_t cookie)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = (__u32)prog_fd;
	a.link_create.target_fd = (__u32)perf_fd;
	a.link_create.attach_type = BPF_PERF_EVENT;
	a.link_create.perf_event.bpf_cookie = cookie;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

int perf_event_bind(int perf_fd, int prog_fd, const uint64_t *cookie)
{
	int fd = perf_fd, e;

	if (cookie) {
		fd = link_create_perf(prog_fd, perf_fd, *cookie);
		if (fd < 0) {
			close(perf_fd);
			return fd;
		}
	} else if (ioctl(perf_fd, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0) {
		e = -errno;
		close(perf_fd);
		return e;
	}
	if (ioctl(perf_fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		e = -errno;
		if (fd != perf_fd)
			close(fd);
		close(perf_fd);
		return e;
	}
	if (fd != perf_fd)
		close(perf_fd);   /* the link holds the event now */
	return fd;
}

int uprobe_attach_pmu(const struct uprobe_pmu *pmu, const char *path, uint64_t offset,
		      bool retprobe, pid_t pid, int prog_fd, const uint64_t *cookie, int *out_fd,
		      struct err *err)
{
	struct perf_event_attr attr;
	int fd, e;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (__u32)pmu->type;
	attr.config = retprobe ? (1ULL << pmu->retprobe_bit) : 0;
	attr.config1 = (__u64)(uintptr_t)path;
	attr.config2 = offset;
	attr.sample_period = 1;
	/* A uprobe event with pid -1 must name a CPU; it still fires on every CPU. */
	fd = perf_event_open(&attr, pid >= 0 ? pid : -1, pid >= 0 ? -1 : 0);
	if (fd < 0) {
		e = errno;
		if (pid >= 0)
			return err_set(err, -e, "%s+0x%llx: perf_event_open for pid %d: %s%s", path,
				       (unsigned long long)offset, (int)pid, uprobe_strerror(e),
				       attach_hint(e));
		return err_set(err, -e, "%s+0x%llx: perf_event_open for all processes: %s%s", path,
			       (unsigned long long)offset, uprobe_strerror(e), attach_hint(e));
	}
	fd = perf_event_bind(fd, prog_fd, cookie);
	if (fd < 0)
		return err_set(err, fd, "%s+0x%llx: attaching the BPF program: %s", path,
			       (unsigned long long)offset, uprobe_strerror(-fd));
	*out_fd = fd;
	return 0;
}

/* ---- uprobe_multi links ------------------------------------------------- */

/* BPF_LINK_CREATE's uprobe_multi member (uapi 6.6), laid out by hand: the
 * headers we build with predate it.  The kernel checks the unused tail of
 * the attr is zero, so the struct is zeroed whole. */
struct uprobe_multi_attr {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__aligned_u64 path;
	__aligned_u64 offsets;
	__aligned_u64 ref_ctr_offsets;
	__aligned_u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
	__u32 pad;
};

#define UPROBE_MULTI_RETURN 1u  /* BPF_F_UPROBE_MULTI_RETURN */

/* One link over n offsets of path; cookies (NULL: none) give each offset's
 * bpf_get_attach_cookie(). */
static int link_create_multi_n(int prog_fd, const char *path, const uint64_t *offsets,
			       const uint64_t *cookies, uint32_t n, bool retprobe, int pid)
{
	struct uprobe_multi_attr a;
	int fd;

	_Static_assert(sizeof(unsigned long) == sizeof(uint64_t), "the kernel reads u64 offsets");
	memset(&a, 0, sizeof(a));
	a.prog_fd = (__u32)prog_fd;
	a.attach_type = UPS_ATTACH_UPROBE_MULTI;
	a.path = (__u64)(uintptr_t)path;
	a.offsets = (__u64)(uintptr_t)offsets;
	a.cookies = (__u64)(uintptr_t)cookies;
	a.cnt = n;
	a.multi_flags = retprobe ? UPROBE_MULTI_RETURN : 0;
	a.pid = (__u32)pid;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

static int link_create_multi(int prog_fd, const char *path, uint64_t offset, bool retprobe,
			     int pid)
{
	return link_create_multi_n(prog_fd, path, &offset, NULL, 1, retprobe, pid);
}

static int load_trivial_prog(__u32 expected_attach_type)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_KPROBE;
	a.insns = (__u64)(uintptr_t)insns;
	a.insn_cnt = 2;
	a.license = (__u64)(uintptr_t)"GPL";
	a.expected_attach_type = expected_attach_type;
	fd = (int)syscall(__NR_bpf, BPF_PROG_LOAD, &a, sizeof(a));
	return fd < 0 ? -errno : fd;
}

/* As libbpf decides: a link on "/" fails with EBADF where uprobe_multi
 * exists; with pid -1 as well it fails earlier with EINVAL only on kernels
 * that filter by process (the first ones filtered by thread, which would
 * miss every call made off the main thread). */
int uprobe_multi_detect(struct err *err)
{
	int prog = load_trivial_prog(UPS_ATTACH_UPROBE_MULTI), rc;

	if (prog < 0)
		return err_set(err, prog, "uprobe_multi links: not in this kernel (6.6+): %s",
			       strerror(-prog));
	rc = link_create_multi(prog, "/", 0, false, 0);
	if (rc != -EBADF) {
		if (rc >= 0)
			close(rc);
		close(prog);
		return err_set(err, -ENOTSUP, "uprobe_multi links: not in this kernel (6.6+): %s",
			       rc >= 0 ? "a link on / was accepted" : strerror(-rc));
	}
	rc = link_create_multi(prog, "/", 0, false, -1);
	if (rc >= 0)
		close(rc);
	close(prog);
	if (rc != -EINVAL)
		return err_set(err, -ENOTSUP, "uprobe_multi links: this kernel filters them by "
			       "thread, not process (kernels before the 2024 fix)");
	return 0;
}

int uprobe_attach_multi(const char *path, uint64_t offset, bool retprobe, pid_t pid,
			int prog_fd, int *out_fd, struct err *err)
{
	int fd = link_create_multi(prog_fd, path, offset, retprobe, pid >= 0 ? (int)pid : 0);

	if (fd < 0) {
		if (pid >= 0)
			return err_set(err, fd, "%s+0x%llx: uprobe_multi link for pid %d: %s%s",
				       path, (unsigned long long)offset, (int)pid,
				       uprobe_strerror(-fd), attach_hint(-fd));
		return err_set(err, fd, "%s+0x%llx: uprobe_multi link for all processes: %s%s",
			       path, (unsigned long long)offset, uprobe_strerror(-fd),
			       attach_hint(-fd));
	}
	*out_fd = fd;
	return 0;
}

int uprobe_attach_multi_n(const char *path, const uint64_t *offsets, const uint64_t *cookies,
			  uint32_t n, bool retprobe, pid_t pid, int prog_fd, int *out_fd,
			  struct err *err)
{
	int fd = link_create_multi_n(prog_fd, path, offsets, cookies, n, retprobe,
				     pid >= 0 ? (int)pid : 0);

	if (fd < 0) {
		char who[48];

		if (pid >= 0)
			snprintf(who, sizeof(who), "pid %d", (int)pid);
		else
			snprintf(who, sizeof(who), "all processes");
		if (n == 1)
			return err_set(err, fd, "%s+0x%llx: uprobe_multi link for %s: %s%s", path,
				       (unsigned long long)offsets[0], who, uprobe_strerror(-fd),
				       attach_hint(-fd));
		return err_set(err, fd, "%s: a uprobe_multi link over %u offsets for %s: %s%s",
			       path, n, who, uprobe_strerror(-fd), attach_hint(-fd));
	}
	*out_fd = fd;
	return 0;
}

/* As libbpf decides: a perf link on descriptor -1 fails with EBADF where
 * the kernel has them (5.15, with the cookies' helper), EINVAL before. */
int perf_link_detect(void)
{
	int prog = load_trivial_prog(0), rc;

	if (prog < 0)
		return prog;
	rc = link_create_perf(prog, -1, 0);
	if (rc >= 0)
		close(rc);
	close(prog);
	return rc == -EBADF ? 0 : -ENOTSUP;
}
