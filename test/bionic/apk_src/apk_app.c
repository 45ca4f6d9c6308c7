/* apk_app — the app of test_bionic_apk_cmds.py (bionic, built by the test like
 * apk_loader): a library loaded straight from its APK, then after the go the calls
 * one of the commands counts:
 *
 *   apk_app calls LIB GO_FIFO   apk_agg(k, v, "agg") for k = 1, 2, 3 and v < 10 * k
 *                               (libdemo.so: returns 100 * k + v)
 *   apk_app net LIB GO_FIFO PORT   through LIB's own socket calls (libnet.so), over UDP
 *                               on 127.0.0.1: socket A bound to PORT, socket B bound to
 *                               PORT + 1 and connected to A; B write()s 100 bytes
 *                               three times, A recvfrom()s each, A sendto()s 50 bytes
 *                               to B, B read()s them; both closed
 *   apk_app trace LIB GO_FIFO   LIB's atrace_*_body (libtrace.so): begin outer, begin
 *                               inner, end, end, async begin load 7, async end load 7,
 *                               int frames 3, int64 bytes 5000000000
 *
 * LIB is dlopen()ed by its APK path ("…/base.apk!/lib/x86_64/libX.so"); the app
 * blocks opening GO_FIFO until the tracer attached, prints "done" at the end. */
extern void *dlopen(const char *path, int flags);
extern void *dlsym(void *h, const char *name);
extern char *dlerror(void);
extern int open(const char *path, int flags, ...);
extern int close(int fd);
extern int printf(const char *fmt, ...);
extern int dprintf(int fd, const char *fmt, ...);
extern int atoi(const char *s);
extern int strcmp(const char *a, const char *b);

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

static void *lib;

static void *fn(const char *name)
{
	void *f = dlsym(lib, name);

	if (!f)
		dprintf(2, "apk_app: no %s: %s\n", name, dlerror());
	return f;
}

static int calls(void)
{
	long (*agg)(long, long, const char *) = (long (*)(long, long, const char *))fn("apk_agg");
	long sum = 0;

	if (!agg)
		return 3;
	for (long k = 1; k <= 3; k++)
		for (long v = 0; v < 10 * k; v++)
			sum += agg(k, v, "agg");
	printf("%ld\n", sum);
	return 0;
}

struct in4 {
	unsigned short family, port;
	unsigned int addr;
	unsigned char zero[8];
};

static struct in4 loopback(int port)
{
	struct in4 a = { 2, (unsigned short)((port >> 8) | ((port & 0xff) << 8)), 0x0100007f,
			 { 0 } };
	return a;
}

static int net(int port)
{
	int (*sock)(int, int, int) = (int (*)(int, int, int))fn("socket");
	int (*bnd)(int, const void *, unsigned) = (int (*)(int, const void *, unsigned))fn("bind");
	int (*conn)(int, const void *, unsigned) = (int (*)(int, const void *, unsigned))fn("connect");
	long (*wr)(int, const void *, unsigned long) =
		(long (*)(int, const void *, unsigned long))fn("write");
	long (*rd)(int, void *, unsigned long) = (long (*)(int, void *, unsigned long))fn("read");
	long (*sto)(int, const void *, unsigned long, int, const void *, unsigned) =
		(long (*)(int, const void *, unsigned long, int, const void *, unsigned))fn("sendto");
	long (*rfrom)(int, void *, unsigned long, int, void *, unsigned *) =
		(long (*)(int, void *, unsigned long, int, void *, unsigned *))fn("recvfrom");
	int (*cls)(int) = (int (*)(int))fn("close");
	struct in4 pa = loopback(port), pb = loopback(port + 1), from;
	unsigned fromlen = sizeof(from);
	char buf[4096] = { 0 };
	int a, b;

	if (!sock || !bnd || !conn || !wr || !rd || !sto || !rfrom || !cls)
		return 3;
	a = sock(2, 2, 0);
	b = sock(2, 2, 0);
	if (a < 0 || b < 0 || bnd(a, &pa, sizeof(pa)) || bnd(b, &pb, sizeof(pb)) ||
	    conn(b, &pa, sizeof(pa)))
		return 5;
	for (int i = 0; i < 3; i++)
		if (wr(b, buf, 100) != 100)
			return 6;
	for (int i = 0; i < 3; i++)
		if (rfrom(a, buf, sizeof(buf), 0, &from, &fromlen) != 100)
			return 7;
	if (sto(a, buf, 50, 0, &from, fromlen) != 50 || rd(b, buf, sizeof(buf)) != 50)
		return 8;
	cls(a);
	cls(b);
	return 0;
}

static int trace(void)
{
	void (*begin)(const char *) = (void (*)(const char *))fn("atrace_begin_body");
	void (*end)(void) = (void (*)(void))fn("atrace_end_body");
	void (*abegin)(const char *, int) = (void (*)(const char *, int))fn("atrace_async_begin_body");
	void (*aend)(const char *, int) = (void (*)(const char *, int))fn("atrace_async_end_body");
	void (*cint)(const char *, int) = (void (*)(const char *, int))fn("atrace_int_body");
	void (*cint64)(const char *, long) = (void (*)(const char *, long))fn("atrace_int64_body");

	if (!begin || !end || !abegin || !aend || !cint || !cint64)
		return 3;
	begin("outer");
	begin("inner");
	end();
	end();
	abegin("load", 7);
	aend("load", 7);
	cint("frames", 3);
	cint64("bytes", 5000000000L);
	return 0;
}

int main(int argc, char **argv, char **envp)
{
	int fd, rc;
	(void)envp;

	if (argc < 4)
		return 2;
	if (!(lib = dlopen(argv[2], 2 /* RTLD_NOW */))) {
		dprintf(2, "dlopen %s: %s\n", argv[2], dlerror());
		return 3;
	}
	if ((fd = open(argv[3], 0)) < 0)
		return 4;
	close(fd);
	if (!strcmp(argv[1], "calls"))
		rc = calls();
	else if (!strcmp(argv[1], "net") && argc > 4)
		rc = net(atoi(argv[4]));
	else if (!strcmp(argv[1], "trace"))
		rc = trace();
	else
		rc = 2;
	if (!rc)
		printf("done\n");
	return rc;
}
