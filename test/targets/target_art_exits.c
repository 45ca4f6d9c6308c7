/* target_art_exits — real ART-compiled methods with frames, calls (stack
 * maps) and, for one, two exit sites, run from C on a fake ART thread.
 *
 *   target_art_exits [--go-fifo PATH] ODEX IS_ENABLED_OFF SET_ALLOWED_OFF COUNT OUT
 *
 * x86_64: the Android 11 x86_64 com.android.location.provider.odex (ART keeps
 * its Thread* in gs); arm64: the Android 13 arm64 one (Thread* in x19, the
 * GC marking register x20 is 0).  Maps the odex and COUNT times calls
 *   boolean LocationProviderBase.isEnabled()         frame, one virtual call
 *   void    LocationProviderBase.setAllowed(boolean) frame, monitor enter/exit,
 *                                                    two returns
 * with ART's managed convention (ArtMethod*, this, the argument in
 * rdi/rsi/rdx or x0/x1/x2) on art_fake.h's prepared stack (the methods spill
 * into their caller's out-args area).  What the code needs from ART is
 * faked: the thread register points at a zeroed "Thread" (no suspend
 * request) whose pLockObject/pUnlockObject entrypoints are C functions;
 * isEnabled's virtual call goes through `this`'s class (32-bit heap) to a
 * fake ArtMethod whose entry point is a C function.
 * The C callees spin for a known time so durations have a lower bound.
 *
 * OUT, one JSON object per call, in call order:
 *   {"m": "isEnabled", "ret": 0|1, "inner": NS, "outer": NS, "t0": NS}
 * ("ret": what the callee returned, which isEnabled passes on in rax/x0)
 *   {"m": "setAllowed", "exit": 0|1, "inner": NS, "outer": NS, "t0": NS}
 * "inner" is the time spent in our callees (a lower bound of the call's
 * duration), "outer" the caller's measurement (an upper bound), "t0" when the
 * caller started it (CLOCK_BOOTTIME, as the tool's boot_ns); "exit" says
 * which of setAllowed's returns the call took (0: value unchanged, the first
 * ret; 1: value changed, the second), told by where pUnlockObject returns. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "art_fake.h"
#include "go_fifo.h"

/* From each odex's disassembly: the Thread offsets of pLockObject and
 * pUnlockObject, the class's vtable slot isEnabled calls through, the
 * ArtMethod's quick entry point, and where in setAllowed pUnlockObject
 * returns to on its two paths (value unchanged: first ret; changed:
 * second ret, mManager being null). */
#if defined(__x86_64__)
#include <asm/prctl.h>
#define THREAD_LOCK_OBJECT 0x388
#define THREAD_UNLOCK_OBJECT 0x390
#define KLASS_VTABLE_SLOT 0xe8
#define ART_METHOD_ENTRY 0x20
#define SET_ALLOWED_UNLOCK_SAME 0x63
#define SET_ALLOWED_UNLOCK_CHANGED 0x81
#elif defined(__aarch64__)
#define THREAD_LOCK_OBJECT 856
#define THREAD_UNLOCK_OBJECT 864
#define KLASS_VTABLE_SLOT 232
#define ART_METHOD_ENTRY 24
#define SET_ALLOWED_UNLOCK_SAME 0x68
#define SET_ALLOWED_UNLOCK_CHANGED 0x90
#endif
#define SPIN_NS 20000


static uint64_t spent_ns;          /* time spent in our callees during a call */
static uintptr_t unlock_ret;       /* where pUnlockObject last returned to */
static uint32_t enabled_value;

static uint64_t clock_read(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t now_ns(void)
{
	return clock_read(CLOCK_MONOTONIC);
}

static void spin(void)
{
	uint64_t t0 = now_ns(), t;

	do
		t = now_ns();
	while (t - t0 < SPIN_NS);
	spent_ns += t - t0;
}

static void lock_object(uint32_t obj)
{
	(void)obj;
	spin();
}

static void unlock_object(uint32_t obj)
{
	(void)obj;
	unlock_ret = (uintptr_t)__builtin_return_address(0);
}

static uint32_t is_enabled_impl(void *art_method, uint32_t self)
{
	(void)art_method, (void)self;
	spin();
	return enabled_value;
}

static void *map_odex(const char *path, size_t *size)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	void *base;

	if (fd < 0 || fstat(fd, &st) < 0)
		die(path);
	base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (base == MAP_FAILED)
		die("mmap");
	*size = (size_t)st.st_size;
	return base;
}

static uint8_t *thread;

/* A zeroed fake Thread with the two monitor entrypoints; on x86_64 gs points
 * at it. */
static void fake_thread(void)
{
	void *lock = (void *)lock_object, *unlock = (void *)unlock_object;

	thread = calloc(1, 8192);
	if (!thread)
		die("thread");
	memcpy(thread + THREAD_LOCK_OBJECT, &lock, sizeof(lock));
	memcpy(thread + THREAD_UNLOCK_OBJECT, &unlock, sizeof(unlock));
#if defined(__x86_64__)
	if (syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)thread) != 0)
		die("arch_prctl(ARCH_SET_GS)");
#endif
}

#if defined(__aarch64__)
/* ups_tramp with ART's thread register: x19 = thread, x20 = 0 (no GC
 * marking), then fn(regs[0..3]) on the stack at base. */
void ups_art_tramp(void (*fn)(void), const uint64_t *regs, void *base, void *thread);
__asm__(".text\n"
	".globl ups_art_tramp\n"
	".type ups_art_tramp,%function\n"
	"ups_art_tramp:\n"
	"	stp x29, x30, [sp, #-48]!\n"
	"	stp x19, x20, [sp, #16]\n"
	"	str x21, [sp, #32]\n"
	"	mov x29, sp\n"
	"	mov x21, sp\n"
	"	mov x16, x0\n"
	"	mov x17, x1\n"
	"	mov x19, x3\n"
	"	mov x20, xzr\n"
	"	mov sp, x2\n"
	"	ldp x0, x1, [x17]\n"
	"	ldp x2, x3, [x17, #16]\n"
	"	blr x16\n"
	"	mov sp, x21\n"
	"	ldr x21, [sp, #32]\n"
	"	ldp x19, x20, [sp, #16]\n"
	"	ldp x29, x30, [sp], #48\n"
	"	ret\n"
	".size ups_art_tramp, .-ups_art_tramp\n");
#endif

/* Calls the compiled method at code with (ArtMethod*, this, arg). */
static void art_call(const uint8_t *code, uint32_t self, uint64_t arg)
{
	const uint64_t regs[8] = { 0x7a7a7a70, self, arg };

#if defined(__aarch64__)
	ups_art_tramp((void (*)(void))(uintptr_t)code, regs, out_args(), thread);
#else
	ups_tramp((void (*)(void))(uintptr_t)code, regs, out_args());
#endif
}

int main(int argc, char **argv)
{
	static uint8_t art_method_callee[64];
	void *entry = (void *)is_enabled_impl, *callee = art_method_callee;
	size_t size;
	int argi;

	heap_init();
	argi = go_fifo_wait(argc, argv);
	if (argc - argi != 5) {
		fprintf(stderr, "usage: target_art_exits [--go-fifo PATH] ODEX IS_ENABLED_OFF "
				"SET_ALLOWED_OFF COUNT OUT\n");
		return 2;
	}
	uint8_t *base = map_odex(argv[argi], &size);
	unsigned long ie_off = strtoul(argv[argi + 1], NULL, 0);
	unsigned long sa_off = strtoul(argv[argi + 2], NULL, 0);
	long count = atol(argv[argi + 3]);
	FILE *out = fopen(argv[argi + 4], "w");

	if (!out || ie_off >= size || sa_off >= size)
		die("arguments");
	fake_thread();
	/* isEnabled: this -> klass (vtable slot: ArtMethod*) -> entry point. */
	memcpy(art_method_callee + ART_METHOD_ENTRY, &entry, sizeof(entry));
	uint32_t klass = jobj(512), provider = jobj(64), lock = jobj(16);
	put64(klass, KLASS_VTABLE_SLOT, (uint64_t)(uintptr_t)callee);
	put32(provider, 0, klass);
	/* setAllowed: mLock at +0xc, mManager (null) at +0x14, mAllowed at +0x20. */
	put32(provider, 0xc, lock);

	for (long i = 0; i < count; i++) {
		uint64_t t0, t1, b0;

		enabled_value = (uint32_t)(i & 1);
		spent_ns = 0;
		b0 = clock_read(CLOCK_BOOTTIME);
		t0 = now_ns();
		art_call(base + ie_off, provider, 0);
		t1 = now_ns();
		fprintf(out, "{\"m\": \"isEnabled\", \"ret\": %u, \"inner\": %llu, \"outer\": %llu, "
			     "\"t0\": %llu}\n", enabled_value, (unsigned long long)spent_ns,
			(unsigned long long)(t1 - t0), (unsigned long long)b0);
		spent_ns = 0;
		unlock_ret = 0;
		b0 = clock_read(CLOCK_BOOTTIME);
		t0 = now_ns();
		art_call(base + sa_off, provider, (uint64_t)((i >> 1) & 1));
		t1 = now_ns();
		uintptr_t where = unlock_ret - (uintptr_t)(base + sa_off);
		if (where != SET_ALLOWED_UNLOCK_SAME && where != SET_ALLOWED_UNLOCK_CHANGED) {
			fprintf(stderr, "target_art_exits: pUnlockObject returned to +0x%lx\n",
				(unsigned long)where);
			return 1;
		}
		fprintf(out, "{\"m\": \"setAllowed\", \"exit\": %d, \"inner\": %llu, "
			     "\"outer\": %llu, \"t0\": %llu}\n", where == SET_ALLOWED_UNLOCK_CHANGED,
			(unsigned long long)spent_ns, (unsigned long long)(t1 - t0),
			(unsigned long long)b0);
	}
	return fclose(out) ? 1 : 0;
}
