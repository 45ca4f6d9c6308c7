/* era.c — which field numbering a binary config was written with.
 *
 * Era B and the current schema share field numbers with different meanings
 * (reference §1.2 / §1.3).  A pre-pass looks at the tasks and their probes
 * and counts evidence for each era; it never fails (malformed input is the
 * decoder's to report) and reads only inside the buffer. */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "config/era.h"
#include "common/wire.h"

struct evidence {
	unsigned b, c;
	const char *first_b, *first_c;   /* the first hint for each, for the reason */
};

static void hint(struct evidence *ev, bool for_b, const char *why)
{
	if (for_b) {
		if (!ev->b++)
			ev->first_b = why;
	} else {
		if (!ev->c++)
			ev->first_c = why;
	}
}

static bool starts_with_map(const uint8_t *s, size_t n)
{
	return n >= 4 && memcmp(s, "map_", 4) == 0;
}

/* One field of a message: its number, wire type and, for length-delimited
 * fields, the byte range of its payload. */
struct wfield {
	uint32_t num;
	unsigned wt;
	size_t start, len;
};

/* Next field in [*pos, end); false at the end or on malformed data. */
static bool next_field(const uint8_t *b, size_t end, size_t *pos, struct wfield *f)
{
	uint64_t tag;

	if (*pos >= end || wire_read_varint(b, end, pos, &tag) || (tag >> 3) == 0 ||
	    (tag >> 3) > 0x1fffffff)
		return false;
	f->num = (uint32_t)(tag >> 3);
	f->wt = (unsigned)(tag & 7);
	f->start = f->len = 0;
	/* Groups are not part of this schema: they end the scan. */
	return wire_skip_value(b, end, pos, f->wt, &f->start, &f->len) == WIRE_OK;
}

static void scan_probe(const uint8_t *b, size_t start, size_t end, struct evidence *ev)
{
	struct wfield f;
	size_t pos = start;

	while (next_field(b, end, &pos, &f)) {
		if (f.num == 4 && f.wt == WT_LEN)
			hint(ev, starts_with_map(b + f.start, f.len),
			     starts_with_map(b + f.start, f.len)
				     ? "ProbeConfig field 4 holds a map_ name (era-B bpf_map)"
				     : "ProbeConfig field 4 holds a class name "
				       "(fully_qualified_class_name)");
		else if (f.num >= 5 && f.num <= 7)
			hint(ev, false, "ProbeConfig has fields 5-7 (ART API / binder filters)");
	}
}

static void scan_task(const uint8_t *b, size_t start, size_t end, struct evidence *ev)
{
	struct wfield f;
	size_t pos = start;

	while (next_field(b, end, &pos, &f)) {
		switch (f.num) {
		case 1:
			if (f.wt == WT_LEN)
				scan_probe(b, f.start, f.start + f.len, ev);
			break;
		case 2:
			if (f.wt == WT_LEN && starts_with_map(b + f.start, f.len))
				hint(ev, false, "Task field 2 holds a map_ name (bpf_maps)");
			else if (f.wt == WT_LEN)
				hint(ev, true, "Task field 2 holds a process name "
					       "(era-B target_process_name)");
			break;
		case 3:
			if (f.wt == WT_VARINT)
				hint(ev, true, "Task field 3 is a varint (era-B duration_seconds)");
			else if (f.wt == WT_LEN)
				hint(ev, false, "Task field 3 is a string (target_process_name)");
			break;
		case 4:
			if (f.wt == WT_VARINT)
				hint(ev, false, "Task field 4 is a varint (duration_seconds)");
			break;
		case 6:
		case 7:
			hint(ev, false, "Task has field 6 or 7 (target_process_selection, "
				       "task_id)");
			break;
		default:
			break;
		}
	}
}

enum config_era protobuf_detect_era(const uint8_t *buf, size_t len, char *reason,
				    size_t reason_size)
{
	struct evidence ev = { 0 };
	struct wfield f;
	size_t pos = 0;
	bool b;

	while (next_field(buf, len, &pos, &f))
		if (f.num == 1 && f.wt == WT_LEN)
			scan_task(buf, f.start, f.start + f.len, &ev);
	if (!ev.b && !ev.c) {
		snprintf(reason, reason_size, "no era-specific fields; current numbering assumed");
		return CONFIG_ERA_CURRENT;
	}
	/* Ties go to the current numbering: it is what statsd writes today. */
	b = ev.b > ev.c;
	snprintf(reason, reason_size, "detected: %s (%u hint%s for era B, %u for current)",
		 b ? ev.first_b : ev.first_c, ev.b, ev.b == 1 ? "" : "s", ev.c);
	return b ? CONFIG_ERA_B : CONFIG_ERA_CURRENT;
}
