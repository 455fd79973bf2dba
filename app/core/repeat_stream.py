"""The per-repeat stream of the run in progress, in a numpy buffer that grows with the
repeats (one per GPU of a session: memory follows the data). Free of Qt."""

from __future__ import annotations

import numpy as np

from ...kernels.ladder import Shape


class RepeatStream:
    """Per-repeat TFLOPS of one run in a numpy buffer that doubles as it fills, up to
    ``capacity`` (then a ring)."""

    FIRST_SIZE = 16

    def __init__(self, capacity: int = 4096):
        self.capacity = capacity
        self._i = np.zeros(0, dtype=np.float64)
        self._tflops = np.zeros(0, dtype=np.float64)
        self.count = 0  # repeats seen in this run
        self.level: str | None = None
        self.shape: Shape | None = None
        self.expected = 0  # repeats the run announced (0: unknown)

    @classmethod
    def sized(cls, level: str | None, shape: Shape | None, expected: int) -> RepeatStream:
        """A stream for one run of ``expected`` repeats (0: unknown): as large as the run
        (a session keeps one per level, shape and mode), at most the default."""
        stream = cls(capacity=min(4096, max(64, int(expected))))
        stream.reset(level, shape, expected)
        return stream

    def reset(self, level: str | None = None, shape: Shape | None = None,
              expected: int = 0) -> None:
        self.count = 0
        self.level, self.shape, self.expected = level, shape, expected

    def append(self, i: int, tflops: float) -> None:
        size = len(self._i)
        if self.count >= size and size < self.capacity:
            grown = min(self.capacity, max(self.FIRST_SIZE, 2 * size))
            self._i = np.concatenate([self._i, np.zeros(grown - size)])
            self._tflops = np.concatenate([self._tflops, np.zeros(grown - size)])
        slot = self.count % self.capacity
        self._i[slot] = i
        self._tflops[slot] = tflops
        self.count += 1

    def arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(repeat index, TFLOPS) in arrival order; copies, safe to keep."""
        n = min(self.count, self.capacity)
        if self.count <= self.capacity:
            return self._i[:n].copy(), self._tflops[:n].copy()
        start = self.count % self.capacity
        order = np.r_[start:self.capacity, 0:start]
        return self._i[order], self._tflops[order]
