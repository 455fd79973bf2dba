"""NVML telemetry and run windows as the telemetry view reads them, free of Qt.

:class:`TelemetryBuffer` keeps the samples in columns (numpy arrays that start small and
double as they fill, a ring once at ``max_samples``): one float column per numeric field
(a null field is NaN) and one integer column of bits of the clock-event reasons that
count as slowdowns (the one rule is :mod:`gemmscope.kernels.protocol.throttle`; the
others are only counted). A live sample is appended as it comes; a recording's samples
come as blocks of its columns and are copied in whole. :class:`RunWindows` turns
``run_start`` and the run's ``result``/``error`` into time intervals. Times are session
times (``kernels.protocol.timeline`` joins runner restarts).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from ...kernels import protocol as rec
from ...kernels.ladder import Shape
from ...kernels.protocol import (
    FIELD_INDEX,
    TELEMETRY_FIELDS,
    Mode,
    TelemetryBlock,
    is_slowdown,
)
from ...kernels.protocol import GPM_FIELDS as GPM_FIELDS  # the views read it here

MAX_REASONS = 62  # distinct reason names one buffer tells apart (bits of an int64)
MAX_SAMPLES = 2_000_000  # about 11 hours at the default 50 Hz; then a ring
_INITIAL = 16  # samples of room at first; doubled as they come (1000 GPUs cost little)


class TelemetryBuffer:
    """NVML samples in growing columns (a ring once full); a missing field is NaN."""

    def __init__(self, max_samples: int = MAX_SAMPLES):
        self.max_samples = max_samples
        self.capacity = min(_INITIAL, max_samples)
        self._t = np.empty(self.capacity)
        self._fields = np.empty((len(TELEMETRY_FIELDS), self.capacity))
        self._reasons = np.zeros(self.capacity, dtype=np.int64)
        self.reason_bits: dict[str, int] = {}  # reason name -> its bit, in order first seen
        self.count = 0
        # clock-event reason -> samples it was in: slowdowns (drawn), and the others
        self.reasons_seen: dict[str, int] = {}
        self.other_reasons_seen: dict[str, int] = {}
        self.power_kind: str | None = None  # of the latest sample that said
        self.last_t = 0.0

    def _room(self, more: int) -> None:
        """Grow the columns to hold ``more`` samples after these (up to max_samples)."""
        need = min(self.count + more, self.max_samples)
        if need <= self.capacity or self.count > self.capacity:
            return
        capacity = self.capacity
        while capacity < need:
            capacity = min(capacity * 2, self.max_samples)
        n = self.count
        t, fields, reasons = self._t, self._fields, self._reasons
        self._t = np.empty(capacity)
        self._fields = np.empty((len(TELEMETRY_FIELDS), capacity))
        self._reasons = np.zeros(capacity, dtype=np.int64)
        self._t[:n], self._fields[:, :n], self._reasons[:n] = t[:n], fields[:, :n], reasons[:n]
        self.capacity = capacity

    def _mask(self, reasons: tuple[str, ...] | list[str] | None, times: int = 1) -> int:
        mask = 0
        for reason in reasons or ():
            if not is_slowdown(reason):  # not drawn: kernels.throttle, the one rule
                self.other_reasons_seen[reason] = self.other_reasons_seen.get(reason, 0) + times
                continue
            bit = self.reason_bits.get(reason)
            if bit is None and len(self.reason_bits) < MAX_REASONS:
                bit = self.reason_bits[reason] = len(self.reason_bits)
            if bit is not None:
                mask |= 1 << bit
            self.reasons_seen[reason] = self.reasons_seen.get(reason, 0) + times
        return mask

    def append(self, ev: rec.Telemetry, t: float | None = None) -> None:
        """Add one sample; ``t`` is its session time (default: its ``t``)."""
        self._room(1)
        slot = self.count % self.capacity
        self._t[slot] = self.last_t = float(ev.t if t is None else t)
        for i, name in enumerate(TELEMETRY_FIELDS):
            value = getattr(ev, name)
            self._fields[i, slot] = np.nan if value is None else value
        self._reasons[slot] = self._mask(ev.reasons)
        if ev.power_kind is not None:
            self.power_kind = ev.power_kind
        self.count += 1

    def extend(self, block: TelemetryBlock) -> None:
        """Add a block of a recording's samples, in one copy per column."""
        n = block.stop - block.start
        if n <= 0:
            return
        cols, lo, hi = block.columns, block.start, block.stop
        if self.count + n > self.capacity:
            self._room(n)
        if self.count + n > self.capacity:  # the ring is full: sample by sample
            for i in range(lo, hi):
                self._put(cols, i)
            return
        codes = cols.reasons[lo:hi]
        counts = np.bincount(codes, minlength=len(cols.reason_sets))
        masks = np.array([self._mask(names, int(c)) if c else 0
                          for names, c in zip(cols.reason_sets, counts, strict=False)],
                         dtype=np.int64)
        a, b = self.count, self.count + n
        self._t[a:b] = cols.t[lo:hi]
        self._fields[:, a:b] = cols.values[:, lo:hi]
        self._reasons[a:b] = masks[codes]
        kinds = [k for k in (cols.power_kinds[c] for c in np.unique(cols.kinds[lo:hi]))
                 if k is not None]
        if kinds:
            self.power_kind = cols.power_kinds[int(cols.kinds[hi - 1])] or kinds[-1]
        self.last_t = float(cols.t[hi - 1])
        self.count = b

    def _put(self, cols: Any, i: int) -> None:
        slot = self.count % self.capacity
        self._t[slot] = self.last_t = float(cols.t[i])
        self._fields[:, slot] = cols.values[:, i]
        self._reasons[slot] = self._mask(cols.reason_sets[int(cols.reasons[i])])
        kind = cols.power_kinds[int(cols.kinds[i])]
        if kind is not None:
            self.power_kind = kind
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
        """(t, values of ``name``) in arrival order, read-only.

        Samples already stored never change, so a plot may keep these arrays (they are
        views of columns that are replaced, not written over, when they grow)."""
        return self._read(self._t), self._read(self._fields[FIELD_INDEX[name]])

    def has_values(self, name: str) -> bool:
        """Whether any sample has a number for ``name`` (null-only fields draw nothing)."""
        n = min(self.count, self.capacity)
        return bool(np.isfinite(self._fields[FIELD_INDEX[name], :n]).any())

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
    mode: Mode = Mode.BURST  # a level runs at one shape in either

    def label(self) -> str:
        return self.level + (f" {self.shape}" if self.shape is not None else "")


def runs_span(windows: list[RunWindow], level: str, shape: Shape | None, mode: Mode
              ) -> tuple[float, float] | None:
    """The start and end of ``level``'s newest run at ``shape`` in ``mode``: the run whose
    result a caption about that level shows (a recording updated by ``record --update``
    holds older runs of the level an hour or more before, with the whole ladder between);
    None where the session has none."""
    mine = [w for w in windows if (w.level, w.shape, w.mode) == (level, shape, mode)]
    if not mine:
        return None
    newest = max(mine, key=lambda w: w.start_s)
    return newest.start_s, newest.end_s


class RunWindows:
    """Run windows of a session, in the order runs started; the open one last."""

    def __init__(self) -> None:
        self.closed: list[RunWindow] = []
        self._open: dict[str, RunWindow] = {}  # key: the run's id, level and shape

    @staticmethod
    def _key(ev: rec.Run | rec.Where) -> str:
        return repr((ev.id, ev.level, ev.shape))

    def start(self, ev: rec.RunStart, t: float) -> None:
        self._open[self._key(ev)] = RunWindow(ev.id, ev.level, ev.shape, t, t,
                                              RunEnd.RUNNING, mode=ev.mode)

    def finish(self, ev: rec.Result | rec.Error | rec.Info, t: float, end: RunEnd) -> bool:
        """Close the run this ``result``/``error``/``info`` belongs to; False if none."""
        window = self._open.pop(self._key(ev), None)
        if window is None:
            return False
        result = ev if isinstance(ev, rec.Result) else None
        reasons = (result.throttled or ()) if result is not None else ()
        verified = result.verified if result is not None else True
        self.closed.append(RunWindow(window.run_id, window.level, window.shape,
                                     window.start_s, max(t, window.start_s), end, reasons,
                                     verified, window.mode))
        return True

    def abandon(self, t: float) -> None:
        """A new runner started: runs still open never get an answer."""
        for window in self._open.values():
            self.closed.append(RunWindow(window.run_id, window.level, window.shape,
                                         window.start_s, max(t, window.start_s),
                                         RunEnd.STOPPED, mode=window.mode))
        self._open.clear()

    def all(self, now_s: float) -> list[RunWindow]:
        """Closed windows, then open ones drawn up to ``now_s``."""
        running = [RunWindow(w.run_id, w.level, w.shape, w.start_s, max(now_s, w.start_s),
                             RunEnd.RUNNING, mode=w.mode) for w in self._open.values()]
        return self.closed + running

