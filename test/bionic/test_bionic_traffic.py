"""`traffic` on real Android processes: toybox nc (bionic's libc.so) in the chroot,
a server (`nc -l`) and a client over TCP on loopback, probed through the chroot's
own libc.so (--lib: every process that maps that file, which only the chroot's
processes do).  The server is blocked in accept() since before the attach, so
its connection is a socket of unknown family and peer ("?"), bytes exact; the
client starts after the attach and finds the server by a name the chroot's
/system/etc/hosts maps (bionic resolves it in the process when netd's proxy is not
there), so the host name comes from bionic's android_getaddrinfofornet and its BSD
struct addrinfo.  Exact bytes and calls per direction: toybox nc copies with one
read() and one write() per chunk (lib/net.c pollinate), and each chunk here is one
pipe write of less than PIPE_BUF; the stdin/stdout pipes are no traffic.

Then test/targets/target_traffic_calls.c built here for bionic (clang's Android target
against the userland's libc.so, as test_bionic_apk.py builds its app): sendfile,
splice both ways, sendmmsg/recvmmsg and a socketpair, exact bytes and calls as on
glibc (test_traffic.py's expectations); bionic's sendmmsg is a tail call through
netd's dispatch table, so its system call __sendmmsg is probed."""
import os
import subprocess
import time

from e2e import TARGET_KERNEL, TESTDATA, TestFailure, Uprobestats, eq
from android import LIBC, ROOT, TOYBOX, Chrooted, fifo_name, host
from test_traffic import (CALLS_ROWS, MSGNAME_ROWS, calls_rows, edge_rows, edge_uncounted,
                          edges_of, msgname_rows, socket_rows)

NAME = "upst-nc.test"


def listening(port):
    with open("/proc/net/tcp") as f:
        return any(f" 0100007F:{port:04X} " in line and line.split()[3] == "0A"
                   for line in f)


def nc(args):
    return subprocess.Popen(["chroot", ROOT, TOYBOX, "nc"] + args, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def read_exact(proc, n, timeout=10):
    got = b""
    deadline = time.monotonic() + timeout
    while len(got) < n:
        if time.monotonic() > deadline:
            raise TestFailure(f"nc (pid {proc.pid}) wrote {len(got)} of {n} bytes")
        chunk = os.read(proc.stdout.fileno(), n - len(got))
        if not chunk:
            raise TestFailure(f"nc (pid {proc.pid}) closed its stdout after {len(got)} bytes")
        got += chunk
    return got


def toybox_nc(by_lib):
    """by_lib: every process mapping the chroot's libc (the client too); else -p
    SERVER alone (the client's calls must not count)."""
    port = 26000 + (os.getpid() + (0 if by_lib else 7)) % 3000
    os.makedirs(host("/system/etc"), exist_ok=True)
    with open(host("/system/etc/hosts"), "w") as f:
        f.write(f"127.0.0.1 localhost\n127.0.0.1 {NAME}\n")
    srv = nc(["-l", "-s", "127.0.0.1", "-p", str(port)])
    cli = u = None
    try:
        deadline = time.monotonic() + 10
        while not listening(port):
            if srv.poll() is not None or time.monotonic() > deadline:
                raise TestFailure("nc -l did not listen: " + srv.stderr.read().decode())
            time.sleep(0.01)
        args = ["traffic"] + (["--lib", host(LIBC)] if by_lib else ["-p", str(srv.pid)]) + \
            ["--format", "json"]
        u = Uprobestats(args)
        u.wait_attached()
        cli = nc([NAME, str(port)])
        cli.stdin.write(b"c" * 1000)
        cli.stdin.flush()
        eq(read_exact(srv, 1000), b"c" * 1000, "what the server got")
        srv.stdin.write(b"s" * 300)
        srv.stdin.flush()
        eq(read_exact(cli, 300), b"s" * 300, "what the client got")
        cli.stdin.close()     # the client shuts its side down; the server sees EOF
        eq(srv.wait(10), 0, "server exit code")
        eq(cli.wait(10), 0, "client exit code")
        rc = u.stop()
    finally:
        for p in (srv, cli):
            if p and p.poll() is None:
                p.kill()
                p.wait()
        if u:
            u.stop()
    eq(rc, 0, "traffic exit code; stderr: " + u.stderr())
    rows = socket_rows(u)

    def of(pid):
        return sorted((r["proto"], r["peer"], r["host"], r["iface"], r["tx_bytes"],
                       r["rx_bytes"], r["tx_calls"], r["rx_calls"])
                      for r in rows if r["pid"] == pid)
    eq(of(cli.pid), [("tcp", f"127.0.0.1:{port}", NAME, "lo", 1000, 300, 1, 1)] if by_lib
       else [], "client: bytes, calls and the name it looked up")
    eq(of(srv.pid), [("?", "?", None, None, 300, 1000, 1, 1)],
       "server: bytes and calls over the fd its accept() (begun before the attach) "
       "returned")


def test_toybox_nc_tcp_exact_bytes_and_host():
    toybox_nc(True)


def test_toybox_nc_server_by_pid():
    toybox_nc(False)


HERE = os.path.dirname(os.path.abspath(__file__))
CALLS = "/data/local/tmp/target_traffic_calls"
CALLS_DATA = "/data/local/tmp/traffic-data"


class Calls(Chrooted):
    """target_traffic_calls --go-fifo FIFO DATA in the chroot, held at its FIFO."""

    def __init__(self, mode=CALLS_DATA):
        userland = os.path.join(TESTDATA, "android-userland/x86_64-android11")
        subprocess.run(["clang", "--target=x86_64-linux-android30", "-ffreestanding",
                        "-nostdlib", "-fPIE", "-pie", "-fuse-ld=lld", "-O1", "-g", "-Wall",
                        "-Werror", "-Wl,--dynamic-linker=/system/bin/linker64",
                        "-Wl,-z,noexecstack", "-o", host(CALLS),
                        os.path.join(HERE, "..", "targets", "target_traffic_calls.c"),
                        f"-L{userland}/system/lib64", "-lc"], check=True)
        with open(host(CALLS_DATA), "wb") as f:
            f.write(b"d" * 600)
        self.fifo = fifo_name("calls")
        super().__init__([CALLS, "--go-fifo", self.fifo, mode], CALLS)

    def _other_end(self):
        with open(host(self.fifo), "w") as f:
            f.write("go\n")


def traced_calls(mode=CALLS_DATA):
    """traffic -p on target_traffic_calls MODE in the chroot, let go and waited
    for: the Uprobestats."""
    prog = Calls(mode)
    u = None
    try:
        u = Uprobestats(["traffic", "-p", str(prog.pid), "--format", "json"])
        u.wait_attached()
        prog.go()
        prog.wait()
        rc = u.wait()
    finally:
        prog.kill()
        if u:
            u.stop()
    eq(rc, 0, "traffic exit code; stderr: " + u.stderr())
    return u


def test_bionic_sendfile_splice_mmsg_socketpair_exact():
    eq(calls_rows(socket_rows(traced_calls()), "target_traffic_"), CALLS_ROWS,
       "rows: bytes and calls per socket")


def test_bionic_short_addrlen_connected_sendto_and_40_mmsg_exact():
    """test_traffic.py's --edges on bionic: accept4 and recvfrom with a short
    addrlen ("truncated"), sendto (bionic's send and sendto) and __sendmsg
    naming an address on a connected TCP socket (its real peer), __sendmmsg and
    recvmmsg of 40 messages (820 bytes, or the legacy objects' first 32 and the
    rest in the summary)."""
    legacy = bool(TARGET_KERNEL)
    eq(edges_of(traced_calls("--edges"), "target_traffic_"),
       (edge_rows(legacy), edge_uncounted(legacy)),
       "rows (bytes and calls per socket and peer) and the uncounted messages")


def test_bionic_sendmsg_recvmsg_msg_name_per_peer_exact():
    """test_traffic.py's --msgname on bionic: __sendmsg's msg_name and
    recvmsg's source address per peer on unconnected UDP sockets, and
    __sendmmsg's 2 messages naming 2 peers in the summary."""
    eq(msgname_rows(traced_calls("--msgname")), MSGNAME_ROWS,
       "rows per socket and peer, and the sendmmsg messages not in the bytes")
