"""Sustained runs: a level launched back to back for a window, in trials, each after a
cool-down (docs/energy.md).

Per trial: TFLOPS from the launches over the GPU time of the window (CUDA events around
the whole window), J per GEMM from the total-energy counter read at its steps around the
window, average power (those joules over that time), the SM clock (mean and least of the
NVML samples in the window), the temperature before and after, and the clock-event
reasons seen. A result is the median of its trials with their least and greatest.

The trial loop (:func:`measure_trials`) and the result (:func:`summarize`) take the GPU
window, the clock, the sleep and the sensors as arguments, so they run with fakes on a
machine without a GPU; :func:`run_sustained` binds them to a :class:`~.measure.Bench`.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from ..device.telemetry import RunWindow
from ..ladder.registry import Level
from ..ladder.shape import Shape, tflops_of
from ..protocol.commands import DEFAULT_WARMUP, SustainedConfig
from ..protocol.events import Mode
from .energy import MeasuredWindow
from .idle import idle
from .measure import Bench, Refused, graphable

# (phase, trial index, seconds it will take; None: not known, a level's compile)
OnPhase = Callable[[str, int, float | None], None]


@dataclass(frozen=True, slots=True)
class Probes:
    """What a trial reads besides the GPU's timing: the session clock, a sleep (the
    cool-down), the GPU temperature, and the NVML samples between two session times."""

    clock: Callable[[], float]
    sleep: Callable[[float], None]
    temperature_c: Callable[[], float | None]
    samples: Callable[[float, float], RunWindow | None]


@dataclass(frozen=True, slots=True)
class Trial:
    """One window of back-to-back launches."""

    i: int
    t_start: float  # session time the window began and ended
    t_end: float
    cooldown_s: float  # idle time before it
    launches: int
    gpu_s: float  # GPU time of the window (CUDA events)
    ms: float  # per GEMM
    tflops: float
    energy_j: float | None  # per GEMM
    gflop_per_j: float | None
    avg_power_w: float | None
    energy_reason: str | None
    sm_clock_mhz_avg: float | None
    sm_clock_mhz_min: float | None
    sampled_power_w: float | None  # mean of the NVML power samples: a cross-check
    throttled: list[str]
    temp_c_start: float | None
    temp_c_end: float | None
    counter_aligned: bool | None
    counter_step_s: float | None
    edge_s: float | None  # counter-window time with the GPU idle (both ends together)
    host_bound: bool

    @classmethod
    def from_window(cls, i: int, w: MeasuredWindow, flops: float, cooled_s: float,
                    temps: tuple[float | None, float | None],
                    samples: RunWindow | None) -> Trial:
        per_gemm = w.j_per_launch
        reason = w.energy_reason
        if per_gemm is not None and per_gemm <= 0:
            per_gemm, reason = None, "the energy counter did not advance over the window"
        facts = w.describe()
        return cls(
            i=i, t_start=w.t_start, t_end=w.t_end, cooldown_s=cooled_s, launches=w.launches,
            gpu_s=w.gpu_s, ms=w.s_per_launch * 1e3, tflops=tflops_of(flops, w.s_per_launch * 1e3),
            energy_j=per_gemm, gflop_per_j=flops / 1e9 / per_gemm if per_gemm else None,
            avg_power_w=w.power_w if per_gemm else None, energy_reason=reason,
            sm_clock_mhz_avg=samples.sm_clock_mhz_avg if samples else None,
            sm_clock_mhz_min=samples.sm_clock_mhz_min if samples else None,
            sampled_power_w=samples.avg_power_w if samples else None,
            throttled=list(samples.throttled) if samples else [],
            temp_c_start=temps[0], temp_c_end=temps[1],
            counter_aligned=facts["counter_aligned"], counter_step_s=facts["counter_step_s"],
            edge_s=facts["edge_s"], host_bound=w.host_bound)

    def as_event(self) -> dict[str, Any]:
        return asdict(self)


def cool_down(seconds: float, trial: int, probes: Probes, on_phase: OnPhase) -> float:
    """Idle for ``seconds`` (the GPU does nothing), saying so every HEARTBEAT_S; returns
    the time it took on the session clock."""
    return idle(seconds, lambda left: on_phase("cooldown", trial, left), probes.sleep,
                probes.clock)


def measure_trials(run_window: Callable[[], MeasuredWindow], flops: float,
                   config: SustainedConfig, probes: Probes, on_phase: OnPhase,
                   on_trial: Callable[[Trial], None]) -> list[Trial]:
    """``config.trials`` trials, each a cool-down then one window. The cool-down comes
    before the first trial too, so that a level and its reference (run just before it)
    start from the same rest."""
    trials: list[Trial] = []
    for i in range(config.trials):
        cooled = cool_down(config.cooldown_s, i, probes, on_phase)
        temp_start = probes.temperature_c()
        on_phase("window", i, config.window_s)
        w = run_window()
        temp_end = probes.temperature_c()
        trial = Trial.from_window(i, w, flops, cooled, (temp_start, temp_end),
                                  probes.samples(w.t_start, w.t_end))
        trials.append(trial)
        on_trial(trial)
    return trials


def _spread(values: list[float | None]) -> tuple[float | None, float | None, float | None]:
    """(median, least, greatest), or Nones where any trial lacks the figure."""
    if not values or any(v is None for v in values):
        return None, None, None
    vs = [float(v) for v in values if v is not None]
    return statistics.median(vs), min(vs), max(vs)


def summarize(trials: list[Trial], flops: float, config: SustainedConfig) -> dict[str, Any]:
    """A sustained result's measured fields: medians over the trials with their least and
    greatest (the spread), the clocks, temperatures and reasons, and every trial."""
    ms, ms_min, ms_max = _spread([t.ms for t in trials])
    tf, tf_min, tf_max = _spread([t.tflops for t in trials])
    ej, ej_min, ej_max = _spread([t.energy_j for t in trials])
    pw, pw_min, pw_max = _spread([t.avg_power_w for t in trials])
    clock_avg = _spread([t.sm_clock_mhz_avg for t in trials])[0]
    clock_mins = [t.sm_clock_mhz_min for t in trials if t.sm_clock_mhz_min is not None]
    reasons: list[str] = []
    for t in trials:
        reasons += [r for r in t.throttled if r not in reasons]
    reason = next((t.energy_reason for t in trials if t.energy_reason), None)
    temps_end = [t.temp_c_end for t in trials if t.temp_c_end is not None]
    return {
        "mode": str(Mode.SUSTAINED), "window_s": config.window_s, "trials": len(trials),
        "cooldown_s": config.cooldown_s,
        "median_ms": ms, "min_ms": ms_min, "max_ms": ms_max,
        "tflops": tf, "tflops_min": tf_min, "tflops_max": tf_max,
        "energy_j": ej, "energy_j_min": ej_min, "energy_j_max": ej_max,
        "gflop_per_j": flops / 1e9 / ej if ej else None,
        "avg_power_w": pw, "avg_power_w_min": pw_min, "avg_power_w_max": pw_max,
        "power_source": "energy_counter" if ej else None,
        "energy_reason": None if ej else (reason or "no trial measured energy"),
        "sm_clock_mhz_avg": clock_avg, "sm_clock_mhz_min": min(clock_mins, default=None),
        "temp_c_start": trials[0].temp_c_start if trials else None,
        "temp_c_end": trials[-1].temp_c_end if trials else None,
        "temp_c_max": max(temps_end, default=None),
        "throttled": reasons, "host_bound": any(t.host_bound for t in trials),
        "launches": sum(t.launches for t in trials),
        "trial_windows": [t.as_event() for t in trials],
    }


def run_sustained(bench: Bench, level: Level, M: int, N: int, K: int,
                  config: SustainedConfig, warmup: int = DEFAULT_WARMUP,
                  params: dict[str, int] | None = None,
                  on_phase: OnPhase | None = None,
                  on_trial: Callable[[Trial], None] | None = None,
                  sleep: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    """A sustained run of one level on the bench's GPU; the result event's fields.

    The level is verified first (poisoned C, float64 reference); a wrong answer is
    refused (kind ``verify``) and never timed.
    """
    bench.check_memory(level, M, N, K)
    flops = Shape(M, N, K).flops
    nvml = bench.nvml
    probes = Probes(clock=bench.clock, sleep=sleep, temperature_c=nvml.temperature_c,
                    samples=bench.samples)
    with bench.stream:
        # the level's build is a phase too (its first run in this process)
        prep = bench.prepare(level, M, N, K, params, warmup, on_compile=(
            None if on_phase is None else lambda: on_phase("compile", 0, None)))
        if not prep.verified:
            raise Refused(f"{level.id} gave a wrong answer at {M}x{N}x{K}: "
                          f"{prep.why_wrong()}; a sustained run times only verified kernels",
                          "verify")
        batches = bench.batches(prep.launch, graph=graphable(level))
        trials = measure_trials(lambda: bench.window(batches, config.window_s), flops,
                                config, probes, on_phase or (lambda *_: None),
                                on_trial or (lambda _t: None))
    measured = summarize(trials, flops, config)
    return {**bench.head(prep, measured["tflops"]), **measured,
            "repeats": len(trials), "warmup": warmup, "power_limit_w": nvml.power_limit_w(),
            "launch_method": batches.method, "launches_per_batch": batches.per_batch,
            "capture_error": batches.capture_error}
