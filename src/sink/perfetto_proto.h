/* perfetto_proto.h — what the Perfetto writer (perfetto_out and its parts)
 * shares: the field numbers of Perfetto's protos it writes
 * (protos/perfetto/trace/...), and the two hashes its tables key by. */
#ifndef UPROBESTATS_SINK_PERFETTO_PROTO_H
#define UPROBESTATS_SINK_PERFETTO_PROTO_H

#include <stddef.h>
#include <stdint.h>

enum {
	TRACE_PACKET = 1,
	/* TracePacket */
	TP_TIMESTAMP = 8,
	TP_SEQ_ID = 10,
	TP_TRACK_EVENT = 11,
	TP_INTERNED_DATA = 12,
	TP_SEQUENCE_FLAGS = 13,
	TP_CLOCK_SNAPSHOT = 6,
	TP_DEFAULTS = 59,
	TP_TRACK_DESCRIPTOR = 60,
	TP_CLOCK_ID = 58,
	DEFAULTS_CLOCK_ID = 58,
	DEFAULTS_TRACK_EVENT = 11,
	TED_TRACK_UUID = 11,
	SEQ_CLEARED = 1,
	SEQ_NEEDS_STATE = 2,
	/* ClockSnapshot */
	CS_CLOCKS = 1,
	CS_CLOCK_ID = 1,
	CS_CLOCK_TS = 2,
	CS_CLOCK_INCREMENTAL = 3,
	/* TrackDescriptor */
	TD_UUID = 1,
	TD_NAME = 2,
	TD_PROCESS = 3,
	TD_THREAD = 4,
	TD_PARENT = 5,
	TD_COUNTER = 8,
	PD_PID = 1,
	PD_NAME = 6,
	THD_PID = 1,
	THD_TID = 2,
	THD_NAME = 5,
	/* TrackEvent */
	TE_DEBUG = 4,
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_TRACK = 11,
	TE_NAME = 23,
	TE_COUNTER_VALUE = 30,
	TE_CALLSTACK = 55,
	TE_CALLSTACK_IID = 56,
	CALLSTACK_FRAMES = 1,
	FRAME_FUNCTION = 1,
	FRAME_SOURCE = 2,
	FRAME_LINE = 3,
	TYPE_BEGIN = 1,
	TYPE_END = 2,
	TYPE_INSTANT = 3,
	TYPE_COUNTER = 4,
	/* DebugAnnotation */
	DA_NAME_IID = 1,
	DA_BOOL = 2,
	DA_UINT = 3,
	DA_INT = 4,
	DA_DOUBLE = 5,
	DA_STRING = 6,
	DA_POINTER = 7,
	DA_NAME = 10,
	DA_ARRAY = 12,
	DA_STRING_IID = 17,
	/* InternedData */
	ID_EVENT_NAMES = 2,
	ID_ANN_NAMES = 3,
	ID_STRINGS = 29,
	ID_FUNCTION_NAMES = 5,
	ID_FRAMES = 6,
	ID_CALLSTACKS = 7,
	ID_MAPPING_PATHS = 17,
	ID_MAPPINGS = 19,
	IS_IID = 1,
	IS_NAME = 2,
	/* Frame (profile_common.proto), InternedData.frames */
	FR_IID = 1,
	FR_FUNCTION_NAME = 2,
	FR_MAPPING = 3,
	FR_REL_PC = 4,
	FR_LINE = 6,
	/* Mapping, InternedData.mappings: the file as one path component */
	MAP_IID = 1,
	MAP_PATHS = 7,
	/* Callstack, InternedData.callstacks: frame_ids outermost ("bottom")
	 * first, not packed (proto2) */
	CSK_IID = 1,
	CSK_FRAME_IDS = 2,
};

/* The tool's packet sequence (trusted_packet_sequence_id; perfetto_packet.h). */
#define PF_SEQ_ID 1

static inline uint64_t pf_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

/* FNV-1a of p[0, n) from seed h. */
static inline uint64_t pf_hash_bytes(const void *p, size_t n, uint64_t h)
{
	const unsigned char *c = p;

	h ^= 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ull;
	return h;
}

#endif
