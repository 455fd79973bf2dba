"""A timed launch held on the GPU until the host has queued all of it (issue 41: small
library calls in the paired loop).

Each launch of a burst is timed alone between its own two events, after a synchronize, so
the GPU is idle when the host starts queuing the L2 flush, the start event, the launch and
the end event. Where the host takes longer to queue a launch than the flush takes to run (a
cuBLAS call through CuPy costs tens of microseconds of host work), the GPU passes the start
event and then waits for the kernel, and that wait is timed as the kernel: a 5 µs cuBLAS
call at 256³ read as 50 µs. A one-thread kernel queued before the start event spins until
the host writes a flag in pinned memory; the host writes it once the end event is queued,
so the two events bracket GPU work only. nvbench holds its launches the same way (its
"blocking kernel"). The spin gives up after ``timeout_ms`` (it can never hang a run) and
the hold counts how often it did, which the result reports.
"""

from __future__ import annotations

from typing import Any

import numpy as np

HOLD_SOURCE = r"""
extern "C" __global__ void gemmscope_hold(volatile unsigned int* flag,
                                          unsigned long long timeout_ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    while (flag[0] == 0u) {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        if (t - t0 > timeout_ns) {
            flag[1] = 1u;  // gave up: the host was slower than the timeout
            return;
        }
        __nanosleep(256);
    }
}
"""

DEFAULT_TIMEOUT_MS = 100.0


class LaunchHold:
    """Hold the current stream (:meth:`hold`) until :meth:`release`; :meth:`settled`
    after the stream is synchronized counts a hold that timed out."""

    def __init__(self, cp: Any, timeout_ms: float = DEFAULT_TIMEOUT_MS):
        self._cp = cp
        # pinned host memory is mapped into the device's address space at the same
        # address under unified addressing (every 64-bit CUDA platform), so the kernel
        # reads the host's flag directly
        self._mem = cp.cuda.alloc_pinned_memory(8)
        self._flag = np.frombuffer(self._mem, np.uint32, 2)
        self._ptr = np.uint64(self._mem.ptr)
        self._timeout_ns = np.uint64(int(timeout_ms * 1e6))
        self._kernel = cp.RawKernel(HOLD_SOURCE, "gemmscope_hold")
        self.held = 0
        self.timeouts = 0

    def hold(self) -> None:
        """Queue the spin on the current stream (the previous one has ended: the caller
        synchronized after it)."""
        self._flag[0] = 0
        self._flag[1] = 0
        self._kernel((1,), (1,), (self._ptr, self._timeout_ns))
        self.held += 1

    def release(self) -> None:
        self._flag[0] = 1

    def settled(self) -> None:
        """After the stream is synchronized: count the hold if it gave up."""
        if self._flag[1]:
            self.timeouts += 1


def make_hold(cp: Any) -> tuple[LaunchHold | None, str | None]:
    """A hold, or None and why not (a runner goes on without it, and says so)."""
    try:
        return LaunchHold(cp), None
    except Exception as exc:  # no pinned memory, a compile failure: time unheld
        return None, f"launches not held: {type(exc).__name__}: {exc}"[:300]
