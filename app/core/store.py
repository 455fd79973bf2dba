"""The session store: everything the views show, built from events, free of Qt.

Live runs and replays feed the same store through :meth:`SessionStore.handle` (the one
event-sink interface); views read it. The store records which parts changed since the
views last looked (:meth:`take_changes`), so a view refresh can be coalesced into one
redraw however many events arrived in between.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, ClassVar

import numpy as np

from ...kernels.ladder.shape import Shape
from ...kernels.protocol import records as rec
from ...kernels.protocol.decoding import EventRecord
from ...kernels.protocol.events import TELEMETRY_FIELDS
from ...kernels.protocol.records import DeviceEntry, Mode
from ...kernels.protocol.telemetry_columns import TelemetryBlock
from ...kernels.results.rows import Result, ResultKey, Row, reference_key, resolved, result_key
from .counters import NCU, Counters
from .device_state import DeviceState, device_label
from .levels import LevelInfo, catalog_from_header
from .repeat_stream import RepeatStream
from .telemetry import RunEnd, RunWindow, RunWindows, TelemetryBuffer

# what the store takes: an event record, or a block of a recording's NVML samples
Item = EventRecord | TelemetryBlock

TELEMETRY_UNAVAILABLE = "telemetry unavailable"  # how the runner's info message begins
__all__ = ["TELEMETRY_FIELDS", "RepeatStream", "Result", "RunWindow", "Shape",
           "TelemetryBuffer"]


class Change(StrEnum):
    HEADER = "header"  # a new session header (levels, device)
    LADDER = "ladder"  # results changed (ladder table, bar chart)
    STREAM = "stream"  # per-repeat stream of the current run
    SWEEP = "sweep"  # results that belong to a size sweep
    MESSAGES = "messages"  # errors and info messages
    RUN = "run"  # a run started or finished
    TELEMETRY = "telemetry"  # NVML samples
    COUNTERS = "counters"  # profiler counters of a level (ncu)
    BUILD = "build"  # a compiled level variant: sources, SASS, resources (build events)


@dataclass(frozen=True, slots=True)
class Message:
    """An error or info line for the user, tied to its run where there was one."""

    kind: str  # error kind, or "info"
    text: str
    level: str | None
    shape: Shape | None
    t: float
    is_error: bool
    device: int | None = None  # the GPU, in a session of several

    def describe(self) -> str:
        where = ""
        if self.level is not None:
            where = self.level + (f" at {self.shape}" if self.shape is not None else "")
        elif self.shape is not None:
            where = str(self.shape)
        if self.device is not None:
            where = " ".join(filter(None, (where, f"on device {self.device}")))
        head = f"{self.kind}" + (f" ({where})" if where else "")
        return f"{head}: {self.text}"


class SessionStore:
    """State of one session (live or replayed). Feed it events; views read it."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        # views that keep their own copies (the messages list) start again when it changes
        self.generation = getattr(self, "generation", -1) + 1
        self.header: rec.Session | None = None
        self.levels: list[LevelInfo] = catalog_from_header(None)
        self.results: list[Result] = []
        self._by_key: dict[ResultKey, Result] = {}  # every mode and GPU
        self.messages: list[Message] = []
        # per GPU (protocol version 4; one, 0, in older files): stream, telemetry, run
        # windows, latest results. The views show ``device``'s (set_device)
        self.devices: list[DeviceEntry] = []  # the header's, then device events'
        self.device = 0
        self._per: dict[int, DeviceState] = {}
        self.telemetry_note: str | None = None  # "telemetry unavailable: ..." from an info
        self.counters: list[Counters] = []  # every counters event, in order
        # the latest source_counters event (per-SASS-line counters) of each level
        self.source_counters: dict[str, rec.SourceCounters] = {}
        # build events by (level, variant, params as sorted JSON), first seen first
        self.builds: dict[tuple[str, str, str], rec.Build] = {}
        self._variant_of: dict[str, str] = {}  # level -> variant of its latest result
        # level -> template parameters of its latest result (as builds' keys): a level may
        # pick its parameters per shape (the FP8 levels' tile width)
        self._params_of: dict[str, str] = {}
        self.last_t_s = 0.0  # latest session time seen
        self.event_count = 0
        self.restarts = 0  # restart events: the runner was restarted
        self._changes: set[Change] = set(Change)

    # ------------------------------------------------------------------ input
    def handle(self, event: Item) -> None:
        """Take one event record (or a block of samples); its ``t`` is on the session's
        time axis already (``kernels.protocol.timeline``). Types this store does not show
        are counted only."""
        if isinstance(event, TelemetryBlock):
            self.event_count += event.stop - event.start
            self._state(event.device).telemetry.extend(event)
            self.last_t_s = max(self.last_t_s, float(event.columns.t[event.stop - 1]))
            self._changes.add(Change.TELEMETRY)
            return
        self.event_count += 1
        if event.t > self.last_t_s:
            self.last_t_s = event.t
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(self, event)

    def _on_session(self, ev: rec.Session) -> None:
        if self.header is not None:  # a second header handed on unplaced: a restart
            self._on_restart(rec.Restart(t=ev.t, restarts=self.restarts + 1, runner=ev))
            return
        self.header = ev
        self.levels = catalog_from_header(ev)
        self.devices = ev.gpus()
        for state in self._per.values():
            state.running = None
        self._changes.update((Change.HEADER, Change.LADDER, Change.RUN))

    def _on_device(self, ev: rec.Joined) -> None:
        """A GPU that joined the session (a cluster worker seen after the header)."""
        self.devices.append(ev.entry())
        self._changes.update((Change.HEADER, Change.LADDER))

    def _on_restart(self, ev: rec.Restart) -> None:
        self.restarts += 1
        state = self._state(ev)
        state.runs.abandon(ev.t)
        state.running = None
        self.messages.append(Message("info", f"the runner was restarted ({self.restarts} "
                                     "so far)", None, None, ev.t, False))
        self._changes.update((Change.RUN, Change.MESSAGES, Change.TELEMETRY))

    def _on_run_start(self, ev: rec.RunStart) -> None:
        state = self._state(ev)
        state.running = ev
        state.runs.start(ev, ev.t)
        self._changes.add(Change.TELEMETRY)
        state.stream.reset(ev.level, ev.shape, ev.repeats)
        self._changes.update((Change.STREAM, Change.RUN))

    def _on_phase(self, ev: rec.Phase) -> None:
        if ev.phase != "window":
            return
        t, seconds = ev.t, ev.seconds or 0.0
        state = self._state(ev)
        state.open_trial = (ev.id, len(state.trial_spans))
        state.trial_spans.append((t, t + max(seconds, 0.0)))
        self._changes.add(Change.TELEMETRY)

    def _on_repeat(self, ev: rec.Repeat) -> None:
        state = self._state(ev)
        if state.open_trial is not None and state.open_trial[0] == ev.id:
            i = state.open_trial[1]
            state.trial_spans[i] = (state.trial_spans[i][0], ev.t)
            state.open_trial = None
            self._changes.add(Change.TELEMETRY)
        shape = ev.shape
        if state.stream.level != ev.level or state.stream.shape != shape:
            state.stream.reset(ev.level, shape)
        state.stream.append(ev.i, ev.tflops)
        self._changes.add(Change.STREAM)

    def _on_result(self, ev: rec.Result) -> None:
        level = self.level(ev.level)
        r = resolved(ev, level.precision if level is not None else None)
        self.results.append(r)
        if r.variant is not None:
            self._variant_of[r.level] = r.variant
            ran = r.params if r.params else (level.params if level is not None else None)
            self._params_of[r.level] = _params_key(ran)
        state = self._state(ev)
        if state.runs.finish(r, r.t, RunEnd.RESULT):
            self._changes.add(Change.TELEMETRY)
        # indexes, so views read the latest numbers without scanning every result; the
        # ladder, its charts and the sweep show burst results (sustained ones beside them)
        self._by_key[result_key(r)] = r
        self._changes.update((Change.LADDER, Change.SWEEP))
        if r.mode != Mode.BURST:
            return
        state.latest[r.level] = r
        state.latest_at[(r.level, r.shape)] = r
        if level is not None and not level.is_reference:
            levels = state.shape_levels.pop(r.shape, set())
            levels.add(r.level)
            state.shape_levels[r.shape] = levels  # re-inserted: most recent last
        self._changes.update((Change.LADDER, Change.SWEEP))

    def _on_error(self, ev: rec.Error) -> None:
        self.messages.append(Message(ev.kind, ev.message, ev.level, ev.shape, ev.t, True,
                                     self._device_of(ev)))
        self._changes.add(Change.MESSAGES)
        self._end_running(ev)
        if self._state(ev).runs.finish(ev, ev.t, RunEnd.ERROR):
            self._changes.add(Change.TELEMETRY)

    def _on_info(self, ev: rec.Info) -> None:
        self.messages.append(Message("info", ev.message, ev.level, ev.shape, ev.t, False,
                                     self._device_of(ev)))
        self._changes.add(Change.MESSAGES)
        if ev.message.startswith(TELEMETRY_UNAVAILABLE):
            self.telemetry_note = ev.message
            self._changes.add(Change.TELEMETRY)
        if ev.id is not None:
            if self._state(ev).runs.finish(ev, ev.t, RunEnd.STOPPED):
                self._changes.add(Change.TELEMETRY)  # a run stopped by the user
            self._end_running(ev)

    def _on_telemetry(self, ev: rec.Telemetry) -> None:
        self._state(ev).telemetry.append(ev)
        self._changes.add(Change.TELEMETRY)

    def _on_counters(self, ev: rec.Counters) -> None:
        self.counters.append(Counters.from_event(ev))
        self._changes.add(Change.COUNTERS)

    def _on_source_counters(self, ev: rec.SourceCounters) -> None:
        self.source_counters[ev.level] = ev
        self._changes.add(Change.COUNTERS)

    def _on_build(self, ev: rec.Build) -> None:
        params = _params_key(ev.params)
        self.builds[(ev.level, ev.variant, params)] = ev  # a restart's copy replaces
        self._changes.add(Change.BUILD)

    def build_for(self, level_id: str) -> rec.Build | None:
        """The level's build event: the variant and parameters its latest result ran,
        else that variant, else the first recorded; None where the session has none
        (recorded before build events)."""
        mine = [(key, ev) for key, ev in self.builds.items() if key[0] == level_id]
        variant, params = self._variant_of.get(level_id), self._params_of.get(level_id)
        return next((ev for (_, v, p), ev in mine if v == variant and p == params),
                    next((ev for (_, v, _), ev in mine if v == variant),
                         mine[0][1] if mine else None))

    def builds_of(self, level_id: str) -> list[rec.Build]:
        """Every build event of the level (one per variant and parameter set, the latest
        copy of each), in the order they first came."""
        return [ev for key, ev in self.builds.items() if key[0] == level_id]

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
        info = self.header.telemetry if self.header is not None else None
        if info is None:
            return self.telemetry.count > 0, "the recording says nothing about telemetry"
        return info.available, info.reason or ""

    def run_windows(self) -> list[RunWindow]:
        """Every run's window on the session timeline; a run in progress ends now."""
        return self.runs.all(self.last_t_s)

    def _device_info(self) -> rec.DeviceInfo | None:
        return self.device_entry(self.device) or (
            self.header.device if self.header is not None else None)

    def sm_clock_max_mhz(self) -> float | None:
        device = self._device_info()
        return device.sm_clock_max_mhz if device is not None else None

    def _on_done(self, ev: rec.Done) -> None:
        self._end_running(ev)

    def _end_running(self, ev: rec.Placed) -> None:
        """A run's done, or the error or stop that ended it, ends "running"."""
        state = self._state(ev)
        if state.running is not None and ev.id == state.running.id:
            state.running = None
            self._changes.add(Change.RUN)

    # the record type -> its handler: every type the store shows, in one table
    _handlers: ClassVar[dict[type, Callable[[SessionStore, Any], None]]] = {
        rec.Session: _on_session, rec.Restart: _on_restart, rec.RunStart: _on_run_start,
        rec.Repeat: _on_repeat, rec.Phase: _on_phase, rec.Result: _on_result,
        rec.Error: _on_error, rec.Info: _on_info, rec.Telemetry: _on_telemetry,
        rec.Counters: _on_counters, rec.Build: _on_build, rec.Done: _on_done,
        rec.Joined: _on_device, rec.SourceCounters: _on_source_counters,
    }

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

    def latest(self, level_id: str, device: int | None = None) -> Result | None:
        return self._state(device).latest.get(level_id)

    def ladder_shape(self, device: int | None = None) -> Shape | None:
        """The shape most ladder levels have a result at (the latest such on a tie)."""
        shape_levels = self._state(device).shape_levels
        best: Shape | None = None
        for shape, levels in shape_levels.items():  # oldest to most recent
            if best is None or len(levels) >= len(shape_levels[best]):
                best = shape
        return best

    def ladder_result(self, level_id: str, device: int | None = None) -> Result | None:
        """The level's latest result at the ladder shape, else its latest at any shape
        (on ``device``; default: the one shown)."""
        shape = self.ladder_shape(device)
        latest_at = self._state(device).latest_at
        found = latest_at.get((level_id, shape)) if shape is not None else None
        return found if found is not None else self.latest(level_id, device)

    # ----------------------------------------------------------------- GPUs
    def _state(self, which: rec.Event | int | None) -> DeviceState:
        """The part of one GPU: an event's (its ``device``), an index, or None: the one
        shown. Made when first needed: a session that names a thousand GPUs costs
        nothing until one of them has samples."""
        if isinstance(which, rec.Event):
            index = which.device_index if isinstance(which, rec.Placed) else 0
        else:
            index = self.device if which is None else which
        state = self._per.get(index)
        if state is None:
            state = self._per[index] = DeviceState()
        return state

    def _device_of(self, ev: rec.Placed) -> int | None:
        """An event's GPU where the session has several (messages name it), else None."""
        return ev.device if ev.device is not None and len(self.devices) > 1 else None

    def device_ids(self) -> list[int]:
        """The GPUs of the session: the header's and any that joined or have events."""
        return sorted({d.id for d in self.devices} | set(self._per) | {0})

    def device_name(self, device: int | None = None) -> str | None:
        entry = self.device_entry(self.device if device is None else device)
        return entry.name if entry is not None else None

    def device_entry(self, device: int) -> DeviceEntry | None:
        return next((d for d in self.devices if d.id == device), None)

    def device_text(self, device: int | None = None) -> str:
        """"GPU 1 (NVIDIA H200)": how the app names a GPU of the session."""
        index = self.device if device is None else device
        return device_label(self.device_entry(index) or DeviceEntry(id=index))

    def set_device(self, device: int) -> None:
        """Show this GPU's ladder, stream and telemetry."""
        if device != self.device:
            self.device = device
            self._changes.update(Change)

    @property
    def multi_device(self) -> bool:
        return len(self.device_ids()) > 1

    @property
    def stream(self) -> RepeatStream:
        return self._state(None).stream

    @stream.setter
    def stream(self, value: RepeatStream) -> None:
        self._state(None).stream = value

    @property
    def telemetry(self) -> TelemetryBuffer:
        return self._state(None).telemetry

    @property
    def runs(self) -> RunWindows:
        return self._state(None).runs

    @property
    def trial_spans(self) -> list[tuple[float, float]]:
        return self._state(None).trial_spans

    @property
    def running(self) -> rec.RunStart | None:
        """The run in progress on the GPU shown."""
        return self._state(None).running

    def reference_result(self, result: Result) -> Result | None:
        """The latest cuBLAS result of the same precision at the same shape and mode."""
        return self._by_key.get(reference_key(result))

    def sustained_result(self, level_id: str, shape: Shape | None = None) -> Result | None:
        """The level's latest sustained result at ``shape`` (default: the ladder's)."""
        shape = shape or self.ladder_shape()
        return self._by_key.get((level_id, shape, Mode.SUSTAINED, self.device)) if shape \
            else None

    def power_limit_w(self) -> float | None:
        """The enforced power limit: the latest NVML sample's, else a sustained result's."""
        latest = self.telemetry.latest("power_limit_w")
        if latest is not None:
            return latest
        limits = [r.power_limit_w for r in self.results if r.power_limit_w]
        return limits[-1] if limits else None

    def peak_tflops(self, precision: str) -> float | None:
        device = self._device_info()
        peaks = device.peak_tflops if device is not None else None
        return peaks.get(precision) if peaks is not None else None

    def row(self, result: Result) -> Row:
        """The result as every table shows it (against its reference, of the peak)."""
        return Row.of(result, self.reference_result(result), self.peak_tflops(result.precision))

    def sweeps(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per level with results at two or more N: (N, TFLOPS), latest per shape, by N."""
        by_level: dict[str, dict[Shape, Result]] = {}
        for (level_id, shape), r in self._state(None).latest_at.items():
            by_level.setdefault(level_id, {})[shape] = r
        out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for level_id, shapes in by_level.items():
            points = sorted((s.N, r.tflops) for s, r in shapes.items())
            if len({n for n, _ in points}) >= 2:
                arr = np.array(points, dtype=np.float64)
                out[level_id] = (arr[:, 0], arr[:, 1])
        return out


def _params_key(params: dict[str, int] | None) -> str:
    """Template parameters as a builds key (sorted JSON; {} where none are given)."""
    return json.dumps(params or {}, sort_keys=True, default=str)
