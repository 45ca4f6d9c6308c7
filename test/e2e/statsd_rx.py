"""A statsd stand-in for e2e tests: an AF_UNIX datagram socket that collects
what uprobestats sends, and a decoder for the atoms (written from
shared/reference/statsd-wire.md, independently of the C encoder)."""
import os
import socket
import struct
import threading
import time

MAGIC = 1937006964


QLEN_SYSCTL = "/proc/sys/net/unix/max_dgram_qlen"


def _socket_with_queue(qlen):
    """A datagram socket that queues qlen datagrams, like statsd's on Android
    (init.rc sets net.unix.max_dgram_qlen to 2400; Linux defaults to 10).  The
    kernel takes the limit from the sysctl when the socket is created, so set
    it for that moment only."""
    with open(QLEN_SYSCTL) as f:
        old = f.read().strip()
    with open(QLEN_SYSCTL, "w") as f:
        f.write(str(qlen))
    try:
        return socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    finally:
        with open(QLEN_SYSCTL, "w") as f:
            f.write(old)


class StatsdReceiver:
    """pause_every/pause_s make a slow reader: after every pause_every
    datagrams it sleeps pause_s (statsd busy elsewhere), so a burst fills the
    queue while the receiver still keeps up on average."""

    def __init__(self, path, qlen=2400, pause_every=0, pause_s=0.0):
        self.path = path
        self.sock = _socket_with_queue(qlen)
        self.sock.bind(path)
        self.sock.settimeout(0.2)
        self.datagrams = []
        self._pause_every = pause_every
        self._pause_s = pause_s
        self._stop = False
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        # Stops only once the queue is empty: what was sent before close() is read.
        while True:
            try:
                self.datagrams.append(self.sock.recv(8192))
            except socket.timeout:
                if self._stop:
                    return
                continue
            except OSError:
                return
            if self._pause_every and len(self.datagrams) % self._pause_every == 0:
                time.sleep(self._pause_s)

    def close(self):
        self._stop = True
        self._t.join(10)
        self.sock.close()
        os.unlink(self.path)

    def drop_reports(self):
        """The 24-byte drop datagrams: [(error, atom id, count)], in order."""
        # header (11), tag = last error (4), EVENT_TYPE_LONG (1), count | atom << 32 (8)
        return [(struct.unpack_from("<i", d, 11)[0],) + struct.unpack_from("<ii", d, 16)[::-1]
                for d in self.datagrams if len(d) == 24]

    def atoms(self):
        """[(atom_id, [field values])] of every atom datagram, in order."""
        return [decode_atom(d) for d in self.datagrams if len(d) != 24]

    def atoms_of(self, atom_id):
        """atoms() of one atom id only (skips atom 752, whose lists this decoder
        does not read)."""
        return [decode_atom(d) for d in self.datagrams
                if len(d) != 24 and struct.unpack_from("<i", d, 15 + 12)[0] == atom_id]

    def typed_atoms(self):
        """[(atom_id, [(type name, value, {annotation id: value})])], in order."""
        return [decode_atom_typed(d) for d in self.datagrams if len(d) != 24]


def decode_atom(d):
    """Header (11) + magic (4) + event buffer -> (atom_id, values)."""
    atom_id, fields = decode_atom_typed(d)
    return atom_id, [v for _, v, _ in fields]


TYPE_NAMES = {0: "int32", 1: "int64", 2: "string", 5: "bool"}
ANNOTATION_IS_UID = 1


def decode_atom_typed(d):
    """(atom_id, [(type name, value, {annotation id: value})]) of one atom."""
    if len(d) < 15 + 16 or d[0] != 5:
        raise ValueError(f"not a statsd datagram: {d[:16].hex()}")
    if struct.unpack_from("<I", d, 11)[0] != MAGIC:
        raise ValueError("bad magic")
    b = d[15:]
    if b[0] & 0x0F != 7 or b[2] != 0x01:
        raise ValueError(f"bad event header {b[:4].hex()}")
    count = b[1]
    atom_id = struct.unpack_from("<i", b, 12)[0]
    if b[11] & 0x0F != 0:
        raise ValueError("atom id is not INT32")
    pos = 16
    fields = []
    for _ in range(count - 2):
        t = b[pos]
        n_ann = t >> 4
        kind = t & 0x0F
        pos += 1
        if kind == 0:
            value = struct.unpack_from("<i", b, pos)[0]
            pos += 4
        elif kind == 1:
            value = struct.unpack_from("<q", b, pos)[0]
            pos += 8
        elif kind == 5:
            value = bool(b[pos])
            pos += 1
        elif kind == 2:
            n = struct.unpack_from("<i", b, pos)[0]
            value = b[pos + 4:pos + 4 + n].decode("utf-8", "replace")
            pos += 4 + n
        else:
            raise ValueError(f"field type {kind} not handled by this test decoder")
        annotations = {}
        for _ in range(n_ann):  # id, value type, value (bool 1 byte, int32 4 bytes)
            ann_id, ann_type = b[pos], b[pos + 1]
            if ann_type == 5:
                annotations[ann_id] = bool(b[pos + 2])
                pos += 3
            else:
                annotations[ann_id] = struct.unpack_from("<i", b, pos + 2)[0]
                pos += 6
        fields.append((TYPE_NAMES[kind], value, annotations))
    if pos != len(b):
        raise ValueError(f"{len(b) - pos} trailing bytes")
    return atom_id, fields
