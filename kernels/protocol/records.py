"""Every event type as one typed record (docs/protocol.md): the fields readers use, each
with its type, decoded and validated in one pass at the edge (``protocol.decoding``).

Readers take these records and check nothing again: a number is a finite ``float`` (or
``int`` where it counts), never a bool; a text is a ``str``; an optional field that was
absent, null, non-finite or of another type is ``None``. Unknown fields are not kept;
unknown event types are :class:`Other`.

The records live by what they describe: ``record_base`` (the number rule, the bases),
``header_records`` (the session and its GPUs and levels), ``run_records`` (a run's
events) and here the rest; every one is imported from here.

msgspec ``Struct``s (``gc=False``: records are trees, so the cyclic collector need not walk
the hundreds of thousands a recording holds). The runner never imports this module: it
writes dicts (``events.dumps``) and needs no msgspec.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

import msgspec

from . import ceilings as ceil
from . import source_counters as sc
from .events import TELEMETRY_FIELDS, Mode
from .header_records import (
    CatalogEntry,
    DeviceEntry,
    DeviceInfo,
    Joined,
    Session,
    SourceRef,
    TelemetryInfo,
    Version,
)
from .record_base import Event, Index, Number, Placed, Record, SessionTime
from .run_records import (
    MAX_PARAMS,
    EnergyWindow,
    Error,
    LaunchStepRecord,
    Moded,
    Phase,
    Repeat,
    Result,
    Run,
    RunStart,
    Timed,
    TrialWindow,
    Where,
    Window,
    bounded_params,
)
from .trace_records import Trace, TraceColumns, TraceKind

__all__ = ["BY_TYPE", "EVENTS", "MAX_PARAMS", "AnyEvent", "Build", "Bye", "CatalogEntry",
           "CeilingProbe", "Ceilings", "Counters", "DeviceEntry", "DeviceInfo", "Done",
           "EnergyWindow", "Error", "Event", "Index", "Info", "Joined", "Kernel",
           "LaunchStepRecord", "Levels", "Measured", "Mode", "Moded", "Number", "Other",
           "Phase", "Placed", "Pong",
           "Ready", "Record", "Repeat", "Restart", "Result", "Run", "RunStart",
           "Session", "SessionTime", "SourceCounters", "SourceRef", "Telemetry",
           "TelemetryInfo", "Timed", "Trace", "TraceColumns", "TraceKind", "TrialWindow",
           "Version", "Where", "Window",
           "bounded_params"]


class Ready(Placed, tag="ready", kw_only=True):
    pass


class Done(Placed, tag="done", kw_only=True):
    pass


class Pong(Placed, tag="pong", kw_only=True):
    pass


class Bye(Placed, tag="bye", kw_only=True):
    pass


class Restart(Placed, tag="restart", kw_only=True):
    """A runner started again in the session: its header, on the session's time axis."""

    restarts: int
    runner: Session | None = None


class Levels(Placed, tag="levels", kw_only=True):
    levels: list[CatalogEntry]


class Kernel(Placed, tag="kernel", kw_only=True):
    """A user's kernel, the first time a runner was sent its source (docs/protocol.md)."""

    level: str
    file: str | None = None
    language: str | None = None
    name: str | None = None
    sha256: str | None = None
    catalog: CatalogEntry | None = None


class Info(Where, tag="info", kw_only=True):
    message: str
    gave_up: bool = False  # the session gave up after repeated failures


class Telemetry(Placed, tag="telemetry", kw_only=True):
    """One NVML sample; a field the GPU does not support is None. The numeric fields are
    events.TELEMETRY_FIELDS, in that order (checked as this module loads)."""

    sm_clock_mhz: Number | None = None
    mem_clock_mhz: Number | None = None
    power_w: Number | None = None
    power_limit_w: Number | None = None
    temp_c: Number | None = None
    gpu_util_pct: Number | None = None
    energy_j: Number | None = None
    sm_occupancy_pct: Number | None = None
    sm_util_pct: Number | None = None
    tensor_util_pct: Number | None = None
    dram_bw_util_pct: Number | None = None
    fp32_util_pct: Number | None = None
    power_kind: str | None = None  # "instant" or "average"
    reasons: list[str] | None = None  # clock-event reasons, as NVML names them


class Counters(Run, tag="counters", kw_only=True):
    """What a profiler measured for one level at one shape."""

    STRICT = frozenset({"metrics"})

    tool: str
    metrics: dict[str, Number | None]  # every metric asked for; None where it read n/a
    kernel: str | None = None
    params: dict[str, int] | None = None
    command: list[str] | None = None
    # "one_block_per_sm" (gemmscope record --ncu) or "as_launched"; None before the field
    launch: str | None = None
    tool_version: str | None = None  # `ncu --version`'s; None: not said (older files)

    def __post_init__(self) -> None:
        if self.params is not None:
            self.params = bounded_params(self.params)


class Build(Placed, tag="build", kw_only=True):
    """What one compiled variant of a level is (docs/protocol.md, ``build``)."""

    level: str
    variant: str
    params: dict[str, int] | None = None
    kernel: str | None = None
    mangled: str | None = None
    arch: str | None = None
    compiler: str | None = None
    code_key: str | None = None  # as in the results of this build (GPU build events)
    cubin_sha256: str | None = None  # of the cubin disassembled for this event
    options: list[str] | None = None
    sources: dict[str, str] | None = None  # repository path -> text, the level's .cu first
    sources_reason: str | None = None
    regs: int | None = None
    smem_static_bytes: int | None = None
    smem_dynamic_bytes: int | None = None
    local_bytes: int | None = None
    threads_per_block: int | None = None
    barriers: int | None = None
    resources_from: str | None = None
    occupancy: dict[str, Any] | None = None
    sass: str | None = None
    sass_reason: str | None = None
    sass_from: dict[str, Any] | None = None
    main_loop: tuple[int, int] | None = None
    instruction_mix: dict[str, dict[str, int] | None] | None = None
    instruction_mix_reason: str | None = None

    STRICT = frozenset({"sources", "sass", "sass_reason"})

    def __post_init__(self) -> None:
        if self.params is not None:
            self.params = bounded_params(self.params)


class SourceCounters(Run, tag="source_counters", kw_only=True):
    """Per-SASS-line counters of one level (``protocol.source_counters`` owns the shape:
    rows are put in its ``FIELDS`` order and bounded once, here)."""

    tool: str
    status: sc.Status
    reason: str | None = None
    cut: str | None = None
    kernel: str | None = None
    variant: str | None = None
    tool_version: str | None = None
    launch: str | None = None
    command: list[str] | None = None
    fields: list[str] | None = None
    lines: list[sc.SassLine] | None = None  # in offset order

    lines_unread: int | None = None
    columns: dict[str, str] | None = None
    totals: dict[str, Number | None] | None = None
    stall_totals: dict[str, Number] | None = None
    lines_total: Number | None = None
    idle_left_out: Number | None = None
    cap_left_out: Number | None = None
    seconds: Number | None = None
    # a user's kernel (``record --kernel``): the variant profiled; None for a level
    params: dict[str, int] | None = None

    STRICT = frozenset({"status"})

    def __post_init__(self) -> None:
        sc.normalize(self)
        if self.params is not None:
            self.params = bounded_params(self.params)

    @classmethod
    def repair(cls, obj: dict[str, Any]) -> None:
        sc.repair(obj)


# a measured ceiling: finite and not negative
Measured = Annotated[float, msgspec.Meta(ge=0, le=1.7976931348623157e308)]


class CeilingProbe(Record, kw_only=True):
    """One probe of ``record --ceilings``: what it ran, what it sustained, the SM clock."""

    name: str = ""
    precision: str = ""
    instruction: str = ""
    tflops: Measured | None = None
    gbs: Measured | None = None
    ms: Measured | None = None
    sm_clock_mhz: Measured | None = None


class Ceilings(Placed, tag="ceilings", kw_only=True):
    """What this GPU sustained in the probes (``protocol.ceilings`` says the rules): a
    value that breaks them refuses the line, none reads as null."""

    peak_tflops: dict[ceil.Precision, Measured | None]
    bandwidth_gbs: Measured | None = None
    read_gbs: Measured | None = None
    copy_gbs: Measured | None = None
    buffer_bytes: Measured | None = None
    # a Struct copies a mutable default (ruff cannot see the Struct behind Placed)
    probes: Annotated[list[CeilingProbe], msgspec.Meta(max_length=ceil.MAX_PROBES)] = []  # noqa: RUF012

    STRICT = frozenset({"peak_tflops", "bandwidth_gbs", "read_gbs", "copy_gbs",
                        "buffer_bytes", "probes"})

    @classmethod
    def repair(cls, obj: dict[str, Any]) -> None:
        ceil.refuse_unreadable(obj)


Count = Annotated[int, msgspec.Meta(ge=0, lt=1 << 53)]
Dims = list[Annotated[int, msgspec.Meta(ge=0, lt=1 << 32)]]  # x, y, z (cut to 3 as read)
MAX_LIBRARY_KERNELS = 32  # kernels of one library call listed in a library_kernel event


class LaunchedKernel(Record, kw_only=True):
    """One kernel a library call launched, as the profiler saw it."""

    name: Annotated[str, msgspec.Meta(max_length=2000)] = ""
    ms: Measured | None = None  # its GPU time (gpu__time_duration)
    grid: Dims | None = None
    block: Dims | None = None
    regs: Count | None = None
    smem_static_bytes: Count | None = None
    smem_dynamic_bytes: Count | None = None


class LibraryKernel(Run, tag="library_kernel", kw_only=True):
    """The kernel a reference (cuBLAS, cuBLASLt) ran, or a kernel of an Nsight Compute
    report opened in the app: what a ``build`` event says of a level, as the profiler
    saw it (docs/protocol.md, ``library_kernel``). ``kernel`` is the one with the most GPU
    time; ``kernels`` lists every one the call launched."""

    tool: str
    status: sc.Status = sc.Status.OK
    reason: str | None = None
    variant: str | None = None  # as the launch said it ("cublas"), where it did
    kernel: str | None = None
    kernels: list[LaunchedKernel] = msgspec.field(default_factory=list)  # cut as read
    kernels_total: Count | None = None  # launched in all (kernels may be cut)
    grid: Dims | None = None
    block: Dims | None = None
    regs: Count | None = None
    smem_static_bytes: Count | None = None
    smem_dynamic_bytes: Count | None = None
    threads_per_block: Count | None = None
    ms: Measured | None = None
    sass: str | None = None  # compact SASS (kernels/toolchain/sass.py), from the profiler
    sass_reason: str | None = None
    sources: dict[str, str] | None = None  # a report's imported sources, path -> text
    sources_reason: str | None = None
    main_loop: tuple[int, int] | None = None
    instruction_mix: dict[str, dict[str, int] | None] | None = None
    # warp instructions executed per class (the profiler's per-line counts), whole kernel
    executed_mix: dict[str, Number] | None = None
    instruction_mix_reason: str | None = None
    tool_version: str | None = None
    command: list[str] | None = None
    seconds: Number | None = None
    # a report's kernel: what the roofline needs (FLOPs counted from its metrics, DRAM
    # bytes), where the report has them
    flops: Measured | None = None
    flops_from: str | None = None
    dram_bytes: Measured | None = None

    STRICT = frozenset({"status", "sass", "sources"})

    def __post_init__(self) -> None:
        del self.kernels[MAX_LIBRARY_KERNELS:]
        for k in (self, *self.kernels):
            for name in ("grid", "block"):
                dims = getattr(k, name)
                if dims is not None:
                    setattr(k, name, dims[:3] or None)


MAX_CLOCK_LAUNCHES = 1000  # launches of one side a launch_clocks event reads
ClockMHz = Annotated[float, msgspec.Meta(gt=0, lt=100_000)]  # an SM clock
LaunchUs = Annotated[float, msgspec.Meta(gt=0, lt=1e12)]  # one launch's GPU time


class LaunchClocks(Run, tag="launch_clocks", kw_only=True):
    """The SM clock inside a level's launches and inside its reference's, and their
    times, as a profiler read them launch by launch (``gemmscope record --launch-clocks``,
    docs/protocol.md, ``launch_clocks``): the clock a Tensor Core launch runs at is its
    own, 10-21% below what NVML reports around it on the H200 (docs/perf-notes.md,
    stretch 15), so the ratio at equal clocks takes these where a session has them.
    Medians over ``launches`` launches of each side's main kernel (the one with the most
    GPU time); a side that could not be read has no numbers and says why (``reason``)."""

    tool: str
    reference: str | None = None
    launches: Annotated[int, msgspec.Meta(ge=1, le=MAX_CLOCK_LAUNCHES)] = 1
    level_mhz: ClockMHz | None = None
    level_us: LaunchUs | None = None
    ref_mhz: ClockMHz | None = None
    ref_us: LaunchUs | None = None
    level_kernel: Annotated[str, msgspec.Meta(max_length=2000)] | None = None
    ref_kernel: Annotated[str, msgspec.Meta(max_length=2000)] | None = None
    code_key: Annotated[str, msgspec.Meta(max_length=200)] | None = None  # the level's build
    tool_version: Annotated[str, msgspec.Meta(max_length=200)] | None = None
    clock_control: Annotated[str, msgspec.Meta(max_length=40)] | None = None  # ncu's option
    reason: Annotated[str, msgspec.Meta(max_length=2000)] | None = None

    @property
    def complete(self) -> bool:
        """Both sides' clocks and times read."""
        return None not in (self.level_mhz, self.level_us, self.ref_mhz, self.ref_us)

    @property
    def cycles_ratio(self) -> float | None:
        """The reference's cycles per launch over the level's: the ratio at equal clocks
        (1.0: as fast per cycle); None where a side is missing."""
        if not self.complete:
            return None
        assert self.level_mhz and self.level_us and self.ref_mhz and self.ref_us
        return (self.ref_us * self.ref_mhz) / (self.level_us * self.level_mhz)


EVENTS: tuple[type[Event], ...] = (
    Session, Ready, Done, Pong, Bye, Restart, Joined, Levels, RunStart, Repeat, Phase,
    Result, Error, Info, Telemetry, Counters, Build, SourceCounters, Kernel, Ceilings,
    LibraryKernel, Trace, LaunchClocks)
BY_TYPE: dict[str, type[Event]] = {cls.__struct_config__.tag: cls for cls in EVENTS}  # type: ignore[misc]
AnyEvent = (Session | Ready | Done | Pong | Bye | Restart | Joined | Levels | RunStart | Repeat
            | Phase | Result | Error | Info | Telemetry | Counters | Build | SourceCounters
            | Kernel | Ceilings | LibraryKernel | Trace | LaunchClocks)

# the numeric telemetry fields: the sampler's, the store's columns, the views' strips
_PLACE = {f.name for f in msgspec.structs.fields(Placed)}
if tuple(f.name for f in msgspec.structs.fields(Telemetry)
         if f.name not in _PLACE and f.type == (Number | None)) != TELEMETRY_FIELDS:
    raise ImportError("records.Telemetry must name events.TELEMETRY_FIELDS, in order")


@dataclass(slots=True)
class Other:
    """An event of a type this reader does not know: kept, shown nowhere (rule 8)."""

    type: str
    t: float
    fields: dict[str, Any] = field(default_factory=dict)
