"""Bursts: a burst of records that fits in the output buffer is never lost,
whichever CPU it lands on, or all of them at once; one record more than fits
is counted as dropped, never lost silently.  The reader is stopped (SIGSTOP)
for the burst, so nothing is drained while it lasts: the buffer alone holds
it, on any machine.  call_detail records are 128 bytes: a perf buffer sample
takes 8 (header) + 4 (size) + 128, padded to 144, of each CPU's buffer; a ring
buffer record 8 + 128 = 136 of the one buffer."""
import os
import signal

from e2e import (Held, Uprobestats, eq, events, native_config, needs_kernel, summary, target,
                 tmpdir, write_config)

SIZE = 65536
PERF_FITS = SIZE // 144          # on each CPU
RING_FITS = SIZE // 136          # in all
CPUS = len(os.sched_getaffinity(0))


def burst(output, per_thread, pin, threads=1):
    """(hits, delivered, dropped) of a burst of per_thread calls in each of
    `threads` threads pinned as `pin` (a CPU, or "each": thread t on CPU t)."""
    tmp = tmpdir()
    cfg = write_config(tmp, native_config(target("target_native"), "ups_target_fn"))
    held = Held(tmp, "target_native", ["--threads", str(threads), "--pin", str(pin),
                                       str(per_thread), "1"])
    try:
        u = Uprobestats(["run", cfg, "--format", "json", "--pid", str(held.pid), output,
                         "--ringbuf-size", str(SIZE), "--no-statsd"])
        u.wait_attached()
        u.proc.send_signal(signal.SIGSTOP)
        try:
            held.go()
            held.wait()
        finally:
            u.proc.send_signal(signal.SIGCONT)
        eq(u.wait(), 0, "exit code; stderr: " + u.stderr())
    finally:
        held.kill()
    objs = u.json_events()
    (hits, delivered, dropped, sink), = summary(objs)
    eq(sink, 0, "dropped by the sink")
    eq(len(events(objs)), delivered, "events = delivered")
    return hits, delivered, dropped


def test_perf_buffer_holds_a_burst_that_fits_on_each_cpu_and_on_all_at_once():
    for cpu in range(CPUS):
        eq(burst("--force-perfbuf", PERF_FITS, cpu), (PERF_FITS, PERF_FITS, 0),
           f"a burst of {PERF_FITS} on CPU {cpu}: hits, delivered, dropped")
    n = PERF_FITS * CPUS
    eq(burst("--force-perfbuf", PERF_FITS, "each", CPUS), (n, n, 0),
       f"bursts of {PERF_FITS} on each of {CPUS} CPUs at once")
    eq(burst("--force-perfbuf", PERF_FITS + 1, 0), (PERF_FITS + 1, PERF_FITS, 1),
       "one record more than fits: dropped and counted")


@needs_kernel("5.8", "the BPF ring buffer")
def test_ring_buffer_holds_a_burst_that_fits_from_any_cpu():
    for cpu in range(CPUS):
        eq(burst("--force-ringbuf", RING_FITS, cpu), (RING_FITS, RING_FITS, 0),
           f"a burst of {RING_FITS} on CPU {cpu}: hits, delivered, dropped")
    each = RING_FITS // CPUS
    eq(burst("--force-ringbuf", each, "each", CPUS), (each * CPUS, each * CPUS, 0),
       f"bursts of {each} on each of {CPUS} CPUs at once (one shared buffer)")
    eq(burst("--force-ringbuf", RING_FITS + 1, 0), (RING_FITS + 1, RING_FITS, 1),
       "one record more than fits: dropped and counted")
