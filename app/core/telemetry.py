"""NVML telemetry and run windows as the telemetry view reads them, free of Qt.

:class:`TelemetryBuffer` keeps the samples in numpy buffers that grow with the samples
(doubling, up to a capacity; then a ring), so memory follows the data, never the number
of GPUs a recording names:
one float column per numeric field (a null or missing field is NaN) and one integer
column of bits of the clock-event reasons that count as slowdowns (the one rule is
:mod:`gemmscope.kernels.protocol.throttle`; the others are only counted). :class:`RunWindows`
turns ``run_start`` and the run's ``result``/``error`` into time intervals. Times are
session times: after a runner restart (a second ``session`` header, ``t`` from zero
again) the store adds an offset, so the timeline keeps going forward as in replay
(:func:`gemmscope.app.core.replay.timeline`).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from ...kernels.ladder.shape import Shape, shape_of
from ...kernels.protocol.throttle import is_slowdown, slowdowns

CLOCK_FIELDS = ("sm_clock_mhz", "mem_clock_mhz")
POWER_FIELDS = ("power_w", "power_limit_w")
GPM_FIELDS = ("sm_occupancy_pct", "sm_util_pct", "tensor_util_pct", "dram_bw_util_pct",
              "fp32_util_pct")
TELEMETRY_FIELDS = (*CLOCK_FIELDS, *POWER_FIELDS, "temp_c", "gpu_util_pct", "energy_j",
                    *GPM_FIELDS)
MAX_REASONS = 62  # distinct reason names one buffer tells apart (bits of an int64)


def _number(value: Any) -> float:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok else np.nan


class TelemetryBuffer:
    """NVML samples in numpy buffers that grow as they fill, up to ``capacity`` samples
    (then a ring); a missing field is NaN."""

    FIRST_SIZE = 16  # samples allocated at the first one; doubled as it fills

    def __init__(self, capacity: int = 200_000):  # about an hour at the default 50 Hz
        self.capacity = capacity
        self._size = 0  # samples the arrays hold room for (grows to ``capacity``)
        self._t = np.zeros(0)
        self._fields = {name: np.full(0, np.nan) for name in TELEMETRY_FIELDS}
        self._reasons = np.zeros(0, dtype=np.int64)
        self.reason_bits: dict[str, int] = {}  # reason name -> its bit, in order first seen
        self.count = 0
        # clock-event reason -> samples it was in: slowdowns (drawn), and the others
        self.reasons_seen: dict[str, int] = {}
        self.other_reasons_seen: dict[str, int] = {}
        self.power_kind: str | None = None  # of the latest sample that said
        self.last_t = 0.0

    def _grow(self) -> None:
        """Room for more samples: twice as much, at most ``capacity`` (arrays handed out
        before keep their samples: they are copies of what never changes)."""
        size = min(self.capacity, max(self.FIRST_SIZE, 2 * self._size))

        def grown(arr: np.ndarray, fill: float) -> np.ndarray:
            out = np.full(size, fill, dtype=arr.dtype)
            out[: self._size] = arr
            return out

        self._t = grown(self._t, 0.0)
        self._fields = {name: grown(arr, np.nan) for name, arr in self._fields.items()}
        self._reasons = grown(self._reasons, 0)
        self._size = size

    def append(self, ev: dict[str, Any], t: float | None = None) -> None:
        """Add one ``telemetry`` event; ``t`` is its session time (default: its ``t``)."""
        if self.count >= self._size and self._size < self.capacity:
            self._grow()
        slot = self.count % self.capacity
        self._t[slot] = self.last_t = float(ev["t"] if t is None else t)
        for name, arr in self._fields.items():
            arr[slot] = _number(ev.get(name))
        mask = 0
        reasons = ev.get("reasons")
        for reason in reasons if isinstance(reasons, list) else ():
            reason = str(reason)
            if not is_slowdown(reason):  # not drawn: kernels.throttle, the one rule
                self.other_reasons_seen[reason] = self.other_reasons_seen.get(reason, 0) + 1
                continue
            bit = self.reason_bits.get(reason)
            if bit is None and len(self.reason_bits) < MAX_REASONS:
                bit = self.reason_bits[reason] = len(self.reason_bits)
            if bit is not None:
                mask |= 1 << bit
            self.reasons_seen[reason] = self.reasons_seen.get(reason, 0) + 1
        self._reasons[slot] = mask
        if isinstance(ev.get("power_kind"), str):
            self.power_kind = ev["power_kind"]
        self.count += 1

    def _order(self) -> Any:
        n = min(self.count, self.capacity)
        if self.count <= self.capacity:
            return slice(0, n)
        start = self.count % self.capacity
        return np.r_[start:self.capacity, 0:start]

    def _read(self, arr: np.ndarray) -> np.ndarray:
        out = arr[self._order()]
        out.flags.writeable = False  # a view of the buffer until it wraps: read only
        return out

    def times(self) -> np.ndarray:
        return self._read(self._t)

    def arrays(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(t, values of ``name``) in arrival order, read-only (views until the ring wraps).

        Samples already stored never change, so a plot may keep these arrays."""
        return self._read(self._t), self._read(self._fields[name])

    def has_values(self, name: str) -> bool:
        """Whether any sample has a number for ``name`` (null-only fields draw nothing)."""
        return bool(np.isfinite(self._fields[name][: min(self.count, self.capacity)]).any())

    def latest(self, name: str) -> float | None:
        """The newest non-null value of ``name``."""
        _, values = self.arrays(name)
        finite = values[np.isfinite(values)]
        return float(finite[-1]) if len(finite) else None

    def reason_intervals(self, reason: str) -> np.ndarray:
        """(n, 2) array of [start, end) session times where ``reason`` was active.

        A sample holds until the next one; the last sample holds for the median spacing
        of the samples (zero with a single sample)."""
        bit = self.reason_bits.get(reason)
        t = self.times()
        if bit is None or len(t) == 0:
            return np.zeros((0, 2))
        active = ((self._read(self._reasons) >> bit) & 1).astype(bool)
        edges = np.diff(np.r_[0, active.astype(np.int8), 0])
        starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)
        step = float(np.median(np.diff(t))) if len(t) > 1 else 0.0
        t_end = np.r_[t[1:], t[-1] + step]  # when each sample stops holding
        return np.column_stack([t[starts], t_end[ends - 1]])


class RunEnd(StrEnum):
    RESULT = "result"
    ERROR = "error"
    STOPPED = "stopped"  # stopped by the user, or the runner restarted with no answer
    RUNNING = "running"  # not finished yet


@dataclass(frozen=True, slots=True)
class RunWindow:
    """One run's time on the GPU: from its ``run_start`` to its ``result`` or ``error``."""

    run_id: Any
    level: str
    shape: Shape | None
    start_s: float
    end_s: float
    end: RunEnd
    throttled: tuple[str, ...] = ()
    verified: bool = True  # False: a result that failed verification

    def label(self) -> str:
        return self.level + (f" {self.shape}" if self.shape is not None else "")


class RunWindows:
    """Run windows of a session, in the order runs started; the open one last."""

    def __init__(self) -> None:
        self.closed: list[RunWindow] = []
        self._open: dict[str, RunWindow] = {}  # key: the run's id, level and shape

    @staticmethod
    def _key(ev: dict[str, Any]) -> str:
        return repr((ev.get("id"), ev.get("level"), shape_of(ev)))

    def start(self, ev: dict[str, Any], t: float) -> None:
        self._open[self._key(ev)] = RunWindow(ev.get("id"), str(ev.get("level")),
                                              shape_of(ev), t, t, RunEnd.RUNNING)

    def finish(self, ev: dict[str, Any], t: float, end: RunEnd) -> bool:
        """Close the run this ``result``/``error``/``info`` belongs to; False if none."""
        window = self._open.pop(self._key(ev), None)
        if window is None:
            return False
        throttled = ev.get("throttled") if end is RunEnd.RESULT else None
        reasons = slowdowns(throttled) if isinstance(throttled, list) else ()
        verified = ev.get("verified") is not False if end is RunEnd.RESULT else True
        self.closed.append(RunWindow(window.run_id, window.level, window.shape,
                                     window.start_s, max(t, window.start_s), end, reasons,
                                     verified))
        return True

    def abandon(self, t: float) -> None:
        """A new runner started: runs still open never get an answer."""
        for window in self._open.values():
            self.closed.append(RunWindow(window.run_id, window.level, window.shape,
                                         window.start_s, max(t, window.start_s),
                                         RunEnd.STOPPED))
        self._open.clear()

    def all(self, now_s: float) -> list[RunWindow]:
        """Closed windows, then open ones drawn up to ``now_s``."""
        running = [RunWindow(w.run_id, w.level, w.shape, w.start_s, max(now_s, w.start_s),
                             RunEnd.RUNNING) for w in self._open.values()]
        return self.closed + running

