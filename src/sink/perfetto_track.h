/* perfetto_track.h — the Perfetto trace's tracks: their uuids (35 bits, of
 * this run), which are described already (by uuid, with a hash of the name
 * each was described under) and their TrackDescriptor packets.  A process
 * track (ProcessDescriptor pid, name); a thread track per thread
 * (ThreadDescriptor pid, tid, name; described again when the name changes);
 * async sections on process-scoped tracks keyed by (pid, name, cookie);
 * counter tracks keyed by (pid, name); the tool's own track "uprobestats".
 * Every track is described before the caller writes its first event.
 * A track's events go on sequence 1 until it had PF_SEQ_BUSY of them, then
 * on a sequence of its own (perfetto_packet.h) that names it as the
 * default track: a new sequence costs its first packet and its own
 * interned names, which a busy track earns back (its track_uuid left out
 * of every event) and a track of a few events would not. */
#ifndef UPROBESTATS_SINK_PERFETTO_TRACK_H
#define UPROBESTATS_SINK_PERFETTO_TRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sink/perfetto_packet.h"
#include "vocab/event.h"

struct pf_track {
	uint64_t uuid;           /* 0: empty slot */
	uint32_t name_hash;
	uint32_t open_sections;  /* section slices begun and not ended (closed at exit) */
	uint32_t events;         /* written on sequence 1 (up to PF_SEQ_BUSY) */
	struct pf_seq *seq;      /* its own sequence, NULL: sequence 1 */
};

#define PF_SEQ_BUSY 32

struct pf_tracks {
	struct pf_track *tab;    /* described tracks by uuid */
	size_t cap, used;
	uint64_t uuid_base;      /* of this run: unlike other files' of one timeline */
};

/* The tool's track uuid (uuid_base set) and its descriptor. */
void pf_tracks_open(struct pf_tracks *t, struct pf_packet *k, uint64_t uuid_base);
uint64_t pf_tool_track(const struct pf_tracks *t);
uint64_t pf_thread_track(const struct pf_tracks *t, uint32_t tid);
/* The thread's (and its process's) track, described when new or renamed. */
void pf_tracks_thread(struct pf_tracks *t, struct pf_packet *k, const struct event *ev);
/* A counter track `name` of process pid, or of the tool (pid 0). */
uint64_t pf_counter_track(struct pf_tracks *t, struct pf_packet *k, uint32_t pid,
			  const char *process, const char *name, size_t n);
/* An async section's process-scoped track, keyed by (pid, name, cookie). */
uint64_t pf_async_track(struct pf_tracks *t, struct pf_packet *k, const struct event *ev,
			const struct section_call *c);
/* The described track of uuid, NULL when not (or not recorded). */
struct pf_track *pf_track_find(struct pf_tracks *t, uint64_t uuid);
/* The sequence for the next event on the track uuid. */
struct pf_seq *pf_track_seq(struct pf_tracks *t, struct pf_packet *k, uint64_t uuid);
/* The next described track from *i on with open sections (*i past it). */
struct pf_track *pf_tracks_next_open(struct pf_tracks *t, size_t *i);
void pf_tracks_free(struct pf_tracks *t);

#endif
