/* target_atrace — an Android (bionic) program making known trace-marker
 * calls through the userland's own libcutils, for the sections test.
 * Built by mk/e2e.mk (x86_64) and mk/vm.mk (arm64) with clang's Android target
 * against the userland's libc.so and libcutils.so (no NDK: its own _start calls
 * bionic's __libc_init) and run in a chroot of that userland:
 *
 *   target_atrace GO_FIFO
 *
 * Before the go (so before the tracer attached): begins "before attach".
 * After it, on the main thread (a worker thread in the middle):
 *   end (of "before attach": an end without a begin for the tracer)
 *   begin outer / begin inner / end / begin inner2 / begin deep / end / end / end
 *   async begin load 7, async begin load 8, async end load 7,
 *   async begin net 7, async end net 7, async end load 8
 *   counter frames 1, 2, 3 (int); counter bytes 5000000000 (int64)
 *   worker thread: begin worker / begin worker.step / end / end
 *   begin "left open" (never ended: open at exit)
 * The atrace tags are never enabled: the *_body functions are called
 * directly, as atrace_begin() would once a tag is on. */
#include <stdint.h>

extern void atrace_begin_body(const char *name);
extern void atrace_end_body(void);
extern void atrace_async_begin_body(const char *name, int32_t cookie);
extern void atrace_async_end_body(const char *name, int32_t cookie);
extern void atrace_int_body(const char *name, int32_t value);
extern void atrace_int64_body(const char *name, int64_t value);

extern int open(const char *path, int flags, ...);
extern long read(int fd, void *buf, unsigned long n);
extern int close(int fd);
extern int printf(const char *fmt, ...);
extern int pthread_create(unsigned long *t, const void *attr, void *(*fn)(void *), void *arg);
extern int pthread_join(unsigned long t, void **ret);

struct structors {
	void (**preinit)(void);
	void (**init)(void);
	void (**fini)(void);
};
const struct structors target_structors = { 0, 0, 0 };
extern void __libc_init(void *raw_args, void (*onexit)(void), int (*main_fn)(int, char **,
			char **), const struct structors *s) __attribute__((noreturn));
int main(int argc, char **argv, char **envp);

#if defined(__aarch64__)
/* arm64 (test/vm, mk/vm.mk): as bionic's crtbegin does it, sp is 16-aligned at entry. */
__asm__(".text\n.globl _start\n_start:\n"
	"  mov x0, sp\n  mov x1, xzr\n  adrp x2, main\n  add x2, x2, :lo12:main\n"
	"  adrp x3, target_structors\n  add x3, x3, :lo12:target_structors\n"
	"  bl __libc_init\n  brk #0\n");
#else
__asm__(".text\n.globl _start\n_start:\n"
	"  mov %rsp, %rdi\n  xor %esi, %esi\n  lea main(%rip), %rdx\n"
	"  lea target_structors(%rip), %rcx\n  and $-16, %rsp\n  call __libc_init@PLT\n  hlt\n");
#endif

static void *worker(void *arg)
{
	(void)arg;
	atrace_begin_body("worker");
	atrace_begin_body("worker.step");
	atrace_end_body();
	atrace_end_body();
	return 0;
}

int main(int argc, char **argv, char **envp)
{
	char go[8];
	unsigned long t;
	int fd;

	(void)envp;
	if (argc != 2) {
		printf("usage: target_atrace GO_FIFO\n");
		return 2;
	}
	atrace_begin_body("before attach");
	fd = open(argv[1], 0);
	if (fd < 0 || read(fd, go, sizeof(go)) <= 0)
		return 1;
	close(fd);
	atrace_end_body();
	atrace_begin_body("outer");
	atrace_begin_body("inner");
	atrace_end_body();
	atrace_begin_body("inner2");
	atrace_begin_body("deep");
	atrace_end_body();
	atrace_end_body();
	atrace_end_body();
	atrace_async_begin_body("load", 7);
	atrace_async_begin_body("load", 8);
	atrace_async_end_body("load", 7);
	atrace_async_begin_body("net", 7);
	atrace_async_end_body("net", 7);
	atrace_async_end_body("load", 8);
	atrace_int_body("frames", 1);
	atrace_int_body("frames", 2);
	atrace_int_body("frames", 3);
	atrace_int64_body("bytes", 5000000000LL);
	if (pthread_create(&t, 0, worker, 0) != 0 || pthread_join(t, 0) != 0)
		return 1;
	atrace_begin_body("left open");
	printf("target_atrace: done\n");
	return 0;
}
