"""The statsd side: atoms from probes on a chrooted toybox dd's write, sent to a
datagram socket at the chroot's /dev/socket/statsdw (where statsd listens on a
device), decoded by statsd_rx.py.

The stand-in listener is statsd_rx's socket, not toybox: toybox 0.8.3's nc (this
userland's) cannot listen on a unix datagram socket -- `nc -U -u -l` calls
listen(2) on it and stops with "nc: listen" (EOPNOTSUPP); it listens on unix stream
sockets only, and statsd's socket is a datagram one.  The first test keeps that
fact checked: it fails when toybox learns it, and then nc should take over."""
import subprocess

from e2e import check, eq, tmpdir  # noqa: F401
from android import ROOT, TOYBOX, Dd, host
from statsd_rx import StatsdReceiver
from test_bionic_trace import BS, COUNT, traced

ATOM = 900001


def test_toybox_nc_cannot_listen_on_a_unix_datagram_socket():
    p = subprocess.run(["timeout", "10", "chroot", ROOT, TOYBOX, "nc", "-U", "-u", "-l",
                        "-s", "/dev/socket/ups-nc-dgram"], capture_output=True, text=True)
    check(p.returncode not in (0, 124), f"nc -U -u -l exit code {p.returncode}")
    eq(p.stderr.strip(), "nc: listen", "nc's error")


def test_atoms_reach_statsdw_inside_the_chroot():
    path = host("/dev/socket/statsdw")
    rx = StatsdReceiver(path)
    try:
        dd = Dd(BS, COUNT)
        _, objs = traced(dd, ["trace", f"--statsd={path}", "--atom", str(ATOM),
                              "--args", "0,2", "libc.so:write"])
    finally:
        rx.close()
    eq(rx.drop_reports(), [], "drop reports")
    eq(rx.atoms(), [(ATOM, [dd.out_fd, BS])] * COUNT, "atoms: write(fd, _, count) each")
