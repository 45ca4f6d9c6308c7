/* The small-file helpers every sys/ module reads /proc and /sys with. */
#include <errno.h>

#include "sys/sysroot.h"
#include "sys_testutil.h"
#include "ut.h"

UT_TEST(sysroot_paths_default_and_override)
{
	struct sys_paths in = { .proc = "/fake/proc" };
	struct sys_paths p = sys_paths_resolve(&in);

	UT_EQ_STR(p.proc, "/fake/proc");
	UT_EQ_STR(p.sys, "/sys");
	UT_EQ_STR(p.props, "/dev/__properties__");
	UT_EQ_STR(p.getprop, "/system/bin/getprop");
	UT_EQ_STR(p.sockets, "/dev/socket");
	p = sys_paths_resolve(NULL);
	UT_EQ_STR(p.proc, "/proc");
}

UT_TEST(sysroot_reads_numbers_and_text)
{
	char dir[4096], buf[16];
	long v;

	st_mkdtemp("sysroot", dir, sizeof(dir));
	st_write(dir, "a", "-1\n");
	st_write(dir, "b", "3 4\n");
	st_write(dir, "c", "  hello world \n\n");
	UT_EQ_INT(sys_read_long_at(dir, "a", &v), 0);
	UT_EQ_INT(v, -1);
	UT_EQ_INT(sys_read_long_at(dir, "b", &v), -EINVAL);
	UT_EQ_INT(sys_read_long_at(dir, "missing", &v), -ENOENT);
	UT_EQ_INT(sys_read_text_at(dir, "c", buf, sizeof(buf)), 0);
	UT_EQ_STR(buf, "  hello world");
	UT_EQ_INT(sys_read_text_at(dir, "c", buf, 6), 0);    /* cut to fit */
	UT_EQ_STR(buf, "  hel");
	UT_ASSERT(sys_exists_at(dir, "a"));
	UT_ASSERT(!sys_exists_at(dir, "zz"));
}

UT_TEST(sysroot_kernel_version)
{
	unsigned ma, mi;
	struct sys_paths p = { .uname_release = "5.10.198-android12-9-00085-g2fd4f6b" };
	char rel[64];

	UT_ASSERT(sys_kernel_version("5.10.198-android12-9", &ma, &mi));
	UT_EQ_INT(ma, 5);
	UT_EQ_INT(mi, 10);
	UT_ASSERT(sys_kernel_version("6.1", &ma, &mi));
	UT_ASSERT(!sys_kernel_version("linux-6.1", &ma, &mi));
	UT_ASSERT(!sys_kernel_version("6", &ma, &mi));
	UT_ASSERT(!sys_kernel_version("99999999999.1", &ma, &mi));
	UT_EQ_INT(sys_kernel_release(&p, rel, sizeof(rel)), 0);
	UT_EQ_STR(rel, "5.10.198-android12-9-00085-g2fd4f6b");
}

UT_TEST(sysroot_find_mount)
{
	static const char m[] =
		"/dev/root / ext4 ro 0 0\n"
		"tracefs /sys/kernel/debug/my\\040tracing tracefs rw 0 0\n"
		"none /sys/fs/bpf bpf rw 0 0";
	char mnt[64];

	UT_EQ_INT(sys_find_mount(m, strlen(m), "tracefs", mnt, sizeof(mnt)), 0);
	UT_EQ_STR(mnt, "/sys/kernel/debug/my tracing");
	UT_EQ_INT(sys_find_mount(m, strlen(m), "bpf", mnt, sizeof(mnt)), 0);   /* no final \n */
	UT_EQ_STR(mnt, "/sys/fs/bpf");
	UT_EQ_INT(sys_find_mount(m, strlen(m), "debugfs", mnt, sizeof(mnt)), -ENOENT);
	UT_EQ_INT(sys_find_mount(m, strlen(m), "bpf", mnt, 5), -ERANGE);
	UT_EQ_INT(sys_find_mount("x y tracefs\\", 12, "tracefs", mnt, sizeof(mnt)), -ENOENT);
}
