"""The session store: everything the views show, built from events, free of Qt.

Live runs and replays feed the same store through :meth:`SessionStore.handle` (the one
event-sink interface); views read it. The store records which parts changed since the
views last looked (:meth:`take_changes`), so a view refresh can be coalesced into one
redraw however many events arrived in between.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

import numpy as np

from gemmscope.app.core.counters import NCU, Counters
from gemmscope.app.core.levels import LevelInfo, catalog_from_header, reference_id
from gemmscope.app.core.shape import Shape, shape_of
from gemmscope.app.core.telemetry import (
    TELEMETRY_FIELDS,
    RunEnd,
    RunWindow,
    RunWindows,
    TelemetryBuffer,
)

TELEMETRY_UNAVAILABLE = "telemetry unavailable"  # how the runner's info message begins
__all__ = ["TELEMETRY_FIELDS", "RunWindow", "Shape", "TelemetryBuffer"]


class EventSink(Protocol):
    """Anything that takes validated protocol events, one at a time."""

    def handle(self, event: dict[str, Any]) -> None: ...


class Change(StrEnum):
    HEADER = "header"  # a new session header (levels, device)
    LADDER = "ladder"  # results changed (ladder table, bar chart)
    STREAM = "stream"  # per-repeat stream of the current run
    SWEEP = "sweep"  # results that belong to a size sweep
    MESSAGES = "messages"  # errors and info messages
    RUN = "run"  # a run started or finished
    TELEMETRY = "telemetry"  # NVML samples
    COUNTERS = "counters"  # profiler counters of a level (ncu)


@dataclass(frozen=True, slots=True)
class Result:
    level: str
    shape: Shape
    dtype: str
    precision: str
    median_ms: float
    tflops: float
    verified: bool
    rel_err: float | None
    repeats: int
    reference: str | None
    reference_tflops: float | None
    pct_of_reference: float | None
    peak_tflops: float | None
    pct_of_peak: float | None
    t: float
    tol: float | None = None
    variant: str | None = None
    regs: int | None = None
    smem_bytes: int | None = None
    sm_clock_mhz_avg: float | None = None
    sm_clock_mhz_min: float | None = None
    energy_j: float | None = None  # per GEMM
    avg_power_w: float | None = None
    gflop_per_j: float | None = None
    throttled: tuple[str, ...] = ()  # clock-event reasons seen during the run
    deepgemm_diff: float | None = None  # 1 - 2 sum(xy) / sum(x^2 + y^2), C against float64

    @classmethod
    def from_event(cls, ev: dict[str, Any], precision: str) -> Result:
        return cls(
            level=ev["level"], shape=Shape(ev["M"], ev["N"], ev["K"]), dtype=ev["dtype"],
            precision=str(ev.get("precision") or precision), median_ms=float(ev["median_ms"]),
            tflops=float(ev["tflops"]), verified=bool(ev["verified"]), rel_err=ev["rel_err"],
            repeats=int(ev["repeats"]), reference=ev.get("reference"),
            reference_tflops=_num(ev.get("reference_tflops")),
            pct_of_reference=_num(ev.get("pct_of_reference")),
            peak_tflops=_num(ev.get("peak_tflops")), pct_of_peak=_num(ev.get("pct_of_peak")),
            t=float(ev["t"]), tol=_num(ev.get("tol")),
            variant=ev.get("variant") if isinstance(ev.get("variant"), str) else None,
            regs=_int(ev.get("regs")), smem_bytes=_int(ev.get("smem_bytes")),
            sm_clock_mhz_avg=_num(ev.get("sm_clock_mhz_avg")),
            sm_clock_mhz_min=_num(ev.get("sm_clock_mhz_min")),
            energy_j=_num(ev.get("energy_j")), avg_power_w=_num(ev.get("avg_power_w")),
            gflop_per_j=_num(ev.get("gflop_per_j")),
            throttled=tuple(str(x) for x in ev.get("throttled") or ()),
            deepgemm_diff=_num(ev.get("deepgemm_diff")))


@dataclass(frozen=True, slots=True)
class Message:
    """An error or info line for the user, tied to its run where there was one."""

    kind: str  # error kind, or "info"
    text: str
    level: str | None
    shape: Shape | None
    t: float
    is_error: bool

    def describe(self) -> str:
        where = ""
        if self.level is not None:
            where = self.level + (f" at {self.shape}" if self.shape is not None else "")
        elif self.shape is not None:
            where = str(self.shape)
        head = f"{self.kind}" + (f" ({where})" if where else "")
        return f"{head}: {self.text}"


def _num(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return _finite(float(value)) if ok else None


def _finite(value: float) -> float | None:
    """A derived number that overflowed (100 × 1e308 TFLOPS) is not a number: n/a."""
    return value if math.isfinite(value) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


_shape_of = shape_of


class RepeatStream:
    """Per-repeat TFLOPS of one run in a fixed numpy buffer (a ring once it is full)."""

    def __init__(self, capacity: int = 4096):
        self.capacity = capacity
        self._i = np.zeros(capacity, dtype=np.float64)
        self._tflops = np.zeros(capacity, dtype=np.float64)
        self.count = 0  # repeats seen in this run
        self.level: str | None = None
        self.shape: Shape | None = None
        self.expected = 0  # repeats the run announced (0: unknown)

    def reset(self, level: str | None = None, shape: Shape | None = None,
              expected: int = 0) -> None:
        self.count = 0
        self.level, self.shape, self.expected = level, shape, expected

    def append(self, i: int, tflops: float) -> None:
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


class SessionStore:
    """State of one session (live or replayed). Feed it events; views read it."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        # views that keep their own copies (the messages list) start again when it changes
        self.generation = getattr(self, "generation", -1) + 1
        self.header: dict[str, Any] | None = None
        self.levels: list[LevelInfo] = catalog_from_header(None)
        self.results: list[Result] = []
        self._latest: dict[str, Result] = {}
        self._latest_at: dict[tuple[str, Shape], Result] = {}
        self._shape_levels: dict[Shape, set[str]] = {}  # ladder levels measured per shape
        self.messages: list[Message] = []
        self.stream = RepeatStream()
        self.telemetry = TelemetryBuffer()
        self.runs = RunWindows()
        self.telemetry_note: str | None = None  # "telemetry unavailable: ..." from an info
        self.counters: list[Counters] = []  # every counters event, in order
        self.t_offset_s = 0.0  # added to t after a runner restart (timeline joined)
        self.last_t_s = 0.0  # latest session time seen
        self.running: dict[str, Any] | None = None  # the run_start of the run in progress
        self.event_count = 0
        self.restarts = 0  # later session headers: the runner was restarted
        self._changes: set[Change] = set(Change)

    # ------------------------------------------------------------------ input
    def handle(self, event: dict[str, Any]) -> None:
        self.event_count += 1
        kind = event["type"]
        if kind == "session" and self.header is not None:
            self.runs.abandon(self.last_t_s)
            self.t_offset_s = self.last_t_s  # the new runner's t starts from zero
        t = event.get("t")
        if isinstance(t, int | float) and not isinstance(t, bool):
            self.last_t_s = max(self.last_t_s, self.t_offset_s + float(t))
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(event)

    def _on_session(self, ev: dict[str, Any]) -> None:
        if self.header is None:
            self.header = ev
            self.levels = catalog_from_header(ev)
        else:
            self.restarts += 1
        self.running = None
        self._changes.update((Change.HEADER, Change.LADDER, Change.RUN))

    def session_t(self, ev: dict[str, Any]) -> float:
        """The event's time on the session's timeline (runner restarts joined)."""
        return self.t_offset_s + float(ev["t"])

    def _on_run_start(self, ev: dict[str, Any]) -> None:
        self.running = ev
        self.runs.start(ev, self.session_t(ev))
        self._changes.add(Change.TELEMETRY)
        self.stream.reset(ev["level"], _shape_of(ev), int(ev["repeats"]))
        self._changes.update((Change.STREAM, Change.RUN))

    def _on_repeat(self, ev: dict[str, Any]) -> None:
        shape = _shape_of(ev)
        if self.stream.level != ev["level"] or self.stream.shape != shape:
            self.stream.reset(ev["level"], shape)
        self.stream.append(ev["i"], float(ev["tflops"]))
        self._changes.add(Change.STREAM)

    def _on_result(self, ev: dict[str, Any]) -> None:
        level = self.level(ev["level"])
        precision = level.precision if level is not None else "?"
        r = Result.from_event(ev, precision)
        self.results.append(r)
        if self.runs.finish(ev, self.session_t(ev), RunEnd.RESULT):
            self._changes.add(Change.TELEMETRY)
        # indexes, so views read the latest numbers without scanning every result
        self._latest[r.level] = r
        self._latest_at[(r.level, r.shape)] = r
        if level is not None and not level.is_reference:
            levels = self._shape_levels.pop(r.shape, set())
            levels.add(r.level)
            self._shape_levels[r.shape] = levels  # re-inserted: most recent last
        self._changes.update((Change.LADDER, Change.SWEEP))

    def _on_error(self, ev: dict[str, Any]) -> None:
        self.messages.append(Message(ev["kind"], ev["message"], ev.get("level"),
                                     _shape_of(ev), float(ev["t"]), True))
        self._changes.add(Change.MESSAGES)
        if self.runs.finish(ev, self.session_t(ev), RunEnd.ERROR):
            self._changes.add(Change.TELEMETRY)

    def _on_info(self, ev: dict[str, Any]) -> None:
        self.messages.append(Message("info", ev["message"], ev.get("level"), _shape_of(ev),
                                     float(ev["t"]), False))
        self._changes.add(Change.MESSAGES)
        if str(ev["message"]).startswith(TELEMETRY_UNAVAILABLE):
            self.telemetry_note = str(ev["message"])
            self._changes.add(Change.TELEMETRY)
        if "id" in ev and self.runs.finish(ev, self.session_t(ev), RunEnd.STOPPED):
            self._changes.add(Change.TELEMETRY)  # a run stopped by the user

    def _on_telemetry(self, ev: dict[str, Any]) -> None:
        self.telemetry.append(ev, self.session_t(ev))
        self._changes.add(Change.TELEMETRY)

    def _on_counters(self, ev: dict[str, Any]) -> None:
        self.counters.append(Counters.from_event(ev))
        self._changes.add(Change.COUNTERS)

    def counters_for(self, level_id: str, tool: str = NCU) -> Counters | None:
        """The latest counters the tool measured for the level in this session."""
        for c in reversed(self.counters):
            if c.level == level_id and c.tool == tool:
                return c
        return None

    def telemetry_status(self) -> tuple[bool, str]:
        """(available, reason): the header's ``telemetry`` entry, or the runner's
        "telemetry unavailable: <reason>" message, whichever says it is unavailable."""
        if self.telemetry_note is not None:
            return False, self.telemetry_note[len(TELEMETRY_UNAVAILABLE):].strip(" :")
        info = (self.header or {}).get("telemetry")
        if not isinstance(info, dict):
            return self.telemetry.count > 0, "the recording says nothing about telemetry"
        return bool(info.get("available")), str(info.get("reason") or "")

    def run_windows(self) -> list[RunWindow]:
        """Every run's window on the session timeline; a run in progress ends now."""
        return self.runs.all(self.last_t_s)

    def sm_clock_max_mhz(self) -> float | None:
        device = (self.header or {}).get("device")
        return _num(device.get("sm_clock_max_mhz")) if isinstance(device, dict) else None

    def _on_done(self, ev: dict[str, Any]) -> None:
        if self.running is not None and ev.get("id") == self.running.get("id"):
            self.running = None
            self._changes.add(Change.RUN)

    def take_changes(self) -> set[Change]:
        changes, self._changes = self._changes, set()
        return changes

    def touch(self, *changes: Change) -> None:
        self._changes.update(changes)

    # ----------------------------------------------------------------- queries
    def level(self, level_id: str) -> LevelInfo | None:
        for lv in self.levels:
            if lv.id == level_id:
                return lv
        return None

    def ladder_levels(self) -> list[LevelInfo]:
        return [lv for lv in self.levels if not lv.is_reference]

    def latest(self, level_id: str) -> Result | None:
        return self._latest.get(level_id)

    def ladder_shape(self) -> Shape | None:
        """The shape most ladder levels have a result at (the latest such on a tie)."""
        best: Shape | None = None
        for shape, levels in self._shape_levels.items():  # oldest to most recent
            if best is None or len(levels) >= len(self._shape_levels[best]):
                best = shape
        return best

    def ladder_result(self, level_id: str) -> Result | None:
        """The level's latest result at the ladder shape, else its latest at any shape."""
        shape = self.ladder_shape()
        found = self._latest_at.get((level_id, shape)) if shape is not None else None
        return found if found is not None else self.latest(level_id)

    def reference_result(self, result: Result) -> Result | None:
        """The latest cuBLAS result of the same precision at the same shape."""
        ref = result.reference or reference_id(result.precision)
        return self._latest_at.get((ref, result.shape))

    def pct_of_reference(self, result: Result) -> float | None:
        if result.pct_of_reference is not None:
            return result.pct_of_reference
        ref = self.reference_result(result)
        if ref is not None and ref.tflops > 0:
            return _finite(100.0 * result.tflops / ref.tflops)
        if result.reference_tflops:
            return _finite(100.0 * result.tflops / result.reference_tflops)
        return None

    def peak_tflops(self, precision: str) -> float | None:
        device = (self.header or {}).get("device") or {}
        peaks = device.get("peak_tflops") or {}
        return _num(peaks.get(precision))

    def pct_of_peak(self, result: Result) -> float | None:
        if result.pct_of_peak is not None:
            return result.pct_of_peak
        peak = result.peak_tflops or self.peak_tflops(result.precision)
        return _finite(100.0 * result.tflops / peak) if peak else None

    def device_name(self) -> str | None:
        device = (self.header or {}).get("device")
        return device.get("name") if isinstance(device, dict) else None

    def sweeps(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per level with results at two or more N: (N, TFLOPS), latest per shape, by N."""
        by_level: dict[str, dict[Shape, Result]] = {}
        for (level_id, shape), r in self._latest_at.items():
            by_level.setdefault(level_id, {})[shape] = r
        out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for level_id, shapes in by_level.items():
            points = sorted((s.N, r.tflops) for s, r in shapes.items())
            if len({n for n, _ in points}) >= 2:
                arr = np.array(points, dtype=np.float64)
                out[level_id] = (arr[:, 0], arr[:, 1])
        return out
