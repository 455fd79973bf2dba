"""What the session store holds and what the views ask of it, free of Qt: the state of
one session (``reset``), the changes since the views last looked, and every query
(levels, results at a shape and mode, builds, counters, the GPUs and their streams and
telemetry). :class:`store.SessionStore` builds it from events.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from ...kernels import protocol as rec
from ...kernels.ladder import Shape
from ...kernels.protocol import DeviceEntry, Mode
from ...kernels.results import Result, ResultKey, Row, reference_key
from .counters import NCU, Counters
from .device_state import DeviceState, device_label
from .levels import LevelInfo, catalog_from_header
from .recording_contents import RecordingContents
from .repeat_stream import RepeatStream
from .run_forms import form_at
from .telemetry import RunWindow, RunWindows, TelemetryBuffer
from .view_state import ViewState, ViewStateModel, changed_fields, default_shape

TELEMETRY_UNAVAILABLE = "telemetry unavailable"  # how the runner's info message begins


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
    TRACE = "trace"  # a measured timeline of a level (trace events, issue 46)


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

    def describe(self, recorded: bool = False) -> str:
        """The line as a list shows it; ``recorded``: a replay's, said as the recording's
        history (a restart, a failed probe, an untimed profile happened on the machine
        that recorded it, at its time), not as something wrong here."""
        if recorded:
            return f"in the recording, at {self.t:.0f} s: {self.describe()}"
        where = ""
        if self.level is not None:
            where = self.level + (f" at {self.shape}" if self.shape is not None else "")
        elif self.shape is not None:
            where = str(self.shape)
        if self.device is not None:
            where = " ".join(filter(None, (where, f"on device {self.device}")))
        head = f"{self.kind}" + (f" ({where})" if where else "")
        return f"{head}: {self.text}"


# what the views must draw again when a field of the view state changes
VIEW_CHANGES: dict[str, tuple[Change, ...]] = {
    "shape": (Change.LADDER, Change.STREAM, Change.SWEEP, Change.RUN),
    "mode": (Change.LADDER, Change.STREAM, Change.SWEEP, Change.RUN),
    "device": tuple(Change), "level": (Change.STREAM,), "step": (),
    "per_clock": (Change.LADDER,)}


class StoreQueries:
    """State of one session (live or replayed) and the queries the views ask of it.

    ``view`` is the window's view state (app/core/view_state.py): the queries that answer
    for "the ladder" (``ladder_shape``, ``ladder_result``, ``shown_stream``, ...) answer
    for its shape, mode and GPU. A store made without one keeps its own, whose shape is
    the default (4096³ where present, else the most complete shape)."""

    def __init__(self, view: ViewStateModel | None = None) -> None:
        self.view = view if view is not None else ViewStateModel()
        # what the source will deliver in all (a replay's whole recording; None: live)
        self.contents: RecordingContents | None = None
        # a second recording shown beside this one (app/core/baseline_run.py); kept
        # across resets: a replay's seek starts the session again, not the baseline
        self.baseline: Any = None
        # the kernels of an opened Nsight Compute report (app/core/ncu_report.py), by the
        # Code view's key: kept across resets, as the baseline
        self.report: Any = None
        self.reset()
        self.view.subscribe(self._view_changed)

    def _view_changed(self, before: ViewState, after: ViewState) -> None:
        for name in changed_fields(before, after):
            self._changes.update(VIEW_CHANGES[name])

    def reset(self) -> None:
        # views that keep their own copies (the messages list) start again when it changes
        self.generation = getattr(self, "generation", -1) + 1
        # the runs of the repeats since the last other event: their state, shown stream,
        # own stream and shape (store._on_repeat)
        self._repeat_runs: dict[tuple[Any, ...], tuple[Any, Any, Any, Any]] = {}
        self.header: rec.Session | None = None
        self.levels: list[LevelInfo] = catalog_from_header(None)
        self.results: list[Result] = []
        self._by_key: dict[ResultKey, Result] = {}  # every mode and GPU
        self.messages: list[Message] = []
        # per GPU (protocol version 4; one, 0, in older files): stream, telemetry, run
        # windows, latest results. The views show ``device``'s (the view state's)
        self.devices: list[DeviceEntry] = []  # the header's, then device events'
        # id -> the first entry of ``devices`` with it, for that list and its length: a
        # GPU named by index in one step, not a walk of a thousand GPUs' list per name
        self._entries: tuple[list[DeviceEntry], int, dict[int, DeviceEntry]] = ([], 0, {})
        # device 0's made now: its telemetry buffer is large, and a replay's seek resets
        # the store outside the time budget it then delivers events in
        self._per: dict[int, DeviceState] = {0: DeviceState()}
        self.telemetry_note: str | None = None  # "telemetry unavailable: ..." from an info
        self.counters: list[Counters] = []  # every counters event, in order
        # the latest ceilings event (record --ceilings) of each GPU: measured roofs
        self.ceilings: dict[int, rec.Ceilings] = {}
        # the latest source_counters event (per-SASS-line counters) of each level
        self.source_counters: dict[str, rec.SourceCounters] = {}
        # the latest library_kernel event of each reference (record --ncu): the kernel
        # the library ran, shown by the Code view as a level's build
        self.library_kernels: dict[str, rec.LibraryKernel] = {}
        # the latest trace event of each (level, shape): measured timelines (issue 46)
        self.traces: dict[tuple[str, Shape], rec.Trace] = {}
        # the latest complete launch_clocks event of each (level, shape): the SM clocks
        # inside the level's launches and its reference's (record --launch-clocks)
        self.launch_clocks: dict[tuple[str, Shape], rec.LaunchClocks] = {}
        # build events by (level, variant, params as sorted JSON), first seen first
        self.builds: dict[tuple[str, str, str], rec.Build] = {}
        # ("counters" or "source_counters", level) -> the code key of each of the level's
        # builds when its latest such event came: a build of the same key and another code
        # since (``record --update`` re-ran the level) makes that measurement an earlier
        # build's (:meth:`earlier_code`)
        self._codes_then: dict[tuple[str, str], dict[tuple[str, str, str], str | None]] = {}
        self._variant_of: dict[str, str] = {}  # level -> variant of its latest result
        # level -> template parameters of its latest result (as builds' keys): a level may
        # pick its parameters per shape (the FP8 levels' tile width)
        self._params_of: dict[str, str] = {}
        self.last_t_s = 0.0  # latest session time seen
        self.event_count = 0
        self.restarts = 0  # restart events: the runner was restarted
        # the message line of the latest run of restarts in a row (store._on_restart)
        self._restart_line: Message | None = None
        self._restarts_in_row = 0
        self._restart_first_t = 0.0
        self._changes: set[Change] = set(Change)

    def expect(self, contents: RecordingContents | None) -> None:
        """What the source will deliver in all (a replay: its whole recording), so the
        views can tell "not replayed yet" from "not recorded"; None for a live source.
        It outlasts :meth:`reset` (a replay's seek back starts the store again)."""
        self.contents = contents
        self._changes.update(Change)

    def not_replayed_yet(self, what: str, level_id: str | None) -> bool:
        """The replay's recording has ``what`` of the level ("source_counters": ncu's
        per-line counters, "counters": ncu's totals, "build": a build event) and the
        replay has not delivered it yet: a view says "not replayed yet", not "not
        recorded"."""
        coming = self.coming()
        if coming is None or level_id is None:
            return False
        kinds = {"source_counters": coming.source_counters, "build": coming.builds,
                 "counters": {level for level, _tool in coming.counters}}
        return level_id in kinds[what]

    @property
    def replay_pending(self) -> bool:
        """A replay has events it has not delivered yet."""
        return self.contents is not None and self.event_count < self.contents.events

    def coming(self) -> RecordingContents | None:
        """The whole recording's contents while a replay is still delivering it, else
        None: ``store.coming()`` and a key in it means "not replayed yet"."""
        return self.contents if self.replay_pending else None

    def set_report(self, report: Any) -> None:
        """Show the kernels of ``report`` (an ncu_report.Report, or None)."""
        self.report = report
        self._changes.update((Change.BUILD, Change.COUNTERS))

    def report_kernel(self, key: str) -> Any:
        if self.report is None:
            return None
        return next((k for k in self.report.kernels if k.key == key), None)

    def library_kernel(self, level_id: str) -> rec.LibraryKernel | None:
        """The kernel a reference's library ran, or an opened report's kernel."""
        found = self.library_kernels.get(level_id)
        if found is None and (k := self.report_kernel(level_id)) is not None:
            return k.kernel
        return found

    def line_counters(self, level_id: str) -> rec.SourceCounters | None:
        """Per-SASS-line counters of a level, a reference, or a report's kernel."""
        found = self.source_counters.get(level_id)
        if found is None and (k := self.report_kernel(level_id)) is not None:
            return k.lines
        return found

    def earlier_code(self, kind: str, level_id: str, build: rec.Build | None) -> str | None:
        """The code key the level's latest ``kind`` event ("counters", "source_counters")
        was measured on, where ``build`` is of the same variant and parameters but another
        code (the level was re-run after the measurement: ``record --update``); None where
        they agree or the session cannot tell (the build came after with a new key, or
        carries no code key)."""
        if build is None or build.code_key is None:
            return None
        then = self._codes_then.get((kind, level_id), {})
        key = (build.level, build.variant, params_key(build.params))
        old = then.get(key)
        return old if key in then and old is not None and old != build.code_key else None

    def note_codes(self, kind: str, level_id: str) -> None:
        """Remember the level's builds' code keys as a ``kind`` event of it comes."""
        self._codes_then[(kind, level_id)] = {
            key: ev.code_key for key, ev in self.builds.items() if key[0] == level_id}

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

    def sm_count(self) -> int | None:
        """The SM count of the GPU shown (None where the session names none)."""
        device = self._device_info()
        return device.sm_count if device is not None else None

    def sm_clock_max_mhz(self) -> float | None:
        device = self._device_info()
        return device.sm_clock_max_mhz if device is not None else None

    def set_baseline(self, baseline: Any) -> None:
        """Show ``baseline`` (a BaselineRun, or None) beside the session."""
        self.baseline = baseline
        self._changes.update((Change.HEADER, Change.LADDER))

    def take_changes(self) -> set[Change]:
        changes, self._changes = self._changes, set()
        return changes

    # ----------------------------------------------------------------- queries
    def level(self, level_id: str) -> LevelInfo | None:
        for lv in self.levels:
            if lv.id == level_id:
                return lv
        return None

    def name_of(self, level_id: str) -> str:
        """How pictures, captions and reports name a level (LevelInfo.name; an id the
        catalog lacks as it is)."""
        level = self.level(level_id)
        return level.name if level is not None else level_id

    def ladder_levels(self) -> list[LevelInfo]:
        return [lv for lv in self.levels if not lv.is_reference]

    def latest(self, level_id: str, device: int | None = None) -> Result | None:
        return self._state(device).latest.get(level_id)

    def shapes(self, device: int | None = None) -> list[Shape]:
        """The shapes with a ladder result on the GPU (any mode), in the order reached."""
        return list(self._state(device).shape_levels)

    def levels_at(self, device: int | None = None) -> dict[Shape, int]:
        """Per shape, how many ladder levels have a result there (any mode)."""
        return {s: len(v) for s, v in self._state(device).shape_levels.items()}

    def ladder_shape(self, device: int | None = None) -> Shape | None:
        """The shape the ladder is shown at: the view state's; where none was chosen,
        the default of the results there are (view_state.default_shape)."""
        chosen = self.view.state.shape
        return chosen if chosen is not None else default_shape(self.levels_at(device))

    @property
    def mode(self) -> Mode:
        """The mode the ladder is shown in (the view state's): burst or sustained."""
        return self.view.state.mode

    @property
    def per_clock(self) -> bool:
        """Whether the bars are shown per GHz of SM clock held (the view state's)."""
        return self.view.state.per_clock

    def result_at(self, level_id: str, shape: Shape | None, mode: Mode | None = None,
                  device: int | None = None) -> Result | None:
        """The level's latest result at ``shape`` in ``mode`` (default: the one shown)
        on ``device`` (default: the one shown)."""
        if shape is None:
            return None
        return self._state(device).latest_at.get((level_id, shape, mode or self.mode))

    def ladder_result(self, level_id: str, device: int | None = None) -> Result | None:
        """The level's latest result at the shape and in the mode shown (on ``device``;
        default: the one shown); None where it has none there (no other shape stands in:
        a table of one shape is the shape it says)."""
        return self.result_at(level_id, self.ladder_shape(device), None, device)

    def run_form(self, level_id: str, shape: Shape | None = None,
                 device: int | None = None) -> dict[str, int] | None:
        """The template parameters ``level_id`` ran with at ``shape`` (default: the one
        shown) on ``device`` (run_forms.form_at): its latest result's there (the mode
        shown, else burst), else its shape rule's on this GPU's SM count; None where no
        shape is shown."""
        shape = shape or self.view.state.shape
        if shape is None:
            return None
        info = self.device_entry(device) if device is not None else self._device_info()
        results = (self.result_at(level_id, shape, mode, device) for mode in (None, Mode.BURST))
        return form_at(level_id, shape, results, info.sm_count if info is not None else None)

    def burst_result(self, level_id: str, shape: Shape | None,
                     device: int | None = None) -> Result | None:
        return self.result_at(level_id, shape, Mode.BURST, device)

    def shown_stream(self) -> RepeatStream | None:
        """The per-repeat TFLOPS of the run the view state points at: the selected
        level's latest run at the shape and in the mode shown, on the GPU shown (a run
        in progress as its repeats arrive); None where it has had none."""
        state = self.view.state
        if state.level is None:
            return None
        return self._state(None).streams.get((state.level, self.ladder_shape(), self.mode))

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
        listed, count, index = self._entries
        if listed is not self.devices or count != len(self.devices):  # a header, a join
            index = {}
            for d in self.devices:
                index.setdefault(d.id, d)
            self._entries = (self.devices, len(self.devices), index)
        return index.get(device)

    def device_text(self, device: int | None = None) -> str:
        """"GPU 1 (NVIDIA H200)": how the app names a GPU of the session."""
        index = self.device if device is None else device
        return device_label(self.device_entry(index) or DeviceEntry(id=index))

    @property
    def device(self) -> int:
        """The GPU shown (the view state's)."""
        return self.view.state.device

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

    @property
    def running_phase(self) -> str | None:
        """What the run in progress does now, where its runner said (``compile``,
        ``settle``, ``cooldown``, ``window``); None: measuring, or not said."""
        return self._state(None).doing

    def reference_result(self, result: Result) -> Result | None:
        """The latest cuBLAS result of the same precision at the same shape and mode."""
        return self._by_key.get(reference_key(result))

    def sustained_result(self, level_id: str, shape: Shape | None = None) -> Result | None:
        """The level's latest sustained result at ``shape`` (default: the ladder's)."""
        shape = shape or self.ladder_shape()
        return self.result_at(level_id, shape, Mode.SUSTAINED) if shape else None

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
        """The result as every table shows it (against its reference, of the peak; at equal
        clocks by the clocks inside the launches where the session read them)."""
        return Row.of(result, self.reference_result(result), self.peak_tflops(result.precision),
                      self.launch_clocks.get((result.level, result.shape)))

    def sweeps(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per level with results at two or more square sizes (M = N = K) in the mode
        shown: (N, TFLOPS), latest per shape, by N. Other shapes are no point of a size
        sweep (4096 x 2112 x 7168 is not "N = 2112"): the ladder and roofline show them."""
        by_level: dict[str, dict[Shape, Result]] = {}
        for (level_id, shape, mode), r in self._state(None).latest_at.items():
            if mode == self.mode and shape.M == shape.N == shape.K:
                by_level.setdefault(level_id, {})[shape] = r
        out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for level_id, shapes in by_level.items():
            points = sorted((s.N, r.tflops) for s, r in shapes.items())
            if len({n for n, _ in points}) >= 2:
                arr = np.array(points, dtype=np.float64)
                out[level_id] = (arr[:, 0], arr[:, 1])
        return out


def params_key(params: dict[str, int] | None) -> str:
    """Template parameters as a builds key (sorted JSON; {} where none are given)."""
    return json.dumps(params or {}, sort_keys=True, default=str)
