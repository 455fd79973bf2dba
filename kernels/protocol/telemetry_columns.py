"""NVML samples in columns: one growing float array per numeric field (a null field is
NaN), the clock-event reasons and the power kind as small codes into tables of the
distinct values seen. A recording's samples are read into these (``recording``), and the
store's telemetry keeps them the same way; no dict or record per sample is kept.

Arrays start small and double as they fill, so a recording that names a thousand GPUs
and has a few samples allocates a few kilobytes, not a buffer per GPU.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .events import TELEMETRY_FIELDS
from .records import Telemetry

FIELD_INDEX = {name: i for i, name in enumerate(TELEMETRY_FIELDS)}
_row = operator.attrgetter("t", *TELEMETRY_FIELDS)
INITIAL = 256


class TelemetryColumns:
    """Samples of one GPU, in arrival order."""

    def __init__(self, capacity: int = INITIAL) -> None:
        self.count = 0
        self.t = np.empty(capacity)
        self.values = np.empty((len(TELEMETRY_FIELDS), capacity))
        self.reasons = np.empty(capacity, dtype=np.int32)  # index into reason_sets
        self.kinds = np.empty(capacity, dtype=np.int8)  # index into power_kinds
        self.reason_sets: list[tuple[str, ...] | None] = []
        self.power_kinds: list[str | None] = []
        self._reason_code: dict[tuple[str, ...] | None, int] = {}
        self._kind_code: dict[str | None, int] = {}

    def __len__(self) -> int:
        return self.count

    def _room(self, more: int) -> None:
        need = self.count + more
        capacity = len(self.t)
        if need <= capacity:
            return
        while capacity < need:
            capacity = max(INITIAL, capacity * 2)
        n = self.count
        t, values, reasons, kinds = self.t, self.values, self.reasons, self.kinds
        self.t = np.empty(capacity)
        self.values = np.empty((len(TELEMETRY_FIELDS), capacity))
        self.reasons = np.empty(capacity, dtype=np.int32)
        self.kinds = np.empty(capacity, dtype=np.int8)
        self.t[:n], self.values[:, :n] = t[:n], values[:, :n]
        self.reasons[:n], self.kinds[:n] = reasons[:n], kinds[:n]

    def fit(self) -> None:
        """Give back the room not filled (once a recording is read whole)."""
        n = self.count
        if len(self.t) > n:
            self.t = self.t[:n].copy()
            self.values = self.values[:, :n].copy()
            self.reasons = self.reasons[:n].copy()
            self.kinds = self.kinds[:n].copy()

    def reason_code(self, reasons: Sequence[str] | None) -> int:
        key = None if reasons is None else tuple(reasons)
        code = self._reason_code.get(key)
        if code is None:
            code = self._reason_code[key] = len(self.reason_sets)
            self.reason_sets.append(key)
        return code

    def kind_code(self, kind: str | None) -> int:
        code = self._kind_code.get(kind)
        if code is None:
            if len(self.power_kinds) >= 127:  # a recording is data: few kinds exist
                return self.kind_code(None) if kind is not None else 0
            code = self._kind_code[kind] = len(self.power_kinds)
            self.power_kinds.append(kind)
        return code

    def add(self, samples: Sequence[Telemetry]) -> None:
        """Append samples (of this GPU), in order."""
        if not samples:
            return
        n, k = self.count, len(samples)
        self._room(k)
        rows = np.array([_row(s) for s in samples], dtype=np.float64)  # None -> NaN
        self.t[n:n + k] = rows[:, 0]
        self.values[:, n:n + k] = rows[:, 1:].T
        self.reasons[n:n + k] = [self.reason_code(s.reasons) for s in samples]
        self.kinds[n:n + k] = [self.kind_code(s.power_kind) for s in samples]
        self.count += k

    def column(self, name: str) -> np.ndarray:
        return self.values[FIELD_INDEX[name], :self.count]


@dataclass(frozen=True, slots=True, eq=False)
class TelemetryBlock:
    """Samples ``start`` to ``stop`` of one GPU's columns, in a recording's event list
    where those samples were (the replay delivers a block in parts, by time). Two blocks
    are equal when they hold the same samples (read from two copies of a file, say)."""

    device: int
    columns: TelemetryColumns
    start: int
    stop: int

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TelemetryBlock):
            return NotImplemented
        a, b = self.columns, other.columns
        mine, theirs = slice(self.start, self.stop), slice(other.start, other.stop)
        return (self.device == other.device and self.stop - self.start == other.stop - other.start
                and np.array_equal(a.t[mine], b.t[theirs])
                and np.array_equal(a.values[:, mine], b.values[:, theirs], equal_nan=True)
                and [a.reason_sets[c] for c in a.reasons[mine]]
                == [b.reason_sets[c] for c in b.reasons[theirs]]
                and [a.power_kinds[c] for c in a.kinds[mine]]
                == [b.power_kinds[c] for c in b.kinds[theirs]])

    __hash__ = None  # type: ignore[assignment]

    @property
    def t(self) -> float:
        return float(self.columns.t[self.start])

    @property
    def type(self) -> str:
        return "telemetry"

    @property
    def device_index(self) -> int:
        return self.device

    def times(self) -> np.ndarray:
        return self.columns.t[self.start:self.stop]

    def part(self, start: int, stop: int) -> TelemetryBlock:
        return TelemetryBlock(self.device, self.columns, start, stop)
