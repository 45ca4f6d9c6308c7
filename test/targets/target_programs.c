/* target_programs — the functions the upstream programs probe, called with
 * the register, stack and object shapes those programs read (art_fake.h).
 *
 *   target_programs [--go-fifo PATH]
 *
 * Waits for a line on the FIFO (when given), makes every call once, in one
 * thread, and prints one JSON line per (program, call) on stdout: the fields
 * that program's record must decode to, or "emit": false when the program
 * must write nothing for that call.  The e2e tests compare those lines with
 * uprobestats' JSON events. */
#include "art_fake.h"
#include "go_fifo.h"

/* Each probed function has a body of its own (no two can be folded into one
 * address) and is only ever called through ups_tramp. */
static volatile int sink;

#define PROBED(name, id)                                                           \
	__attribute__((noinline, noipa, used, visibility("default"))) void name(void); \
	void name(void)                                                            \
	{                                                                          \
		sink = id;                                                         \
	}

PROBED(ups_set_uid_temp_allowlist_state, 1)
PROBED(ups_update_device_idle_temp_allowlist, 2)
PROBED(ups_set_pid, 3)
PROBED(ups_make_active, 4)
PROBED(ups_on_process_active, 5)
PROBED(ups_bitmap_init, 6)
PROBED(ups_cleaner_thunk_run, 7)
PROBED(ups_activity_perform_start, 8)
PROBED(ups_create_scaled_bitmap, 9)
PROBED(ups_bind_service_locked, 10)
PROBED(ups_set_component_enabled_setting, 11)
PROBED(ups_exec_transact_internal, 12)
PROBED(ups_grant_runtime_permission, 13)
PROBED(ups_start_activity_as_user, 14)
PROBED(ups_add_bound_client_uid, 15)

#define ART_METHOD 0x5151515151515151ULL   /* x0: an ArtMethod* nobody reads */
#define JUNK_HIGH 0xdeadbeef00000000ULL    /* undefined upper half of a 32-bit argument */

static void call(void (*fn)(void), uint64_t *regs, uint8_t *base)
{
	ups_tramp(fn, regs, base);
}

/* The prefix of s that a field of `size` bytes holds: whole UTF-8 characters
 * while one byte stays for the NUL. */
static const char *fit(const char *s, size_t size)
{
	static char buf[1024];
	size_t o = 0;

	while (s[o]) {
		unsigned char c = (unsigned char)s[o];
		size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
		if (o + len > size - 1)
			break;
		o += len;
	}
	memcpy(buf, s, o);
	buf[o] = 0;
	return buf;
}

/* ---- ProcessManagement ---- */

static void set_uid_temp_allowlist_state(void)
{
	static const struct { uint32_t uid; uint64_t on; int want; } c[] = {
		{ 10123, JUNK_HIGH | 1, 1 },
		{ 1000, 0x5555555500000000ULL, 0 },   /* low half 0: false */
	};
	for (size_t i = 0; i < 2; i++) {
		uint64_t regs[8] = { ART_METHOD, jobj(64), JUNK_HIGH | c[i].uid, c[i].on };
		call(ups_set_uid_temp_allowlist_state, regs, out_args());
		exp_begin("set_uid_temp_allowlist_state", "ups_set_uid_temp_allowlist_state", 1);
		exp_int("uid", c[i].uid);
		exp_bool("on_allowlist", c[i].want);
		exp_end();
	}
}

static void idle_expect(const char *prog, int with_id, int32_t uid, int adding, int64_t dur,
			int32_t type, int32_t code, const char *reason, int32_t calling)
{
	exp_begin(prog, "ups_update_device_idle_temp_allowlist", 1);
	if (with_id)
		exp_u64("method_identifier",
			(uint64_t)(uintptr_t)ups_update_device_idle_temp_allowlist);
	exp_int("changing_uid", uid);
	exp_bool("adding", adding);
	exp_int("duration_ms", dur);
	exp_int("type", type);
	exp_int("reason_code", code);
	exp_str("reason", fit(reason, 256));
	exp_int("calling_uid", calling);
	exp_end();
}

/* updateDeviceIdleTempAllowlist(int[], int, boolean, long, int, int, String, int):
 * type, reasonCode in x6, x7 (arm64) or slots 32, 36; reason @40, callingUid @44. */
static void update_device_idle_temp_allowlist(void)
{
	static const struct {
		int32_t uid; int adding; int64_t dur; int32_t type, code, calling;
		const char *reason;
	} c[] = {
		{ 10050, 1, 300000, 1, 316, 2000, "shell" },
		{ 10051, 0, -5, 0, 7, 1000, "café ☕ 𝄞 ünïcødé" },   /* UTF-16 String */
	};
	for (size_t i = 0; i < 2; i++) {
		uint8_t *base = out_args();
		uint64_t regs[8] = { ART_METHOD, jobj(64), jobj(16), JUNK_HIGH | (uint32_t)c[i].uid,
				     (uint64_t)c[i].adding, (uint64_t)c[i].dur,
				     (uint32_t)c[i].type, (uint32_t)c[i].code };
		slot32(base, 32, (uint32_t)c[i].type);
		slot32(base, 36, (uint32_t)c[i].code);
		slot32(base, 40, jstr(c[i].reason));
		slot32(base, 44, (uint32_t)c[i].calling);
		call(ups_update_device_idle_temp_allowlist, regs, base);
		idle_expect("update_device_idle_temp_allowlist", 1, c[i].uid, c[i].adding, c[i].dur,
			    c[i].type, c[i].code, c[i].reason, c[i].calling);
		idle_expect("update_device_idle_temp_allowlist_legacy", 0, c[i].uid, c[i].adding,
			    c[i].dur, c[i].type, c[i].code, c[i].reason, c[i].calling);
		idle_expect("art_test_update_device_idle_temp_allowlist", 1, c[i].uid, c[i].adding,
			    c[i].dur, c[i].type, c[i].code, c[i].reason, c[i].calling);
	}
}

static void process_expect(const char *prog, const char *fn, int32_t pid, int32_t uid,
			   const char *name)
{
	exp_begin(prog, fn, 1);
	exp_int("pid", pid);
	exp_int("uid", uid);
	exp_str("process_name", fit(name, 256));
	exp_end();
}

static void process_change(void)
{
	char long_name[301];
	uint32_t pr, ppr, app;

	/* setPid(int): uid @0xf4, processName @0xa0. */
	pr = jobj(0x100);
	put32(pr, 0xf4, 10077);
	put32(pr, 0xa0, jstr("com.example.app:remote"));
	call(ups_set_pid, (uint64_t[8]){ ART_METHOD, pr, JUNK_HIGH | 4321 }, out_args());
	process_expect("set_pid", "ups_set_pid", 4321, 10077, "com.example.app:remote");

	/* makeActive: pid @0xe4, uid @0xf0, processName @0xa0. */
	pr = jobj(0x100);
	put32(pr, 0xe4, 5555);
	put32(pr, 0xf0, 10078);
	put32(pr, 0xa0, jstr("com.android.systemui"));
	call(ups_make_active, (uint64_t[8]){ ART_METHOD, pr }, out_args());
	process_expect("make_active", "ups_make_active", 5555, 10078, "com.android.systemui");

	/* onProcessActive: mApp @8, its pid @524, uid @532, name @52 (300
	 * chars: the record keeps 255). */
	memset(long_name, 'n', 300);
	long_name[300] = 0;
	app = jobj(600);
	put32(app, 524, 6666);
	put32(app, 532, 10079);
	put32(app, 52, jstr(long_name));
	ppr = jobj(32);
	put32(ppr, 8, app);
	call(ups_on_process_active, (uint64_t[8]){ ART_METHOD, ppr }, out_args());
	process_expect("on_process_active", "ups_on_process_active", 6666, 10079, long_name);
}

/* ---- BitmapAllocation ---- */

struct fake_bitmap {
	uint64_t wrapper;          /* as passed: may carry a top-byte tag */
	uint32_t storage, size;
};

/* A native Bitmap (pixel storage type @0x78, size @152) behind a wrapper
 * whose first 8 bytes point at it; the pointer handed out carries a top-byte
 * tag, which the programs strip before reading. */
static struct fake_bitmap native_bitmap(uint32_t storage, uint32_t size, uint8_t tag)
{
	uint8_t *bitmap = calloc(1, 256);
	uint64_t *wrapper = calloc(1, 64);
	struct fake_bitmap b = { (uint64_t)(uintptr_t)wrapper | (uint64_t)tag << 56, storage,
				 size };

	if (!bitmap || !wrapper)
		die("calloc");
	memcpy(bitmap + 0x78, &storage, 4);
	memcpy(bitmap + 152, &size, 4);
	*wrapper = (uint64_t)(uintptr_t)bitmap;
	return b;
}

static void bitmap_expect(const char *prog, const char *fn, uint32_t type, uint32_t w, uint32_t h,
			  uint32_t sw, uint32_t sh, uint32_t storage, uint32_t size, uint64_t ptr,
			  const char *activity)
{
	exp_begin(prog, fn, 1);
	exp_int("type", type);
	exp_int("width", w);
	exp_int("height", h);
	exp_int("scaled_width", sw);
	exp_int("scaled_height", sh);
	exp_int("pixel_storage_type", storage);
	exp_int("bitmap_size", size);
	exp_int("uid", (long long)getuid());
	exp_u64("native_ptr", ptr);
	exp_str("activity_name", fit(activity, 128));
	exp_end();
}

/* Bitmap.<init>(long, long wrapper, int width, int height, ...). */
static void bitmap_init(struct fake_bitmap b, uint32_t w, uint32_t h)
{
	uint64_t regs[8] = { ART_METHOD, jobj(80), 0x1234, b.wrapper, JUNK_HIGH | w, h, 160, 1 };

	call(ups_bitmap_init, regs, out_args());
	bitmap_expect("bitmap_creation", "ups_bitmap_init", 0, w, h, 0, 0, b.storage, 0, 0, "");
	bitmap_expect("bitmap_creation_for_snapshot", "ups_bitmap_init", 0, w, h, 0, 0, b.storage,
		      b.size, b.wrapper, "");
	exp_begin("bitmap_constructor_heap", "ups_bitmap_init", 1);
	exp_int("value", 123);
	exp_end();
}

/* CleanerThunk.run(): the native pointer (8 bytes) @16 of this. */
static void cleaner_thunk_run(uint64_t ptr, int known, uint32_t size)
{
	uint32_t thunk = jobj(32);

	put64(thunk, 16, ptr);
	call(ups_cleaner_thunk_run, (uint64_t[8]){ ART_METHOD, JUNK_HIGH | thunk }, out_args());
	if (known)
		bitmap_expect("apply_free_function", "ups_cleaner_thunk_run", 1, 0, 0, 0, 0, 0,
			      size, ptr, "");
	else
		exp_begin("apply_free_function", "ups_cleaner_thunk_run", 0), exp_end();
}

/* Activity.performStart(String): mComponent @76, ComponentName.mClass @8. */
static void activity_perform_start(const char *cls)
{
	uint32_t activity = jobj(96), component = jobj(24);

	put32(activity, 76, component);
	put32(component, 8, jstr(cls));
	put32(component, 12, jstr("com.example"));
	call(ups_activity_perform_start, (uint64_t[8]){ ART_METHOD, activity, jstr("reason") },
	     out_args());
	bitmap_expect("activity_perform_start", "ups_activity_perform_start", 2, 0, 0, 0, 0, 0, 0,
		      0, cls);
}

/* static Bitmap.createScaledBitmap(Bitmap src, int, int, boolean): src in x1,
 * mNativePtr (long) @40, mHeight @60, mWidth @64. */
static void create_scaled_bitmap(struct fake_bitmap b)
{
	uint32_t src = jobj(80);

	put64(src, 40, b.wrapper);
	put32(src, 60, 600);
	put32(src, 64, 800);
	call(ups_create_scaled_bitmap, (uint64_t[8]){ ART_METHOD, src, JUNK_HIGH | 400, 300, 1 },
	     out_args());
	bitmap_expect("create_scaled_bitmap", "ups_create_scaled_bitmap", 3, 800, 600, 400, 300,
		      b.storage, b.size, b.wrapper, "");
}

static void bitmaps(void)
{
	struct fake_bitmap a = native_bitmap(1, 4000000, 0x2a), b = native_bitmap(3, 777, 0);

	activity_perform_start("com.example.MainActivity");
	bitmap_init(a, 1000, 1000);
	bitmap_init(b, 7, 3);
	create_scaled_bitmap(a);
	cleaner_thunk_run(a.wrapper, 1, a.size);
	cleaner_thunk_run(0x7777000, 0, 0);       /* never allocated: nothing */
	cleaner_thunk_run(a.wrapper, 0, 0);       /* freed already: nothing */
	activity_perform_start("com.example.Ünïcødé$Activity");
}

/* ---- DisruptiveApp ---- */

static uint32_t intent(const char *action, const char *pkg, const char *cn_pkg,
		       const char *cn_cls)
{
	uint32_t in = jobj(64), cn = 0;

	if (cn_pkg) {
		cn = jobj(24);
		put32(cn, 8, jstr(cn_cls));
		put32(cn, 12, jstr(cn_pkg));
	}
	put32(in, 8, action ? jstr(action) : 0);
	put32(in, 20, cn);
	put32(in, 48, pkg ? jstr(pkg) : 0);
	return in;
}

/* bindServiceLocked: Intent in x4, long flags in x7 / slot 32,
 * callingPackage @60. */
static void bind_service_locked(uint32_t in, int64_t flags, const char *caller,
				const char *want[5])
{
	uint8_t *base = out_args();
	uint64_t regs[8] = { ART_METHOD, jobj(64), jobj(16), jobj(16), in, jstr("type"),
			     jobj(16), (uint64_t)flags };

	slot64(base, 32, (uint64_t)flags);
	slot32(base, 60, jstr(caller));
	call(ups_bind_service_locked, regs, base);
	exp_begin("bind_service_locked", "ups_bind_service_locked", want != NULL);
	if (want) {
		exp_str("intent_action", want[0]);
		exp_str("intent_package", want[1]);
		exp_str("intent_component_name_package", want[2]);
		exp_str("intent_component_name_class", want[3]);
		exp_int("bind_flags", flags);
		exp_str("calling_package", want[4]);
	}
	exp_end();
}

/* setComponentEnabledSetting(ComponentName, int newState, int, int, String):
 * callingPackage in x6 / slot 28. */
static void set_component_enabled_setting(const char *pkg, const char *cls, int32_t state,
					  const char *caller)
{
	uint8_t *base = out_args();
	uint32_t cn = jobj(24), calling = jstr(caller);
	uint64_t regs[8] = { ART_METHOD, jobj(64), cn, JUNK_HIGH | (uint32_t)state, 0, 0, calling };

	put32(cn, 8, jstr(cls));
	put32(cn, 12, jstr(pkg));
	slot32(base, 28, calling);
	call(ups_set_component_enabled_setting, regs, base);
	exp_begin("set_component_enabled_setting", "ups_set_component_enabled_setting", 1);
	exp_str("package_name", fit(pkg, 128));
	exp_str("class_name", fit(cls, 128));
	exp_int("new_state", state);
	exp_str("calling_package_name", fit(caller, 128));
	exp_end();
	/* MalwareSignal's program on the same method: 64-byte strings */
	exp_begin("malware_set_component_enabled_setting", "ups_set_component_enabled_setting", 1);
	exp_str("signal", "component_enabled_setting");
	exp_str("package_name", fit(pkg, 64));
	exp_str("class_name", fit(cls, 64));
	exp_int("new_state", state);
	exp_str("calling_package_name", fit(caller, 64));
	exp_end();
}

/* BackgroundLaunchProcessController.addBoundClientUid(int uid, String packageName,
 * long flags) (MalwareSignal): uid in x2, package in x3, flags in x4. */
static void add_bound_client_uid(int32_t uid, const char *pkg, uint64_t flags)
{
	uint8_t *base = out_args();
	uint64_t regs[8] = { ART_METHOD, jobj(16), JUNK_HIGH | (uint32_t)uid, jstr(pkg), flags };

	call(ups_add_bound_client_uid, regs, base);
	exp_begin("add_bound_client_uid", "ups_add_bound_client_uid", 1);
	exp_str("signal", "wm_bound_uid");
	exp_u64("client_uid", (uint32_t)uid);
	exp_str("client_package_name", fit(pkg, 64));
	exp_u64("bind_flags", flags);
	exp_end();
}

static void disruptive_app(void)
{
	static const char *full[5] = { "com.example.BIND", "com.example.svc", "com.example.cn",
				       "com.example.cn.Service", "com.example.caller" };
	static const char *bare[5] = { "", "com.example.pkg", "", "", "çaller.ünï" };
	char long_cls[200];

	bind_service_locked(intent(full[0], full[1], full[2], full[3]), 0x00100001, full[4], full);
	bind_service_locked(intent("a", "b", "c", "d"), 0x1, "nobal", NULL);   /* no BAL flag */
	bind_service_locked(intent(NULL, bare[1], NULL, NULL), 0x00100000, bare[4], bare);
	memset(long_cls, 'c', 199);
	long_cls[199] = 0;
	set_component_enabled_setting("com.example.launcher", "com.example.launcher.Main", 2,
				      "shell");
	set_component_enabled_setting("pkg.ünï", long_cls, 1, "com.example.settings");
	add_bound_client_uid(10123, "com.example.bound", 0x8000000000000104ULL);
	add_bound_client_uid(-1, long_cls, 0);
	add_bound_client_uid(1000, "çlïënt.☕", 1);
}

/* ---- Binder and Accessibility on Binder.execTransactInternal ---- */

#define A11Y_CONNECTION "android.accessibilityservice.IAccessibilityServiceConnection"
#define ATM "android.app.IActivityTaskManager"

/* execTransactInternal(int code, Parcel, Parcel, int flags, int callingUid):
 * this.mDescriptor @8, callingUid in x6 / slot 28. */
static void transact(const char *descriptor, uint32_t code, int32_t uid, int binder_emits,
		     int a11y_emits)
{
	uint8_t *base = out_args();
	uint32_t binder = jobj(32);
	uint64_t regs[8] = { ART_METHOD, binder, JUNK_HIGH | code, jobj(16), jobj(16), 0,
			     (uint32_t)uid };

	put32(binder, 8, jstr(descriptor));
	slot32(base, 28, (uint32_t)uid);
	call(ups_exec_transact_internal, regs, base);
	exp_begin("exec_transact_internal", "ups_exec_transact_internal", binder_emits);
	if (binder_emits) {
		exp_str("interface_descriptor", descriptor);
		exp_int("code", code);
		exp_int("calling_uid", uid);
		exp_positive("timestamp_ns");
	}
	exp_end();
	/* BinderExecTransactInternal: startActivity (code 1) of IActivityTaskManager only */
	int atm = !strcmp(descriptor, ATM) && code == 1;
	exp_begin("activity_task_manager_startActivity", "ups_exec_transact_internal", atm);
	if (atm)
		exp_int("calling_uid", uid);
	exp_end();
	exp_begin("dispatch_gesture", "ups_exec_transact_internal", a11y_emits);
	if (a11y_emits) {
		exp_positive("timestamp_ns");
		exp_int("variant", 2);
		exp_str("package_name", "");
		exp_str("permission_name", "");
		exp_int("uid", uid);
		exp_int("code", code);
	}
	exp_end();
}

static void binder_transactions(void)
{
	const char *bs = "com.android.internal.app.IBatteryStats";

	transact(bs, 1, 10001, 1, 0);       /* method_configs */
	transact(bs, 7, 10002, 1, 0);       /* method_configs */
	transact(bs, 3, 10003, 1, 0);       /* deprecated method_ids */
	transact(bs, 2, 10004, 0, 0);       /* code not listed */
	transact("com.android.internal.app.IBatteryStatsX", 1, 10005, 0, 0);
	transact("android.os.IServiceManager", 1, 10006, 0, 0);
	transact(A11Y_CONNECTION, 5, 10099, 0, 1);
	/* Same length as the a11y interface, one char off. */
	transact("android.accessibilityservice.IAccessibilityServiceConnectioM", 5, 10098, 0, 0);
	transact("ünïcødé.IFilter", 9, 10100, 1, 0);   /* UTF-16 descriptor */
	transact(ATM, 1, 10200, 0, 0);                 /* BinderExecTransactInternal */
	transact(ATM, 2, 10201, 0, 0);                 /* another code */
	transact(ATM "X", 1, 10202, 0, 0);             /* longer */
	transact("android.app.IActivityTaskManageR", 1, 10203, 0, 0);   /* last char */
	transact("android.app.IActivityTaskManage", 1, 10204, 0, 0);    /* shorter */
	transact(ATM, 1, -7, 0, 0);
}

/* grantRuntimePermission(String packageName, String permName, String, int). */
static void grant_runtime_permission(void)
{
	uint64_t regs[8] = { ART_METHOD, jobj(64), jstr("com.example.a11yapp"),
			     jstr("android.permission.CAMERA"), jstr("default"), 0 };

	call(ups_grant_runtime_permission, regs, out_args());
	exp_begin("grant_runtime_permission", "ups_grant_runtime_permission", 1);
	exp_positive("timestamp_ns");
	exp_int("variant", 1);
	exp_str("package_name", "com.example.a11yapp");
	exp_str("permission_name", "android.permission.CAMERA");
	exp_int("uid", 0);
	exp_int("code", 0);
	exp_end();
}

/* ---- ArtTest JIT: startActivityAsUser through its JIT stub ---- */

/* In the stub x0 is the stub frame's size and [sp] the method identifier; the
 * managed frame (requestCode @40, startFlags @44, userId @56,
 * validateIncomingUser @60) starts x0 bytes above.  Upstream also records the
 * 8 bytes at the address x0: a page is mapped there so that read succeeds. */
#define JIT_FRAME 0x10000UL

static void start_activity_as_user(void)
{
	uint64_t x0_word = 0, *page;
	uint8_t *base = out_args();
	uint64_t regs[8] = { JIT_FRAME, jobj(64), jobj(16),
			     jstr("com.android.uprobestats.disruptive") };

	page = mmap((void *)JIT_FRAME, 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (page == (void *)JIT_FRAME)
		*page = x0_word = 0x0123456789abcdefULL;
	slot64(base, 0, 0x7100000042ULL);
	slot32(base + JIT_FRAME, 40, (uint32_t)-1);
	slot32(base + JIT_FRAME, 44, 0x10000000);
	slot32(base + JIT_FRAME, 56, (uint32_t)-2);
	slot32(base + JIT_FRAME, 60, 1);
	call(ups_start_activity_as_user, regs, base);
	exp_begin("start_activity_as_user", "ups_start_activity_as_user", 1);
	exp_u64("method_identifier", 0x7100000042ULL);
	exp_str("calling_package", "com.android.uprobestats.disruptive");
	exp_int("request_code", -1);
	exp_int("start_flags", 0x10000000);
	exp_int("user_id", -2);
	exp_int("validate_incoming_user", 1);
	exp_u64("x0", x0_word);
	exp_end();
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	heap_init();
	if (go_fifo_wait(argc, argv) != argc) {
		fprintf(stderr, "usage: target_programs [--go-fifo PATH]\n");
		return 2;
	}
	set_uid_temp_allowlist_state();
	update_device_idle_temp_allowlist();
	process_change();
	bitmaps();
	disruptive_app();
	binder_transactions();
	grant_runtime_permission();
	start_activity_as_user();
	return 0;
}
