/* test_held_cmd.c — -c's command line split into words (cli/held_cmd.h) as a
 * shell's simple command would be, and the root of a chroot(8) in front. */
#include "ut.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "cli/held_cmd.h"

UT_TEST(held_cmd_splits_like_a_shell_simple_command)
{
	char **v = NULL;
	const char *why = NULL;

	UT_EQ_INT(held_cmd_split("  dd if=/dev/zero 'a b' \"c\\\"d\" e\\ f ''  ", &v, &why), 0);
	UT_EQ_STR(v[0], "dd");
	UT_EQ_STR(v[1], "if=/dev/zero");
	UT_EQ_STR(v[2], "a b");
	UT_EQ_STR(v[3], "c\"d");
	UT_EQ_STR(v[4], "e f");
	UT_EQ_STR(v[5], "");
	UT_ASSERT(v[6] == NULL);
	free(v);
	UT_EQ_INT(held_cmd_split("'open", &v, &why), -EINVAL);
	UT_EQ_STR(why, "a quote is not closed");
	UT_EQ_INT(held_cmd_split("   ", &v, &why), -EINVAL);
	UT_EQ_STR(why, "no command");
}

UT_TEST(held_cmd_chroot_root_is_found_past_options)
{
	char root[PATH_MAX];
	char *plain[] = { "dd", "/tmp", NULL };
	char *ch[] = { "/usr/sbin/chroot", "--userspec=1:1", "/tmp/", "/bin/x", NULL };
	char *missing[] = { "chroot", "/nonexistent-ups-root", "x", NULL };
	char *slash[] = { "chroot", "/", "x", NULL };

	UT_EQ_INT(held_cmd_chroot_root(plain, root), 0);
	UT_EQ_STR(root, "");
	UT_EQ_INT(held_cmd_chroot_root(ch, root), 0);
	UT_EQ_STR(root, "/tmp");
	UT_EQ_INT(held_cmd_chroot_root(missing, root), -ENOENT);
	UT_EQ_INT(held_cmd_chroot_root(slash, root), 0);
	UT_EQ_STR(root, "");
}
