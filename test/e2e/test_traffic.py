"""`uprobestats traffic`: a client and a server (test/targets/target_traffic.c)
exchange known byte counts over loopback TCP and UDP, IPv4 and IPv6, and a
unix socket; the client also reads a file, writes a pipe and looks an
address up with AI_ADDRCONFIG (glibc's netlink socket), which must not
count; sockets the client opened before the attach count too.  Totals
exact per process, peer and direction; host names from the
client's own getaddrinfo of names a private /etc/hosts maps; bad input (a
process gone, a static program without libc) one clear line."""
import json
import os
import signal
import time

from e2e import (BIN, TARGET_KERNEL, Held, Uprobestats, check, eq, kernel_args, run,
                 target, tmpdir)
from statsd_rx import StatsdReceiver

ATOM = 100023


def server_pid(client, timeout=10):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{client}/task/{client}/children") as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        except OSError:
            pass
        time.sleep(0.01)
    raise AssertionError("target_traffic started no server")


def traced(held, args):
    """`traffic --format json ARGS` attached, then the held target let go and
    waited for: (its JSON rows, the Uprobestats)."""
    deadline = time.monotonic() + 10
    while "/libc.so" not in open(f"/proc/{held.pid}/maps").read():
        check(time.monotonic() < deadline, "the target maps libc")   # the loader's work
        time.sleep(0.005)
    try:
        u = Uprobestats(["traffic", "--format", "json"] + args)
        u.wait_attached()
        held.go()
        held.wait()
        rc = u.wait()
    finally:
        held.kill()
    eq(rc, 0, "traffic exit code; stderr: " + u.stderr())
    return socket_rows(u), u


def socket_rows(u):
    """The traffic rows of u's JSON output (each line checked against
    docs/event.schema.json): type "traffic", one socket and peer each."""
    rows = []
    for o in u.json_events():
        if o.get("type") == "traffic" and "pid" in o:
            rows.append(o)
    return rows


def kill_children(pid):
    """The server the client forked: killed with the client, so a failed run
    leaves no process holding the test's output open."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = [int(k) for k in f.read().split()]
    except OSError:
        return
    for k in kids:
        try:
            os.kill(k, signal.SIGKILL)
        except OSError:
            pass


def traffic_rows(args, base):
    """(client pid, server pid, JSON rows, typed atoms of ATOM)"""
    tmp = tmpdir()
    rx = StatsdReceiver(os.path.join(tmp, "statsdw"))
    sock = f"/tmp/upst{os.getpid() % 100000}.s"
    hosts = os.path.join(tmp, "hosts")
    with open(hosts, "w") as f:
        f.write("127.0.0.1 upst-v4.test\n::1 upst-v6.test\n")
    held = Held(tmp, "target_traffic", [str(base), sock, "/etc/hostname", hosts])
    try:
        srv = server_pid(held.pid)
        rows, _ = traced(held, ["-p", str(held.pid), "-p", str(srv), "--atom", str(ATOM),
                                f"--statsd={rx.path}"] + args)
    finally:
        kill_children(held.pid)
        held.kill()
        rx.close()
    return held.pid, srv, rows, [f for a, f in rx.typed_atoms() if a == ATOM]


def totals(rows, pid):
    """{(proto, peer): [tx_bytes, rx_bytes, tx_calls, rx_calls]} of one process."""
    out = {}
    for r in rows:
        if r["pid"] != pid:
            continue
        t = out.setdefault((r["proto"], r["peer"]), [0, 0, 0, 0])
        for i, k in enumerate(("tx_bytes", "rx_bytes", "tx_calls", "rx_calls")):
            t[i] += r[k]
    return out


def test_traffic_exact_per_peer_and_direction():
    base = 20000 + os.getpid() % 1500 * 8
    client, srv, rows, atoms = traffic_rows([], base)
    for r in rows:
        eq(list(r)[0], "type", "a row's first key")
        eq(sorted(r), sorted(["type", "ts", "boot_ns", "wall_ns", "pid", "comm", "uid", "fd",
                              "proto", "peer", "host", "iface", "tx_bytes", "rx_bytes",
                              "tx_calls", "rx_calls"]), "row keys")
        eq(r["uid"], os.getuid(), "uid")
        # the client and the forked server are both target_traffic (comm: 15 bytes)
        eq(r["comm"], "target_traffic", f"comm of {r['pid']}")
        eq(r["wall_ns"] // 1000000, round(r["ts"] * 1000), "wall_ns is ts in ns")
    c = totals(rows, client)
    sock = f"/tmp/upst{os.getpid() % 100000}.s"
    eq(c, {
        ("tcp", f"127.0.0.1:{base}"): [1000, 300, 1, 1],
        ("tcp", f"[::1]:{base + 1}"): [2000, 500, 1, 1],
        ("udp", f"127.0.0.1:{base + 2}"): [300, 50, 3, 1],
        ("udp", f"[::1]:{base + 3}"): [400, 70, 2, 1],
        ("unix", "unix:" + sock[:16]): [400, 123, 1, 1],
        # opened before the attach: known from /proc at the attach
        ("tcp", f"[::1]:{base + 4}"): [600, 0, 1, 0],
        ("tcp", f"[::1]:{base + 5}"): [0, 600, 0, 1],
        ("udp", f"127.0.0.1:{base + 6}"): [80, 0, 1, 0],
        ("udp", "?"): [0, 80, 0, 1],
    }, "client traffic (the file read, the pipe write and getaddrinfo's netlink socket "
       "are not traffic)")
    s = totals(rows, srv)
    by_proto = {}
    for (proto, peer), t in s.items():
        by_proto.setdefault(proto, []).append((peer, t[:2]))
    eq(sorted(t for _, t in by_proto["tcp"]), [[300, 1000], [500, 2000]], "server tcp bytes")
    eq(sorted(t for _, t in by_proto["udp"]), [[50, 300], [70, 400]], "server udp bytes")
    eq([t for _, t in by_proto["unix"]], [[123, 400]], "server unix bytes")
    v6 = [p for p, t in by_proto["tcp"] if t == [500, 2000]]
    check(v6[0].startswith("[::1]:"), f"accept4's address gives the v6 peer: {v6}")
    for r in rows:
        if r["peer"].startswith(("127.", "[::1]")):
            eq(r["iface"], "lo", f"loopback peer {r['peer']} goes out of lo")
        # the client looked both names up; the server looked nothing up
        want = None
        if r["pid"] == client and r["peer"].startswith("127.0.0.1:"):
            want = "upst-v4.test"
        elif r["pid"] == client and r["peer"].startswith("[::1]:"):
            want = "upst-v6.test"
        eq(r["host"], want, f"host of {r['pid']} {r['proto']} {r['peer']}")
    # --atom: each row once more as a statsd atom, field for field (decoded
    # byte-exactly by statsd_rx: types, the uid's IS_UID annotation, nothing left)
    def as_atom(r):
        return [("int32", r["pid"], {}), ("int32", r["uid"], {1: True}), ("int32", r["fd"], {}),
                ("string", r["proto"], {}), ("string", r["peer"], {}),
                ("string", r["host"] or "", {}), ("string", r["iface"] or "", {})] + \
               [("int64", r[k], {}) for k in ("tx_bytes", "rx_bytes", "tx_calls", "rx_calls")] + \
               [("string", r["comm"] or "", {})]
    eq(sorted(map(repr, atoms)), sorted(repr(as_atom(r)) for r in rows), "atoms = rows")


# target_traffic_calls's sockets, whatever the ports: (proto, tx_bytes, rx_bytes,
# tx_calls, rx_calls) per row.  TCP c: send+write+writev+sendmsg+sendfile+splice
# 100+200+300+400+500+600 out, a splice of 700 from it in; its accepted end one
# recv(MSG_WAITALL) of 2100, one send of 700.  UDP: sendmmsg 10+20+30 / recvmmsg
# of those 3, and 40+50 back (one call each).  A socketpair: write 55 / recvfrom 55.
# Both recvfrom calls (the accepted end's 2100, the socketpair's 55) pass a
# source address buffer already holding 10.9.8.7:4321 that the kernel leaves
# alone (addrlen 0): counted against the socket's own peer, never that one.
CALLS_ROWS = sorted([
    ("tcp", 2100, 700, 6, 1), ("tcp", 700, 2100, 1, 1),
    ("udp", 60, 90, 1, 1), ("udp", 90, 60, 1, 1),
    ("unix", 55, 0, 1, 0), ("unix", 0, 55, 0, 1),
])


def calls_rows(rows, comm):
    """rows as CALLS_ROWS has them, each checked for its peer and comm."""
    for r in rows:
        check("10.9.8.7" not in r["peer"] and not r["peer"].endswith(":4321"),
              f"{r['proto']} row counted against recvfrom's stale buffer: {r['peer']}")
        if r["proto"] == "unix":
            eq(r["peer"], "unix:", "a socketpair socket's peer")
        else:
            check(r["peer"].startswith("127.0.0.1:") and r["peer"] != "127.0.0.1:0",
                  f"{r['proto']} peer {r['peer']}")
        eq(r["comm"], comm, "comm")
    tcp = sorted(r["peer"] for r in rows if r["proto"] == "tcp")
    check(len(set(tcp)) == len(tcp), f"the two TCP ends' peers differ: {tcp}")
    return sorted((r["proto"], r["tx_bytes"], r["rx_bytes"], r["tx_calls"], r["rx_calls"])
                  for r in rows)


def test_traffic_sendfile_splice_mmsg_socketpair_exact():
    """Every call that moves a socket's bytes counts: one TCP socket gets exactly
    100 send + 200 write + 300 writev + 400 sendmsg + 500 sendfile + 600 splice =
    2100 bytes in 6 calls (before, sendfile and splice went uncounted: 1000); a
    splice from a socket into a pipe is that socket's rx; sendmmsg/recvmmsg count
    the msg_len of the messages they moved, one call each; a socketpair's two
    sockets are unix sockets like any other.  sendfile's file read and the pipe
    around splice are no traffic."""
    tmp = tmpdir()
    data = os.path.join(tmp, "data")
    with open(data, "wb") as f:
        f.write(b"d" * 600)
    held = Held(tmp, "target_traffic_calls", [data])
    rows, _ = traced(held, ["-p", str(held.pid)])
    eq(calls_rows(rows, "target_traffic_"), CALLS_ROWS, "rows: bytes and calls per socket")


def edge_rows(legacy):
    """target_traffic_calls --edges' rows: (proto, peer, tx_bytes, rx_bytes,
    tx_calls, rx_calls), peer "127.0.0.1" for any loopback port.  TCP c2: sendto
    77 naming 10.9.8.7:4321 + sendmsg 88 with that msg_name, on its connected
    peer (the kernel ignores a connected TCP socket's address); a2 accepted with
    addrlen 4: "truncated".  UDP u4 -> u3: 44 + 22, u3's recvfrom with addrlen 4
    and 0 (the kernel copies 4 and 0 bytes): "truncated".  UDP u5 sendmmsg 40
    messages of 1..40 bytes, u6 recvmmsg of them: 820 each way, or with the
    legacy objects the first 32's, 528 (the rest in the summary).  TCP e_c, connected
    before the attach (learned from /proc): sendto 99 naming 10.9.8.7:4321 on its real
    peer, e_a's read 99."""
    mmsg = 528 if legacy else 820
    return sorted([
        ("tcp", "127.0.0.1", 165, 33, 2, 1), ("tcp", "truncated", 33, 165, 1, 1),
        ("tcp", "127.0.0.1", 99, 0, 1, 0), ("tcp", "127.0.0.1", 0, 99, 0, 1),
        ("udp", "127.0.0.1", 66, 0, 2, 0), ("udp", "truncated", 0, 66, 0, 2),
        ("udp", "127.0.0.1", mmsg, 0, 1, 0), ("udp", "127.0.0.1", 0, mmsg, 0, 1),
    ])


def edge_uncounted(legacy):
    """The summary's sendmmsg/recvmmsg messages not in the bytes: none, or with
    the legacy objects (UPS_TRAFFIC_MMSG_LEGACY, 32) the 8 past the 32nd of each
    of the two calls."""
    return {"uncounted_mmsg_calls": 2, "uncounted_mmsg_messages": 16} if legacy else {}


def peer_kind(r):
    if r["peer"] == "truncated" or r["proto"] == "unix":
        return r["peer"]
    if r["peer"].startswith("127.0.0.1:") and r["peer"] != "127.0.0.1:0":
        return "127.0.0.1"
    return r["peer"]     # 10.9.8.7:… (stale or ignored), say: no expected row has it


def edges_of(u, comm):
    """(rows as edge_rows has them, the summary's uncounted figures) of u's
    JSON output."""
    rows = socket_rows(u)
    for r in rows:
        eq(r["comm"], comm, "comm")
    uncounted = {}
    for o in u.json_events():
        if o.get("type") == "traffic" and "pid" not in o:
            for k in ("uncounted_mmsg_calls", "uncounted_mmsg_messages"):
                if k in o:
                    uncounted[k] = uncounted.get(k, 0) + o[k]
    return (sorted((r["proto"], peer_kind(r), r["tx_bytes"], r["rx_bytes"], r["tx_calls"],
                    r["rx_calls"]) for r in rows), uncounted)


def test_traffic_short_addrlen_connected_sendto_and_40_mmsg_exact():
    """An address the kernel cut short (recvfrom's and accept()'s addrlen
    shorter than the address: it copies that many bytes and writes back the
    whole length) counts against "truncated", never the buffer's stale tail
    (before: 10.9.8.7, the buffer's old contents); a sendto or sendmsg naming an
    address on a connected TCP socket counts on its real peer (before: on the
    address named), also on one connected before the attach (learned from
    /proc); a sendmmsg and a recvmmsg of 40 messages count all 820
    bytes (before: the first 16's, 136, the rest in silence), or with the legacy
    objects the first 32's and the other 8 of each call in the summary."""
    held = Held(tmpdir(), "target_traffic_calls", ["--edges"])
    _, u = traced(held, ["-p", str(held.pid)])
    legacy = bool(TARGET_KERNEL)
    eq(edges_of(u, "target_traffic_"), (edge_rows(legacy), edge_uncounted(legacy)),
       "rows (bytes and calls per socket and peer) and the uncounted messages")


# target_traffic_calls --msgname: (socket, proto, peer, tx, rx, tx_calls, rx_calls)
# rows and the summary's uncounted figures (msgname_rows)
MSGNAME_ROWS = (sorted([
    ("u7", "udp", "u8", 111, 0, 2, 0), ("u7", "udp", "u9", 122, 0, 1, 0),
    ("u8", "udp", "u7", 0, 116, 0, 2), ("u8", "udp", "u9", 0, 133, 0, 1),
    ("u9", "udp", "u7", 0, 128, 0, 2), ("u9", "udp", "u8", 133, 0, 1, 0),
]), {"uncounted_mmsg_calls": 1, "uncounted_mmsg_messages": 2})


def msgname_rows(u):
    """(rows, the summary's uncounted figures) of target_traffic_calls
    --msgname's JSON output, each peer's port replaced by the name of the
    socket it is (u7, u8, u9: a socket's own port is the peer port its
    counterparts' rows show; "?" or another address stays as it is)."""
    rows, uncounted = socket_rows(u), {}
    for r in rows:
        eq(r["comm"], "target_traffic_", "comm")
    for o in u.json_events():
        if o.get("type") == "traffic" and "pid" not in o:
            for k in ("uncounted_mmsg_calls", "uncounted_mmsg_messages"):
                if k in o:
                    uncounted[k] = uncounted.get(k, 0) + o[k]
    # each socket by its bytes: u7's 233, u8's 249, u9's 261
    by = {}
    for r in rows:
        by.setdefault(r["fd"], []).append(r)
    names = {}
    for fd, rs in by.items():
        total = sum(r["tx_bytes"] + r["rx_bytes"] for r in rs)
        names[fd] = {233: "u7", 249: "u8", 261: "u9"}.get(total, "fd%d" % fd)
    port_of = {}
    # each socket's port: the peer its sends to it name (u8's: u9's tx row;
    # u9's: u7's 122 row; u7's: u8's 111 row)
    for r in rows:
        n = names[r["fd"]]
        if (n, r["tx_bytes"], r["rx_bytes"]) == ("u9", 133, 0):
            port_of[r["peer"]] = "u8"
        if (n, r["tx_bytes"], r["rx_bytes"]) == ("u7", 122, 0):
            port_of[r["peer"]] = "u9"
        if (n, r["tx_bytes"], r["rx_bytes"]) == ("u8", 0, 116):
            port_of[r["peer"]] = "u7"
    out = sorted((names[r["fd"]], r["proto"], port_of.get(r["peer"], r["peer"]),
                  r["tx_bytes"], r["rx_bytes"], r["tx_calls"], r["rx_calls"]) for r in rows)
    return out, uncounted


def test_traffic_sendmsg_recvmsg_msg_name_per_peer_exact():
    """On unconnected UDP sockets, sendmsg's msg_name is the peer its bytes
    went to and recvmsg's the peer they came from (as sendto's and
    recvfrom's address): u7's 111 and 122 to u8 and u9 on two rows, u8's
    recvmsg of 111 from u7 and 133 from u9 on two rows, u9's 122 from u7
    (before: u7's 233 on one "?" row, u8's and u9's recvmsg on "?" too).  A
    sendmmsg whose 2 messages name 2 peers on u7's unconnected socket counts
    its call on u7's row (its first peer, u8) and its 11 bytes in no row but
    in the summary, 1 call and 2 messages (before: on u8's row in silence),
    with the normal and the legacy objects alike."""
    held = Held(tmpdir(), "target_traffic_calls", ["--msgname"])
    _, u = traced(held, ["-p", str(held.pid)])
    eq(msgname_rows(u), MSGNAME_ROWS,
       "rows per socket and peer, and the sendmmsg messages not in the bytes")


def test_traffic_comm_is_the_process_name_not_a_thread_name():
    """The bytes are sent by a thread named upst-worker (its comm is what the
    program sees); the row's comm is the process's, the main thread's
    /proc/PID/comm, while the process runs."""
    tmp = tmpdir()
    held = Held(tmp, "target_sendloop", ["7", "--thread"])
    try:
        deadline = time.monotonic() + 10
        while "/libc.so" not in open(f"/proc/{held.pid}/maps").read():
            check(time.monotonic() < deadline, "the target maps libc")
            time.sleep(0.005)
        u = Uprobestats(["traffic", "--format", "json", "-p", str(held.pid)])
        u.wait_attached()
        held.go()
        # the worker has sent and ended: the main thread waits in pause() (34)
        deadline = time.monotonic() + 10
        while not (os.listdir(f"/proc/{held.pid}/task") == [str(held.pid)] and
                   open(f"/proc/{held.pid}/syscall").read().split()[0] == "34"):
            check(time.monotonic() < deadline, "the worker thread sent and ended")
            time.sleep(0.005)
        rc = u.stop()
    finally:
        held.kill()
    eq(rc, 0, "traffic exit code; stderr: " + u.stderr())
    eq([(r["proto"], r["tx_bytes"], r["tx_calls"], r["comm"]) for r in socket_rows(u)
        if r["tx_bytes"]], [("udp", 7, 7, "target_sendloop")], "the row and its comm")


def test_traffic_ipv6_interface_from_the_route():
    """A peer past a veth interface with an IPv6 address, in the process's own
    network namespace: the row's iface is the one its IPv6 route goes out of
    (its /proc/PID/net/ipv6_route), not lo and not null."""
    tmp = tmpdir()
    held = Held(tmp, "target_sendloop", ["5", "--dummy6"])
    rows, _ = traced(held, ["-p", str(held.pid), "--interval", "1"])
    eq(sorted((r["proto"], r["peer"], r["iface"]) for r in rows if r["tx_bytes"]),
       [("udp", "[fd00:5::2]:9", "upst6")], "the row and its interface")
    eq(sum(r["tx_bytes"] for r in rows), 5, "bytes sent")


def test_traffic_bad_input():
    rc, _, err = run(["traffic", "-p", "999999999"])
    check(rc != 0, "a pid that is gone fails")
    check("999999999" in err and len(err.strip().splitlines()) == 1, "one line: " + err)
    rc, _, err = run(["traffic", "--lib", "/etc/hostname", "-p", str(os.getpid())])
    check(rc != 0, "a file that is no libc fails: " + err)
    rc, _, err = run(["traffic", "--uid", "x"])
    eq(rc, 2, "--uid x is a usage error")


def test_traffic_opens_each_file_once():
    """Which libc functions can be probed (their symbols, their proven
    returns), the plan and the session all read libc through the command's
    one code cache (like run and trace): every ELF file is opened once.
    Before, each function's exit sites opened libc again."""
    import subprocess
    from test_stack import STRACE, check_each_elf_opened_once
    tmp = tmpdir()
    log = os.path.join(tmp, "traffic.strace")
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        deadline = time.monotonic() + 10
        while "libc.so" not in open(f"/proc/{sleeper.pid}/maps").read():
            check(time.monotonic() < deadline, "sleep maps libc")
            time.sleep(0.005)
        libc = [ln.split()[-1] for ln in open(f"/proc/{sleeper.pid}/maps")
                if "libc.so" in ln][0]
        p = subprocess.run(STRACE + ["-o", log, BIN] + kernel_args(
            ["traffic", "-p", str(sleeper.pid), "--duration", "1"]),
            capture_output=True, text=True, timeout=120)
        eq(p.returncode, 0, "traffic exit code; stderr: " + p.stderr)
        check_each_elf_opened_once(log, [libc], "traffic")
    finally:
        sleeper.kill()
        sleeper.wait()
