/* apk_loader — the app of test_bionic_apk.py (bionic, built by the test with clang's
 * Android target against the userland's libc and libdl):
 *
 *   apk_loader LIB... GO_FIFO COUNT
 *
 * dlopen()s each LIB (an APK path "…/base.apk!/lib/x86_64/libdemo.so": bionic's
 * linker maps the stored entry straight from the APK), then blocks opening GO_FIFO
 * (the tracer attaches meanwhile), then for each LIB in order calls its demo_fn
 * COUNT times, i = 0 .. COUNT-1, through main -> apk_run_calls -> apk_call_one,
 * and prints the sum of the return values, one line per LIB.
 * A LIB "fd:APK@OFFSET" is loaded as apps load a library from an archive the linker
 * cannot read itself (Android 11's cannot read ZIP64): android_dlopen_ext with the
 * APK's descriptor and the entry's data offset; the mappings are the same. */
extern void *dlopen(const char *path, int flags);
extern void *dlsym(void *h, const char *name);
extern char *dlerror(void);
extern int open(const char *path, int flags, ...);
extern int close(int fd);
extern int printf(const char *fmt, ...);
extern int dprintf(int fd, const char *fmt, ...);
extern int atoi(const char *s);
extern long strtol(const char *s, char **end, int base);
extern char *strchr(const char *s, int c);

struct android_dlextinfo {
	unsigned long long flags;
	void *reserved_addr;
	unsigned long reserved_size;
	int relro_fd;
	int library_fd;
	long long library_fd_offset;
	void *library_namespace;
};
#define ANDROID_DLEXT_USE_LIBRARY_FD 0x10
#define ANDROID_DLEXT_USE_LIBRARY_FD_OFFSET 0x20
extern void *android_dlopen_ext(const char *name, int flags, const struct android_dlextinfo *i);

static void *load(char *spec)
{
	struct android_dlextinfo info = { 0 };
	char *at;

	if (spec[0] != 'f' || spec[1] != 'd' || spec[2] != ':' || !(at = strchr(spec, '@')))
		return dlopen(spec, 2 /* RTLD_NOW */);
	*at = 0;
	info.flags = ANDROID_DLEXT_USE_LIBRARY_FD | ANDROID_DLEXT_USE_LIBRARY_FD_OFFSET;
	info.library_fd = open(spec + 3, 0);
	info.library_fd_offset = strtol(at + 1, 0, 0);
	if (info.library_fd < 0)
		return 0;
	return android_dlopen_ext("libdemo.so", 2, &info);
}

struct structors { void (**preinit)(void); void (**init)(void); void (**fini)(void); };
const struct structors target_structors = { 0, 0, 0 };
extern void __libc_init(void *raw_args, void (*onexit)(void), int (*main_fn)(int, char **,
			char **), const struct structors *s) __attribute__((noreturn));
int main(int argc, char **argv, char **envp);
#if defined(__aarch64__)
__asm__(".text\n.globl _start\n_start:\n"
	"  mov x0, sp\n  mov x1, xzr\n  adrp x2, main\n  add x2, x2, :lo12:main\n"
	"  adrp x3, target_structors\n  add x3, x3, :lo12:target_structors\n"
	"  bl __libc_init\n  brk #0\n");
#else
__asm__(".text\n.globl _start\n_start:\n"
	"  mov %rsp, %rdi\n  xor %esi, %esi\n  lea main(%rip), %rdx\n"
	"  lea target_structors(%rip), %rcx\n  and $-16, %rsp\n  call __libc_init@PLT\n  hlt\n");
#endif

typedef int (*demo_t)(int);

__attribute__((noinline)) int apk_call_one(demo_t f, int i)
{
	int r = f(i);
	__asm__ volatile("" : "+r"(r));
	return r;
}

__attribute__((noinline)) long apk_run_calls(demo_t f, int n)
{
	long sum = 0;
	for (int i = 0; i < n; i++)
		sum += apk_call_one(f, i);
	return sum;
}

int main(int argc, char **argv, char **envp)
{
	demo_t fns[8];
	int nlibs = argc - 3, count, fd;
	(void)envp;
	if (argc < 4 || nlibs > 8)
		return 2;
	for (int i = 0; i < nlibs; i++) {
		void *h = load(argv[1 + i]);
		if (!h || !(fns[i] = (demo_t)dlsym(h, "demo_fn"))) {
			dprintf(2, "dlopen %s: %s\n", argv[1 + i], dlerror());
			return 3;
		}
	}
	count = atoi(argv[argc - 1]);
	fd = open(argv[argc - 2], 0);
	if (fd < 0)
		return 4;
	close(fd);
	for (int i = 0; i < nlibs; i++)
		printf("%ld\n", apk_run_calls(fns[i], count));
	return 0;
}
