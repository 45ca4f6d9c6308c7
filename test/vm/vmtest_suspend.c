/* vmtest_suspend.c — the Perfetto trace's clocks across a real suspend of the VM.
 *
 * Packets are stamped in CLOCK_MONOTONIC, and ClockSnapshot packets (MONOTONIC,
 * BOOTTIME) let trace processor convert them to BOOTTIME; across a suspend BOOTTIME
 * runs on while MONOTONIC stops, so the writer (src/sink/perfetto_clock.c) must put the
 * new offset in a snapshot from just after its last reading before the suspend.  The
 * host proves it with a faked clock (unit tests) and a time namespace (a constant
 * offset, test/e2e/test_perfetto.py); here the machine really suspends to idle in the
 * middle of the run: `echo freeze > /sys/power/state`, woken by the PL031 RTC's alarm.
 * (run-vm.sh boots a device tree with a PSCI CPU idle state, test/vm/idle_dtb.py:
 * without one the CPUs idle in WFI with timekeeping running and BOOTTIME never leaves
 * MONOTONIC.)
 *
 * target_clocks calls ups_clk_outer (which calls ups_clk_inner twice) COUNT times,
 * reading CLOCK_BOOTTIME around each call, and waits at a FIFO before round PAUSE_AT;
 * once it waits there (the runner's open of the FIFO for writing succeeds), the runner
 * suspends the VM, then lets it go on.  `trace --ret --trace FILE.pftrace` must write
 * every slice, and each slice, converted as trace processor converts (MONOTONIC to
 * BOOTTIME through the latest snapshot at or before it), must lie between the
 * target's own readings around its call (1 ms slack each side) before and after the
 * suspend (the host's "within 1 ms of each reading" fails here on timing alone: under
 * emulation a call with its uprobe traps sometimes takes more than 1 ms, while a slice
 * converted through the wrong snapshot is off by the whole suspend, seconds).  The
 * snapshots' offset must grow by the BOOTTIME - MONOTONIC jump the runner measured
 * around the suspend (within 1 ms), which must be at least MIN_JUMP_NS, and the
 * target's BOOTTIME between the rounds around it by at least that jump.  What was
 * measured is printed on a line of its own.
 *
 * A kernel without a cpuidle driver (Debian's 5.10 cloud-arm64: no
 * CONFIG_ARM_PSCI_CPUIDLE) cannot suspend timekeeping under qemu: there the scenario
 * suspends once, prints what it measured and is skipped; on any other kernel a
 * suspend that leaves MONOTONIC running fails. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "vmjson.h"
#include "vmproc.h"
#include "vmtest.h"

#define COUNT 20
#define PAUSE_AT 10
#define SLEEP_US "30000"
#define WAKE_S 3                    /* the RTC alarm: +3 s (1 s steps) */
#define MIN_JUMP_NS 1000000000LL    /* so at least 2 s suspended; 1 s asked for */
#define MS 1000000LL
#define WAIT_MS 300000
#define PAUSE_WAIT_MS 120000
#define RTC_ALARM "/sys/class/rtc/rtc0/wakealarm"
#define POWER_STATE "/sys/power/state"
#define CPUIDLE_DRIVER "/sys/devices/system/cpu/cpuidle/current_driver"

/* --- protobuf ----------------------------------------------------------------------------- */
struct pb {
	const uint8_t *p, *end;
};

struct pbf {
	uint32_t num;
	uint64_t v;          /* a varint's or fixed field's value */
	struct pb sub;       /* a length-delimited field's bytes */
};

static int pb_varint(struct pb *b, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64 && b->p < b->end; shift += 7) {
		uint8_t c = *b->p++;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return -1;
}

/* The next field of B into F: 1, 0 at the end, -1 on broken bytes. */
static int pb_next(struct pb *b, struct pbf *f)
{
	uint64_t key, len;

	if (b->p >= b->end)
		return 0;
	if (pb_varint(b, &key) < 0)
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->sub.p = f->sub.end = NULL;
	switch (key & 7) {
	case 0:
		return pb_varint(b, &f->v) < 0 ? -1 : 1;
	case 1:
	case 5: {
		size_t n = (key & 7) == 1 ? 8 : 4;
		if ((size_t)(b->end - b->p) < n)
			return -1;
		f->v = 0;
		for (size_t i = 0; i < n; i++)
			f->v |= (uint64_t)b->p[i] << (8 * i);
		b->p += n;
		return 1;
	}
	case 2:
		if (pb_varint(b, &len) < 0 || len > (uint64_t)(b->end - b->p))
			return -1;
		f->sub.p = b->p;
		f->sub.end = b->p + len;
		b->p += len;
		return 1;
	default:
		return -1;
	}
}

/* --- the trace as trace processor reads its clocks and slices ------------------------------- */
#define MAX_SNAPS 256
#define MAX_EVS 1024
#define MAX_SEQS 32
#define MAX_NAMES 64
#define PF_MONOTONIC 3
#define PF_BOOTTIME 6
#define SEQ_CLEARED 1

enum { N_OTHER, N_OUTER, N_INNER };

struct snap {
	uint64_t mono, boot;
};

struct pev {
	uint64_t track, mono;
	int type, name, n;   /* TrackEvent.type; N_*; file order */
};

struct seqst {
	uint64_t id, clock, track;
	struct {
		int set;
		uint64_t last;
		int64_t off;   /* MONOTONIC - the clock's own value */
	} inc[64];         /* clocks 64-127 */
	uint64_t iid[MAX_NAMES];
	int name[MAX_NAMES], nnames;
};

struct pftrace {
	struct snap snap[MAX_SNAPS];
	int nsnap;
	struct pev ev[MAX_EVS];
	int nev;
	struct seqst seq[MAX_SEQS];
	int nseq;
	char why[256];
};

struct slice {
	uint64_t begin, end;  /* MONOTONIC */
};

static struct seqst *seq_of(struct pftrace *tr, uint64_t id)
{
	for (int i = 0; i < tr->nseq; i++)
		if (tr->seq[i].id == id)
			return &tr->seq[i];
	if (tr->nseq == MAX_SEQS)
		return NULL;
	struct seqst *s = &tr->seq[tr->nseq++];
	memset(s, 0, sizeof(*s));
	s->id = id;
	return s;
}

static int name_kind(struct pb s)
{
	size_t n = (size_t)(s.end - s.p);

	if (n == 13 && !memcmp(s.p, "ups_clk_outer", 13))
		return N_OUTER;
	if (n == 13 && !memcmp(s.p, "ups_clk_inner", 13))
		return N_INNER;
	return N_OTHER;
}

/* A ClockSnapshot: a sequence's incremental clock tied to MONOTONIC, or a
 * MONOTONIC/BOOTTIME snapshot. */
static int read_snapshot(struct pftrace *tr, struct seqst *st, struct pb cs)
{
	uint64_t mono = 0, boot = 0, inc_ts = 0;
	int has_mono = 0, has_boot = 0, inc = -1;
	struct pbf f, g;
	int r;

	while ((r = pb_next(&cs, &f)) > 0) {
		uint64_t id = 0, ts = 0;
		if (f.num != 1 || !f.sub.p)
			continue;
		while ((r = pb_next(&f.sub, &g)) > 0) {
			if (g.num == 1)
				id = g.v;
			else if (g.num == 2)
				ts = g.v;
		}
		if (r < 0)
			return -1;
		if (id == PF_MONOTONIC)
			mono = ts, has_mono = 1;
		else if (id == PF_BOOTTIME)
			boot = ts, has_boot = 1;
		else if (id >= 64 && id < 128)
			inc = (int)(id - 64), inc_ts = ts;
	}
	if (r < 0 || !has_mono)
		return -1;
	if (inc >= 0) {
		if (!st)
			return -1;
		st->inc[inc].set = 1;
		st->inc[inc].last = inc_ts;
		st->inc[inc].off = (int64_t)(mono - inc_ts);
		return 0;
	}
	if (!has_boot || tr->nsnap == MAX_SNAPS)
		return -1;
	tr->snap[tr->nsnap++] = (struct snap){ mono, boot };
	return 0;
}

static int read_interned(struct seqst *st, struct pb idata)
{
	struct pbf f, g;
	int r;

	while ((r = pb_next(&idata, &f)) > 0) {
		uint64_t iid = 0;
		int kind = N_OTHER;
		if (f.num != 2 || !f.sub.p)
			continue;
		while ((r = pb_next(&f.sub, &g)) > 0) {
			if (g.num == 1)
				iid = g.v;
			else if (g.num == 2 && g.sub.p)
				kind = name_kind(g.sub);
		}
		if (r < 0 || !st || st->nnames == MAX_NAMES)
			return -1;
		st->iid[st->nnames] = iid;
		st->name[st->nnames++] = kind;
	}
	return r;
}

static int iid_kind(const struct seqst *st, uint64_t iid)
{
	for (int i = st->nnames - 1; i >= 0; i--)
		if (st->iid[i] == iid)
			return st->name[i];
	return -1;
}

struct packet {
	uint64_t ts, clock, seq, flags;
	int has_ts, has_clock, has_seq;
	struct pb defaults, cs, idata, te;
};

static int read_defaults(struct seqst *st, struct pb d)
{
	struct pbf f, g;
	int r;

	st->clock = st->track = 0;
	while ((r = pb_next(&d, &f)) > 0) {
		if (f.num == 58)
			st->clock = f.v;
		else if (f.num == 11 && f.sub.p)
			while ((r = pb_next(&f.sub, &g)) > 0)
				if (g.num == 11)
					st->track = g.v;
		if (r < 0)
			return -1;
	}
	return r;
}

static int read_track_event(struct pftrace *tr, struct seqst *st, const struct packet *k,
			    int n)
{
	struct pev *e = &tr->ev[tr->nev];
	uint64_t clock = k->has_clock ? k->clock : st->clock, ts = k->ts;
	struct pb te = k->te;
	struct pbf f;
	int r;

	if (tr->nev == MAX_EVS)
		return -1;
	memset(e, 0, sizeof(*e));
	e->track = st->track;
	e->n = n;
	e->name = N_OTHER;
	while ((r = pb_next(&te, &f)) > 0) {
		if (f.num == 9)
			e->type = (int)f.v;
		else if (f.num == 11)
			e->track = f.v;
		else if (f.num == 10)
			e->name = iid_kind(st, f.v);
		else if (f.num == 23 && f.sub.p)
			e->name = name_kind(f.sub);
	}
	if (r < 0 || e->name < 0)
		return -1;
	if (clock >= 64 && clock < 128) {
		if (!st->inc[clock - 64].set)
			return -1;
		st->inc[clock - 64].last += ts;
		e->mono = st->inc[clock - 64].last + (uint64_t)st->inc[clock - 64].off;
	} else if (clock == PF_MONOTONIC) {
		e->mono = ts;
	} else {
		return -1;
	}
	tr->nev++;
	return 0;
}

static int read_packet_fields(struct pb p, struct packet *k)
{
	struct pbf f;
	int r;

	memset(k, 0, sizeof(*k));
	while ((r = pb_next(&p, &f)) > 0) {
		switch (f.num) {
		case 8: k->ts = f.v, k->has_ts = 1; break;
		case 58: k->clock = f.v, k->has_clock = 1; break;
		case 10: k->seq = f.v, k->has_seq = 1; break;
		case 13: k->flags = f.v; break;
		case 59: k->defaults = f.sub; break;
		case 6: k->cs = f.sub; break;
		case 12: k->idata = f.sub; break;
		case 11: k->te = f.sub; break;
		default: break;
		}
	}
	return r;
}

static int read_packet(struct pftrace *tr, struct pb p, int n)
{
	struct packet k;
	struct seqst *st = NULL;

	if (read_packet_fields(p, &k) < 0)
		return -1;
	if (k.has_seq) {
		if (!(st = seq_of(tr, k.seq)))
			return -1;
		if (k.flags & SEQ_CLEARED) {
			memset(st, 0, sizeof(*st));
			st->id = k.seq;
		}
	}
	if (k.defaults.p && (!st || read_defaults(st, k.defaults) < 0))
		return -1;
	if (k.cs.p && read_snapshot(tr, st, k.cs) < 0)
		return -1;
	if (k.idata.p && read_interned(st, k.idata) < 0)
		return -1;
	if (k.te.p && (!st || read_track_event(tr, st, &k, n) < 0))
		return -1;
	return 0;
}

static int pftrace_read(const char *path, struct pftrace *tr)
{
	size_t len;
	char *text = read_file(path, &len);
	struct pb b;
	struct pbf f;
	int r, n = 0;

	if (!text) {
		snprintf(tr->why, sizeof(tr->why), "cannot read %s", path);
		return -1;
	}
	b.p = (const uint8_t *)text;
	b.end = b.p + len;
	while ((r = pb_next(&b, &f)) > 0) {
		if (f.num != 1 || !f.sub.p || read_packet(tr, f.sub, n) < 0) {
			snprintf(tr->why, sizeof(tr->why), "packet %d: not what trace processor "
				 "reads (field %u)", n, f.num);
			r = -1;
			break;
		}
		n++;
	}
	if (r < 0 && !tr->why[0]) {
		size_t at = (size_t)(b.p - (const uint8_t *)text);
		snprintf(tr->why, sizeof(tr->why), "broken protobuf after packet %d (%zu of %zu "
			 "bytes read, next %02x %02x %02x %02x)", n, at, len, b.p[0], b.p[1],
			 b.p[2], b.p[3]);
	}
	free(text);
	return r;
}

/* BOOTTIME of MONO, through the latest snapshot at or before it (the first if none). */
static uint64_t to_boot(const struct pftrace *tr, uint64_t mono, int *used)
{
	int k = 0;

	for (int i = 0; i < tr->nsnap; i++)
		if (tr->snap[i].mono <= mono && tr->snap[i].mono >= tr->snap[k].mono)
			k = i;
	if (used)
		*used = k;
	return tr->snap[k].boot + (mono - tr->snap[k].mono);
}

static int64_t snap_off(const struct pftrace *tr, int k)
{
	return (int64_t)(tr->snap[k].boot - tr->snap[k].mono);
}

static int by_time(const void *a, const void *b)
{
	const struct pev *x = a, *y = b;

	if (x->mono != y->mono)
		return x->mono < y->mono ? -1 : 1;
	return x->n - y->n;
}

/* The slices named KIND by begin, as trace processor nests them per track (in time
 * order): the count, or -1 when an end closes nothing. */
static int slices_of(struct pftrace *tr, int kind, struct slice *out, int max)
{
	static struct pev open[MAX_EVS];
	int nopen = 0, n = 0;

	qsort(tr->ev, (size_t)tr->nev, sizeof(tr->ev[0]), by_time);
	for (int i = 0; i < tr->nev; i++) {
		const struct pev *e = &tr->ev[i];
		if (e->type == 1) {
			open[nopen++] = *e;
		} else if (e->type == 2) {
			int j = nopen - 1;
			while (j >= 0 && open[j].track != e->track)
				j--;
			if (j < 0)
				return -1;
			if (open[j].name == kind && n < max)
				out[n++] = (struct slice){ open[j].mono, e->mono };
			memmove(&open[j], &open[j + 1], (size_t)(nopen - j - 1) * sizeof(open[0]));
			nopen--;
		}
	}
	return n;
}

/* --- the machine's suspend ------------------------------------------------------------------ */
struct clocks {
	int64_t mono, boot;
};

static int64_t ns_of(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct clocks clocks_now(void)
{
	int64_t m1 = ns_of(CLOCK_MONOTONIC), b = ns_of(CLOCK_BOOTTIME);
	int64_t m2 = ns_of(CLOCK_MONOTONIC);

	return (struct clocks){ m1 + (m2 - m1) / 2, b };
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = -1;

	if (fd >= 0) {
		n = write(fd, text, strlen(text));
		int e = errno;
		close(fd);
		errno = e;
	}
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

struct suspend {
	int64_t mono_ms, boot_ms;   /* how far each clock went across it */
	int64_t jump_ns;            /* how much BOOTTIME - MONOTONIC grew */
};

/* Suspends the VM to idle until the RTC alarm WAKE_S on: 0, or -1 with the failure
 * recorded. */
static int suspend_to_idle(struct tc *t, struct suspend *s)
{
	char alarm[16];
	struct clocks a, b;

	snprintf(alarm, sizeof(alarm), "+%d", WAKE_S);
	if (write_text(RTC_ALARM, "0") < 0 || write_text(RTC_ALARM, alarm) < 0) {
		tc_fail(t, "cannot set the RTC alarm (%s): %s", RTC_ALARM, strerror(errno));
		return -1;
	}
	a = clocks_now();
	int rc = write_text(POWER_STATE, "freeze");
	int e = errno;
	b = clocks_now();
	if (rc < 0) {
		tc_fail(t, "echo freeze > %s: %s", POWER_STATE, strerror(e));
		return -1;
	}
	s->mono_ms = (b.mono - a.mono) / MS;
	s->boot_ms = (b.boot - a.boot) / MS;
	s->jump_ns = (b.boot - b.mono) - (a.boot - a.mono);
	return 0;
}

/* 1 when this kernel cannot stop MONOTONIC in s2idle under qemu (a real suspend made
 * and measured, said in the skip message), 0 when it should, -1 on a failure. */
static int cannot_suspend_timekeeping(struct tc *t)
{
	char *state = read_file(POWER_STATE, NULL), *drv = read_file(CPUIDLE_DRIVER, NULL);
	struct utsname u;
	struct suspend s;
	int rc = 0;

	uname(&u);
	if (!state || !strstr(state, "freeze")) {
		tc_fail(t, "%s offers no freeze (suspend to idle): '%s'", POWER_STATE,
			state ? state : "(unreadable)");
		rc = -1;
	} else if (drv && strncmp(drv, "none", 4) != 0) {
		rc = 0;
	} else if (suspend_to_idle(t, &s) < 0) {
		rc = -1;
	} else if (s.jump_ns < MIN_JUMP_NS && !strncmp(u.release, "5.10.", 5)) {
		tc_skip(t, "kernel %s has no cpuidle driver (Debian's 5.10 cloud-arm64 has no "
			   "CONFIG_ARM_PSCI_CPUIDLE), so under qemu s2idle idles in WFI with "
			   "timekeeping running: a real suspend to idle woken by the RTC after "
			   "%lld ms of BOOTTIME moved MONOTONIC %lld ms, BOOTTIME - MONOTONIC "
			   "by %lld us", u.release, (long long)s.boot_ms, (long long)s.mono_ms,
			(long long)(s.jump_ns / 1000));
		rc = 1;
	} else if (s.jump_ns < MIN_JUMP_NS) {
		tc_fail(t, "no cpuidle driver on %s: the suspend moved BOOTTIME %lld ms and "
			   "MONOTONIC %lld ms", u.release, (long long)s.boot_ms,
			(long long)s.mono_ms);
		rc = -1;
	}
	free(state);
	free(drv);
	return rc;
}

static int count_of(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* Waits (bounded) until U's JSON Lines output holds the returns of the PAUSE_AT rounds
 * made: the tool has drained them, and read the clocks at the first of them. */
static int wait_drained(struct tc *t, struct ups *u)
{
	long long deadline = now_ms() + PAUSE_WAIT_MS;
	int n;

	for (;;) {
		char *text = read_file(u->out, NULL);
		n = count_of(text, "\"method\":\"ups_clk_outer\"");
		free(text);
		if (n >= PAUSE_AT)
			return 0;
		if (now_ms() > deadline)
			break;
		sleep_ms(5);
	}
	tc_fail(t, "the tool's output has %d of the %d ups_clk_outer returns made before the "
		   "pause; stderr: %s", n, PAUSE_AT, ups_stderr_tail(u));
	return -1;
}

/* Opens PATH for writing once the target waits at it (bounded), waits until the tool
 * has drained every record made until then (drained; else the records wait in the
 * buffers through the suspend: the tool drains every 10 s), suspends the VM, then lets
 * the target go on; 0, or -1 with the failure recorded. */
static int suspend_at_pause(struct tc *t, struct target *tg, struct ups *u, const char *path,
			    struct suspend *s, bool drained)
{
	long long deadline = now_ms() + PAUSE_WAIT_MS;
	int fd, rc;

	while ((fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC)) < 0) {
		if (errno != ENXIO || now_ms() > deadline) {
			tc_fail(t, "target %d never reached its pause before round %d: %s",
				(int)tg->pid, PAUSE_AT, strerror(errno));
			return -1;
		}
		sleep_ms(5);
	}
	rc = drained && wait_drained(t, u) < 0 ? -1 : suspend_to_idle(t, s);
	if (write(fd, "go\n", 3) != 3 && rc == 0) {
		tc_fail(t, "cannot let target %d go on after the suspend", (int)tg->pid);
		rc = -1;
	}
	close(fd);
	return rc;
}

/* --- the scenario --------------------------------------------------------------------------- */
struct round {
	unsigned long long before, after;
};

static int read_rounds(struct tc *t, const char *path, struct round *r, int max)
{
	char *text = read_file(path, NULL), *line, *save = NULL;
	int n = 0;

	if (!text) {
		tc_fail(t, "cannot read the target's %s", path);
		return -1;
	}
	for (line = strtok_r(text, "\n", &save); line && n < max;
	     line = strtok_r(NULL, "\n", &save)) {
		int i;
		if (sscanf(line, "{\"i\": %d, \"boot_before\": %llu, \"boot_after\": %llu}", &i,
			   &r[n].before, &r[n].after) == 3 && i == n)
			n++;
	}
	free(text);
	return n;
}

/* Every outer slice on the target's BOOTTIME readings, and the offset's jump. */
static void check_slices(struct tc *t, const struct pftrace *tr, const struct slice *sl,
			 const struct round *r, const struct suspend *s)
{
	int used_before, used_after;

	for (int i = 0; i < COUNT; i++) {
		uint64_t b = to_boot(tr, sl[i].begin, NULL), e = to_boot(tr, sl[i].end, NULL);
		const char *when = i < PAUSE_AT ? "before" : "after";
		CHECK(b + MS >= r[i].before && b <= e && e <= r[i].after + MS,
		      "round %d (%s the suspend): the slice converts to BOOTTIME [%llu, %llu], "
		      "the target read %llu just before the call and %llu just after it "
		      "(%+lld ms, %+lld ms)", i, when, (unsigned long long)b,
		      (unsigned long long)e, r[i].before, r[i].after,
		      ((long long)(b - r[i].before)) / MS, ((long long)(e - r[i].after)) / MS);
	}
	to_boot(tr, sl[PAUSE_AT - 1].end, &used_before);
	to_boot(tr, sl[PAUSE_AT].begin, &used_after);
	int64_t jump = snap_off(tr, used_after) - snap_off(tr, used_before);
	CHECK(llabs((long long)(jump - s->jump_ns)) <= MS,
	      "the snapshots' BOOTTIME - MONOTONIC grew by %lld us across the suspend, the "
	      "runner measured %lld us (%d snapshots)", (long long)(jump / 1000),
	      (long long)(s->jump_ns / 1000), tr->nsnap);
	CHECK(r[PAUSE_AT].before - r[PAUSE_AT - 1].after >= (unsigned long long)s->jump_ns,
	      "the target's BOOTTIME moved %llu us between the rounds around the suspend, "
	      "less than the jump %lld us", (r[PAUSE_AT].before - r[PAUSE_AT - 1].after) / 1000,
	      (long long)(s->jump_ns / 1000));
out:;
}

/* The JSON Lines returns of ups_clk_outer (their boot_ns: the return's BOOTTIME)
 * on the target's own readings around each call, before and after the suspend. */
static void check_json_returns(struct tc *t, const char *path, const struct round *r)
{
	char *text = read_file(path, NULL), *line, *save = NULL;
	struct jdoc d = { 0 };
	int i = 0;

	CHECK(text, "cannot read the tool's output %s", path);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long boot;
		const struct jnode *root;
		if (json_parse(&d, line, strlen(line)) < 0)
			continue;
		root = &d.n[0];
		if (!json_str_is(json_get(&d, root, "type"), "return") ||
		    !json_str_is(json_get(&d, json_get(&d, root, "probe"), "method"),
				 "ups_clk_outer") ||
		    json_u64(json_get(&d, root, "boot_ns"), &boot) < 0)
			continue;
		CHECK(i < COUNT, "more than %d ups_clk_outer returns", COUNT);
		CHECK(boot + MS >= r[i].before && boot <= r[i].after + MS,
		      "round %d (%s the suspend): the JSON Lines return's boot_ns %llu, the "
		      "target read %llu just before the call and %llu just after it (%+lld ms)", i,
		      i < PAUSE_AT ? "before" : "after", boot, r[i].before, r[i].after,
		      ((long long)(boot - r[i].after)) / MS);
		i++;
	}
	EQ(i, COUNT, "ups_clk_outer returns in the JSON Lines");
out:
	json_free(&d);
	free(text);
}

static void across_a_real_suspend(struct tc *t, bool drained)
{
	static struct pftrace tr;
	static struct slice outer[COUNT + 8], inner[2 * COUNT + 8];
	struct round r[COUNT + 8];
	struct target a = { .pid = -1 };
	struct ups u = { .pid = -1 };
	struct suspend s = { 0, 0, 0 };
	char pid[16], n[16], at[16], out[VM_PATH_MAX], pause[VM_PATH_MAX], pf[VM_PATH_MAX];
	char exe[VM_PATH_MAX], pattern[VM_PATH_MAX + 16];
	int argc = 0;

	if (cannot_suspend_timekeeping(t) != 0)
		return;
	snprintf(n, sizeof(n), "%d", COUNT);
	snprintf(at, sizeof(at), "%d", PAUSE_AT);
	tc_path(t, "clocks.jsonl", out);
	tc_path(t, "pause", pause);
	snprintf(pf, sizeof(pf), "%s/out.pftrace", t->dir);  /* the format from its name */
	CHECK(mkfifo(pause, 0600) == 0, "mkfifo %s: %s", pause, strerror(errno));
	const char *targs[] = { n, SLEEP_US, out, at, pause, NULL };
	if (target_start(t, &a, "target_clocks", NULL, targs) < 0)
		goto out;
	snprintf(pid, sizeof(pid), "%d", (int)a.pid);
	snprintf(pattern, sizeof(pattern), "%s:ups_clk_*", target_path(t, "target_clocks", exe));
	const char *args[16] = { "trace", "--pid", pid, "--format", "json", "--ret", "--trace",
				 pf };
	argc = 8;
	if (!drained) {
		args[argc++] = "--flush-ms";
		args[argc++] = "10000";
	}
	if (t->env->target_kernel) {
		args[argc++] = "--target-kernel";
		args[argc++] = t->env->target_kernel;
	}
	args[argc++] = pattern;
	args[argc] = NULL;
	if (ups_start(t, &u, args, SPAWN_NONE) < 0 || ups_wait_attached(t, &u) < 0 ||
	    target_go(t, &a) < 0 || suspend_at_pause(t, &a, &u, pause, &s, drained) < 0 ||
	    target_wait(t, &a, WAIT_MS) < 0)
		goto out;
	CHECK(s.jump_ns >= MIN_JUMP_NS, "no real suspend: BOOTTIME went %lld ms, MONOTONIC "
	      "%lld ms (BOOTTIME - MONOTONIC by %lld us, at least %lld ms expected)",
	      (long long)s.boot_ms, (long long)s.mono_ms, (long long)(s.jump_ns / 1000),
	      MIN_JUMP_NS / MS);
	if (check_rc(t, &u, ups_wait(&u, WAIT_MS, NULL), 0, "exit code") < 0)
		goto out;
	EQ(read_rounds(t, out, r, COUNT + 8), COUNT, "rounds the target made");
	memset(&tr, 0, sizeof(tr));
	CHECK(pftrace_read(pf, &tr) == 0, "%s: %s", pf, tr.why);
	CHECK(tr.nsnap >= 3, "ClockSnapshots (MONOTONIC, BOOTTIME): %d", tr.nsnap);
	EQ(slices_of(&tr, N_INNER, inner, 2 * COUNT + 8), 2 * COUNT, "ups_clk_inner slices");
	EQ(slices_of(&tr, N_OUTER, outer, COUNT + 8), COUNT, "ups_clk_outer slices");
	check_slices(t, &tr, outer, r, &s);
	check_json_returns(t, u.out, r);
	if (!t->failed)
		printf("     suspended to idle: BOOTTIME %lld ms, MONOTONIC %lld ms, "
		       "BOOTTIME - MONOTONIC +%lld us; %d ClockSnapshots\n", (long long)s.boot_ms,
		       (long long)s.mono_ms, (long long)(s.jump_ns / 1000), tr.nsnap);
out:
	ups_stop(&u, SIGKILL);
	target_kill(&a);
}

static void perfetto_across_a_real_suspend(struct tc *t)
{
	across_a_real_suspend(t, true);
}

/* The records of the rounds before the suspend still in the buffers when the machine
 * freezes (--flush-ms 10000: nothing drained before the run's end): they were made
 * before it and must keep the clock offset of before it, in the Perfetto file and in
 * the JSON Lines, which needs the suspend's own place on MONOTONIC
 * (probe/suspend_watch.h: power:suspend_resume in a tracefs instance of the run's). */
static void records_in_the_buffers_across_a_real_suspend(struct tc *t)
{
	across_a_real_suspend(t, false);
}

const struct vmcase vm_suspend_cases[] = {
	{ "trace.perfetto_across_a_real_suspend", perfetto_across_a_real_suspend },
	{ "trace.records_in_the_buffers_across_a_real_suspend",
	  records_in_the_buffers_across_a_real_suspend },
	{ NULL, NULL },
};
