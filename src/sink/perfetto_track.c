/* perfetto_track.c — see perfetto_track.h. */
#include "sink/perfetto_track.h"

#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "sink/perfetto_proto.h"

#define PF_UUID_MASK ((1ull << 35) - 1)

enum track_kind { TK_TOOL = 1, TK_PROCESS, TK_THREAD, TK_ASYNC, TK_COUNTER };

static uint64_t track_uuid(const struct pf_tracks *t, enum track_kind k, uint64_t key)
{
	/* 35 bits: 5 bytes in every event, and still unlike another run's
	 * tracks in a merged timeline but by a 1 in 2^35 chance */
	uint64_t u = pf_mix64(t->uuid_base ^ pf_mix64(((uint64_t)k << 56) ^ key)) & PF_UUID_MASK;
	return u ? u : 1;
}

static bool track_hash(const void *slot, uint64_t *hash)
{
	const struct pf_track *tr = slot;

	*hash = tr->uuid;
	return tr->uuid != 0;
}

/* True when uuid needs describing (new, or its name hash changed); records
 * it.  Without memory every use describes it again (correct, larger). */
static bool track_needs(struct pf_tracks *t, uint64_t uuid, uint32_t name_hash)
{
	size_t i;

	if ((t->used + 1) * 2 > t->cap && grow_hash_table(&t->tab, &t->cap, 256, track_hash) < 0)
		return true;
	for (i = (size_t)uuid & (t->cap - 1); t->tab[i].uuid; i = (i + 1) & (t->cap - 1)) {
		if (t->tab[i].uuid != uuid)
			continue;
		if (t->tab[i].name_hash == name_hash)
			return false;
		t->tab[i].name_hash = name_hash;
		return true;
	}
	t->tab[i] = (struct pf_track){ .uuid = uuid, .name_hash = name_hash };
	t->used++;
	return true;
}

struct pf_track *pf_track_find(struct pf_tracks *t, uint64_t uuid)
{
	if (!t->cap)
		return NULL;
	for (size_t i = (size_t)uuid & (t->cap - 1); t->tab[i].uuid; i = (i + 1) & (t->cap - 1))
		if (t->tab[i].uuid == uuid)
			return &t->tab[i];
	return NULL;
}

struct pf_seq *pf_track_seq(struct pf_tracks *t, struct pf_packet *k, uint64_t uuid)
{
	struct pf_track *tr = pf_track_find(t, uuid);

	if (!tr)
		return &k->main;  /* not recorded (no memory): explicit on sequence 1 */
	if (tr->seq)
		return tr->seq;
	if (tr->events < PF_SEQ_BUSY) {
		tr->events++;
		return &k->main;
	}
	/* busy: a sequence of its own from here on (when one is left) */
	tr->seq = pf_seq_new(k, uuid);
	return tr->seq ? tr->seq : &k->main;
}

struct pf_track *pf_tracks_next_open(struct pf_tracks *t, size_t *i)
{
	for (; *i < t->cap; (*i)++)
		if (t->tab[*i].uuid && t->tab[*i].open_sections)
			return &t->tab[(*i)++];
	return NULL;
}

/* Writes one TrackDescriptor packet; the caller fills the fields after
 * descriptor_open and calls descriptor_emit. */
static size_t descriptor_open(struct pf_packet *k, uint64_t uuid, uint64_t parent)
{
	size_t at;

	pf_packet_start(k);
	at = wire_open(&k->pkt, TP_TRACK_DESCRIPTOR);
	wire_put_uint_field(&k->pkt, TD_UUID, uuid);
	if (parent)
		wire_put_uint_field(&k->pkt, TD_PARENT, parent);
	return at;
}

static void descriptor_emit(struct pf_packet *k, size_t at)
{
	wire_close(&k->pkt, at);
	pf_packet_emit(k, false, 0);
}

uint64_t pf_tool_track(const struct pf_tracks *t)
{
	return track_uuid(t, TK_TOOL, 0);
}

void pf_tracks_open(struct pf_tracks *t, struct pf_packet *k, uint64_t uuid_base)
{
	static const char tool[] = "uprobestats";

	t->uuid_base = uuid_base;
	size_t at = descriptor_open(k, pf_tool_track(t), 0);
	wire_put_len_field(&k->pkt, TD_NAME, tool, sizeof(tool) - 1);
	descriptor_emit(k, at);
}

static uint64_t process_track(struct pf_tracks *t, struct pf_packet *k, uint32_t pid,
			      const char *name)
{
	uint64_t uuid = track_uuid(t, TK_PROCESS, pid);
	size_t n = name ? strlen(name) : 0;
	uint32_t h = (uint32_t)pf_hash_bytes(name, n, 0) | 1;

	/* a name learnt later describes it again; a lost name keeps the old one */
	if (!n && pf_track_find(t, uuid))
		return uuid;
	if (track_needs(t, uuid, h)) {
		size_t at = descriptor_open(k, uuid, 0);
		size_t pd = wire_open(&k->pkt, TD_PROCESS);
		wire_put_uint_field(&k->pkt, PD_PID, pid);
		if (n)
			wire_put_str_field(&k->pkt, PD_NAME, name, n);
		wire_close(&k->pkt, pd);
		descriptor_emit(k, at);
	}
	return uuid;
}

uint64_t pf_thread_track(const struct pf_tracks *t, uint32_t tid)
{
	return track_uuid(t, TK_THREAD, tid);
}

void pf_tracks_thread(struct pf_tracks *t, struct pf_packet *k, const struct event *ev)
{
	if (!ev->tid)
		return;
	uint64_t uuid = pf_thread_track(t, ev->tid);
	size_t n = ev->comm ? strlen(ev->comm) : 0;
	uint32_t h = (uint32_t)pf_hash_bytes(ev->comm, n, (uint64_t)ev->pid << 32) | 1;
	const struct pf_track *known = pf_track_find(t, uuid);

	/* the usual case, per event: a thread seen before under the same name */
	if (known && known->name_hash == h)
		return;
	uint64_t proc = process_track(t, k, ev->pid, ev->process);
	if (!track_needs(t, uuid, h))
		return;
	size_t at = descriptor_open(k, uuid, proc);
	size_t td = wire_open(&k->pkt, TD_THREAD);
	wire_put_uint_field(&k->pkt, THD_PID, ev->pid);
	wire_put_uint_field(&k->pkt, THD_TID, ev->tid);
	if (n)
		wire_put_str_field(&k->pkt, THD_NAME, ev->comm, n);
	wire_close(&k->pkt, td);
	descriptor_emit(k, at);
}

uint64_t pf_counter_track(struct pf_tracks *t, struct pf_packet *k, uint32_t pid,
			  const char *process, const char *name, size_t n)
{
	uint64_t uuid = track_uuid(t, TK_COUNTER, pf_hash_bytes(name, n, pid));

	if (track_needs(t, uuid, 1)) {
		uint64_t parent = pid ? process_track(t, k, pid, process) : pf_tool_track(t);
		size_t at = descriptor_open(k, uuid, parent);
		wire_put_str_field(&k->pkt, TD_NAME, name, n);
		size_t cd = wire_open(&k->pkt, TD_COUNTER);
		wire_close(&k->pkt, cd);
		descriptor_emit(k, at);
	}
	return uuid;
}

uint64_t pf_async_track(struct pf_tracks *t, struct pf_packet *k, const struct event *ev,
			const struct section_call *c)
{
	uint64_t key = pf_mix64(pf_hash_bytes(c->name, c->name_len, ev->pid) ^ (uint64_t)c->value);
	uint64_t uuid = track_uuid(t, TK_ASYNC, key);

	if (track_needs(t, uuid, 1)) {
		uint64_t proc = process_track(t, k, ev->pid, ev->process);
		size_t at = descriptor_open(k, uuid, proc);
		wire_put_str_field(&k->pkt, TD_NAME, c->name, c->name_len);
		descriptor_emit(k, at);
	}
	return uuid;
}

void pf_tracks_free(struct pf_tracks *t)
{
	free(t->tab);
	t->tab = NULL;
	t->cap = t->used = 0;
}
