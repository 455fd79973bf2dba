"""A fake GPU timeline for the energy tests: a host clock that only moves when told, a GPU
that runs batches of launches in order, a power draw (idle or loaded) and an energy
counter that, like NVML's, only moves in steps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field


@dataclass
class FakeGPU:
    idle_w: float = 100.0
    load_w: float = 600.0
    step_s: float = 0.05  # the counter's update interval
    batch_s: float = 0.05  # GPU time of one batch
    per_batch: int = 10  # launches in a batch
    enqueue_s: float = 1e-4  # host time to enqueue a batch
    read_s: float = 2e-6  # host time of one counter read
    now: float = 1000.0  # host clock (s)
    busy: list[tuple[float, float]] = field(default_factory=list)  # GPU busy intervals
    gpu_free_at: float = 0.0
    reads: int = 0
    full_queue_blocks: bool = False  # enqueue waits until only one batch is ahead of it
    method: str = "graph"  # as StreamBatches says how it launched
    capture_error: str | None = None

    # ------------------------------------------------------------ the host's view
    def clock(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s

    def energy_exact(self, t: float) -> float:
        """Joules drawn up to time t (idle everywhere, load inside busy intervals)."""
        busy = sum(max(0.0, min(b, t) - a) for a, b in self.busy)
        return self.idle_w * t + (self.load_w - self.idle_w) * busy

    def read_j(self) -> float:
        """The counter: the energy at the last step before now."""
        self.reads += 1
        self.now += self.read_s
        last_step = math.floor(self.now / self.step_s) * self.step_s
        return self.energy_exact(last_step)

    # ------------------------------------------------------------ Batches
    def start(self) -> None:
        self._t0 = max(self.now, self.gpu_free_at)
        self._marks: list[float] = []

    def enqueue(self) -> int:
        if self.full_queue_blocks:  # as a launch blocks when the driver's queue is full
            self.now = max(self.now, self.gpu_free_at - self.batch_s)
        self.now += self.enqueue_s
        begin = max(self.now, self.gpu_free_at)
        self.busy.append((begin, begin + self.batch_s))
        self.gpu_free_at = begin + self.batch_s
        return self.per_batch

    def mark(self) -> float:
        return self.gpu_free_at

    def reached(self, mark: float) -> bool:
        return mark <= self.now

    def wait(self, mark: float) -> float:
        self.now = max(self.now, mark)
        return mark - self._t0

    def finish(self) -> float:
        self.now = max(self.now, self.gpu_free_at)
        return self.gpu_free_at - self._t0
