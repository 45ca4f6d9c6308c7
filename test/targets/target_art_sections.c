/* target_art_sections — trace-marker shaped calls into real ART-compiled
 * code, for the sections test's Java path (the test data has no compiled
 * android.os.Trace).
 *
 *   target_art_sections [--go-fifo PATH] ODEX SEND_OFF UPD_OFF INIT_OFF
 *
 * Maps the odex executable from its file and calls, with ART's managed
 * convention (ArtMethod* stand-in, `this`, then the arguments):
 *   boolean LocationProviderBase.onSendExtraCommand(String, Bundle)  at SEND_OFF
 *     ("outer", then "inner": a String in the place of Trace.beginSection's)
 *   long LocationProviderBase.onGetStatusUpdateTime()                at UPD_OFF
 *     (twice: the ends)
 *   void ActivityRecognitionEvent.<init>(String, int, long)          at INIT_OFF
 *     (null, -5, 5000000000: an int argument whose register's upper half
 *     is not sign-extended by the caller, and a long)
 * in that order, on one thread. */
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
typedef int64_t (*upd_fn)(void *art_method, void *self);
typedef void (*init_fn)(void *art_method, void *self, uint32_t name_ref, uint64_t type,
			int64_t timestamp_ns);

int main(int argc, char **argv)
{
	struct stat st;
	int argi;

	heap_init();
	argi = go_fifo_wait(argc, argv);
	if (argc - argi != 4) {
		fprintf(stderr, "usage: target_art_sections [--go-fifo PATH] ODEX SEND_OFF UPD_OFF "
			"INIT_OFF\n");
		return 2;
	}
	int fd = open(argv[argi], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		perror(argv[argi]);
		return 1;
	}
	uint8_t *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (base == MAP_FAILED)
		die(argv[argi]);
	send_fn send = (send_fn)(void *)(base + strtoul(argv[argi + 1], NULL, 0));
	upd_fn upd = (upd_fn)(void *)(base + strtoul(argv[argi + 2], NULL, 0));
	init_fn init = (init_fn)(void *)(base + strtoul(argv[argi + 3], NULL, 0));
	void *method = (void *)(uintptr_t)0x7a7a7a70;
	uint32_t self = jobj(64), event = jobj(64);

	send(method, at(self, 0), jstr("outer"), 0);
	send(method, at(self, 0), jstr("inner"), 0);
	upd(method, at(self, 0));
	upd(method, at(self, 0));
	/* -5 in the low half, garbage above it, as a caller may leave it */
	init(method, at(event, 0), 0, 0xdead0000fffffffbull, 5000000000LL);
	printf("target_art_sections: done\n");
	return 0;
}
