/* gen_trace — writes a Trace Event Format file with the trace sink, for the
 * viewer test.  The slices are known in advance (test/viewer/expected.json
 * lists them): on thread 100 ("main") an enter/exit pair "Activity.onCreate"
 * around three uretprobe slices "Bitmap.<init>"; on thread 101 ("worker")
 * two uretprobe slices "Binder.execTransact".  Usage: gen_trace OUT.json */
#include <stdio.h>

#include "sink/trace_out.h"

static const struct probe_desc on_create_enter = {
	.program = "prog_enter", .method = "void android.app.Activity.onCreate(android.os.Bundle)",
	.role = PROBE_ENTER, .slice = "Activity.onCreate",
};
static const struct probe_desc on_create_exit = {
	.program = "prog_exit", .method = "void android.app.Activity.onCreate(android.os.Bundle)",
	.role = PROBE_EXIT, .slice = "Activity.onCreate",
};
static const struct probe_desc bitmap = {
	.program = "prog_ret", .method = "void android.graphics.Bitmap.<init>(long, int, int)",
};
static const struct probe_desc binder = {
	.program = "prog_ret", .method = "boolean android.os.Binder.execTransact(int, long)",
};

#define MS 1000000ull
#define T0 (1000 * MS) /* one second after boot */

static void put(struct trace_out *t, const struct probe_desc *p, enum event_kind k, uint32_t tid,
		uint64_t end_ms, uint64_t dur_ms)
{
	struct field f = { .name = "width", .type = FIELD_INT32, .v.i32 = 64 };
	struct event ev = { .kind = k, .boot_ns = T0 + end_ms * MS, .duration_ns = dur_ms * MS,
			    .pid = 100, .tid = tid, .comm = tid == 100 ? "main" : "worker",
			    .process = "com.example.app", .probe = p, .fields = &f, .n_fields = 1 };
	trace_event(t, &ev);
}

int main(int argc, char **argv)
{
	struct trace_out t;
	struct err e = { 0 };
	FILE *f;

	if (argc != 2 || !(f = fopen(argv[1], "w"))) {
		fprintf(stderr, "usage: gen_trace OUT.json\n");
		return 2;
	}
	if (trace_open(&t, f, TRACE_FORMAT_JSON, &e) < 0) {
		fprintf(stderr, "gen_trace: %s\n", e.msg);
		return 1;
	}
	put(&t, &on_create_enter, EVENT_RECORD, 100, 0, 0);
	put(&t, &bitmap, EVENT_RETURN, 100, 3, 2);
	put(&t, &bitmap, EVENT_RETURN, 100, 6, 2);
	put(&t, &bitmap, EVENT_RETURN, 100, 9, 2);
	put(&t, &on_create_exit, EVENT_RECORD, 100, 10, 0);
	put(&t, &binder, EVENT_RETURN, 101, 5, 4);
	put(&t, &binder, EVENT_RETURN, 101, 12, 5);
	trace_close(&t);
	return fclose(f) == 0 && t.o.error == 0 ? 0 : 1;
}
