"""The records of one run of a level at a shape (``records`` lists every event type):
its start, each timed repeat or sustained trial, the phases of a sustained run, the
result with its windows, and an error that names the run where there was one."""

from __future__ import annotations

from ..ladder.level import current_params
from ..ladder.shape import Shape
from .events import Mode
from .record_base import Number, Placed, Record
from .throttle import slowdowns


class Run(Placed, kw_only=True):
    """An event of one run of a level at a shape."""

    level: str
    M: int
    N: int
    K: int

    @property
    def shape(self) -> Shape:
        return Shape(self.M, self.N, self.K)

    @property
    def run_key(self) -> tuple[str, str]:
        """The run this event belongs to. A command that compares runs its reference
        first, and the reference's ``run_start``, ``repeat``, ``phase`` and ``result``
        echo the command's ``id`` as the level's do: ``level`` (the reference's id) tells
        the two runs apart, so a run is (``id``, ``level``), never ``id`` alone
        (docs/protocol.md). The id is any JSON value: its repr keeps the key hashable."""
        return (repr(self.id), self.level)


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
    settle_s: Number | None = None  # burst: idle seconds before the warmup
    energy_s: Number | None = None  # burst: its energy window, where not the default 1 s
    pair_budget_s: Number | None = None  # a paired burst's time budget (issue 41)
    paired: bool | None = None  # a level's run timed in pairs with ``reference``
    reference: str | None = None
    paired_with: str | None = None  # a reference's run timed in pairs with this level
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
    asked_s: Number | None = None  # the GPU seconds asked (energy_s); None: older files, 1 s
    # a reference's window measured for an earlier level of the same ladder (same shape,
    # operands and window), taken again rather than measured once more: its age, seconds
    reused_after_s: Number | None = None


class LaunchStepRecord(Record, kw_only=True):
    """Where a burst's launch times stepped (kernels/results/launch_steps.py): launches
    ``at`` + 1 to ``launches`` ran ``change_pct`` slower (negative: faster) than the first
    ``at``, their medians ``after_ms`` and ``before_ms``."""

    at: int
    launches: int
    before_ms: Number
    after_ms: Number
    change_pct: Number


class PairStepRecord(Record, kw_only=True):
    """Where a paired burst's per-pair ratio stepped (kernels/results/ratio_stats.py,
    the launch-step rule applied to the ratios): pairs ``at`` + 1 to ``pairs`` at
    ``after_pct`` of the reference, the first ``at`` at ``before_pct``."""

    at: int
    pairs: int
    before_pct: Number
    after_pct: Number
    change_pct: Number


class Versions(Record, kw_only=True):
    """What software made a result (issue 41 item 6; docs/protocol.md, ``versions``): the
    NVIDIA driver, the CUDA it supports, the CUDA runtime, cuBLAS, NVRTC and CuPy, each
    None where the runner could not read it."""

    driver: str | None = None
    cuda_driver: str | None = None
    cuda_runtime: str | None = None
    cublas: str | None = None
    nvrtc: str | None = None
    cupy: str | None = None


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
    # a paired burst (issue 41): the pair's index, and on the reference's launch
    # ``of`` = "reference" and the level it was paired with
    pair: int | None = None
    of: str | None = None
    paired_with: str | None = None


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
    # where this run built its level (its first run in the runner): seconds CuPy took,
    # and whether the cubin came from the build cache folder (issue 40 item 3)
    compile_s: Number | None = None
    compile_cached: bool | None = None
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
    # burst: the GPU's temperature at the first timed launch; sustained: before the first
    # trial and after the last
    temp_c_start: Number | None = None
    temp_c_end: Number | None = None
    # burst: the idle seconds before its warmup (0: none; None: not said, older files)
    settle_s: Number | None = None
    # burst: the step in its launch times where the power limiter (or anything else)
    # changed their speed mid-burst; None: steady, or not said (older files)
    launch_step: LaunchStepRecord | None = None
    launch_method: str | None = None
    launches_per_batch: int | None = None
    capture_error: str | None = None
    trial_windows: list[TrialWindow] | None = None
    power_limit_w: Number | None = None
    # a paired burst (issue 41 items 1-3; docs/protocol.md, "Paired ratios"): the level's
    # ratio is the pseudo-median of per-pair ratios (pct_estimator; the plain median where
    # that is absent) with its 95% interval; absent or false on older results, whose ratio
    # readers call "unpaired"
    paired: bool | None = None
    pairs: int | None = None
    max_pairs: int | None = None
    stop_reason: str | None = None  # "precision", "budget" or "repeats"
    pct_ci_low: Number | None = None
    pct_ci_high: Number | None = None
    pct_half_width: Number | None = None
    pct_estimator: str | None = None  # "hodges-lehmann"; absent: the plain median (older)
    pct_of_reference_medians: Number | None = None  # the two sides' medians' ratio
    throttle_rule: str | None = None
    throttle_threshold: Number | None = None
    throttled_pairs: int | None = None
    pct_of_reference_unthrottled: Number | None = None
    pct_ci_low_unthrottled: Number | None = None
    pct_ci_high_unthrottled: Number | None = None
    budget_s_per_pair: Number | None = None
    target_half_width_pct: Number | None = None
    pair_rest: str | None = None  # the idle between pairs, in words (the clock state)
    pair_step: PairStepRecord | None = None
    loop_s: Number | None = None
    # the timed launches held until queued (kernels/engine/hold.py): "held", or why not;
    # hold_timeouts: holds that gave up (the host queued slower than their limit)
    launch_hold: str | None = None
    hold_timeouts: int | None = None
    paired_with: str | None = None  # a reference's result: the level of its pair loop
    # an FP8 level's second paired reference (DeepGEMM, where the runner has it): its id,
    # the level's % of it with the interval, from a pair loop of its own; or why not
    deepgemm: str | None = None
    deepgemm_pct: Number | None = None
    deepgemm_ci_low: Number | None = None
    deepgemm_ci_high: Number | None = None
    deepgemm_pairs: int | None = None
    deepgemm_stop_reason: str | None = None
    deepgemm_tflops: Number | None = None
    deepgemm_verified: bool | None = None
    deepgemm_throttled_pairs: int | None = None
    deepgemm_reason: str | None = None
    # what A and B were drawn from (events.Distribution's names; kept as text, so that a
    # newer name still reads); None: not said, which is uniform (files before issue 41)
    operands: str | None = None
    versions: Versions | None = None  # what software made it; None: not said (older files)

    def __post_init__(self) -> None:
        if self.throttled is not None:
            self.throttled = slowdowns(self.throttled)
        if self.params is not None:
            self.params = bounded_params(self.params)


MAX_PARAMS = 32  # a result's template parameters kept (names cut to 32 characters)


def bounded_params(params: dict[str, int]) -> dict[str, int] | None:
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
            self.params = bounded_params(self.params)
