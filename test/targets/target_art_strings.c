/* target_art_strings — passes java.lang.String arguments to real
 * ART-compiled code, as ART would.
 *
 *   target_art_strings [--go-fifo PATH] ODEX OFFSET COUNT
 *
 * Maps the odex executable from its file and calls the compiled
 *   boolean LocationProviderBase.onSendExtraCommand(String, Bundle)
 * at OFFSET (its code is `xor eax,eax; ret` / `mov w0, #0; ret`) COUNT times
 * with ART's managed convention: ArtMethod* stand-in, `this`, the String
 * reference, a null Bundle.  Even calls pass a compressed (ASCII) String,
 * odd calls a UTF-16 one with non-ASCII characters and a surrogate pair.
 * The String objects are laid out as ART's: count = length << 1 | (1 for
 * UTF-16) at +8, characters at +16, below 4 GiB (32-bit references). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int32_t (*send_fn)(void *art_method, void *self, uint32_t str_ref, uint32_t bundle_ref);

#define ASCII_TEXT "hello, ART strings"
/* "héllo wörld ✓ 😀": é U+00E9, ö U+00F6, ✓ U+2713, 😀 U+1F600 (D83D DE00). */
static const uint16_t utf16_text[] = { 'h', 0xe9, 'l', 'l', 'o', ' ', 'w', 0xf6, 'r', 'l', 'd',
				       ' ', 0x2713, ' ', 0xd83d, 0xde00 };

static uint8_t *low_memory(size_t size)
{
#ifdef MAP_32BIT
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT,
		       -1, 0);
#else
	void *p = mmap((void *)0x20000000, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
#endif
	return p == MAP_FAILED ? NULL : p;
}

static uint32_t make_string(uint8_t *obj, const void *chars, uint32_t len, int utf16)
{
	uint32_t count = len << 1 | (utf16 ? 1u : 0u);

	memcpy(obj + 8, &count, sizeof(count));
	memcpy(obj + 16, chars, utf16 ? len * 2 : len);
	return (uint32_t)(uintptr_t)obj;
}

static int wait_go(const char *fifo)
{
	char line[16];
	FILE *f = fopen(fifo, "r");

	if (!f || !fgets(line, sizeof(line), f)) {
		perror(fifo);
		return -1;
	}
	fclose(f);
	return 0;
}

int main(int argc, char **argv)
{
	int argi = argc > 2 && !strcmp(argv[1], "--go-fifo") ? 3 : 1;
	struct stat st;

	if (argc - argi != 3) {
		fprintf(stderr, "usage: target_art_strings [--go-fifo PATH] ODEX OFFSET COUNT\n");
		return 2;
	}
	unsigned long off = strtoul(argv[argi + 1], NULL, 0);
	long count = atol(argv[argi + 2]);
	int fd = open(argv[argi], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 || off >= (unsigned long)st.st_size) {
		perror(argv[argi]);
		return 1;
	}
	uint8_t *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	uint8_t *heap = low_memory(4096);
	if (base == MAP_FAILED || !heap)
		return 1;
	uint32_t ascii = make_string(heap + 256, ASCII_TEXT, sizeof(ASCII_TEXT) - 1, 0);
	uint32_t utf16 = make_string(heap + 1024, utf16_text,
				     sizeof(utf16_text) / sizeof(utf16_text[0]), 1);
	if (argi == 3 && wait_go(argv[2]) < 0)
		return 1;
	send_fn send = (send_fn)(void *)(base + off);
	for (long i = 0; i < count; i++)
		if (send((void *)(uintptr_t)0x7a7a7a70, heap, i % 2 ? utf16 : ascii, 0) != 0)
			return 1;
	printf("target_art_strings: %ld calls ok\n", count);
	return 0;
}
