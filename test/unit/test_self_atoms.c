/* test_self_atoms.c — the run's self-metric atoms (cli/self_atoms.c) through a real
 * statsd sink: one "attached" atom per probe with the class and method taken from
 * fully_qualified_class_name + method_name, from a method_signature, or a native
 * symbol alone; one "internal error" atom per task, flushed at once. */
#include "ut.h"

#include <errno.h>
#include <unistd.h>

#include "cli/self_atoms.h"
#include "config/config.h"
#include "catalog/catalog.h"
#include "statsd_decoder.h"
#include "statsd_testutil.h"

UT_TEST(self_atoms_attached_and_error)
{
	const char *path = ut_tmpfile("statsdw-self");
	int rx = st_receiver(path);
	struct sinks_options opt = { .statsd = SINKS_STATSD_ON, .statsd_path = path };
	struct task_config tc = { .target_process_name = "system_server", .has_task_id = true,
				  .task_id = 9 };
	struct probe_config pc[3] = {
		{ .fully_qualified_class_name = "a.B", .method_name = "m" },
		{ .method_signature = "void a.b.My Class.-$$Nest$m(int)" },
		{ .method_signature = "_ZN7android6Parcel5writeEPKvm" },
	};
	struct plan_probe pp[3];
	struct plan_probe *by_id[3] = { &pp[0], &pp[1], &pp[2] };
	struct plan_task task = { .cfg = &tc, .probes = pp, .n_probes = 3 };
	struct plan plan = { .tasks = &task, .n_tasks = 1, .n_probes = 3, .probe_by_id = by_id };
	const struct catalog_object *obj;
	const struct catalog_program *prog;
	static const char *const want[3][2] = {
		{ "a.B", "m" },
		{ "a.b.My Class", "-$$Nest$m" },
		{ "", "_ZN7android6Parcel5writeEPKvm" },
	};
	struct sinks *s;
	struct err e = { 0 };
	uint8_t buf[4096];
	struct sd_datagram d;
	char why[256];

	UT_ASSERT(rx >= 0);
	UT_EQ_INT(catalog_find_program("prog_MalwareSignal_uprobe_add_bound_client_uid", &obj,
				       &prog), 0);
	memset(pp, 0, sizeof(pp));
	for (int i = 0; i < 3; i++) {
		pp[i] = (struct plan_probe){ .task_cfg = &tc, .cfg = &pc[i], .obj = obj,
					     .prog = prog };
		pp[i].desc.task_id = 9;
	}
	UT_ASSERT(self_program_code(&pp[0]) > 0);
	UT_EQ_INT(sinks_open(&s, &opt, &e), 0);
	self_atoms_attached(s, &plan, 100002);
	UT_EQ_INT(sinks_flush(s, &e), 0);
	for (int i = 0; i < 3; i++) {
		long n = st_recv(rx, buf, sizeof(buf));
		UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
		UT_EQ_INT(d.atom_id, 100002);
		UT_EQ_INT(d.n_fields, 5);
		UT_EQ_INT(d.fields[0].i64, self_program_code(&pp[0]));
		UT_EQ_INT(d.fields[1].len, strlen(want[i][0]));
		UT_ASSERT(!memcmp(d.fields[1].data, want[i][0], d.fields[1].len));
		UT_EQ_INT(d.fields[2].len, strlen(want[i][1]));
		UT_ASSERT(!memcmp(d.fields[2].data, want[i][1], d.fields[2].len));
		UT_EQ_INT(d.fields[3].len, strlen("system_server"));
		UT_EQ_INT(d.fields[4].i64, 9);
	}
	self_atoms_error(s, &plan, 100003, SELF_ERROR_TASK_EXECUTION_FAILED,
			 SELF_FAILED_ATTACHING);   /* flushed by itself */
	long n = st_recv(rx, buf, sizeof(buf));
	UT_EQ_INT(sd_decode_datagram(buf, (size_t)n, &d, why, sizeof(why)), 0);
	UT_EQ_INT(d.atom_id, 100003);
	UT_EQ_INT(d.n_fields, 5);
	UT_EQ_INT(d.fields[0].i64, SELF_ERROR_TASK_EXECUTION_FAILED);
	UT_EQ_INT(d.fields[1].i64, 9);
	UT_EQ_INT(d.fields[4].i64, SELF_FAILED_ATTACHING);
	UT_EQ_INT(st_recv(rx, buf, sizeof(buf)), -1);   /* one task: one atom */
	sinks_close(s);
	close(rx);
}
