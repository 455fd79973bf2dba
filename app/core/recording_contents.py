"""What a whole recording holds, known before its replay delivers it. Free of Qt.

A replay plays a recording that was read whole, so the app knows from the start what the
replay will bring: which results (level, shape, mode, GPU), which profiler counters,
build events and telemetry. The views use it to tell "not replayed yet" (the recording
has it; the replay has not reached it) from "not recorded" (the recording has none), and
the window to choose the shape a replay opens on before any result has arrived.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ...kernels import protocol as rec
from ...kernels.ladder import Shape
from ...kernels.protocol import EventRecord, Mode, TelemetryBlock
from .levels import catalog_from_header
from .view_state import default_shape

NOT_REPLAYED = "not replayed yet"  # what every view says of what the recording has, later
ResultKey = tuple[str, Shape, Mode, int]  # level, shape, mode, device
Item = EventRecord | TelemetryBlock  # what a recording's events are


@dataclass(frozen=True, slots=True)
class RecordingContents:
    events: int = 0
    results: frozenset[ResultKey] = frozenset()
    # per shape, how many ladder levels (not references) have a result there (any mode)
    levels_at: dict[Shape, int] = field(default_factory=dict)
    source_counters: frozenset[str] = frozenset()  # levels with per-line counters
    counters: frozenset[tuple[str, str]] = frozenset()  # (level, tool)
    builds: frozenset[str] = frozenset()  # levels with a build event
    telemetry: bool = False  # any NVML sample
    ceilings: frozenset[int] = frozenset()  # the GPUs with measured ceilings

    @classmethod
    def of(cls, events: Iterable[Item]) -> RecordingContents:
        header: rec.Session | None = None
        count = 0
        results: set[ResultKey] = set()
        source_counters: set[str] = set()
        counters: set[tuple[str, str]] = set()
        builds: set[str] = set()
        telemetry = False
        ceilings: set[int] = set()
        for ev in events:
            if isinstance(ev, TelemetryBlock):  # counted as the store counts it: samples
                count += ev.stop - ev.start
                telemetry = telemetry or ev.stop > ev.start
                continue
            count += 1
            if isinstance(ev, rec.Result):
                results.add((ev.level, ev.shape, ev.mode, ev.device_index))
            elif isinstance(ev, rec.Telemetry):
                telemetry = True
            elif isinstance(ev, rec.SourceCounters):
                source_counters.add(ev.level)
            elif isinstance(ev, rec.Counters):
                counters.add((ev.level, ev.tool or "ncu"))
            elif isinstance(ev, rec.Build | rec.LibraryKernel):  # a reference's: its kernel
                builds.add(ev.level)
            elif isinstance(ev, rec.Ceilings):
                ceilings.add(ev.device_index)
            elif isinstance(ev, rec.Session) and header is None:
                header = ev
        references = {lv.id for lv in catalog_from_header(header) if lv.is_reference}
        per_shape: dict[Shape, set[str]] = {}
        for level, shape, _mode, _device in results:
            if level not in references:
                per_shape.setdefault(shape, set()).add(level)
        return cls(count, frozenset(results), {s: len(v) for s, v in per_shape.items()},
                   frozenset(source_counters), frozenset(counters), frozenset(builds),
                   telemetry, frozenset(ceilings))

    def default_shape(self) -> Shape | None:
        """The shape a replay of this recording opens on (view_state.default_shape)."""
        return default_shape(self.levels_at)

    def shapes(self) -> list[Shape]:
        return list(self.levels_at)

    def has_result(self, level: str, shape: Shape | None, mode: Mode, device: int) -> bool:
        return shape is not None and (level, shape, mode, device) in self.results

    def has_sweep(self, mode: Mode, device: int) -> bool:
        """A level with results at two or more N in ``mode`` on ``device`` (a sweep)."""
        sizes: dict[str, set[int]] = {}
        for level, shape, m, d in self.results:
            if m == mode and d == device:
                sizes.setdefault(level, set()).add(shape.N)
        return any(len(n) >= 2 for n in sizes.values())

    def has_results_at(self, shape: Shape | None, mode: Mode, device: int) -> bool:
        return any(s == shape and m == mode and d == device
                   for _level, s, m, d in self.results)
