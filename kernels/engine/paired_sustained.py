"""Sustained runs of a level and its reference in alternating windows (issue 41 item 1:
"Sustained mode alternates level and reference windows the same way").

Both are prepared (each verified: a wrong answer is refused, as a sustained run times only
verified kernels) and batched; then each trial is one cool-down followed by a window of the
level and a window of the reference, the level first in even trials and the reference
first in odd ones. Each trial gives one ratio, the reference's ms per GEMM over the
level's, and kernels/results/ratio_stats.py makes the pseudo-median, its interval (null
under 6 trials: the sustained options allow at most 10) and the throttle flags from each
window's mean SM clock and reasons. The number of trials is the command's (``stop_reason``
"repeats"); there is no time budget beyond the windows.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ..ladder.registry import Level
from ..ladder.shape import Shape, percent
from ..protocol.commands import DEFAULT_WARMUP, SustainedConfig
from ..results.ratio_stats import ClockReading, Pair, paired_fields
from .measure import Bench, Refused, graphable
from .sustained import OnPhase, Probes, Trial, cool_down, summarize

OnSideTrial = Callable[[str, Trial], None]  # ("level" | "reference", the trial)


def _reading(trial: Trial) -> ClockReading:
    return ClockReading(trial.sm_clock_mhz_avg, tuple(trial.throttled))


def run_sustained_paired(bench: Bench, level: Level, reference: Level, M: int, N: int,
                         K: int, config: SustainedConfig, warmup: int = DEFAULT_WARMUP,
                         params: dict[str, int] | None = None,
                         on_phase: OnPhase | None = None,
                         on_trial: OnSideTrial | None = None,
                         sleep: Callable[[float], None] = time.sleep
                         ) -> tuple[dict[str, Any], dict[str, Any]]:
    """(the reference's result, the level's), both from one series of alternating
    windows, the level's with the paired fields."""
    flops = Shape(M, N, K).flops
    nvml = bench.nvml
    probes = Probes(clock=bench.clock, sleep=sleep, temperature_c=nvml.temperature_c,
                    samples=bench.samples)
    say_phase = on_phase or (lambda *_: None)
    say_trial = on_trial or (lambda *_: None)
    bench.check_memory(level, M, N, K)
    with bench.stream:
        # the level's build is a phase too (its first run in this process)
        prep = bench.prepare(level, M, N, K, params, warmup,
                             on_compile=lambda: say_phase("compile", 0, None))
        bench.cp.get_default_memory_pool().free_all_blocks()  # as paired.run_paired
        bench.check_memory(reference, M, N, K)
        ref = bench.prepare(reference, M, N, K, None, warmup)
        for p in (prep, ref):
            if not p.verified:
                raise Refused(f"{p.level.id} gave a wrong answer at {M}x{N}x{K}: "
                              f"{p.why_wrong()}; a sustained run times only verified "
                              "kernels", "verify")
        batches = {"level": bench.batches(prep.launch, graph=graphable(level)),
                   "reference": bench.batches(ref.launch, graph=graphable(reference))}
        trials: dict[str, list[Trial]] = {"level": [], "reference": []}
        for i in range(config.trials):
            cooled = cool_down(config.cooldown_s, i, probes, say_phase)
            order = ("level", "reference") if i % 2 == 0 else ("reference", "level")
            for side in order:
                temp_start = probes.temperature_c()
                say_phase("window", i, config.window_s)
                w = bench.window(batches[side], config.window_s)
                trial = Trial.from_window(i, w, flops, cooled if side == order[0] else 0.0,
                                          (temp_start, probes.temperature_c()),
                                          probes.samples(w.t_start, w.t_end))
                trials[side].append(trial)
                say_trial(side, trial)
    pairs = [Pair(i, lt.ms, rt.ms, i % 2 == 0, _reading(lt), _reading(rt))
             for i, (lt, rt) in enumerate(zip(trials["level"], trials["reference"],
                                              strict=True))]
    out = []
    for p, side in ((prep, "level"), (ref, "reference")):
        measured = summarize(trials[side], flops, config)
        b = batches[side]
        out.append({**bench.head(p, measured["tflops"]), **measured,
                    "repeats": len(trials[side]), "warmup": warmup,
                    "power_limit_w": nvml.power_limit_w(), "launch_method": b.method,
                    "launches_per_batch": b.per_batch, "capture_error": b.capture_error})
    level_result, ref_result = out
    ref_result["paired_with"] = level.id
    fields = paired_fields(pairs, bench.device.sm_clock_max_mhz, "repeats", 0.0)
    fields["budget_s_per_pair"] = None  # the windows set the time, not a budget
    level_result.update({
        "reference": reference.id, "reference_tflops": ref_result["tflops"],
        "reference_sm_clock_mhz_avg": ref_result["sm_clock_mhz_avg"], **fields,
        "pct_of_reference_medians": percent(level_result["tflops"], ref_result["tflops"])})
    return ref_result, level_result
