/* fuzz_statsd_decode — the test decoder (test/unit/statsd_decoder.c) on
 * hostile datagrams, and a round trip: when the input decodes as a valid
 * atom, re-encoding its scalar fields with the sink's encoder must decode to
 * the same values. */
#include <stdint.h>
#include <string.h>

#include "../unit/statsd_decoder.c"
#include "sink/statsd_encode.h"

static void roundtrip(const struct sd_datagram *d)
{
	static struct statsd_event ev;
	static struct sd_datagram back;
	char why[128];

	if (d->kind != SD_ATOM || d->atom_id == 0)
		return;
	statsd_event_init(&ev, d->timestamp_ns);
	statsd_event_set_atom_id(&ev, (uint32_t)d->atom_id);
	for (size_t i = 0; i < d->n_fields; i++) {
		const struct sd_field *f = &d->fields[i];
		switch (f->type) {
		case 0: statsd_event_write_int32(&ev, (int32_t)f->i64); break;
		case 1: statsd_event_write_int64(&ev, f->i64); break;
		case 2: statsd_event_write_bytes(&ev, f->data, f->len); break;
		case 5: statsd_event_write_bool(&ev, f->i64 != 0); break;
		default: statsd_event_write_int64(&ev, 0); break;
		}
	}
	statsd_event_build(&ev);
	if (ev.errors)
		return;
	if (sd_decode_event(ev.buf, ev.len, &back, why, sizeof(why)) != 0)
		__builtin_trap();
	if (back.n_fields != d->n_fields || back.atom_id != d->atom_id)
		__builtin_trap();
	for (size_t i = 0; i < d->n_fields; i++)
		if (d->fields[i].type <= 1 && back.fields[i].i64 != d->fields[i].i64)
			__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct sd_datagram d;
	char why[128];

	if (sd_decode_datagram(data, size, &d, why, sizeof(why)) == 0)
		roundtrip(&d);
	if (sd_decode_event(data, size, &d, why, sizeof(why)) == 0)
		roundtrip(&d);
	return 0;
}
