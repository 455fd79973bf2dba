"""Every event type as one typed record (docs/protocol.md): the fields readers use, each
with its type, decoded and validated in one pass at the edge (``protocol.decoding``).

Readers take these records and check nothing again: a number is a finite ``float`` (or
``int`` where it counts), never a bool; a text is a ``str``; an optional field that was
absent, null, non-finite or of another type is ``None``. Unknown fields are not kept;
unknown event types are :class:`Other`.

msgspec ``Struct``s (``gc=False``: records are trees, so the cyclic collector need not walk
the hundreds of thousands a recording holds). The runner never imports this module: it
writes dicts (``events.dumps``) and needs no msgspec.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, ClassVar

import msgspec

from ..ladder.level import current_params
from ..ladder.shape import Shape
from . import ceilings as ceil
from . import source_counters as sc
from .events import MAX_SESSION_S, TELEMETRY_FIELDS, Mode
from .throttle import slowdowns

# the one number rule: a finite double (JSON ints read as floats; a bool is no number)
Number = Annotated[float, msgspec.Meta(ge=-1.7976931348623157e308, le=1.7976931348623157e308)]
# a time on the session's axis: at most MAX_SESSION_S either side of its start
SessionTime = Annotated[float, msgspec.Meta(ge=-MAX_SESSION_S, le=MAX_SESSION_S)]
Index = Annotated[int, msgspec.Meta(ge=0)]  # a device index: 0, 1, ...


class Record(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """A part of an event (a device, a catalog entry...)."""


class Event(Record, tag_field="type", kw_only=True):
    """Every event has a ``type`` (its record class) and ``t``, session seconds."""

    t: SessionTime

    # fields whose entries must all read, or the event is refused (elsewhere an entry of
    # another type in a list or map is dropped: reader rule 7)
    STRICT: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def repair(cls, obj: dict[str, Any]) -> None:
        """The careful way's first step for a line whose fields did not decode (in place):
        what only the record's owner knows how to read (source_counters' rows)."""

    @property
    def type(self) -> str:
        return str(self.__struct_config__.tag)


class Placed(Event, kw_only=True):
    """Where an event ran (version 4: absent, device 0) and the run it belongs to."""

    device: Index | None = None
    host: str | None = None
    worker: str | None = None
    id: Any = None  # the run command's id, echoed (any JSON value)

    @property
    def device_index(self) -> int:
        return self.device or 0


# ------------------------------------------------------------------ the header's parts
class SourceRef(Record, kw_only=True):
    source: str
    sha256: str


class Version(Record, kw_only=True):
    version: str | None = None
    commit: str | None = None


class TelemetryInfo(Record, kw_only=True):
    available: bool = False
    reason: str | None = None
    hz: Number | None = None


class DeviceInfo(Record, kw_only=True):
    """A GPU as its runner describes it; every field may be unknown."""

    name: str | None = None
    sm_count: int | None = None
    cc: str | None = None
    arch: str | None = None
    sm_clock_max_mhz: Number | None = None
    mem_clock_max_mhz: Number | None = None
    memory_gib: Number | None = None
    l2_bytes: int | None = None
    driver: str | None = None
    cuda_runtime: str | None = None
    cupy: str | None = None
    peak_tflops: dict[str, Number | None] | None = None
    limits: dict[str, int] | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    # the GPU table's row (kernels/hardware/gpu_table.toml): bandwidth, the clocks the
    # peaks assume, where they come from; absent in older recordings
    mem_bandwidth_gbs: Number | None = None
    peak_clock_mhz: Number | None = None
    peak_tensor_clock_mhz: Number | None = None
    peak_source: str | None = None
    gpu_table_key: str | None = None


class DeviceEntry(DeviceInfo, kw_only=True):
    """One GPU of a session (the header's ``devices``, or a ``device`` event)."""

    id: Index
    gpu: str | None = None
    host: str | None = None
    worker: str | None = None
    telemetry: TelemetryInfo | None = None
    no_gpu_reason: str | None = None


class CatalogEntry(Record, kw_only=True):
    """A level as the runner's registry described it (the header's ``catalog``)."""

    id: str
    title: str | None = None
    adds: str | None = None
    precision: str | None = None
    params: dict[str, int] | None = None
    block: list[int] | None = None
    tile: list[int] | None = None
    follows: str | None = None
    notes: str | None = None
    kind: str | None = None
    order: int | None = None
    source: str | None = None
    arch: str | None = None
    b_layout: str | None = None
    persistent: bool | None = None
    k_multiple: int | None = None
    archs: list[str] | None = None  # the architectures it claims (kernels/ladder/arch.py)
    arch_need: str | None = None  # the same in words: "sm_80+", "sm_90a only (Hopper)"
    output_format: str | None = None  # how it stores C
    user: str | None = None  # a user's kernel: its file (docs/user-kernels.md)
    toolchain: str | None = None  # a user's kernel: "nvrtc" or "triton"

    def __post_init__(self) -> None:
        if self.params is not None:
            self.params = current_params(self.params)


# ------------------------------------------------------------------ events
class Session(Event, tag="session", kw_only=True):
    """The first line of a session: the protocol, the device(s) and the levels."""

    protocol: int
    created: str
    levels: dict[str, SourceRef]  # level id -> its .cu and hash (entries of another shape dropped)
    device: DeviceInfo | None = None
    catalog: list[CatalogEntry] | None = None
    gemmscope: Version | None = None
    telemetry: TelemetryInfo | None = None
    no_gpu_reason: str | None = None
    synthetic: bool = False
    remote: str | None = None
    devices: list[DeviceEntry] | None = None
    gpu: str | None = None

    def gpus(self) -> list[DeviceEntry]:
        """The GPUs of the session: ``devices`` (version 4), else one entry, id 0, made of
        ``device`` (older files; none without a GPU)."""
        if self.devices:
            return list(self.devices)
        if self.device is None:
            return []
        return [DeviceEntry(id=0, **msgspec.structs.asdict(self.device), host=self.remote,
                            telemetry=self.telemetry)]


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


class Joined(Placed, tag="device", kw_only=True):
    """A GPU that joined the session after its header (a cluster worker): ``device`` is
    its index; the rest is a ``devices`` entry's (:class:`DeviceEntry`: an event and a
    part of one cannot share a base, a test holds these to its names and types)."""

    device: Index
    name: str | None = None
    sm_count: int | None = None
    cc: str | None = None
    arch: str | None = None
    sm_clock_max_mhz: Number | None = None
    mem_clock_max_mhz: Number | None = None
    memory_gib: Number | None = None
    l2_bytes: int | None = None
    driver: str | None = None
    cuda_runtime: str | None = None
    cupy: str | None = None
    peak_tflops: dict[str, Number | None] | None = None
    limits: dict[str, int] | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    mem_bandwidth_gbs: Number | None = None
    peak_clock_mhz: Number | None = None
    peak_tensor_clock_mhz: Number | None = None
    peak_source: str | None = None
    gpu_table_key: str | None = None
    gpu: str | None = None
    telemetry: TelemetryInfo | None = None
    no_gpu_reason: str | None = None

    def entry(self) -> DeviceEntry:
        fields = msgspec.structs.asdict(self)
        for name in ("t", "device", "id"):
            fields.pop(name)
        return DeviceEntry(id=self.device, **fields)


class Levels(Placed, tag="levels", kw_only=True):
    levels: list[CatalogEntry]


class Run(Placed, kw_only=True):
    """An event of one run of a level at a shape."""

    level: str
    M: int
    N: int
    K: int

    @property
    def shape(self) -> Shape:
        return Shape(self.M, self.N, self.K)


class Where(Placed, kw_only=True):
    """An event that names the run it is about where there was one."""

    level: str | None = None
    M: int | None = None
    N: int | None = None
    K: int | None = None

    @property
    def shape(self) -> Shape | None:
        if self.M is None or self.N is None or self.K is None:
            return None
        return Shape(self.M, self.N, self.K)


class Moded(Run, kw_only=True):
    """A run's event that says its mode (files before version 3: burst runs only)."""

    STRICT = frozenset({"mode"})  # an unknown mode refuses the event

    mode: Mode = Mode.BURST


class Timed(Moded, kw_only=True):
    """What a timed stretch of a run (a sustained trial, or the whole run) says of its
    launches, energy, clock and temperature."""

    cooldown_s: Number | None = None
    launches: int | None = None
    energy_j: Number | None = None  # a result's: per GEMM
    gflop_per_j: Number | None = None
    avg_power_w: Number | None = None
    energy_reason: str | None = None  # why energy_j is null
    sm_clock_mhz_avg: Number | None = None
    sm_clock_mhz_min: Number | None = None
    temp_c_start: Number | None = None
    temp_c_end: Number | None = None
    host_bound: bool | None = None


class RunStart(Moded, tag="run_start", kw_only=True):
    repeats: int  # burst: timed repeats; sustained: trials
    dtype: str | None = None
    precision: str | None = None
    warmup: int | None = None
    window_s: Number | None = None
    trials: int | None = None
    cooldown_s: Number | None = None


class Window(Record, kw_only=True):
    """A stretch of launches measured as one (a trial's window, a burst's energy
    window): when, how many launches, the GPU time, how its edges met the energy
    counter's steps, and the clock and slowdowns seen."""

    t_start: Number | None = None
    t_end: Number | None = None
    launches: int | None = None
    gpu_s: Number | None = None
    sm_clock_mhz_avg: Number | None = None
    sm_clock_mhz_min: Number | None = None
    throttled: list[str] | None = None
    counter_aligned: bool | None = None
    counter_step_s: Number | None = None
    edge_s: Number | None = None
    host_bound: bool | None = None


class TrialWindow(Window, kw_only=True):
    """One window of a sustained run (docs/protocol.md, ``trial_windows``); a sustained
    run's ``repeat`` event carries the same fields (:class:`Repeat`)."""

    i: int | None = None
    cooldown_s: Number | None = None
    ms: Number | None = None
    tflops: Number | None = None
    energy_j: Number | None = None
    gflop_per_j: Number | None = None
    avg_power_w: Number | None = None
    energy_reason: str | None = None
    sampled_power_w: Number | None = None
    temp_c_start: Number | None = None
    temp_c_end: Number | None = None


class EnergyWindow(Window, kw_only=True):
    """A burst run's energy window (docs/protocol.md, ``energy_window``)."""

    pattern: str | None = None
    method: str | None = None


class Repeat(Timed, tag="repeat", kw_only=True):
    """A timed repeat (burst), or a finished trial (sustained)."""

    i: int
    ms: Number
    tflops: Number
    # a sustained run's repeat is a whole trial: the rest of its window's fields
    # (TrialWindow's; an event and a part of one cannot share a base, a test holds them
    # to the same names and types)
    t_start: Number | None = None
    t_end: Number | None = None
    gpu_s: Number | None = None
    sampled_power_w: Number | None = None
    throttled: list[str] | None = None
    counter_aligned: bool | None = None
    counter_step_s: Number | None = None
    edge_s: Number | None = None


class Phase(Where, tag="phase", kw_only=True):
    """What a sustained run does now: ``cooldown`` before trial ``trial``, or ``window``
    (not a run's event, as it may name none: its mode as :class:`Moded`'s)."""

    STRICT = frozenset({"mode"})  # an unknown mode refuses the event

    phase: str
    trial: int
    seconds: Number | None = None
    mode: Mode = Mode.BURST


class Result(Timed, tag="result", kw_only=True):
    """One finished run (docs/protocol.md, ``result``)."""

    dtype: str
    median_ms: Number
    tflops: Number
    verified: bool
    rel_err: Number | None
    repeats: int
    # the arithmetic class percentages compare within; "" where the event does not say
    # (older recordings: the reader fills in the level's, ``rows.resolved``)
    precision: str = ""
    warmup: int | None = None
    tol: Number | None = None
    nan: bool | None = None
    deepgemm_diff: Number | None = None  # 1 - 2 sum(xy) / sum(x^2 + y^2), C against float64
    min_ms: Number | None = None
    max_ms: Number | None = None
    q1_ms: Number | None = None
    q3_ms: Number | None = None
    reference: str | None = None
    reference_tflops: Number | None = None
    pct_of_reference: Number | None = None
    reference_sm_clock_mhz_avg: Number | None = None  # the clock the reference ran at
    peak_tflops: Number | None = None
    pct_of_peak: Number | None = None
    # where a burst result's clock comes from: "repeats" (their telemetry samples) or
    # "energy_window" (repeats too short for a sample); None: not said (older files)
    clock_source: str | None = None
    power_source: str | None = None
    flush_j: Number | None = None  # results before issue 31: their energy included a flush
    # the slowdowns seen during the run (kernels/protocol/throttle.py, applied here once);
    # None: the run was not sampled
    throttled: tuple[str, ...] | None = None
    variant: str | None = None
    kernel: str | None = None
    # which code ran (issue 31 item 2): the build's key (nvrtc.code_key: source, options,
    # instantiations, compiler; one key is one cubin) and the compiler; None: older files
    code_key: str | None = None
    compiler: str | None = None
    regs: int | None = None
    smem_bytes: int | None = None
    local_bytes: int | None = None
    threads: int | None = None
    telemetry_samples: int | None = None
    energy_window: EnergyWindow | None = None
    # the template parameters the result says it ran (given by the run, or picked by the
    # level for the shape); None: the level's own
    params: dict[str, int] | None = None
    # sustained: the windows measured and their spread, the enforced power limit
    window_s: Number | None = None
    trials: int | None = None
    tflops_min: Number | None = None
    tflops_max: Number | None = None
    energy_j_min: Number | None = None
    energy_j_max: Number | None = None
    avg_power_w_min: Number | None = None
    avg_power_w_max: Number | None = None
    temp_c_max: Number | None = None
    launch_method: str | None = None
    launches_per_batch: int | None = None
    capture_error: str | None = None
    trial_windows: list[TrialWindow] | None = None
    power_limit_w: Number | None = None

    def __post_init__(self) -> None:
        if self.throttled is not None:
            self.throttled = slowdowns(self.throttled)
        if self.params is not None:
            self.params = _bounded_params(self.params)


MAX_PARAMS = 32  # a result's template parameters kept (names cut to 32 characters)


def _bounded_params(params: dict[str, int]) -> dict[str, int] | None:
    """At most MAX_PARAMS names of at most 32 characters, each old name (a recording made
    before a parameter was renamed, kernels/ladder/level.py's RENAMED_PARAMS) under its
    new one, so that every reader meets the level's own names."""
    if len(params) > MAX_PARAMS or any(len(k) > 32 for k in params):
        params = {k[:32]: v for k, v in list(params.items())[:MAX_PARAMS]}
    return current_params(params) or None


class Error(Where, tag="error", kw_only=True):
    kind: str
    message: str
    params: dict[str, int] | None = None  # a variant's (a sweep's refused cell)

    def __post_init__(self) -> None:
        if self.params is not None:
            self.params = _bounded_params(self.params)


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

    def __post_init__(self) -> None:
        if self.params is not None:
            self.params = _bounded_params(self.params)


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
            self.params = _bounded_params(self.params)


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

    STRICT = frozenset({"status"})

    def __post_init__(self) -> None:
        sc.normalize(self)

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
    probes: Annotated[list[CeilingProbe], msgspec.Meta(max_length=ceil.MAX_PROBES)] = []

    STRICT = frozenset({"peak_tflops", "bandwidth_gbs", "read_gbs", "copy_gbs",
                        "buffer_bytes", "probes"})

    @classmethod
    def repair(cls, obj: dict[str, Any]) -> None:
        ceil.refuse_unreadable(obj)


EVENTS: tuple[type[Event], ...] = (
    Session, Ready, Done, Pong, Bye, Restart, Joined, Levels, RunStart, Repeat, Phase,
    Result, Error, Info, Telemetry, Counters, Build, SourceCounters, Kernel, Ceilings)
BY_TYPE: dict[str, type[Event]] = {cls.__struct_config__.tag: cls for cls in EVENTS}  # type: ignore[misc]
AnyEvent = (Session | Ready | Done | Pong | Bye | Restart | Joined | Levels | RunStart | Repeat
            | Phase | Result | Error | Info | Telemetry | Counters | Build | SourceCounters
            | Kernel | Ceilings)

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
