"""Launch, verify and time one level at one shape (GPU side, inside the runner process).

Truth rules (shared/DESIGN.md): fresh random inputs for every run, from the run's named
distribution (zeros only where a run asks for them, to show the power they save); C is
poisoned with NaN before the checked launch; the reference is a float64 product of the
same rounded inputs; timing uses CUDA events around each launch after warm-up, with L2
flushed before every timed launch, and reports the median and spread. Energy comes from
the total-energy counter over a second of the same launches back to back after the timed
repeats (no flush: its joules are not the GEMM's), never from power samples
(docs/energy.md).

The level's compile and launch, and :class:`Refused`, are in :mod:`.level_launch`
(``level_launcher`` and ``Refused`` are importable from here as before).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..device.gpu import DeviceInfo, deep_gemm_missing, require_cupy
from ..device.telemetry import Nvml, RunWindow
from ..ladder.level import Toolchain
from ..ladder.registry import (
    DTYPE_OF,
    TOLERANCE,
    Kind,
    Level,
    Library,
    Precision,
)
from ..ladder.shape import Shape, percent, tflops_of
from ..protocol.commands import DEFAULT_REPEATS, DEFAULT_WARMUP, ENERGY_S
from ..protocol.events import DEFAULT_DISTRIBUTION, Distribution, Mode
from ..results.launch_steps import launch_step
from ..toolchain.constraints import over_limits
from .cublaslt import torch_scaled_mm_available
from .energy import (
    EnergyCounter,
    MeasuredWindow,
    StreamBatches,
    batch_size,
    measure_window,
    seconds_per_call,
)
from .hold import LaunchHold, make_hold
from .idle import idle
from .level_launch import Refused, level_launcher, limit_kind
from .operands import OUTPUT_BYTES, Accuracy, Operands, check, random_inputs
from .reference_launch import reference_launcher
from .triton_launch import triton_launcher, triton_missing

ITEMSIZE = {Precision.FP32: 4, Precision.TF32: 4, Precision.FP16: 2, Precision.BF16: 2,
            Precision.FP8: 1}


def refusal(level: Level, M: int, N: int, K: int, device: DeviceInfo | None) -> Refused | None:
    """Why a level cannot run here, checked before anything is allocated (or None): what
    this device and this Python lack, then the level's own shape rules."""
    if level.arch == "sm_90a" and (device is None or not device.has_sm90a):
        return Refused(f"{level.id} needs Hopper (sm_90a)", "unsupported")
    if level.toolchain is Toolchain.TRITON and (why := triton_missing()) is not None:
        return Refused(f"{level.id} is a Triton kernel and {why}; skipped", "unsupported")
    if level.library is Library.DEEPGEMM and (why := deep_gemm_missing()) is not None:
        return Refused(f"{level.id} needs DeepGEMM and {why}; skipped", "unsupported")
    if level.library is Library.CUBLASLT and not torch_scaled_mm_available():
        return Refused(f"{level.id} needs torch with torch._scaled_mm (not installed here); "
                       "skipped", "unsupported")
    why = level.shape_refusal(M, N, K)
    if why is not None:
        return Refused(why)
    if level.kind is Kind.LEVEL and device is not None and device.limits is not None:
        why = over_limits(level, device.limits)
        if why is not None:
            return Refused(f"{level.id}: {why}", limit_kind(level))
    return None


def graphable(level: Level) -> bool:
    """Whether the level's launches may be captured in a CUDA graph: the ladder's own
    kernels (a library call, or Triton's launcher with its own host work, run plainly)."""
    return level.kind is Kind.LEVEL and level.toolchain is Toolchain.NVRTC


def bytes_needed(level: Level, M: int, N: int, K: int) -> int:
    """Device memory one run needs: inputs, C, and the float64 copies for verification."""
    item = ITEMSIZE[level.precision]
    out_item = OUTPUT_BYTES[level.output_format]
    # inputs, their float32 originals, C, and the float64 check (A, B, C, reference)
    return (item + 4) * (M * K + K * N) + out_item * M * N + 8 * (M * K + K * N + 3 * M * N)


@dataclass(slots=True)
class Timing:
    times_ms: list[float]

    def summary(self) -> dict[str, float]:
        t = sorted(self.times_ms)
        q = statistics.quantiles(t, n=4) if len(t) >= 2 else [t[0]] * 3
        return {"median_ms": statistics.median(t), "min_ms": t[0], "max_ms": t[-1],
                "q1_ms": q[0], "q3_ms": q[2]}


@dataclass(slots=True)
class Prepared:
    """A level ready to time: its operands, its launch (on the bench's stream), the
    kernel's variant and resources, and the verification of one poisoned launch."""

    level: Level
    ops: Operands
    launch: Callable[[], None]
    info: dict[str, Any]
    acc: Accuracy

    @property
    def verified(self) -> bool:
        return self.acc.verified(self.level.precision)

    def verification(self) -> dict[str, Any]:
        acc = self.acc
        return {"verified": self.verified,
                "rel_err": None if acc.rel_err != acc.rel_err else acc.rel_err,
                "tol": TOLERANCE[self.level.precision], "nan": acc.has_nan,
                "deepgemm_diff": None if acc.has_nan else acc.deepgemm_diff}

    def why_wrong(self) -> str:
        if self.acc.has_nan:
            return "NaN in C (an element was not written)"
        return (f"relative error {self.acc.rel_err:.3g} > tolerance "
                f"{TOLERANCE[self.level.precision]:.0e}")


# GPU time of the energy window after a burst run's timed repeats, unless the run asks for
# another (energy_s): the counter steps every ~100 ms on the H200 and is read at its steps,
# so a second of back-to-back launches keeps the idle ends to about a percent
BURST_ENERGY_WINDOW_S = ENERGY_S[0]


class Bench:
    """Runs levels on the current device. One instance per runner process."""

    def __init__(self, device: DeviceInfo, clock: Callable[[], float], sampler: Any = None,
                 nvml: Nvml | None = None):
        self.cp = require_cupy()
        self.device = device
        self.clock = clock
        self.sampler = sampler
        if nvml is None:  # the runner's sampler owns NVML; a script's bench opens its own
            nvml = sampler.nvml if sampler is not None else Nvml()
        self.nvml = nvml
        self.energy_reason = self.nvml.energy_reason()
        self.energy = None if self.energy_reason else EnergyCounter(self.nvml.energy_j)
        self._flush_buf = self.cp.empty(max(device.l2_bytes * 2, 1 << 20) // 4, self.cp.float32)
        self.stream = self.cp.cuda.Stream(non_blocking=True)
        # what the next runs' operands are drawn from (the runner sets it per command)
        self.distribution: Distribution = DEFAULT_DISTRIBUTION
        self._hold: tuple[LaunchHold | None, str | None] | None = None

    def launch_hold(self) -> tuple[LaunchHold | None, str | None]:
        """The hold of timed launches (kernels/engine/hold.py), made on first use; None
        and why where it cannot be made (the launches are then timed unheld)."""
        if self._hold is None:
            self._hold = make_hold(self.cp)
        return self._hold

    def hold_fields(self) -> dict[str, Any]:
        """What a result says of the hold: ``launch_hold`` ("held" or why not) and
        ``hold_timeouts`` (holds that gave up, since this bench was made)."""
        hold, why_not = self.launch_hold()
        if hold is None:
            return {"launch_hold": why_not, "hold_timeouts": None}
        return {"launch_hold": "held", "hold_timeouts": hold.timeouts}

    def _launcher(self, level: Level, ops: Operands, params: dict[str, int] | None,
                  on_compile: Callable[[], None] | None = None
                  ) -> tuple[Callable[[], None], dict[str, Any]]:
        if level.toolchain is Toolchain.TRITON:  # a user's Triton kernel
            return triton_launcher(level, ops)
        if level.library is None:
            return level_launcher(level, ops, params, on_compile=on_compile)
        return reference_launcher(level, ops, self.stream.ptr)

    # ------------------------------------------------------------------ shared steps
    def check_memory(self, level: Level, M: int, N: int, K: int) -> None:
        free, _total = self.cp.cuda.runtime.memGetInfo()
        need = bytes_needed(level, M, N, K)
        if need > free * 0.9:
            raise Refused(f"{M}x{N}x{K} needs {need / 2**30:.1f} GiB of device memory for "
                          f"{level.id} and its float64 check; {free / 2**30:.1f} GiB are free",
                          "out_of_memory")

    def prepare(self, level: Level, M: int, N: int, K: int, params: dict[str, int] | None,
                warmup: int, settle: Callable[[], None] | None = None,
                on_compile: Callable[[], None] | None = None) -> Prepared:
        """Fresh inputs, the launch, its verification (poisoned C, float64 reference of
        the same values), ``settle`` (an idle, with the GPU done), then ``warmup`` untimed
        launches. Call within ``self.stream``. ``on_compile``: see level_launcher."""
        ops = random_inputs(level, M, N, K, self.distribution)
        launch, info = self._launcher(level, ops, params, on_compile)
        ops.poison()
        launch()
        acc = check(ops)
        if settle is not None:
            self.stream.synchronize()
            settle()
        for _ in range(warmup):
            launch()
        self.stream.synchronize()
        return Prepared(level, ops, launch, info, acc)

    def head(self, prep: Prepared, tflops: float) -> dict[str, Any]:
        """The fields every result of a run has, whatever its mode."""
        level, (M, N, K) = prep.level, prep.ops.shape
        peak = (self.device.as_event()["peak_tflops"] or {}).get(str(level.precision))
        return {"level": level.id, "M": M, "N": N, "K": K, "dtype": DTYPE_OF[level.precision],
                "precision": str(level.precision), "operands": str(self.distribution),
                **prep.verification(),
                "peak_tflops": peak, "pct_of_peak": percent(tflops, peak),
                **prep.info}

    def flush(self) -> None:
        """Evict A, B and C from L2 (write twice its size)."""
        self._flush_buf.fill(1.0)

    def batches(self, body: Callable[[], None], graph: bool) -> StreamBatches:
        """``body`` in batches of about BATCH_TARGET_S of GPU time, as a CUDA graph where
        ``graph`` (the levels' own kernels) else as plain launches."""
        per = batch_size(seconds_per_call(self.cp, self.stream, body))
        return StreamBatches(self.cp, self.stream, body, per, graph)

    def window(self, batches: StreamBatches, window_s: float) -> MeasuredWindow:
        return measure_window(batches, self.energy, window_s, self.clock,
                              on_wait=self._sample_if_off, no_counter=self.energy_reason)

    def samples(self, t0: float, t1: float) -> RunWindow | None:
        """The NVML samples between two session times (None without a sampler)."""
        return self.sampler.window(t0, t1) if self.sampler is not None else None

    def _sample_if_off(self) -> None:
        if self.sampler is not None and self.sampler.hz == 0:
            self.sampler.sample_now()

    # ------------------------------------------------------------------ a burst run
    def run(self, level: Level, M: int, N: int, K: int, repeats: int = DEFAULT_REPEATS,
            warmup: int = DEFAULT_WARMUP,
            on_repeat: Callable[[int, float], None] | None = None,
            params: dict[str, int] | None = None, energy: bool = True,
            settle_s: float = 0.0,
            on_settle: Callable[[float], None] | None = None,
            on_compile: Callable[[], None] | None = None,
            energy_s: float = BURST_ENERGY_WINDOW_S) -> dict[str, Any]:
        """One burst run; ``energy=False`` skips the energy window (correctness checks,
        where a second per run would add up), leaving the energy fields null, and so does
        ``energy_s`` 0; else the window lasts ``energy_s`` GPU seconds.
        ``settle_s``: idle seconds after the verification, before the warmup, so that the
        burst starts from a rest of the power limiter (``on_settle(seconds left)`` says
        so at least every idle.HEARTBEAT_S). ``on_compile()``: the level is about to be
        built (its first run in this process)."""
        self.check_memory(level, M, N, K)
        flops = Shape(M, N, K).flops

        def settle() -> None:
            idle(settle_s, on_settle or (lambda _left: None), time.sleep, self.clock)

        with self.stream:
            prep = self.prepare(level, M, N, K, params, warmup, settle if settle_s else None,
                                on_compile)
            temp_start = self.nvml.temperature_c()
            times = self._time(prep.launch, repeats, on_repeat)
            if not energy:
                fields = burst_energy_fields(None, flops, None, None,
                                             "not measured (energy=False)")
            elif energy_s <= 0:
                fields = burst_energy_fields(None, flops, None, None, "not measured: the run "
                                             "asked for no energy window (energy_s 0)")
            else:
                fields = self.burst_energy(level, prep.launch, flops, energy_s)
        summary = Timing(times["ms"]).summary()
        tflops = tflops_of(flops, summary["median_ms"])
        result: dict[str, Any] = {
            **self.head(prep, tflops), "mode": str(Mode.BURST), **summary, "tflops": tflops,
            "repeats": repeats, "warmup": warmup, "settle_s": settle_s,
            "temp_c_start": temp_start,
            "launch_step": step.as_event() if (step := launch_step(times["ms"])) else None}
        window = self.samples(times["t0"], times["t1"])
        if window is not None:
            result.update({
                "sm_clock_mhz_avg": window.sm_clock_mhz_avg,
                "sm_clock_mhz_min": window.sm_clock_mhz_min,
                "throttled": window.throttled, "telemetry_samples": window.samples})
        result.update(clock_fields(result, fields.get("energy_window")))
        result.update(fields)
        result.update(self.hold_fields())
        return result

    def burst_energy(self, level: Level, launch: Callable[[], None], flops: float,
                      window_s: float = BURST_ENERGY_WINDOW_S) -> dict[str, Any]:
        """J per GEMM of the level's launches back to back for ``window_s`` of GPU time
        (no flush between them), the counter read at its steps around them."""
        if self.energy is None:
            return burst_energy_fields(None, flops, None, None, self.energy_reason)
        batches = self.batches(launch, graph=graphable(level))
        w = self.window(batches, window_s)
        return burst_energy_fields(w, flops, self.samples(w.t_start, w.t_end), batches.method,
                                   asked_s=window_s)

    def _time(self, launch: Callable[[], None], repeats: int,
              on_repeat: Callable[[int, float], None] | None) -> dict[str, Any]:
        cp = self.cp
        start, end = cp.cuda.Event(), cp.cuda.Event()
        hold, _why_not = self.launch_hold()
        t0 = self.clock()
        out: list[float] = []
        for i in range(repeats):
            self._flush_buf.fill(i)  # evict A, B and C from L2 before every timed launch
            if hold is not None:
                hold.hold()  # the events bracket GPU work, not the host's queuing
            start.record(self.stream)
            launch()
            end.record(self.stream)
            if hold is not None:
                hold.release()
            if self.sampler is not None and self.sampler.hz == 0:
                self.sampler.sample_now()  # at least one clock reading per launch
            end.synchronize()
            if hold is not None:
                hold.settled()
            ms = cp.cuda.get_elapsed_time(start, end)
            out.append(ms)
            if on_repeat is not None:
                on_repeat(i, ms)
        t1 = self.clock()
        return {"ms": out, "t0": t0, "t1": t1}


def burst_energy_fields(w: MeasuredWindow | None, flops: float, samples: RunWindow | None,
                        method: str | None, reason: str | None = None,
                        asked_s: float = BURST_ENERGY_WINDOW_S) -> dict[str, Any]:
    """A burst result's energy fields from its energy window (docs/energy.md): J per
    GEMM of back-to-back launches, the window's average power, and what the window was
    (``asked_s``: the GPU seconds it was asked to last; ``gpu_s``: what it lasted)."""
    window: dict[str, Any] | None = None
    if w is not None:
        window = {"pattern": "launch", "method": method, "asked_s": asked_s, **w.describe(),
                  "sm_clock_mhz_avg": samples.sm_clock_mhz_avg if samples else None,
                  "sm_clock_mhz_min": samples.sm_clock_mhz_min if samples else None,
                  "throttled": samples.throttled if samples else None}
        reason = w.energy_reason
    per_gemm = w.j_per_launch if w is not None else None
    if per_gemm is not None and per_gemm <= 0:
        per_gemm, reason = None, "the energy counter did not advance over the window"
    return {"energy_j": per_gemm,
            "gflop_per_j": flops / 1e9 / per_gemm if per_gemm else None,
            "avg_power_w": w.power_w if per_gemm and w is not None else None,
            "power_source": "energy_counter" if per_gemm else None,
            "energy_reason": None if per_gemm else reason, "energy_window": window}


def clock_fields(result: dict[str, Any], window: dict[str, Any] | None) -> dict[str, Any]:
    """The SM clock a burst result states, and where it comes from (``clock_source``): the
    telemetry samples of its timed repeats, else (repeats shorter than the sampler's
    period, no sample fell in them) those of its energy window, else none."""
    if result.get("sm_clock_mhz_avg") is not None:
        return {"clock_source": "repeats"}
    if window is not None and window.get("sm_clock_mhz_avg") is not None:
        return {"sm_clock_mhz_avg": window["sm_clock_mhz_avg"],
                "sm_clock_mhz_min": window.get("sm_clock_mhz_min"),
                "clock_source": "energy_window"}
    return {"clock_source": None}


def wall_clock() -> Callable[[], float]:
    t0 = time.monotonic()
    return lambda: time.monotonic() - t0
