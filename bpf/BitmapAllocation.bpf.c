// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* BitmapAllocation — upstream's bitmap programs (§3.3):
 *   bitmap_constructor_heap        a "did it fire" probe: the constant 123
 *   bitmap_creation                Bitmap.<init>(long, long nativeWrapper, int w, int h, ...)
 *   bitmap_creation_for_snapshot   the same plus size and native pointer; the
 *                                  bitmap is remembered in active_bitmaps
 *   apply_free_function            NativeAllocationRegistry$CleanerThunk.run():
 *                                  a deallocation, for remembered bitmaps only
 *   activity_perform_start         Activity.performStart(String): the activity class
 *   create_scaled_bitmap           static Bitmap.createScaledBitmap(Bitmap, int, int, boolean) */
#include "ups_bpf.h"

UPS_OUTPUT(output_buf);
UPS_OUTPUT(output);

/* Bitmaps seen by bitmap_creation_for_snapshot and not yet freed, per process.
 * The value is the bitmap's size, so the deallocation record can carry it. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 5000);
	__type(key, struct bitmap_key);
	__type(value, __u32);
} active_bitmaps SEC(".maps");

#define BITMAP_PIXEL_STORAGE_TYPE_OFF 0x78  /* native Bitmap: pixel storage type */
#define BITMAP_SIZE_OFF 152                 /* native Bitmap: allocation size */
#define JAVA_BITMAP_NATIVE_PTR_OFF 40       /* Bitmap.mNativePtr (long) */
#define JAVA_BITMAP_HEIGHT_OFF 60           /* Bitmap.mHeight */
#define JAVA_BITMAP_WIDTH_OFF 64            /* Bitmap.mWidth */
#define CLEANER_THUNK_NATIVE_PTR_OFF 16     /* CleanerThunk's native pointer (long) */
#define ACTIVITY_COMPONENT_OFF 76           /* Activity.mComponent */
#define COMPONENT_NAME_CLASS_OFF 8          /* ComponentName.mClass */

SEC("uprobe/bitmap_constructor_heap")
int bitmap_constructor_heap(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct rec_bitmap_constructor_heap *rec;

	if (!ups_enter(ctx, id))
		return 0;
	rec = UPS_RESERVE(ctx, output_buf, struct rec_bitmap_constructor_heap);
	if (!rec)
		return 0;
	UPS_BEGIN(ctx, rec, id, UPS_REC_BITMAP_CONSTRUCTOR_HEAP);
	rec->p.value = 123;
	UPS_SUBMIT(ctx, output_buf, rec);
	return 0;
}

static __always_inline struct rec_bitmap_event *bitmap_event_begin(void *ctx, __u64 id, __u32 type)
{
	struct rec_bitmap_event *rec = UPS_RESERVE(ctx, output, struct rec_bitmap_event);

	if (rec) {
		UPS_BEGIN(ctx, rec, id, UPS_REC_BITMAP_EVENT);
		rec->p.type = type;
		rec->p.uid = (__u32)bpf_get_current_uid_gid();
	}
	return rec;
}

/* The BitmapWrapper's first 8 bytes point at the native Bitmap. */
static __always_inline __u64 wrapper_bitmap(__u64 wrapper)
{
	return wrapper ? ups_read_u64(wrapper) : 0;
}

static __always_inline int bitmap_creation_common(void *ctx, int snapshot)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 wrapper = UPS_ARG(ctx, 3);
	__u64 bitmap = wrapper_bitmap(wrapper);
	struct rec_bitmap_event *rec;

	if (!ups_enter(ctx, id))
		return 0;
	rec = bitmap_event_begin(ctx, id, BITMAP_EVENT_ALLOCATION);
	if (!rec)
		return 0;
	rec->p.width = (__u32)UPS_ARG(ctx, 4);
	rec->p.height = (__u32)UPS_ARG(ctx, 5);
	if (bitmap)
		rec->p.pixel_storage_type = ups_read_u32(bitmap + BITMAP_PIXEL_STORAGE_TYPE_OFF);
	if (snapshot) {
		struct bitmap_key key = { .tgid = id >> 32, .native_ptr = wrapper };
		__u32 size = bitmap ? ups_read_u32(bitmap + BITMAP_SIZE_OFF) : 0;

		rec->p.bitmap_size = size;
		rec->p.native_ptr = wrapper;
		bpf_map_update_elem(&active_bitmaps, &key, &size, BPF_NOEXIST);
	}
	UPS_SUBMIT(ctx, output, rec);
	return 0;
}

SEC("uprobe/bitmap_creation")
int bitmap_creation(void *ctx)
{
	return bitmap_creation_common(ctx, 0);
}

SEC("uprobe/bitmap_creation_for_snapshot")
int bitmap_creation_for_snapshot(void *ctx)
{
	return bitmap_creation_common(ctx, 1);
}

SEC("uprobe/apply_free_function")
int apply_free_function(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 thunk = UPS_REF(UPS_ARG(ctx, 1));
	struct bitmap_key key = { .tgid = id >> 32 };
	struct rec_bitmap_event *rec;
	__u32 *size, bytes;

	if (!ups_pid_ok(id) || !thunk)
		return 0;
	key.native_ptr = ups_read_u64(thunk + CLEANER_THUNK_NATIVE_PTR_OFF);
	size = bpf_map_lookup_elem(&active_bitmaps, &key);
	if (!size)
		return 0;   /* not a bitmap we saw allocated */
	bytes = *size;
	bpf_map_delete_elem(&active_bitmaps, &key);
	ups_count_hit(ctx);
	rec = bitmap_event_begin(ctx, id, BITMAP_EVENT_DEALLOCATION);
	if (!rec)
		return 0;
	rec->p.native_ptr = key.native_ptr;
	rec->p.bitmap_size = bytes;
	UPS_SUBMIT(ctx, output, rec);
	return 0;
}

SEC("uprobe/activity_perform_start")
int activity_perform_start(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 component;
	struct rec_bitmap_event *rec;

	if (!ups_enter(ctx, id))
		return 0;
	rec = bitmap_event_begin(ctx, id, BITMAP_EVENT_ACTIVITY_START);
	if (!rec)
		return 0;
	component = ups_read_ref(UPS_REF(UPS_ARG(ctx, 1)), ACTIVITY_COMPONENT_OFF);
	ups_read_jstring_field(rec->p.activity_name, sizeof(rec->p.activity_name), component,
			       COMPONENT_NAME_CLASS_OFF);
	UPS_SUBMIT(ctx, output, rec);
	return 0;
}

/* Static method: no `this`, so the source Bitmap is x1 and the sizes x2, x3. */
SEC("uprobe/create_scaled_bitmap")
int create_scaled_bitmap(void *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u64 src = UPS_REF(UPS_ARG(ctx, 1));
	__u64 wrapper, bitmap;
	struct rec_bitmap_event *rec;

	if (!ups_enter(ctx, id))
		return 0;
	rec = bitmap_event_begin(ctx, id, BITMAP_EVENT_BITMAP_SCALED);
	if (!rec)
		return 0;
	rec->p.scaled_width = (__u32)UPS_ARG(ctx, 2);
	rec->p.scaled_height = (__u32)UPS_ARG(ctx, 3);
	if (src) {
		rec->p.width = ups_read_u32(src + JAVA_BITMAP_WIDTH_OFF);
		rec->p.height = ups_read_u32(src + JAVA_BITMAP_HEIGHT_OFF);
		wrapper = ups_read_u64(src + JAVA_BITMAP_NATIVE_PTR_OFF);
		bitmap = wrapper_bitmap(wrapper);
		rec->p.native_ptr = wrapper;
		if (bitmap) {
			rec->p.pixel_storage_type =
				ups_read_u32(bitmap + BITMAP_PIXEL_STORAGE_TYPE_OFF);
			rec->p.bitmap_size = ups_read_u32(bitmap + BITMAP_SIZE_OFF);
		}
	}
	UPS_SUBMIT(ctx, output, rec);
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
