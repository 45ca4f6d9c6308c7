/* target_art_exits — real ART-compiled methods with frames, calls (stack
 * maps) and, for one, two exit sites, run from C on a fake ART thread.
 *
 *   target_art_exits [--go-fifo PATH] ODEX IS_ENABLED_OFF SET_ALLOWED_OFF COUNT OUT
 *
 * x86_64 only (ART keeps its Thread* in gs there).  Maps the Android 11
 * x86_64 com.android.location.provider.odex and COUNT times calls
 *   boolean LocationProviderBase.isEnabled()         frame, one virtual call
 *   void    LocationProviderBase.setAllowed(boolean) frame, monitor enter/exit,
 *                                                    two returns
 * with ART's managed convention (rdi ArtMethod*, rsi this, rdx argument).
 * What the code needs from ART is faked: gs points at a zeroed "Thread"
 * (no suspend request) whose pLockObject/pUnlockObject entrypoints are C
 * functions; isEnabled's virtual call goes through `this`'s class (32-bit
 * heap, art_fake.h) to a fake ArtMethod whose entry point is a C function.
 * The C callees spin for a known time so durations have a lower bound.
 *
 * OUT, one JSON object per call, in call order:
 *   {"m": "isEnabled", "ret": 0|1, "inner": NS, "outer": NS}
 *   {"m": "setAllowed", "exit": 0|1, "inner": NS, "outer": NS}
 * "inner" is the time spent in our callees (a lower bound of the call's
 * duration), "outer" the caller's measurement (an upper bound); "exit" says
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

#if defined(__x86_64__)
#include <asm/prctl.h>

#include "art_fake.h"
#include "go_fifo.h"

/* Thread offsets of the Android 11 x86_64 code (from its disassembly). */
#define THREAD_LOCK_OBJECT 0x388
#define THREAD_UNLOCK_OBJECT 0x390
/* Code offsets inside setAllowed of the two pUnlockObject return addresses. */
#define SET_ALLOWED_UNLOCK_SAME 0x63
#define SET_ALLOWED_UNLOCK_CHANGED 0x81
#define SPIN_NS 20000

typedef uint32_t (*is_enabled_fn)(void *art_method, void *self);
typedef void (*set_allowed_fn)(void *art_method, void *self, uint32_t allowed);

static uint64_t spent_ns;          /* time spent in our callees during a call */
static uintptr_t unlock_ret;       /* where pUnlockObject last returned to */
static uint32_t enabled_value;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
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

/* gs -> a zeroed fake Thread with the two monitor entrypoints. */
static void fake_thread(void)
{
	uint8_t *thread = calloc(1, 8192);
	void *lock = (void *)lock_object, *unlock = (void *)unlock_object;

	if (!thread)
		die("thread");
	memcpy(thread + THREAD_LOCK_OBJECT, &lock, sizeof(lock));
	memcpy(thread + THREAD_UNLOCK_OBJECT, &unlock, sizeof(unlock));
	if (syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)thread) != 0)
		die("arch_prctl(ARCH_SET_GS)");
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
	/* isEnabled: this -> klass (+0xe8: ArtMethod*) -> entry point (+0x20). */
	memcpy(art_method_callee + 0x20, &entry, sizeof(entry));
	uint32_t klass = jobj(256), provider = jobj(64), lock = jobj(16);
	put64(klass, 0xe8, (uint64_t)(uintptr_t)callee);
	put32(provider, 0, klass);
	/* setAllowed: mLock at +0xc, mManager (null) at +0x14, mAllowed at +0x20. */
	put32(provider, 0xc, lock);
	is_enabled_fn is_enabled = (is_enabled_fn)(void *)(base + ie_off);
	set_allowed_fn set_allowed = (set_allowed_fn)(void *)(base + sa_off);
	void *art_method = (void *)(uintptr_t)0x7a7a7a70;

	for (long i = 0; i < count; i++) {
		uint64_t t0, t1;

		enabled_value = (uint32_t)(i & 1);
		spent_ns = 0;
		t0 = now_ns();
		uint32_t r = is_enabled(art_method, at(provider, 0));
		t1 = now_ns();
		fprintf(out, "{\"m\": \"isEnabled\", \"ret\": %u, \"inner\": %llu, \"outer\": %llu}\n",
			r, (unsigned long long)spent_ns, (unsigned long long)(t1 - t0));
		spent_ns = 0;
		unlock_ret = 0;
		t0 = now_ns();
		set_allowed(art_method, at(provider, 0), (uint32_t)((i >> 1) & 1));
		t1 = now_ns();
		uintptr_t where = unlock_ret - (uintptr_t)(base + sa_off);
		if (where != SET_ALLOWED_UNLOCK_SAME && where != SET_ALLOWED_UNLOCK_CHANGED) {
			fprintf(stderr, "target_art_exits: pUnlockObject returned to +0x%lx\n",
				(unsigned long)where);
			return 1;
		}
		fprintf(out, "{\"m\": \"setAllowed\", \"exit\": %d, \"inner\": %llu, "
			     "\"outer\": %llu}\n", where == SET_ALLOWED_UNLOCK_CHANGED,
			(unsigned long long)spent_ns, (unsigned long long)(t1 - t0));
	}
	return fclose(out) ? 1 : 0;
}
#else
int main(void)
{
	fprintf(stderr, "target_art_exits: x86_64 only\n");
	return 2;
}
#endif
