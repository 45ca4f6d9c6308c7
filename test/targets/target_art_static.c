/* target_art_static — real ART-compiled STATIC methods with the registers of
 * android.os.Trace's (all static: ArtMethod* in the first register, the arguments from
 * the next one, no `this`), called the way ART calls them, for the sections test's Java
 * path (the test data has no compiled android.os.Trace).  Only methods whose name
 * argument is declared a String qualify (a section config requires it).
 *
 * x86_64 (the Android 11 odex and boot-ext.oat):
 *   target_art_static [--go-fifo PATH] ODEX BOOT_EXT OFF_SINGLE_FILE OFF_500
 *     List MetadataManager.getMetadataFromSingleFileName(String, MetadataLoader)
 *       (in BOOT_EXT; the name in rsi: beginSection(String)'s register)
 *     String LocationProviderBase.access$500(LocationProviderBase)   (endSection())
 *   calls: getMetadataFromSingleFileName("outer"), ("inner"), access$500 twice.
 *
 * arm64 (the Android 13 org.apache.http.legacy.odex):
 *   target_art_static [--go-fifo PATH] ODEX OFF_PARSE_DATE OFF_USER_AGENT OFF_GZIP
 *                     OFF_REASON OFF_CREATE_URI
 *     Date DateUtils.parseDate(String)             (x1: beginSection(String)'s register)
 *     void HttpProtocolParams.setUserAgent(HttpParams, String)
 *                                             (x2: traceBegin(long, String)'s register)
 *     long AndroidHttpClient.getMinGzipSize(ContentResolver)      (endSection())
 *     URI URIUtils.createURI(String, String, int, String, String, String)
 *          (a name in x2, an int in x3: asyncTraceBegin(long, String, int)'s registers)
 *     void EnglishReasonPhraseCatalog.setReason(int, String)   (an int in x1, a name in x2)
 *   calls: parseDate("outer"), setUserAgent(params, "inner"), getMinGzipSize() twice,
 *   createURI("http", "load", 404), createURI("http", "load", 503), setReason(404,
 *   "load"), setReason(503, "load"), the ints with garbage above their low half.
 *
 * A reference and a long both take one register on x86_64 and arm64, so (reference,
 * String) has traceBegin(long, String)'s registers.  The register after the arguments
 * holds a decoy (a String, or garbage): the instance convention would read it.  What the
 * harness fakes (the methods need no more): a heap below 4 GiB with java.lang.String
 * objects (art_fake.h), an ArtMethod whose declaring class is a fake class holding the
 * static fields the methods read, that class's embedded vtable and IMT leading to fake
 * ArtMethods whose entry points are C functions here (as are the boot image ArtMethods
 * the code names, PC-relatively on x86_64, through .data.bimg.rel.ro on arm64, and the
 * allocation entrypoint), ART's Thread (gs base on x86_64, x19 on arm64:
 * suspend flags 0, a card table) and marking register (x20 = 0: the GC is not marking),
 * and the oat file mapped as ART's loader maps it (.bss zeroed and writable, the slots
 * the arm64 code loads resolved to a String or a fake ArtMethod).  Each call's result,
 * and what the code passed to the C functions, is checked: the code ran as it does in
 * ART.  Prints "target_art_static: done" and exits 0, else says what differed and
 * exits 1. */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <asm/prctl.h>
#include <sys/syscall.h>
#endif

#include "art_fake.h"
#include "go_fifo.h"

#if defined(__x86_64__)
/* ArtMethod::entry_point_from_quick_compiled_code_ in Android 11 (x86_64 files), 13 (arm64) */
#define ENTRY_POINT_OFF 0x20
#else
#define ENTRY_POINT_OFF 24
#endif
#define GARBAGE 0xdead000000000000ull

static int failures;
static uint32_t fake_class;

#define EXPECT(cond, ...) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "target_art_static: " __VA_ARGS__); \
			fputc('\n', stderr); \
			failures++; \
		} \
	} while (0)

/* Maps the oat file at PATH as ART's loader does: every PT_LOAD at its address from one
 * base (AT if not 0, else anywhere), those with bytes from the file, the NOBITS one
 * (.bss) zeroed and writable. */
static uint8_t *map_oat(const char *path, uintptr_t at_addr)
{
	struct stat st;
	int fd = open(path, O_RDONLY);
	Elf64_Ehdr eh;
	Elf64_Phdr ph[32];
	size_t span = 0;
	long page = sysconf(_SC_PAGESIZE);

	if (fd < 0 || fstat(fd, &st) < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    eh.e_phnum > 32 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    pread(fd, ph, eh.e_phnum * sizeof(ph[0]), (off_t)eh.e_phoff) !=
		    (ssize_t)(eh.e_phnum * sizeof(ph[0])))
		die(path);
	for (int i = 0; i < eh.e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr + ph[i].p_memsz > span)
			span = ph[i].p_vaddr + ph[i].p_memsz;
	if ((size_t)st.st_size > span)
		span = (size_t)st.st_size;
	span = (span + (size_t)page - 1) & ~((size_t)page - 1);
	uint8_t *base = mmap((void *)at_addr, span, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
			     (at_addr ? MAP_FIXED_NOREPLACE : 0), -1, 0);
	/* The file as a whole (its text read-only and executable, file-backed: uprobes on
	 * (file, offset) fire there), then the .bss over it. */
	if (base == MAP_FAILED || (at_addr && base != (uint8_t *)at_addr) ||
	    mmap(base, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd,
		 0) == MAP_FAILED)
		die(path);
	for (int i = 0; i < eh.e_phnum; i++) {
		if (ph[i].p_type != PT_LOAD || ph[i].p_filesz || !(ph[i].p_flags & PF_W))
			continue;
		uint64_t lo = ph[i].p_vaddr & ~((uint64_t)page - 1);
		uint64_t hi = (ph[i].p_vaddr + ph[i].p_memsz + (uint64_t)page - 1) &
			      ~((uint64_t)page - 1);
		if (mmap(base + lo, hi - lo, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
			die(".bss");
	}
	close(fd);
	return base;
}

/* A java.lang.String whose class is the fake class (its vtable and IMT lead here). */
static uint32_t name(const char *s)
{
	uint32_t ref = jstr(s);

	put32(ref, 0, fake_class);
	return ref;
}

/* A fake ArtMethod whose compiled code is FN; its declaring class the fake class. */
static void *method_at(void *fn)
{
	uint32_t m = jobj(64);

	put32(m, 0, fake_class);
	put64(m, ENTRY_POINT_OFF, (uint64_t)(uintptr_t)fn);
	return at(m, 0);
}

static unsigned long off_arg(const char *s)
{
	return strtoul(s, NULL, 0);
}

#if defined(__x86_64__)

/* What the compiled code passed to the "Java" methods it called, and what they return. */
static uint64_t got_file_name, got_stream, got_collection, got_list;
static uint32_t the_stream, the_collection, the_list;

static uint64_t loader_load_metadata(uint64_t m, uint64_t self, uint64_t file_name)
{
	(void)m, (void)self;
	got_file_name = file_name;
	return the_stream;
}

static uint64_t load_and_close(uint64_t m, uint64_t stream)
{
	(void)m;
	got_stream = stream;
	return the_collection;
}

static uint64_t collection_get_list(uint64_t m, uint64_t self)
{
	(void)m;
	got_collection = self;
	return the_list;
}

static uint64_t list_size(uint64_t m, uint64_t self)
{
	(void)m;
	got_list = self;
	return 3;
}

/* The boot image's ArtMethods the code names PC-relatively (`lea disp32(%rip), %edi`:
 * the boot image lies below the oat file, in the low 4 GiB): a fake one at each such
 * address in the first SIZE bytes at CODE, its entry point FN. */
static void boot_methods(const uint8_t *code, size_t size, void *fn)
{
	long page = sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i + 6 <= size; i++) {
		int32_t disp;
		if (code[i] != 0x8d || code[i + 1] != 0x3d)
			continue;
		memcpy(&disp, code + i + 2, 4);
		uint32_t addr = (uint32_t)(uintptr_t)(code + i + 6 + disp);
		uint8_t *pg = (uint8_t *)(uintptr_t)(addr & ~(uint32_t)(page - 1));
		if (mmap(pg, (size_t)page * 2, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != pg)
			die("a fake boot image ArtMethod");
		uint64_t entry = (uint64_t)(uintptr_t)fn;
		memcpy((uint8_t *)(uintptr_t)addr + ENTRY_POINT_OFF, &entry, sizeof(entry));
	}
}

typedef uint64_t (*meta_fn)(void *method, uint64_t file_name, uint64_t loader, uint64_t decoy);
typedef uint32_t (*access500_fn)(void *method, uint64_t obj);

int main(int argc, char **argv)
{
	int argi;

	heap_init();
	argi = argc >= 3 && !strcmp(argv[1], "--go-fifo") ? 3 : 1;
	if (argc - argi != 4) {
		fprintf(stderr, "usage: target_art_static [--go-fifo PATH] ODEX BOOT_EXT "
				"OFF_SINGLE_FILE OFF_500\n");
		return 2;
	}
	fake_class = jobj(512);
	uint32_t decoy = name("decoy: not an argument");
	uint8_t *odex = map_oat(argv[argi], 0);
	/* below 4 GiB, as ART maps boot image extensions: its PC-relative boot image
	 * references then fit the 32 bits the code keeps of them */
	uint8_t *ext = map_oat(argv[argi + 1], 0x58000000);
	meta_fn meta = (meta_fn)(void *)(ext + off_arg(argv[argi + 2]));
	access500_fn a500 = (access500_fn)(void *)(odex + off_arg(argv[argi + 3]));
	boot_methods((const uint8_t *)meta, 128, (void *)load_and_close);
	/* ART's Thread, reached through gs: suspend flags 0 at +0 */
	uint8_t *thread = calloc(1, 4096);
	if (!thread || syscall(SYS_arch_prctl, ARCH_SET_GS, thread) != 0)
		die("fake Thread (arch_prctl(ARCH_SET_GS))");
	/* the fake class: its IMT (a pointer at +0x80; MetadataLoader.loadMetadata(String)
	 * at +0xe8, List.size() at +0xe0) and its embedded vtable (+0xf8:
	 * PhoneMetadataCollection.getMetadataList()) */
	uint32_t imt = jobj(0x100);
	put64(imt, 0xe8, (uint64_t)(uintptr_t)method_at((void *)loader_load_metadata));
	put64(imt, 0xe0, (uint64_t)(uintptr_t)method_at((void *)list_size));
	put64(fake_class, 0x80, (uint64_t)(uintptr_t)at(imt, 0));
	put64(fake_class, 0xf8, (uint64_t)(uintptr_t)method_at((void *)collection_get_list));
	void *method = method_at(NULL);
	uint32_t loader = jobj(64), obj = jobj(64), outer = name("outer"), inner = name("inner");
	the_stream = jobj(64);
	the_collection = jobj(64);
	the_list = jobj(64);
	put32(loader, 0, fake_class);
	put32(the_collection, 0, fake_class);
	put32(the_list, 0, fake_class);
	put32(obj, 0, fake_class);
	put32(obj, 0x1c, 0x1234);
	go_fifo_wait(argc, argv);

	const uint32_t names[2] = { outer, inner };
	for (int i = 0; i < 2; i++) {
		got_file_name = got_stream = got_collection = got_list = 0;
		EXPECT(meta(method, names[i], loader, decoy) == the_list,
		       "getMetadataFromSingleFileName #%d did not return the list", i + 1);
		EXPECT(got_file_name == names[i] && got_stream == the_stream &&
		       got_collection == the_collection && got_list == the_list,
		       "getMetadataFromSingleFileName #%d did not make its calls", i + 1);
	}
	EXPECT(a500(method, obj) == 0x1234, "access$500 #1 did not read the field");
	EXPECT(a500(method, obj) == 0x1234, "access$500 #2 did not read the field");
	if (failures)
		return 1;
	printf("target_art_static: done\n");
	return 0;
}

#elif defined(__aarch64__)

/* fn(x0..x3) with ART's registers: x19 = Thread*, x20 = 0 (the marking register). */
uint64_t art_call(void *fn, uint64_t x0, uint64_t x1, uint64_t x2, uint64_t x3, void *thr);
__asm__(".text\n"
	".globl art_call\n"
	".type art_call,%function\n"
	"art_call:\n"
	"	stp x29, x30, [sp, #-32]!\n"
	"	stp x19, x20, [sp, #16]\n"
	"	mov x29, sp\n"
	"	mov x16, x0\n"
	"	mov x19, x5\n"
	"	mov x20, xzr\n"
	"	mov x0, x1\n"
	"	mov x1, x2\n"
	"	mov x2, x3\n"
	"	mov x3, x4\n"
	"	blr x16\n"
	"	ldp x19, x20, [sp, #16]\n"
	"	ldp x29, x30, [sp], #32\n"
	"	ret\n"
	".size art_call, .-art_call\n");

/* fn(x0..x5 from R, x6 = 0, x7 = a decoy) with ART's x19 (THR) and x20 (0). */
uint64_t create_uri(void *fn, const uint64_t r[6], void *thr);
__asm__(".text\n"
	".globl create_uri\n"
	".type create_uri,%function\n"
	"create_uri:\n"
	"	stp x29, x30, [sp, #-32]!\n"
	"	stp x19, x20, [sp, #16]\n"
	"	mov x29, sp\n"
	"	mov x16, x0\n"
	"	mov x19, x2\n"
	"	mov x20, xzr\n"
	"	ldp x2, x3, [x1, #16]\n"
	"	ldp x4, x5, [x1, #32]\n"
	"	ldp x0, x1, [x1]\n"
	"	mov x6, xzr\n"
	"	mov x7, #0x51\n"
	"	blr x16\n"
	"	ldp x19, x20, [sp, #16]\n"
	"	ldp x29, x30, [sp], #32\n"
	"	ret\n"
	".size create_uri, .-create_uri\n");

/* What the compiled code passed to the "Java" methods it called. */
static uint64_t got_self, got_key, got_value, got_text, got_patterns;
static int got_calls;
static uint32_t the_date;

/* HttpParams.setParameter(String, Object) (an interface method, through the IMT) */
static uint64_t params_set(uint64_t m, uint64_t self, uint64_t key, uint64_t value)
{
	(void)m;
	got_self = self;
	got_key = key;
	got_value = value;
	got_calls++;
	return self;
}

/* DateUtils.parseDate(String, String[], Date) (static, its ArtMethod from the .bss) */
static uint64_t parse_date3(uint64_t m, uint64_t text, uint64_t patterns, uint64_t date)
{
	(void)m, (void)date;
	got_text = text;
	got_patterns = patterns;
	got_calls++;
	return the_date;
}

/* createURI's callees (StringBuilder's, String's, URI's: boot image methods, through
 * .data.bimg.rel.ro, the embedded vtable and the allocation entrypoint) are one fake
 * method whose code is this: it records its x2 and returns the one fake object. */
static uint64_t uri_x2[32];
static int uri_calls;
static uint32_t the_object;

static uint64_t any_method(uint64_t m, uint64_t self, uint64_t x2)
{
	(void)m, (void)self;
	if (uri_calls < 32)
		uri_x2[uri_calls] = x2;
	uri_calls++;
	return the_object;
}

/* ART's loader relocates .data.bimg.rel.ro (the boot image's methods and strings the
 * code names) once the boot image is mapped: here every entry becomes REF (a block that
 * is both a fake object and a fake ArtMethod). */
static void relocate_bimg(uint8_t *base, const char *path, uint32_t ref)
{
	int fd = open(path, O_RDONLY);
	Elf64_Ehdr eh;
	Elf64_Shdr sh, strtab;
	char nm[32];

	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) ||
	    pread(fd, &strtab, sizeof(strtab), (off_t)(eh.e_shoff + eh.e_shstrndx *
							  sizeof(sh))) != sizeof(strtab))
		die(path);
	for (int i = 0; i < eh.e_shnum; i++) {
		if (pread(fd, &sh, sizeof(sh), (off_t)(eh.e_shoff + i * sizeof(sh))) != sizeof(sh) ||
		    pread(fd, nm, sizeof(nm), (off_t)(strtab.sh_offset + sh.sh_name)) <= 0)
			die(path);
		nm[sizeof(nm) - 1] = '\0';
		if (strcmp(nm, ".data.bimg.rel.ro"))
			continue;
		long page = sysconf(_SC_PAGESIZE);
		uint64_t lo = sh.sh_addr & ~((uint64_t)page - 1);
		uint64_t hi = (sh.sh_addr + sh.sh_size + (uint64_t)page - 1) & ~((uint64_t)page - 1);
		uint32_t *w = mmap(base + lo, hi - lo, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (w == MAP_FAILED)
			die(".data.bimg.rel.ro");
		for (uint64_t k = 0; k < (hi - lo) / 4; k++)
			w[k] = ref;
	}
	close(fd);
}

/* ART's loader resolves what the code takes from the .bss: each `adrp xN; ldr [xN, #imm]`
 * of the code at CODE (up to its first `ret`) that lands in WRITABLE (base-relative
 * [lo, hi)) gets STRING_REF (a 32-bit load: a String root) or METHOD (a 64-bit load). */
static void resolve_bss(uint8_t *base, uint64_t off, uint64_t lo, uint64_t hi,
			uint32_t string_ref, void *method)
{
	uint64_t page[32] = { 0 };
	int have[32] = { 0 };

	for (uint64_t pc = off; pc < off + 4096; pc += 4) {
		uint32_t insn;
		memcpy(&insn, base + pc, 4);
		if (insn == 0xd65f03c0)   /* ret */
			break;
		if ((insn & 0x9f000000) == 0x90000000) {   /* adrp */
			int64_t imm = (int64_t)((((insn >> 5) & 0x7ffff) << 2) | ((insn >> 29) & 3));
			imm = (imm << 43) >> 43;
			page[insn & 31] = (pc & ~0xfffull) + (uint64_t)(imm << 12);
			have[insn & 31] = 1;
			continue;
		}
		int wide = (insn & 0xffc00000) == 0xf9400000;
		if (!wide && (insn & 0xffc00000) != 0xb9400000)   /* ldr (unsigned offset) */
			continue;
		unsigned rn = (insn >> 5) & 31;
		uint64_t a = page[rn] + ((insn >> 10) & 0xfff) * (wide ? 8u : 4u);
		if (!have[rn] || a < lo || a >= hi)
			continue;
		if (wide)
			memcpy(base + a, &method, sizeof(method));
		else
			memcpy(base + a, &string_ref, sizeof(string_ref));
	}
}

/* The writable NOBITS segment (.bss) of the ELF at PATH: [*lo, *hi). */
static void bss_range(const char *path, uint64_t *lo, uint64_t *hi)
{
	int fd = open(path, O_RDONLY);
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	*lo = *hi = 0;
	if (fd < 0 || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh))
		die(path);
	for (int i = 0; i < eh.e_phnum; i++) {
		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) != sizeof(ph))
			die(path);
		if (ph.p_type == PT_LOAD && !ph.p_filesz && (ph.p_flags & PF_W)) {
			*lo = ph.p_vaddr;
			*hi = ph.p_vaddr + ph.p_memsz;
		}
	}
	close(fd);
}

static void *thread;

static uint64_t call(uint8_t *base, unsigned long off, void *method, uint64_t a0, uint64_t a1,
		     uint64_t a2)
{
	return art_call(base + off, (uint64_t)(uintptr_t)method, a0, a1, a2, thread);
}

int main(int argc, char **argv)
{
	int argi;

	heap_init();
	argi = argc >= 3 && !strcmp(argv[1], "--go-fifo") ? 3 : 1;
	if (argc - argi != 6) {
		fprintf(stderr, "usage: target_art_static [--go-fifo PATH] ODEX OFF_PARSE_DATE "
				"OFF_USER_AGENT OFF_GZIP OFF_REASON OFF_CREATE_URI\n");
		return 2;
	}
	fake_class = jobj(512);
	uint32_t key = name("http.useragent");
	uint8_t *odex = map_oat(argv[argi], 0);
	unsigned long parse = off_arg(argv[argi + 1]), agent = off_arg(argv[argi + 2]);
	unsigned long gzip = off_arg(argv[argi + 3]), reason = off_arg(argv[argi + 4]);
	unsigned long uri = off_arg(argv[argi + 5]);
	uint64_t lo, hi;
	bss_range(argv[argi], &lo, &hi);
	void *parse3 = method_at((void *)parse_date3);
	resolve_bss(odex, parse, lo, hi, key, parse3);
	resolve_bss(odex, agent, lo, hi, key, parse3);
	/* the one fake object and method createURI's callees are: its class's vtable and
	 * its entry point lead to any_method() */
	uint32_t any_class = jobj(1024);
	the_object = jobj(64);
	put32(the_object, 0, any_class);
	put64(the_object, ENTRY_POINT_OFF, (uint64_t)(uintptr_t)any_method);
	for (uint32_t k = 128; k < 1024; k += 8)
		put64(any_class, k, (uint64_t)(uintptr_t)at(the_object, 0));
	relocate_bimg(odex, argv[argi], the_object);
	/* ART's Thread (x19): suspend flags 0 at +0, the card table at +144, its
	 * entrypoints (from +256: allocation) any_method() */
	uint8_t *cards = mmap(NULL, 1u << 22, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	thread = calloc(1, 4096);
	if (!thread || cards == MAP_FAILED)
		die("fake Thread");
	memcpy((uint8_t *)thread + 144, &cards, sizeof(cards));
	for (uint32_t k = 256; k < 4096; k += 8) {
		uint64_t fn = (uint64_t)(uintptr_t)any_method;
		memcpy((uint8_t *)thread + k, &fn, sizeof(fn));
	}
	/* the fake class: its IMT (a pointer at +128, every slot setParameter), the static
	 * fields its methods read: getMinGzipSize's long at +344, setReason's REASONS
	 * (String[][]: 6 arrays of 100) at +236 */
	uint32_t imt = jobj(43 * 8);
	void *setter = method_at((void *)params_set);
	for (uint32_t i = 0; i < 43; i++)
		put64(imt, i * 8, (uint64_t)(uintptr_t)setter);
	put64(fake_class, 128, (uint64_t)(uintptr_t)at(imt, 0));
	put64(fake_class, 344, 42);
	uint32_t reasons = jobj(12 + 6 * 4), rows[6];
	put32(reasons, 8, 6);
	for (uint32_t i = 0; i < 6; i++) {
		rows[i] = jobj(12 + 100 * 4);
		put32(rows[i], 8, 100);
		put32(reasons, 12 + 4 * i, rows[i]);
	}
	put32(fake_class, 236, reasons);
	void *method = method_at(NULL);
	uint32_t params = jobj(64), outer = name("outer"), inner = name("inner");
	uint32_t decoy = name("decoy: not an argument");
	the_date = jobj(64);
	put32(params, 0, fake_class);
	go_fifo_wait(argc, argv);

	EXPECT(call(odex, parse, method, outer, decoy, 0) == the_date && got_text == outer &&
	       got_patterns == 0, "parseDate(\"outer\") did not call parseDate(text, null, null)");
	call(odex, agent, method, params, inner, decoy);
	EXPECT(got_self == params && got_key == key && got_value == inner,
	       "setUserAgent(params, \"inner\") did not call setParameter(key, \"inner\")");
	EXPECT(call(odex, gzip, method, decoy, decoy, decoy) == 42,
	       "getMinGzipSize #1 did not read its class's static field");
	EXPECT(call(odex, gzip, method, decoy, decoy, decoy) == 42,
	       "getMinGzipSize #2 did not read its class's static field");
	/* createURI(scheme, "load", port, null, null, null) with ports 404 and 503 (garbage
	 * above their low half): new StringBuilder(), append(scheme), append("://"),
	 * append(host), append(':'), append(port), append('/'), new URI(toString()) */
	uint32_t scheme = name("http"), load = name("load");
	const uint32_t status[2] = { 404, 503 };
	for (int i = 0; i < 2; i++) {
		uint64_t rq[6] = { (uint64_t)(uintptr_t)method, scheme, load, GARBAGE | status[i],
				   0, 0 };
		uri_calls = 0;
		EXPECT(create_uri(odex + uri, rq, thread) == the_object,
		       "createURI #%d did not return the new URI", i + 1);
		EXPECT(uri_calls == 11 && uri_x2[2] == scheme && uri_x2[4] == load &&
		       uri_x2[5] == ':' && (uint32_t)uri_x2[6] == status[i] && uri_x2[7] == '/',
		       "createURI #%d did not build \"http://load:%u/\" (%d calls)", i + 1,
		       status[i], uri_calls);
	}
	/* setReason(404, "load"), setReason(503, "load"): the same ints */
	call(odex, reason, method, GARBAGE | 404, load, GARBAGE | 200);
	call(odex, reason, method, GARBAGE | 503, load, GARBAGE | 200);
	EXPECT(*(uint32_t *)at(rows[4], 12 + 4 * 4) == load &&
	       *(uint32_t *)at(rows[5], 12 + 4 * 3) == load,
	       "setReason did not store the reasons at REASONS[4][4] and REASONS[5][3]");
	EXPECT(got_calls == 2, "%d calls of the fake methods, expected 2", got_calls);
	if (failures)
		return 1;
	printf("target_art_static: done\n");
	return 0;
}

#else
#error "x86_64 or aarch64 only"
#endif
