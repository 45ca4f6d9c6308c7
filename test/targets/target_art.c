/* target_art — runs real ART-compiled code from an odex, the way ART would.
 *
 *   target_art [--go-fifo PATH] ODEX INIT_OFF GET_OFF COUNT
 *
 * Maps the odex from its file, executable, so uprobes on (file, offset)
 * fire, then COUNT times calls the compiled
 *   void ActivityRecognitionEvent.<init>(String, int, long)   at INIT_OFF
 *   int  ActivityRecognitionEvent.getEventType()              at GET_OFF
 * with ART's managed calling convention: ArtMethod* first (a stand-in),
 * then `this`, then the arguments — on x86_64 rdi, rsi, rdx, rcx, r8 and on
 * arm64 x0..x4, which for these integer arguments is the C convention too.
 * The String is null, which skips the write barrier (the only code that
 * would need ART's thread register).  Call i passes type 100+i and
 * timestamp 5000000000+i and checks getEventType() returns 100+i. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "art_fake.h"
#include "go_fifo.h"

typedef void (*init_fn)(void *art_method, void *self, uint32_t name_ref, int32_t type,
			int64_t timestamp_ns);
typedef int32_t (*get_fn)(void *art_method, void *self);

int main(int argc, char **argv)
{
	struct stat st;
	int argi;

	heap_init();
	/* The odex is mapped before the go line, so a tool attached before it
	 * (--stack) sees the mapping in /proc/PID/maps at attach time. */
	argi = argc >= 3 && !strcmp(argv[1], "--go-fifo") ? 3 : 1;
	if (argc - argi != 4) {
		fprintf(stderr, "usage: target_art [--go-fifo PATH] ODEX INIT_OFF GET_OFF COUNT\n");
		return 2;
	}
	const char *odex = argv[argi];
	unsigned long init_off = strtoul(argv[argi + 1], NULL, 0);
	unsigned long get_off = strtoul(argv[argi + 2], NULL, 0);
	long count = atol(argv[argi + 3]);
	int fd = open(odex, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(odex);
		return 1;
	}
	uint8_t *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	uint8_t *obj = at(jobj(64), 0);
	if (base == MAP_FAILED || init_off >= (unsigned long)st.st_size ||
	    get_off >= (unsigned long)st.st_size) {
		fprintf(stderr, "target_art: cannot map %s\n", odex);
		return 1;
	}
	init_fn init = (init_fn)(void *)(base + init_off);
	get_fn get = (get_fn)(void *)(base + get_off);
	void *art_method = (void *)(uintptr_t)0x7a7a7a70;
	go_fifo_wait(argc, argv);
	for (long i = 0; i < count; i++) {
		init(art_method, obj, 0, (int32_t)(100 + i), 5000000000LL + i);
		if (get(art_method, obj) != (int32_t)(100 + i)) {
			fprintf(stderr, "target_art: call %ld returned %d\n", i,
				get(art_method, obj));
			return 1;
		}
	}
	printf("target_art: %ld calls ok\n", count);
	return 0;
}
