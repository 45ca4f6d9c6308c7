/* statsd_encode.h — the statsd push-atom wire format, byte for byte as
 * libstatssocket (stats_event.c) writes it.
 *
 * Owns: the event buffer (OBJECT, element count, boot-time timestamp, atom id,
 * typed fields with annotations, lists, attribution chains), the 4064-byte push
 * limit and the error-event form, the 11-byte android_log_header_t + magic that
 * frame every datagram, and the 24-byte legacy drop-report datagram.
 *
 * The low-level calls mirror AStatsEvent_* one to one (same error bits, same
 * order rules) so an event built here is what the real library would send.
 * statsd_encode_atom() builds a whole struct atom.  Nothing allocates: a
 * struct statsd_event holds its 4064-byte buffer.  All integers are written
 * little-endian explicitly (every Android ABI is LE). */
#ifndef UPROBESTATS_SINK_STATSD_ENCODE_H
#define UPROBESTATS_SINK_STATSD_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "vocab/event.h"

#define STATSD_MAX_EVENT      4064u   /* MAX_PUSH_EVENT_PAYLOAD */
#define STATSD_HEADER_LEN     11u     /* sizeof(android_log_header_t) */
#define STATSD_MAGIC          1937006964u /* "tats" LE: 74 61 74 73 */
#define STATSD_FRAME_LEN      (STATSD_HEADER_LEN + 4u) /* header + magic */
#define STATSD_MAX_DATAGRAM   (STATSD_FRAME_LEN + STATSD_MAX_EVENT)
#define STATSD_DROP_LEN       24u     /* header + android_log_event_long_t */
#define STATSD_LOG_ID_STATS   5u
#define STATSD_MAX_ELEMENTS   127u    /* timestamp + atom id + fields */
#define STATSD_MAX_LIST       127u
#define STATSD_MAX_STRING     (50u * 1024u)
#define STATSD_MAX_ANNOTATIONS 15u

/* Type ids: low nibble of a type byte (high nibble = annotation count). */
enum statsd_type {
	STATSD_INT32 = 0x00,
	STATSD_INT64 = 0x01,
	STATSD_STRING = 0x02,
	STATSD_LIST = 0x03,
	STATSD_FLOAT = 0x04,
	STATSD_BOOL = 0x05,
	STATSD_BYTE_ARRAY = 0x06,
	STATSD_OBJECT = 0x07,
	STATSD_KEY_VALUE_PAIRS = 0x08,
	STATSD_ATTRIBUTION_CHAIN = 0x09,
	STATSD_ERROR = 0x0f,
};

/* Error bits of the error event (stats_event.h). */
enum statsd_error {
	STATSD_ERR_NO_TIMESTAMP = 0x1,
	STATSD_ERR_NO_ATOM_ID = 0x2,
	STATSD_ERR_OVERFLOW = 0x4,
	STATSD_ERR_ATTRIBUTION_CHAIN_TOO_LONG = 0x8,
	STATSD_ERR_TOO_MANY_KEY_VALUE_PAIRS = 0x10,
	STATSD_ERR_ANNOTATION_DOES_NOT_FOLLOW_FIELD = 0x20,
	STATSD_ERR_INVALID_ANNOTATION_ID = 0x40,
	STATSD_ERR_ANNOTATION_ID_TOO_LARGE = 0x80,
	STATSD_ERR_TOO_MANY_ANNOTATIONS = 0x100,
	STATSD_ERR_TOO_MANY_FIELDS = 0x200,
	STATSD_ERR_INVALID_VALUE_TYPE = 0x400,
	STATSD_ERR_STRING_NOT_NULL_TERMINATED = 0x800,
	STATSD_ERR_ATOM_ID_INVALID_POSITION = 0x2000,
	STATSD_ERR_LIST_TOO_LONG = 0x4000,
};

/* Annotation ids (stats_annotations.h). */
enum statsd_annotation {
	STATSD_ANN_IS_UID = 1,
	STATSD_ANN_TRUNCATE_TIMESTAMP = 2,
	STATSD_ANN_PRIMARY_FIELD = 3,
	STATSD_ANN_EXCLUSIVE_STATE = 4,
	STATSD_ANN_PRIMARY_FIELD_FIRST_UID = 5,
	STATSD_ANN_TRIGGER_STATE_RESET = 7,
	STATSD_ANN_STATE_NESTED = 8,
	STATSD_ANN_RESTRICTION_CATEGORY = 9,
};

/* One event being built.  Fill it with statsd_event_init() and the write
 * calls, then statsd_event_build(); buf[0..len) is the event buffer. */
struct statsd_event {
	uint8_t buf[STATSD_MAX_EVENT];
	size_t len;
	uint32_t n_elements;
	uint32_t errors;         /* enum statsd_error bits seen so far */
	uint32_t atom_id;        /* 0 until statsd_event_set_atom_id() */
	size_t last_field_pos;   /* type byte the next annotation bumps */
};

/* AStatsEvent_obtain(): OBJECT byte, count slot, INT64 timestamp. */
void statsd_event_init(struct statsd_event *ev, uint64_t boot_ns);
/* Must follow init directly; a second call is ignored. */
void statsd_event_set_atom_id(struct statsd_event *ev, uint32_t atom_id);

void statsd_event_write_int32(struct statsd_event *ev, int32_t v);
void statsd_event_write_int64(struct statsd_event *ev, int64_t v);
void statsd_event_write_float(struct statsd_event *ev, float v);
void statsd_event_write_bool(struct statsd_event *ev, bool v);
/* A string ends at len or at its first NUL, as strnlen() would see it; NULL
 * writes "".  No NUL within 50 KiB sets STRING_NOT_NULL_TERMINATED. */
void statsd_event_write_string(struct statsd_event *ev, const char *s, size_t len);
void statsd_event_write_bytes(struct statsd_event *ev, const void *p, size_t len);
/* Lists: at most 127 elements (more sets LIST_TOO_LONG and writes nothing). */
void statsd_event_write_int32_list(struct statsd_event *ev, const int32_t *v, size_t n);
void statsd_event_write_int64_list(struct statsd_event *ev, const int64_t *v, size_t n);
void statsd_event_write_float_list(struct statsd_event *ev, const float *v, size_t n);
void statsd_event_write_bool_list(struct statsd_event *ev, const bool *v, size_t n);
void statsd_event_write_string_list(struct statsd_event *ev, const char *const *v, size_t n);
void statsd_event_write_attribution_chain(struct statsd_event *ev, const uint32_t *uids,
					  const char *const *tags, size_t n);
/* Annotate the last field (or the atom, right after set_atom_id). */
void statsd_event_add_bool_annotation(struct statsd_event *ev, uint8_t id, bool v);
void statsd_event_add_int32_annotation(struct statsd_event *ev, uint8_t id, int32_t v);

/* build(push): applies the element, atom-id and 4064-byte checks; on any error
 * rewrites the buffer into the 21-byte error event (timestamp, atom id slot,
 * ERROR field with the bits).  Returns the event length. */
size_t statsd_event_build(struct statsd_event *ev);

/* Encode a whole atom: set_atom_id, each field in order (UINT64 as INT64,
 * BYTES as BYTE_ARRAY, lists as LIST), IS_UID where a->is_uid[i], then build.
 * Returns ev->errors (0: a valid event; else it is the error event). */
uint32_t statsd_encode_atom(struct statsd_event *ev, const struct atom *a);

/* The 15 bytes in front of every event: log id 5, tid (u16), realtime
 * sec/nsec (u32 each), then the magic. */
void statsd_frame(uint8_t out[STATSD_FRAME_LEN], uint32_t tid, struct timespec realtime);

/* The legacy drop report: header, then tag = last error (negative errno),
 * EVENT_TYPE_LONG (1), ((i64)last_atom_id << 32) | dropped. */
void statsd_drop_datagram(uint8_t out[STATSD_DROP_LEN], uint32_t tid, struct timespec realtime,
			  int32_t last_error, int32_t last_atom_id, int32_t dropped);

#endif
