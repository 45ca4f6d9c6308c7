"""android.py — real Android processes for the bionic stage (test/bionic/run.sh
made the chroot: a copy of the x86_64 Android 11 userland with /proc and /dev).

Every process here is bionic's linker64 running toybox against bionic's libc.so,
held at a FIFO it opens (an open of a FIFO blocks until the other end is opened),
so the tool attaches while the process waits and every call after go() is seen:

  Dd(bs, count)   toybox dd if=/dev/zero of=FIFO bs=B count=N status=none: after
                  go(), exactly N read(in_fd, buf, B) and N write(out_fd, buf, B),
                  each returning B, the same buf, then exit.  out_fd is the lowest
                  fd free while held (POSIX open takes the lowest).
  Cat(data, files) /system/bin/cat FIFO FILE... (a symlink to toybox): after go()
                  writes data (< 4096 bytes: one atomic pipe write) and closes:
                  one write(1, buf, len(data)), close(3) (the FIFO, the lowest free
                  fd), then per FILE open(FILE, O_RDONLY|O_CLOEXEC) -> bionic's
                  __openat(AT_FDCWD, FILE, ...) = 3, one write(1, buf, len), close(3).

The arm64 VM version (test/vm/, helper bionicvm) mirrors these expectations."""
import os
import subprocess
import threading
import time

from e2e import TestFailure, eq

ROOT = os.environ.get("UPROBESTATS_ANDROID_ROOT", "")
LIBC = "/system/lib64/libc.so"
TOYBOX = "/system/bin/toybox"


def host(path):
    """A path inside the chroot as the tracer sees it."""
    return ROOT + path


_seq = [0]


def fifo_name(tag):
    _seq[0] += 1
    name = f"/dev/ups-{tag}-{os.getpid()}-{_seq[0]}"
    os.mkfifo(host(name))
    return name


def chroot_cmd(argv, bind=None):
    """argv run in the chroot; bind=(src, dst): first in a mount namespace of its own,
    with host path src bind-mounted over host path dst (the tracer keeps dst)."""
    cmd = ["chroot", ROOT] + list(argv)
    if not bind:
        return cmd
    return (["unshare", "-m", "--propagation", "private", "sh", "-c",
             'mount --bind "$1" "$2" && shift 2 && exec "$@"', "sh", bind[0], bind[1]]
            + cmd)


class Chrooted:
    """A command in the chroot, held while it opens its FIFO."""

    def __init__(self, argv, argv0, bind=None, stdout=subprocess.DEVNULL):
        self.argv0 = argv0
        self.proc = subprocess.Popen(chroot_cmd(argv, bind), stdout=stdout,
                                     stderr=subprocess.PIPE)
        self.pid = self.proc.pid
        self._wait_held()
        self._io = None

    def _blocked_in_fifo_open(self):
        try:
            with open(f"/proc/{self.pid}/cmdline", "rb") as f:
                if f.read().split(b"\0", 1)[0] != os.fsencode(self.argv0):
                    return False
            with open(f"/proc/{self.pid}/wchan") as f:
                if f.read().strip() == "wait_for_partner":
                    return True
            with open(f"/proc/{self.pid}/syscall") as f:   # openat, when wchan is hidden
                return f.read().split(" ", 1)[0] == "257"
        except OSError:
            return False

    def _wait_held(self, timeout=15):
        deadline = time.monotonic() + timeout
        while not self._blocked_in_fifo_open():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                err = self.proc.stderr.read().decode(errors="replace") \
                    if self.proc.poll() is not None else ""
                self.kill()
                raise TestFailure(f"{self.argv0} (pid {self.pid}) never blocked opening its "
                                  f"FIFO: {err.strip()}")
            time.sleep(0.002)

    def fds(self):
        return sorted(int(n) for n in os.listdir(f"/proc/{self.pid}/fd"))

    def maps_of(self, path_suffix):
        """(dev, inode, path) of the first mapping whose path ends with path_suffix."""
        with open(f"/proc/{self.pid}/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].strip().endswith(path_suffix):
                    return parts[3], int(parts[4]), parts[5].strip()
        raise TestFailure(f"pid {self.pid} maps nothing ending in {path_suffix}")

    def go(self):
        self._io = threading.Thread(target=self._other_end, daemon=True)
        self._io.start()

    def wait(self, timeout=60):
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise TestFailure(f"{self.argv0} did not exit in time")
        if self._io:
            self._io.join(10)
        err = self.proc.stderr.read().decode(errors="replace")
        eq(rc, 0, f"{self.argv0} exit code (stderr: {err.strip()})")

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Dd(Chrooted):
    def __init__(self, bs, count, bind=None):
        self.bs, self.count = bs, count
        self.fifo = fifo_name("dd")
        self.received = 0
        super().__init__([TOYBOX, "dd", "if=/dev/zero", f"of={self.fifo}", f"bs={bs}",
                          f"count={count}", "status=none"], TOYBOX, bind)
        fds = self.fds()
        self.in_fd = next(i for i in fds
                          if os.readlink(f"/proc/{self.pid}/fd/{i}") == host("/dev/zero"))
        self.out_fd = next(i for i in range(len(fds) + 1) if i not in fds)

    def _other_end(self):
        with open(host(self.fifo), "rb") as f:
            while True:
                b = f.read(65536)
                if not b:
                    break
                self.received += len(b)

    def wait(self, timeout=60):
        super().wait(timeout)
        eq(self.received, self.bs * self.count, "bytes dd wrote to its FIFO")


class Cat(Chrooted):
    """files: {path in the chroot: bytes} cat reads after its FIFO (written now)."""

    def __init__(self, data, files=None):
        assert len(data) < 4096
        self.files = dict(files or {})
        for path, content in self.files.items():
            with open(host(path), "wb") as f:
                f.write(content)
        self.data = data
        self.fifo = fifo_name("cat")
        super().__init__(["/system/bin/cat", self.fifo] + list(self.files),
                         "/system/bin/cat", stdout=subprocess.PIPE)
        self.out = b""

    def _other_end(self):
        with open(host(self.fifo), "wb") as f:
            f.write(self.data)

    def wait(self, timeout=60):
        self.out = self.proc.stdout.read()
        super().wait(timeout)
        eq(self.out, self.data + b"".join(self.files.values()), "what cat wrote")


def android_names(pids):
    """pid -> NAME as Android's own `ps -A -o PID,NAME` (toybox, in the chroot) shows it."""
    out = subprocess.run(["chroot", ROOT, TOYBOX, "ps", "-A", "-o", "PID,NAME"],
                         capture_output=True, text=True, check=True).stdout
    names = {}
    for line in out.splitlines()[1:]:
        pid, _, name = line.strip().partition(" ")
        if pid.isdigit() and int(pid) in pids:
            names[int(pid)] = name.strip()
    return names
