#include "probe/attach.h"

#include <errno.h>
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

int uprobe_attach_pmu(const struct uprobe_pmu *pmu, const char *path, uint64_t offset,
		      bool retprobe, pid_t pid, int prog_fd, int *out_fd, struct err *err)
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
				       (unsigned long long)offset, (int)pid, strerror(e),
				       attach_hint(e));
		return err_set(err, -e, "%s+0x%llx: perf_event_open for all processes: %s%s", path,
			       (unsigned long long)offset, strerror(e), attach_hint(e));
	}
	if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd) < 0 ||
	    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
		e = errno;
		close(fd);
		return err_set(err, -e, "%s+0x%llx: attaching the BPF program: %s", path,
			       (unsigned long long)offset, strerror(e));
	}
	*out_fd = fd;
	return 0;
}
