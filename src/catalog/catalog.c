#include "catalog/catalog.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/xz.h"
#include "records.h"
/* Every object of this arch, normal and legacy, as one xz stream (mk/embed-bpf.sh). */
#include "bpf_objects.z.h"

static const struct catalog_program generic_programs[] = {
	{ .name = "call_detail", .map = "call_detail_buf", .record_kind = UPS_REC_CALL_DETAIL },
	{ .name = "call", .map = "output_buf", .record_kind = UPS_REC_CALL_DETAIL },
	{ .name = "call_timestamp",
	  .map = "call_timestamp_buf",
	  .record_kind = UPS_REC_CALL_TIMESTAMP },
	{ .name = "call_timestamp_1",
	  .map = "call_timestamp_buf",
	  .record_kind = UPS_REC_CALL_TIMESTAMP },
	{ .name = "call_timestamp_2",
	  .map = "call_timestamp_buf",
	  .record_kind = UPS_REC_CALL_TIMESTAMP },
	{ .name = "call_timestamp_3",
	  .map = "call_timestamp_buf",
	  .record_kind = UPS_REC_CALL_TIMESTAMP },
	{ .name = "call_timestamp_4",
	  .map = "call_timestamp_buf",
	  .record_kind = UPS_REC_CALL_TIMESTAMP },
	{ .name = "call_timestamp_5",
	  .map = "call_timestamp_buf",
	  .record_kind = UPS_REC_CALL_TIMESTAMP },
};

static const char *const generic_maps[] = { "call_detail_buf", "call_timestamp_buf", "output_buf",
					     NULL };

static const struct catalog_program uprobestats_programs[] = {
	{ .name = "call_return", .map = "call_return_buf", .record_kind = UPS_REC_CALL_RETURN,
	  .is_return = true, .entry = "call_return_entry",
	  .exit_entry = "call_return_exit_entry", .exit = "call_return_exit" },
	{ .name = "call_latency", .is_return = true, .entry = "call_latency_entry",
	  .histogram = true, .exit_entry = "exit_entry", .exit = "call_latency_exit" },
	{ .name = "call_args", .map = "call_args_buf", .record_kind = UPS_REC_CALL_ARGS },
	{ .name = "aggregate", .aggregate = true },
	{ .name = "aggregate_return", .is_return = true, .entry = "agg_entry", .aggregate = true,
	  .exit_entry = "agg_entry", .exit = "aggregate_exit" },
	{ .name = "traffic", .is_return = true, .entry = "agg_entry", .traffic = true,
	  .exit_entry = "agg_entry", .exit = "traffic_exit" },
};

static const char *const uprobestats_maps[] = { "call_return_buf", "call_args_buf", NULL };

/* An entry program writing records of one kind to one output. */
#define PROG(prog, output, kind) { .name = prog, .map = output, .record_kind = kind }

#define IDLE_RECORDS "update_device_idle_temp_allowlist_records"

static const struct catalog_program process_programs[] = {
	PROG("set_uid_temp_allowlist_state", "output_buf", UPS_REC_SET_UID_TEMP_ALLOWLIST_STATE),
	PROG("update_device_idle_temp_allowlist", IDLE_RECORDS, UPS_REC_UPDATE_DEVICE_IDLE),
	/* The 288-byte record of the versions before method_identifier. */
	PROG("update_device_idle_temp_allowlist_legacy", IDLE_RECORDS,
	     UPS_REC_UPDATE_DEVICE_IDLE_LEGACY),
	PROG("set_pid", "process_change_output_buf", UPS_REC_PROCESS_CHANGE),
	PROG("make_active", "process_change_output_buf", UPS_REC_PROCESS_CHANGE),
	PROG("on_process_active", "process_change_output_buf", UPS_REC_PROCESS_CHANGE),
};

static const char *const process_maps[] = {
	"output_buf", IDLE_RECORDS, "process_change_output_buf", NULL,
};

static const struct catalog_program bitmap_programs[] = {
	PROG("bitmap_constructor_heap", "output_buf", UPS_REC_BITMAP_CONSTRUCTOR_HEAP),
	PROG("bitmap_creation", "output", UPS_REC_BITMAP_EVENT),
	PROG("bitmap_creation_for_snapshot", "output", UPS_REC_BITMAP_EVENT),
	PROG("apply_free_function", "output", UPS_REC_BITMAP_EVENT),
	PROG("activity_perform_start", "output", UPS_REC_BITMAP_EVENT),
	PROG("create_scaled_bitmap", "output", UPS_REC_BITMAP_EVENT),
};

static const char *const bitmap_maps[] = { "output_buf", "output", NULL };

static const struct catalog_program disruptive_programs[] = {
	PROG("bind_service_locked", "BindServiceLocked_output_buf", UPS_REC_BIND_SERVICE_LOCKED),
	PROG("set_component_enabled_setting", "ComponentEnabledSetting_output_buf",
	     UPS_REC_COMPONENT_ENABLED_SETTING),
};

static const char *const disruptive_maps[] = {
	"BindServiceLocked_output_buf", "ComponentEnabledSetting_output_buf", NULL,
};

static const struct catalog_program binder_programs[] = {
	PROG("exec_transact_internal", "output_buf", UPS_REC_BINDER_TRANSACTION),
};

static const char *const binder_maps[] = { "output_buf", NULL };

static const struct catalog_program accessibility_programs[] = {
	PROG("grant_runtime_permission", "output_buf", UPS_REC_ACCESSIBILITY_EVENT),
	PROG("dispatch_gesture", "output_buf", UPS_REC_ACCESSIBILITY_EVENT),
};

static const char *const accessibility_maps[] = { "output_buf", NULL };

static const struct catalog_program art_test_programs[] = {
	PROG("update_device_idle_temp_allowlist", "output_buf_aot", UPS_REC_ART_TEST_AOT),
	PROG("start_activity_as_user", "output_buf_jit", UPS_REC_START_ACTIVITY_AS_USER),
};

static const char *const art_test_maps[] = { "output_buf_aot", "output_buf_jit", NULL };

/* Historical programs (LMODroid/CalyxOS configs): docs/programs.md. */
static const struct catalog_program malware_signal_programs[] = {
	PROG("add_bound_client_uid", "output_buf", UPS_REC_MALWARE_SIGNAL),
	PROG("set_component_enabled_setting", "output_buf", UPS_REC_MALWARE_SIGNAL),
};

static const char *const malware_signal_maps[] = { "output_buf", NULL };

static const struct catalog_program binder_start_activity_programs[] = {
	PROG("activity_task_manager_startActivity", "output_buf", UPS_REC_BINDER_START_ACTIVITY),
};

static const char *const binder_start_activity_maps[] = { "output_buf", NULL };

#define OBJECT(obj_name, progs, maps, ...)                          \
	{                                                           \
		.name = #obj_name,                                  \
		.elf_off = obj_name##_bpf_off,                      \
		.elf_size = obj_name##_bpf_size,                    \
		.legacy_elf_off = obj_name##_legacy_bpf_off,        \
		.legacy_elf_size = obj_name##_legacy_bpf_size,      \
		.programs = progs,                                  \
		.n_programs = sizeof(progs) / sizeof(progs[0]),     \
		.ring_maps = maps,                                  \
		__VA_ARGS__                                         \
	}

static const struct catalog_object objects[] = {
	OBJECT(GenericInstrumentation, generic_programs, generic_maps),
	OBJECT(ProcessManagement, process_programs, process_maps),
	OBJECT(BitmapAllocation, bitmap_programs, bitmap_maps),
	OBJECT(DisruptiveApp, disruptive_programs, disruptive_maps),
	OBJECT(Binder, binder_programs, binder_maps, .prepare = CATALOG_PREPARE_BINDER_FILTER),
	OBJECT(Accessibility, accessibility_programs, accessibility_maps),
	OBJECT(ArtTest, art_test_programs, art_test_maps),
	OBJECT(Uprobestats, uprobestats_programs, uprobestats_maps),
	OBJECT(MalwareSignal, malware_signal_programs, malware_signal_maps),
	OBJECT(BinderExecTransactInternal, binder_start_activity_programs,
	       binder_start_activity_maps),
};

#define N_OBJECTS (sizeof(objects) / sizeof(objects[0]))

/* The objects as the build embedded them: one `xz -9e --check=crc32` (LZMA2) stream over
 * all of them, decoded by our own .xz reader (formats/xz.h, also .gnu_debugdata's).
 * Decoded once, at the first object loaded (about 1 ms per object, ~20 ms in all), and
 * kept for the run (about 1 MiB): released at exit. */
static uint8_t *decoded;

static void release_decoded(void)
{
	free(decoded);
	decoded = NULL;
}

int catalog_decode_blob(const unsigned char *z, size_t z_size, size_t size, uint8_t **out,
			struct err *err)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int rc = xz_decode("bpf_objects", z, z_size, size, &buf, &len, err);

	if (rc == 0 && len != size) {
		free(buf);
		rc = err_set(err, -EINVAL, "decoded %zu of %zu bytes", len, size);
	}
	if (rc < 0)
		return err_prefix(err, "embedded BPF objects (the binary is damaged)");
	*out = buf;
	return 0;
}

void catalog_embedded(const unsigned char **z, size_t *z_size, size_t *size)
{
	*z = bpf_objects_z;
	*z_size = sizeof(bpf_objects_z);
	*size = bpf_objects_size;
}

/* A malloc'ed copy of bytes [off, off + size) of the decoded objects. */
static int object_copy(const char *name, size_t off, size_t size, void **bytes, size_t *out_size,
		       struct err *err)
{
	if (!decoded) {
		int rc = catalog_decode_blob(bpf_objects_z, sizeof(bpf_objects_z),
					     bpf_objects_size, &decoded, err);
		if (rc < 0)
			return err_prefix(err, "object %s", name);
		atexit(release_decoded);
	}
	if (off > bpf_objects_size || size > bpf_objects_size - off)
		return err_set(err, -EINVAL, "embedded object %s lies outside the objects", name);
	if (!(*bytes = malloc(size ? size : 1)))
		return err_set(err, -ENOMEM, "embedded object %s: out of memory", name);
	memcpy(*bytes, decoded + off, size);
	*out_size = size;
	return 0;
}

int catalog_object_elf(const struct catalog_object *o, void **bytes, size_t *size,
		       struct err *err)
{
	return object_copy(o->name, o->elf_off, o->elf_size, bytes, size, err);
}

int catalog_object_legacy_elf(const struct catalog_object *o, void **bytes, size_t *size,
			      struct err *err)
{
	return object_copy(o->name, o->legacy_elf_off, o->legacy_elf_size, bytes, size, err);
}

bool catalog_name_ends(const char *name, const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix);

	return n >= k && strcmp(name + n - k, suffix) == 0;
}

size_t catalog_object_count(void)
{
	return N_OBJECTS;
}

const struct catalog_object *catalog_object_at(size_t i)
{
	return i < N_OBJECTS ? &objects[i] : NULL;
}

/* Splits "<prefix><Object>_<rest>" where Object is a known object name. */
static const struct catalog_object *match_object(const char *name, const char *prefix,
						 const char **rest)
{
	size_t plen = strlen(prefix);

	if (!name || strncmp(name, prefix, plen) != 0)
		return NULL;
	name += plen;
	for (size_t i = 0; i < N_OBJECTS; i++) {
		size_t olen = strlen(objects[i].name);
		if (strncmp(name, objects[i].name, olen) == 0 && name[olen] == '_') {
			*rest = name + olen + 1;
			return &objects[i];
		}
	}
	return NULL;
}

int catalog_find_program(const char *config_name, const struct catalog_object **obj,
			 const struct catalog_program **prog)
{
	const char *rest;
	const struct catalog_object *o = match_object(config_name, "prog_", &rest);

	if (!o)
		return -ENOENT;
	for (const char *kinds[] = { "uprobe_", "uretprobe_" }, **k = kinds; k < kinds + 2; k++) {
		size_t klen = strlen(*k);
		if (strncmp(rest, *k, klen) != 0)
			continue;
		for (size_t i = 0; i < o->n_programs; i++) {
			const struct catalog_program *p = &o->programs[i];
			if (p->is_return == (k != kinds) && strcmp(rest + klen, p->name) == 0) {
				*obj = o;
				*prog = p;
				return 0;
			}
		}
	}
	return -ENOENT;
}

int catalog_find_map(const char *config_name, const struct catalog_object **obj,
		     const char **map)
{
	const char *rest;
	const struct catalog_object *o = match_object(config_name, "map_", &rest);

	if (!o)
		return -ENOENT;
	for (size_t i = 0; o->ring_maps[i]; i++) {
		if (strcmp(rest, o->ring_maps[i]) == 0) {
			*obj = o;
			*map = o->ring_maps[i];
			return 0;
		}
	}
	return -ENOENT;
}

bool catalog_has_program(const char *config_name, void *unused)
{
	const struct catalog_object *o;
	const struct catalog_program *p;
	return catalog_find_program(config_name, &o, &p) == 0;
}

bool catalog_has_map(const char *config_name, void *unused)
{
	const struct catalog_object *o;
	const char *m;
	return catalog_find_map(config_name, &o, &m) == 0;
}

static void append(char *buf, size_t size, size_t *len, const char *s)
{
	int n = snprintf(buf + *len, size - *len, "%s%s", *len ? ", " : "", s);
	if (n > 0)
		*len = *len + (size_t)n < size ? *len + (size_t)n : size - 1;
}

void catalog_program_names(char *buf, size_t size)
{
	size_t len = 0;
	char name[256];

	buf[0] = '\0';
	for (size_t i = 0; i < N_OBJECTS; i++) {
		for (size_t j = 0; j < objects[i].n_programs; j++) {
			const struct catalog_program *p = &objects[i].programs[j];
			snprintf(name, sizeof(name), "prog_%s_%s_%s", objects[i].name,
				 p->is_return ? "uretprobe" : "uprobe", p->name);
			append(buf, size, &len, name);
		}
	}
}

void catalog_map_names(char *buf, size_t size)
{
	size_t len = 0;
	char name[256];

	buf[0] = '\0';
	for (size_t i = 0; i < N_OBJECTS; i++) {
		for (size_t j = 0; objects[i].ring_maps[j]; j++) {
			snprintf(name, sizeof(name), "map_%s_%s", objects[i].name,
				 objects[i].ring_maps[j]);
			append(buf, size, &len, name);
		}
	}
}
