"""Reading a Perfetto trace file (--trace-format perfetto) as the tests check
it: protoc --decode with Perfetto's own schema (../shared/testdata/
perfetto-protos) must take every byte, then our own reading of the packets
is checked against the rules trace processor imports by:

- state is per packet sequence (trusted_packet_sequence_id), as trace
  processor keeps it: a sequence's first packet sets
  SEQ_INCREMENTAL_STATE_CLEARED, which empties its interned data, its
  defaults and its incremental clock; every interned name (event names,
  annotation names, annotation strings) is defined on the sequence of the
  packet that uses it, after that sequence's last clear, before its first
  use (an iid of another sequence does not count);
- a track event's track is its track_uuid, else its sequence's
  trace_packet_defaults.track_event_defaults.track_uuid (one of them set);
- so is every interned call stack piece: a TrackEvent's callstack_iid names
  a Callstack, each of its frame_ids a Frame, each Frame's function_name_id
  a function name, its source_path_iid a source path, its mapping_id a
  Mapping (and it then has a rel_pc), each Mapping's path_string_ids mapping
  paths and its build_id a build id (a reference from a packet's
  InternedData to an entry of that same InternedData counts as defined);
- every track uuid is described (TrackDescriptor) before its first event;
- per track, in trace processor's order (by timestamp once converted, file
  order for equal ones: it sorts the whole file, and a uretprobe's slice is
  written when it returns, after the slices it encloses), slices nest: every
  SLICE_END closes the innermost open SLICE_BEGIN, and none is left open;
- timestamps are on one of the sequence's own incremental clocks (64, by
  its trace_packet_defaults, or another of 64-127 by the packet's
  timestamp_clock_id; a ClockSnapshot of that clock and MONOTONIC alone,
  with is_incremental, on that sequence ties it to MONOTONIC before its
  first use): each the delta from the last value of that clock on that
  sequence, as trace processor adds them up in file order, per clock; or,
  a packet's own timestamp_clock_id, MONOTONIC (3) itself; they convert to
  BOOTTIME through the ClockSnapshot packets (MONOTONIC and BOOTTIME) as
  trace processor does: the latest snapshot at or before the timestamp in
  its own clock.

Usable from the unit tests' fixtures too: python3 pftrace.py FILE prints a
summary and exits 1 on a broken rule."""
import bisect
import os
import subprocess
import sys

PROTOS = os.path.join(os.environ.get("UPROBESTATS_TESTDATA",
                                     os.path.join(os.path.dirname(__file__), "..", "..", "..",
                                                  "shared", "testdata")),
                      "perfetto-protos")

# Fields that are nested messages, by (message, field number).
NESTED = {
    ("Trace", 1): "TracePacket",
    ("TracePacket", 6): "ClockSnapshot",
    ("TracePacket", 11): "TrackEvent",
    ("TracePacket", 12): "InternedData",
    ("TracePacket", 59): "TracePacketDefaults",
    ("TracePacketDefaults", 11): "TrackEventDefaults",
    ("TracePacket", 60): "TrackDescriptor",
    ("ClockSnapshot", 1): "Clock",
    ("TrackDescriptor", 3): "ProcessDescriptor",
    ("TrackDescriptor", 4): "ThreadDescriptor",
    ("TrackDescriptor", 8): "CounterDescriptor",
    ("TrackEvent", 4): "DebugAnnotation",
    ("TrackEvent", 55): "InlineCallstack",
    ("InlineCallstack", 1): "Frame",
    ("DebugAnnotation", 12): "DebugAnnotation",
    ("InternedData", 2): "Interned",
    ("InternedData", 3): "Interned",
    ("InternedData", 29): "Interned",
    ("InternedData", 5): "Interned",     # function_names
    ("InternedData", 16): "Interned",    # build_ids
    ("InternedData", 17): "Interned",    # mapping_paths
    ("InternedData", 18): "Interned",    # source_paths
    ("InternedData", 19): "Mapping",
    ("InternedData", 6): "ProfFrame",
    ("InternedData", 7): "Callstack",
}

# InternedData tables: InternedString ones, then the ones that refer to
# others (in the order they refer: mappings, frames, callstacks).
STRING_TABLES = (2, 3, 29, 5, 16, 17, 18)
FUNCS, BUILD_IDS, MAPPING_PATHS, SOURCE_PATHS, MAPPINGS, FRAMES, CALLSTACKS = \
    5, 16, 17, 18, 19, 6, 7


def _new_interned():
    return {t: {} for t in STRING_TABLES + (MAPPINGS, FRAMES, CALLSTACKS)}

SEQ_CLEARED, SEQ_NEEDS = 1, 2
BEGIN, END, INSTANT, COUNTER = 1, 2, 3, 4
MONOTONIC, BOOTTIME, REALTIME = 3, 6, 1
INCREMENTAL = 64


class Broken(Exception):
    pass


class _Seq:
    """One packet sequence's incremental state as trace processor keeps it:
    reset by SEQ_INCREMENTAL_STATE_CLEARED; its interned data, its
    TracePacketDefaults (timestamp clock, default track_uuid) and its
    incremental clock are its own."""

    def __init__(self):
        self.cleared = False
        self.interned = _new_interned()
        self.clock = None    # trace_packet_defaults.timestamp_clock_id
        self.track = None    # trace_packet_defaults.track_event_defaults.track_uuid
        self.inc = {}        # incremental clock id (64-127) -> [its last value,
        #                      its MONOTONIC - its own], from its snapshot


def _varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def decode(b, msg="Trace"):
    """{field number: [values]}: ints, bytes, or decoded dicts for NESTED."""
    out = {}
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 1:
            v = int.from_bytes(b[i:i + 8], "little")
            i += 8
        elif wt == 2:
            n, i = _varint(b, i)
            v = b[i:i + n]
            if len(v) != n:
                raise Broken(f"{msg}.{num}: length {n} runs past the end")
            i += n
            sub = NESTED.get((msg, num))
            if sub:
                v = decode(v, sub)
        elif wt == 5:
            v = int.from_bytes(b[i:i + 4], "little")
            i += 4
        else:
            raise Broken(f"{msg}.{num}: wire type {wt}")
        out.setdefault(num, []).append(v)
    return out


def one(m, num, default=None):
    v = m.get(num)
    return v[-1] if v else default


def protoc_decode(path):
    """protoc's text of the file, with Perfetto's schema (fails on bytes that
    do not fit it)."""
    with open(path, "rb") as f:
        r = subprocess.run(["protoc", "-I", PROTOS, "--decode=perfetto.protos.Trace",
                            "protos/perfetto/trace/trace.proto"], stdin=f,
                           capture_output=True, timeout=300)
    if r.returncode != 0:
        raise Broken(f"protoc --decode: {r.stderr.decode(errors='replace')[:500]}")
    return r.stdout.decode()


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


class Trace:
    """The file's packets read and checked; the slices, instants and counters
    per track with BOOTTIME timestamps."""

    def __init__(self, path, protoc=True):
        if protoc:
            self.protoc_text = protoc_decode(path)
        with open(path, "rb") as f:
            data = f.read()
        self.packets = decode(data).get(1, [])
        self.tracks = {}        # uuid -> descriptor dict
        self.snapshots = []     # [(mono, boot)] in file order
        self.events = []        # dicts: track, type, ts (mono), boot, name, args, stack
        self._read()

    # -- clocks --
    def to_boot(self, mono):
        if not self.snapshots:
            raise Broken("no ClockSnapshot before a MONOTONIC timestamp")
        monos = [s[0] for s in self._snaps_sorted]
        k = bisect.bisect_right(monos, mono) - 1
        m, b = self._snaps_sorted[max(k, 0)]
        return b + (mono - m)

    def _read(self):
        seqs = {}                 # sequence id -> its incremental state (_Seq)
        self.callstack_defs = 0   # Callstack entries defined in the file
        self.sequences = set()    # the sequences that carry track events
        pending = []
        for n, p in enumerate(self.packets):
            where = f"packet {n}"
            flags = one(p, 13, 0)
            seq = one(p, 10)
            st = seqs.setdefault(seq, _Seq())
            if flags & SEQ_CLEARED:
                seqs[seq] = st = _Seq()
                st.cleared = True
            if seq is not None and not st.cleared:
                raise Broken(f"{where}: on sequence {seq} before its incremental state "
                             "was cleared")
            d = one(p, 59)
            if d is not None:
                # a packet's defaults replace the sequence's whole (trace
                # processor keeps the last TracePacketDefaults message)
                if seq is None:
                    raise Broken(f"{where}: trace_packet_defaults without a sequence")
                st.clock = one(d, 58)
                ted = one(d, 11)
                st.track = one(ted, 11) if ted is not None else None
            interned = st.interned
            cs = one(p, 6)
            seq_clocks = [one(c, 1) for c in (cs or {}).get(1, []) if 64 <= one(c, 1) < 128]
            if cs is not None and seq_clocks:
                # a sequence's own incremental clock, tied to MONOTONIC: one
                # per snapshot, which trace processor keeps apart from every
                # snapshot of another clock set (MONOTONIC may be earlier
                # there than in others; never earlier than in an earlier
                # snapshot of the same clock on the sequence)
                clocks = {one(c, 1): (one(c, 2), one(c, 3, 0)) for c in cs.get(1, [])}
                (clock,) = seq_clocks if len(seq_clocks) == 1 else (None,)
                if clock is None or set(clocks) != {clock, MONOTONIC} or \
                        not clocks[clock][1] or seq is None:
                    raise Broken(f"{where}: an incremental clock's snapshot is not "
                                 "{one clock of 64-127 is_incremental, MONOTONIC} on a sequence")
                mono = clocks[MONOTONIC][0]
                if clock in st.inc and mono < st.inc[clock][0] + st.inc[clock][1]:
                    raise Broken(f"{where}: clock {clock}'s snapshot goes back in MONOTONIC")
                st.inc[clock] = [clocks[clock][0], mono - clocks[clock][0]]
                continue
            if cs is not None:
                clocks = {one(c, 1): one(c, 2) for c in cs.get(1, [])}
                if MONOTONIC not in clocks or BOOTTIME not in clocks:
                    raise Broken(f"{where}: a ClockSnapshot without MONOTONIC and BOOTTIME")
                self.snapshots.append((clocks[MONOTONIC], clocks[BOOTTIME]))
                for a, b in zip(self.snapshots, self.snapshots[1:]):
                    if b[0] < a[0] or b[1] < a[1]:
                        raise Broken(f"{where}: ClockSnapshot goes back in time")
            idata = one(p, 12)
            if idata is not None:
                if not flags & SEQ_NEEDS:
                    raise Broken(f"{where}: interned data without SEQ_NEEDS_INCREMENTAL_STATE")
                for table in interned:
                    for e in idata.get(table, []):
                        iid = one(e, 1)
                        if not iid:
                            raise Broken(f"{where}: an entry of table {table} without an iid")
                        if iid in interned[table]:
                            raise Broken(f"{where}: iid {iid} of table {table} defined twice "
                                         f"on sequence {seq}")
                        if table in STRING_TABLES:
                            interned[table][iid] = one(e, 2, b"").decode()
                        else:
                            interned[table][iid] = e
                for table in (MAPPINGS, FRAMES, CALLSTACKS):
                    for e in idata.get(table, []):
                        self._check_refs(table, e, interned, where)
                self.callstack_defs += len(idata.get(CALLSTACKS, []))
            td = one(p, 60)
            if td is not None:
                self.tracks[one(td, 1)] = td
            te = one(p, 11)
            if te is None:
                continue
            if not flags & SEQ_NEEDS:
                raise Broken(f"{where}: a track event without SEQ_NEEDS_INCREMENTAL_STATE")
            if seq is None:
                raise Broken(f"{where}: a track event without a sequence")
            self.sequences.add(seq)
            clock = one(p, 58, st.clock)
            ts = one(p, 8)
            if clock is not None and 64 <= clock < 128:
                if clock not in st.inc:
                    raise Broken(f"{where}: a timestamp on incremental clock {clock} before "
                                 f"its snapshot on sequence {seq}")
                st.inc[clock][0] += ts
                ts = st.inc[clock][0] + st.inc[clock][1]
            elif clock != MONOTONIC:
                raise Broken(f"{where}: timestamp clock {clock}, expected one of the "
                             "sequence's incremental ones or MONOTONIC")
            # the event's own track_uuid, else its sequence's default one
            track = one(te, 11, st.track)
            if track is None:
                raise Broken(f"{where}: a track event without track_uuid on sequence {seq}, "
                             "which has no default track")
            if track not in self.tracks:
                raise Broken(f"{where}: track {track} used before it is described")
            name = one(te, 23)
            if name is not None:
                name = name.decode()
            elif one(te, 10) is not None:
                iid = one(te, 10)
                if iid not in interned[2]:
                    raise Broken(f"{where}: event name iid {iid} not defined on sequence {seq}")
                name = interned[2][iid]
            args = {}
            for a in te.get(4, []):
                args.update(self._annotation(a, interned, where))
            # stack: the frames' function names, frames: (name, file, line)
            # each, outermost first (interned: the file is the mapping's name;
            # inline: the frame's source_file)
            stack = frames = None
            cs = one(te, 55)
            if cs is not None:
                frames = [(one(f, 1, b"").decode(), one(f, 2, b"").decode() or None,
                           one(f, 3, 0)) for f in cs.get(1, [])]
            cs_iid = one(te, 56)
            if cs_iid is not None:
                if cs is not None:
                    raise Broken(f"{where}: both callstack and callstack_iid")
                if cs_iid not in interned[CALLSTACKS]:
                    raise Broken(f"{where}: callstack iid {cs_iid} not defined on the sequence")
                frames = []
                for f in interned[CALLSTACKS][cs_iid].get(2, []):
                    fr = interned[FRAMES][f]
                    frames.append((interned[FUNCS].get(one(fr, 2, 0), ""),
                                   self._mapping_name(interned, one(fr, 3, 0)),
                                   one(fr, 6, 0)))
            if frames is not None:
                stack = [f[0] for f in frames]
            pending.append({"n": n, "seq": seq, "track": track, "type": one(te, 9), "ts": ts,
                            "default_track": one(te, 11) is None,
                            "name": name, "args": args, "stack": stack,
                            "callstack_iid": cs_iid, "frames": frames,
                            "counter": signed(one(te, 30, 0))})
        self._snaps_sorted = sorted(self.snapshots)
        for e in pending:
            e["boot"] = self.to_boot(e["ts"])
        self.events = pending
        self._check_nesting()

    @staticmethod
    def _mapping_name(interned, iid):
        """The mapping's name as trace processor makes it (MakeMappingName:
        "/" before each path component, a leading "//" made "/"); None
        without a mapping or a path."""
        m = interned[MAPPINGS].get(iid) if iid else None
        if not m or not m.get(7):
            return None
        name = "".join("/" + interned[MAPPING_PATHS][c] for c in m[7])
        return name[1:] if name.startswith("//") else name

    @staticmethod
    def _check_refs(table, e, interned, where):
        """The iids an interned Mapping, Frame or Callstack refers to are
        defined (0: not set)."""
        def need(t, iid, what):
            if iid and iid not in interned[t]:
                raise Broken(f"{where}: {what} iid {iid} not defined on the sequence")
        iid = one(e, 1)
        if table == MAPPINGS:
            need(BUILD_IDS, one(e, 2, 0), f"mapping {iid}'s build id")
            for s in e.get(7, []):
                need(MAPPING_PATHS, s, f"mapping {iid}'s path string")
        elif table == FRAMES:
            need(FUNCS, one(e, 2, 0), f"frame {iid}'s function name")
            need(SOURCE_PATHS, one(e, 5, 0), f"frame {iid}'s source path")
            need(MAPPINGS, one(e, 3, 0), f"frame {iid}'s mapping")
            if one(e, 3, 0) and one(e, 4) is None:
                raise Broken(f"{where}: frame {iid} has a mapping and no rel_pc")
        else:
            for f in e.get(2, []):
                need(FRAMES, f, f"callstack {iid}'s frame")

    def _annotation(self, a, interned, where):
        if one(a, 1) is not None:
            iid = one(a, 1)
            if iid not in interned[3]:
                raise Broken(f"{where}: annotation name iid {iid} not defined")
            key = interned[3][iid]
        else:
            key = one(a, 10, b"?").decode()
        if 17 in a:
            iid = one(a, 17)
            if iid not in interned[29]:
                raise Broken(f"{where}: annotation string iid {iid} not defined")
            return {key: interned[29][iid]}
        if 6 in a:
            return {key: one(a, 6).decode()}
        if 4 in a:
            return {key: signed(one(a, 4))}
        for f in (2, 3, 7):
            if f in a:
                return {key: one(a, f)}
        if 5 in a:
            import struct
            return {key: struct.unpack("<d", one(a, 5).to_bytes(8, "little"))[0]}
        if 12 in a:
            return {key: [signed(one(x, 4, 0)) for x in a[12]]}
        return {key: None}

    def _check_nesting(self):
        by_track = {}
        for e in self.events:
            by_track.setdefault(e["track"], []).append(e)
        self.slices = []   # (track, name, begin boot, end boot, begin args + end args)
        for track, evs in by_track.items():
            evs.sort(key=lambda e: (e["boot"], e["n"]))
            stack = []
            for e in evs:
                if e["type"] == BEGIN:
                    stack.append(e)
                elif e["type"] == END:
                    if not stack:
                        raise Broken(f"track {track}: SLICE_END at packet {e['n']} "
                                     "closes nothing")
                    b = stack.pop()
                    args = dict(b["args"])
                    args.update(e["args"])
                    self.slices.append({"track": track, "name": b["name"], "begin": b["boot"],
                                        "end": e["boot"], "args": args, "stack": b["stack"],
                                        "depth": len(stack)})
            if stack:
                raise Broken(f"track {track}: {len(stack)} slices never end "
                             f"(first {stack[0]['name']!r} at packet {stack[0]['n']})")

    # -- views for the tests --
    def thread_of(self, track):
        """(pid, tid, name) of a thread track, else None."""
        td = self.tracks.get(track)
        t = one(td, 4) if td else None
        if t is None:
            return None
        return one(t, 1), one(t, 2), one(t, 5, b"").decode()

    def track_name(self, track):
        td = self.tracks.get(track, {})
        return one(td, 2, b"").decode()

    def is_counter(self, track):
        return 8 in self.tracks.get(track, {})

    def instants(self, track=None):
        return [e for e in self.events if e["type"] == INSTANT
                and (track is None or e["track"] == track)]

    def counters(self):
        return [e for e in self.events if e["type"] == COUNTER]


if __name__ == "__main__":
    try:
        t = Trace(sys.argv[1])
    except Broken as e:
        print(f"{sys.argv[1]}: {e}")
        sys.exit(1)
    print(f"{len(t.packets)} packets, {len(t.sequences)} sequences with events, "
          f"{len(t.tracks)} tracks, {len(t.slices)} slices, "
          f"{len(t.instants())} instants, {len(t.counters())} counters, "
          f"{len(t.snapshots)} clock snapshots")
