/* Run accounting (probe/accounting.c): per-probe events lost at the sinks,
 * a failed flush losing its batch, statsd drops, and the polled atoms (one
 * per task and map, counting every probe of that map). */
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog.h"
#include "probe/accounting.h"
#include "ut.h"

struct fixture {
	struct plan_probe probes[3];
	struct plan_probe *by_id[3];
	struct plan_task task;
	struct plan plan;
	uint64_t delivered[3];
	struct loop_task_stats ts;
	struct loop_stats st;
};

/* Three probes of one task: 0 and 1 write GenericInstrumentation's
 * call_detail_buf, 2 its call_timestamp_buf. */
static void fixture_init(struct fixture *f)
{
	const struct catalog_object *o;
	const struct catalog_program *detail, *stamp;

	memset(f, 0, sizeof(*f));
	catalog_find_program("prog_GenericInstrumentation_uprobe_call_detail", &o, &detail);
	catalog_find_program("prog_GenericInstrumentation_uprobe_call_timestamp", &o, &stamp);
	for (uint32_t i = 0; i < 3; i++) {
		f->probes[i].id = i;
		f->probes[i].obj = o;
		f->probes[i].prog = i < 2 ? detail : stamp;
		f->probes[i].desc.task_id = 77;
		f->by_id[i] = &f->probes[i];
		f->delivered[i] = 10 * (i + 1);
	}
	f->task = (struct plan_task){ .probes = f->probes, .n_probes = 3 };
	f->plan = (struct plan){ .tasks = &f->task, .n_tasks = 1, .n_probes = 3,
				 .probe_by_id = f->by_id };
	f->ts = (struct loop_task_stats){ .start_boot_ns = 1000000000,
					  .end_boot_ns = 3500000000 };
	f->st = (struct loop_stats){ .delivered = f->delivered, .tasks = &f->ts };
}

UT_TEST(accounting_counts_sink_losses_per_probe)
{
	struct fixture f;
	struct accounting a;

	fixture_init(&f);
	UT_EQ_INT(accounting_init(&a, 3), 0);
	accounting_stream_drop(&a, &f.probes[1].desc);
	accounting_stream_drop(&a, NULL);             /* a drop record: no probe */
	accounting_stream_drop(&a, &f.probes[2].desc);
	accounting_stream_drop(&a, &f.probes[2].desc);
	accounting_sink_drop(&a, &f.probes[0].desc);
	accounting_sink_drop(&a, &f.probes[2].desc);
	accounting_sink_drop(&a, NULL);
	UT_EQ_U64(a.dropped_stream[1], 1);
	UT_EQ_U64(a.dropped_stream[2], 2);
	UT_EQ_U64(a.dropped_sink[0], 1);
	/* per output: a probe's dropped_sink is the most one output lost */
	uint64_t run_ns;
	struct probe_stats *rows = accounting_rows(&a, &f.plan, NULL, &f.st, &run_ns);
	UT_ASSERT(rows);
	UT_EQ_U64(rows[0].dropped_sink, 1);
	UT_EQ_U64(rows[1].dropped_sink, 1);
	UT_EQ_U64(rows[2].dropped_sink, 2);
	free(rows);
	accounting_free(&a);
}

static int n_polled;
static int64_t polled[4][4];

static void collect(void *ctx, const struct atom *at)
{
	UT_ASSERT(n_polled < 4 && at->n_fields == 4 && at->atom_id == 4242);
	for (size_t i = 0; i < 4; i++)
		polled[n_polled][i] = at->fields[i].type == FIELD_INT32 ? at->fields[i].v.i32
									: at->fields[i].v.i64;
	n_polled++;
}

UT_TEST(accounting_polled_atoms_one_per_map)
{
	struct fixture f;

	fixture_init(&f);
	n_polled = 0;
	accounting_polled_atoms(&f.plan, &f.st, 4242, collect, NULL);
	UT_EQ_INT(n_polled, 2);
	UT_ASSERT(polled[0][0] > 0 && polled[1][0] > 0 && polled[0][0] != polled[1][0]);
	UT_EQ_INT(polled[0][1], 2500);                /* ms polled */
	UT_EQ_INT(polled[0][2], 10 + 20);             /* both call_detail_buf probes */
	UT_EQ_INT(polled[1][2], 30);
	UT_EQ_INT(polled[0][3], 77);
}
