/* statsd_decoder.h — a test-only statsd datagram decoder, written from the
 * reference (statsd-wire.md §1.1, §2, §3, §4.1) and not from the encoder.
 *
 * It applies the checks statsd's StatsSocketListener and LogEvent parser make
 * (Android 15+ rules: the magic must match; annotation ids 1..5, 7..18) and
 * says which one failed.  Tests use it to prove that what the sink sends is
 * what statsd would accept; the fuzzer uses it as a hostile-input parser. */
#ifndef UPROBESTATS_TEST_STATSD_DECODER_H
#define UPROBESTATS_TEST_STATSD_DECODER_H

#include <stddef.h>
#include <stdint.h>

#define SD_MAX_FIELDS 125
#define SD_MAX_ANN 15

struct sd_annotation {
	uint8_t id;
	uint8_t type;   /* 0x05 BOOL or 0x00 INT32 */
	int32_t value;
};

/* One top-level field.  Scalars land in i64/f32; strings and byte arrays in
 * data/len; lists, attribution chains and key-value pairs keep their raw
 * element bytes in data/len plus count (and elem_type for lists). */
struct sd_field {
	uint8_t type;
	uint8_t elem_type;
	uint32_t count;
	int64_t i64;
	float f32;
	const uint8_t *data;
	size_t len;
	size_t n_ann;
	struct sd_annotation ann[SD_MAX_ANN];
};

enum sd_kind { SD_ATOM, SD_DROP_REPORT };

struct sd_datagram {
	enum sd_kind kind;
	/* android_log_header_t */
	uint8_t log_id;
	uint16_t tid;
	uint32_t rt_sec, rt_nsec;
	/* SD_DROP_REPORT */
	int32_t drop_error;
	int32_t drop_atom_id;
	int32_t drop_count;
	/* SD_ATOM */
	uint32_t magic;
	uint64_t timestamp_ns;
	int32_t atom_id;
	size_t n_atom_ann;
	struct sd_annotation atom_ann[SD_MAX_ANN];
	size_t n_fields;
	struct sd_field fields[SD_MAX_FIELDS];
};

/* A whole datagram as statsd receives it.  Returns 0, or -1 with why[] saying
 * which rule failed (statsd would ignore or reject the datagram). */
int sd_decode_datagram(const uint8_t *p, size_t n, struct sd_datagram *out, char *why,
		       size_t why_len);
/* Just the event buffer (what follows the magic). */
int sd_decode_event(const uint8_t *p, size_t n, struct sd_datagram *out, char *why,
		    size_t why_len);

/* Element i of an INT32/INT64 list field (caller checks i < count). */
int64_t sd_list_int(const struct sd_field *f, size_t i);

#endif
