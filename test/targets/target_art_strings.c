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
 * odd calls a UTF-16 one with non-ASCII characters and a surrogate pair
 * (art_fake.h lays Strings out as ART does, below 4 GiB). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "art_fake.h"
#include "go_fifo.h"

typedef int32_t (*send_fn)(void *art_method, void *self, uint32_t str_ref, uint32_t bundle_ref);

#define ASCII_TEXT "hello, ART strings"
#define UTF16_TEXT "h\u00e9llo w\u00f6rld \u2713 \U0001F600"

int main(int argc, char **argv)
{
	struct stat st;
	int argi;

	heap_init();
	argi = go_fifo_wait(argc, argv);
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
	if (base == MAP_FAILED)
		die(argv[argi]);
	uint32_t self = jobj(64), ascii = jstr(ASCII_TEXT), utf16 = jstr(UTF16_TEXT);
	send_fn send = (send_fn)(void *)(base + off);
	for (long i = 0; i < count; i++)
		if (send((void *)(uintptr_t)0x7a7a7a70, at(self, 0), i % 2 ? utf16 : ascii, 0) != 0)
			return 1;
	printf("target_art_strings: %ld calls ok\n", count);
	return 0;
}
