"""Paired timing of a level and its reference (issue 41 items 1-3; shared/DESIGN.md, "A
ratio is measured in pairs").

The H200 holds 700 W by lowering its clock, so a level and its reference timed one after
the other meet its limiter at different moments. Here both are prepared (each verified,
both operand sets resident), warmed up alternately, then timed alternately in one loop:
level then reference in even pairs, reference then level in odd ones (an order effect
cancels), each launch in its own event pair with L2 flushed before it, and the SM clock
and clock-event reasons read while it runs (NVML, after its end event is recorded and
before it is waited on). The loop stops by kernels/results/ratio_stats.py's rule, which
also makes the ratio, its interval and the throttle flags.

:func:`pair_loop` takes the two timed launches and the clock as arguments, so it runs
with fakes on a machine without a GPU; :func:`run_paired` binds it to a
:class:`~.measure.Bench`.

A :class:`Rest` rule may idle the GPU between pairs (nvbench's throttle recovery delay,
or a fixed duty cycle), and ``warm_s`` may run both launches back to back before the loop
(into the limiter's steady state): the clock state the pairs are timed at (issue 41,
"the ratio moves with the clock the loop reaches", docs/perf-notes.md).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from statistics import median
from typing import Any

from ..ladder.registry import Level
from ..ladder.shape import Shape, percent, tflops_of
from ..protocol.events import Mode
from ..results.launch_steps import launch_step
from ..results.ratio_stats import (
    ClockReading,
    Pair,
    StopReason,
    clock_summary,
    paired_fields,
    pct_fields,
    reasons_seen,
    stop_reason,
)
from .idle import idle
from .measure import (
    BURST_ENERGY_WINDOW_S,
    Bench,
    Prepared,
    Refused,
    Timing,
    burst_energy_fields,
    clock_fields,
)

TimedLaunch = Callable[[], tuple[float, ClockReading]]  # one flushed, timed launch
OnLaunch = Callable[[str, int, float], None]  # ("level" | "reference", pair, ms)

LEVEL, REFERENCE = "level", "reference"
EVERY_PAIR_UP_TO = 64  # the precision rule is checked after every pair up to here, then
PRECISION_EVERY = 8  # every this many, or every n / PRECISION_SHARE once that is more:
PRECISION_SHARE = 32  # a check reads every ratio (about 1 ms at 200 pairs, 13 at 4,000)


@dataclass(frozen=True, slots=True)
class Rest:
    """Idle between pairs. ``recover_s`` after a pair in which either launch's SM clock
    read under ``band`` of the max clock (nvbench's ``--throttle-recovery-delay``, whose
    default is 0.05 s); and after every pair ``duty`` times the pair's own wall time (1.0:
    the GPU busy about half the time, under the limiter's average)."""

    band: float = 0.97
    recover_s: float = 0.0
    duty: float = 0.0

    def seconds(self, pair: Pair, pair_wall_s: float, max_clock_mhz: float | None) -> float:
        """How long to idle after ``pair``."""
        rest = self.duty * pair_wall_s
        clocks = [c.sm_clock_mhz for c in (pair.level_clock, pair.ref_clock)]
        if self.recover_s and max_clock_mhz and any(
                c is not None and c < self.band * max_clock_mhz for c in clocks):
            rest += self.recover_s
        return rest

    def describe(self) -> str:
        parts = []
        if self.recover_s:
            parts.append(f"{self.recover_s:g} s after a pair under {self.band:.0%} of the "
                         "max SM clock")
        if self.duty:
            parts.append(f"{self.duty:g} x each pair's wall time after it")
        return "; ".join(parts) or "none"


# The rest a paired burst takes (issue 41, measured on the H200 at 8192^3 by
# benchmarks/clock_state.py, 2026-12-03): idle after each pair as long as the pair took.
# The GPU then stays under the 700 W limiter's average and every pair runs near the boost
# clock, so three repetitions agree within 0.4% where back-to-back pairs (the loop
# reaching a different limiter state each time) moved 0.5-3.9%, and a recovery delay
# after slow-clocked pairs only (nvbench's rule) 2-7%. The limited state is what a
# sustained run measures.
PAIR_REST = Rest(duty=1.0)


class ReusedEnergy:
    """A reference's energy window, kept for the next levels of one ladder: the levels of
    a precision share their reference, and measuring its window again for each (half a
    second or more apiece) doubled a ladder's energy time (issue 40 item 3). Taken again
    while younger than ``max_age_s``; the result's ``energy_window.reused_after_s`` says
    so, with its age."""

    MAX_AGE_S = 120.0

    def __init__(self, max_age_s: float = MAX_AGE_S) -> None:
        self.max_age_s = max_age_s
        self.fields: dict[str, Any] | None = None
        self.at: float = 0.0

    def take(self, now: float, measure: Callable[[], dict[str, Any]]) -> dict[str, Any]:
        """The kept fields, marked with their age, or a new measurement (kept where it
        has a window)."""
        if self.fields is not None and 0 <= now - self.at <= self.max_age_s:
            window = self.fields.get("energy_window")
            return {**self.fields, "energy_window": None if window is None else
                    {**window, "reused_after_s": round(now - self.at, 3)}}
        fields = measure()
        if fields.get("energy_window") is not None and fields.get("energy_j") is not None:
            self.fields, self.at = fields, now
        return fields


Sleep = Callable[[float], None]


def pair_loop(time_level: TimedLaunch, time_ref: TimedLaunch, clock: Callable[[], float],
              budget_s: float, max_pairs: int, on_launch: OnLaunch | None = None,
              rest: Rest | None = None, max_clock_mhz: float | None = None,
              sleep: Sleep = time.sleep) -> tuple[list[Pair], StopReason]:
    """Time pairs until ratio_stats.stop_reason says stop; the pairs and why. With
    ``rest``, idle after each pair as it says (the idle counts in the time budget)."""
    pairs: list[Pair] = []
    ratios: list[float] = []
    t0 = clock()
    say = on_launch or (lambda _side, _i, _ms: None)
    while True:
        i = len(pairs)
        t_pair = clock()
        level_first = i % 2 == 0
        if level_first:
            level_ms, level_clock = time_level()
            say(LEVEL, i, level_ms)
            ref_ms, ref_clock = time_ref()
            say(REFERENCE, i, ref_ms)
        else:
            ref_ms, ref_clock = time_ref()
            say(REFERENCE, i, ref_ms)
            level_ms, level_clock = time_level()
            say(LEVEL, i, level_ms)
        pair = Pair(i, level_ms, ref_ms, level_first, level_clock, ref_clock)
        pairs.append(pair)
        ratios.append(pair.ratio)
        t_check = clock()
        wait = rest.seconds(pair, t_check - t_pair, max_clock_mhz) if rest is not None else 0.0
        n, elapsed = len(pairs), t_check - t0 + max(wait, 0.0)  # the rest to come counts
        reason = None
        if (n < EVERY_PAIR_UP_TO or n % max(PRECISION_EVERY, n // PRECISION_SHARE) == 0
                or n >= max_pairs or elapsed >= budget_s):
            reason = stop_reason(ratios, elapsed, budget_s, max_pairs)
        if wait > 0:  # the check's own time is part of the rest
            left = wait - (clock() - t_check)
            if left > 0:
                sleep(left)
        if reason is not None:
            return pairs, reason


def clock_reader(bench: Bench) -> Callable[[], ClockReading]:
    """The SM clock and clock-event reasons now: two NVML calls (Nvml.clock_now), not a
    whole telemetry sample (about ten calls and a GPM sample) per launch; the runner's
    sampler goes on sampling everything at its own rate for the windows."""
    clock_now = bench.nvml.clock_now

    def read() -> ClockReading:
        clock, reasons = clock_now()
        return ClockReading(clock, None if reasons is None else tuple(reasons))

    return read


def launch_timer(bench: Bench, launch: Callable[[], None],
                 read_clock: Callable[[], ClockReading]) -> TimedLaunch:
    """One launch as the burst loop times it: L2 flushed first, held until queued
    (kernels/engine/hold.py, where the bench has a hold), its own event pair, the clock
    read while it runs."""
    cp = bench.cp
    start, end = cp.cuda.Event(), cp.cuda.Event()
    hold, _why_not = bench.launch_hold()

    def timed() -> tuple[float, ClockReading]:
        bench.flush()  # evict both operand sets from L2
        if hold is not None:
            hold.hold()
        start.record(bench.stream)
        launch()
        end.record(bench.stream)
        if hold is not None:
            hold.release()
        reading = read_clock()
        end.synchronize()
        if hold is not None:
            hold.settled()
        return float(cp.cuda.get_elapsed_time(start, end)), reading

    return timed


def run_paired(bench: Bench, level: Level, reference: Level, M: int, N: int, K: int,
               max_pairs: int, warmup: int, budget_s: float,
               on_launch: OnLaunch | None = None, params: dict[str, int] | None = None,
               energy: bool = True, settle_s: float = 0.0,
               on_settle: Callable[[float], None] | None = None,
               second: Level | None = None,
               on_compile: Callable[[], None] | None = None,
               energy_s: float = BURST_ENERGY_WINDOW_S, rest: Rest | None = PAIR_REST,
               warm_s: float = 0.0, ref_energy: ReusedEnergy | None = None
               ) -> tuple[dict[str, Any], dict[str, Any]]:
    """A paired burst of ``level`` and ``reference``: (the reference's result, the
    level's), both from the same loop, the level's with the paired fields. ``second``: a
    second reference (DeepGEMM beside an FP8 level's cuBLASLt) paired with the level in a
    loop of its own after the first, its ratio as the ``deepgemm_*`` fields.
    ``on_compile``: the level's build starts (level_launch.level_launcher); ``energy_s``: each
    side's energy window after the loop, GPU seconds (0: none), as a plain burst's.
    ``rest``: idle between pairs (:class:`Rest`); ``warm_s``: after the warm-up launches,
    both launched alternately back to back for this many seconds before the loop;
    ``ref_energy``: where the reference's energy window may come from an earlier level's
    run (:class:`ReusedEnergy`)."""
    flops = Shape(M, N, K).flops
    bench.check_memory(level, M, N, K)
    with bench.stream:
        prep = bench.prepare(level, M, N, K, params, 0, on_compile=on_compile)
        # the level's operands stay resident; its float64 check is done with: give the
        # pool's cached blocks back so that the free memory the check reads is true
        bench.cp.get_default_memory_pool().free_all_blocks()
        bench.check_memory(reference, M, N, K)
        ref = bench.prepare(reference, M, N, K, None, 0)
        if settle_s:
            idle(settle_s, on_settle or (lambda _left: None), time.sleep, bench.clock)
        for _ in range(warmup):  # alternately, as they will be timed
            prep.launch()
            ref.launch()
        bench.stream.synchronize()
        warm_until = bench.clock() + warm_s
        while bench.clock() < warm_until:  # into the limiter's steady state
            for _ in range(4):
                prep.launch()
                ref.launch()
            bench.stream.synchronize()
        temp_start = bench.nvml.temperature_c()
        read_clock = clock_reader(bench)
        t0 = bench.clock()
        pairs, stop = pair_loop(launch_timer(bench, prep.launch, read_clock),
                                launch_timer(bench, ref.launch, read_clock),
                                bench.clock, budget_s, max_pairs, on_launch, rest,
                                bench.device.sm_clock_max_mhz)
        t1 = bench.clock()
        also = second_loop(bench, prep, second, read_clock, M, N, K, warmup, budget_s,
                           max_pairs) if second is not None else {}
        no_energy = burst_energy_fields(
            None, flops, None, None, "not measured (energy=False)" if not energy else
            "asked for no energy window (energy_s 0)")
        # each side's energy window as a plain burst's (measure.Bench's own step); the
        # reference's taken from ``ref_energy`` where an earlier level measured it
        energies = [no_energy, no_energy]
        if energy and energy_s > 0:
            def window(p: Prepared) -> dict[str, Any]:
                return bench.burst_energy(p.level, p.launch, flops, energy_s)

            energies = [window(prep), window(ref) if ref_energy is None else
                        ref_energy.take(bench.clock(), lambda: window(ref))]
    level_ms, ref_ms = [p.level_ms for p in pairs], [p.ref_ms for p in pairs]
    common = {"mode": str(Mode.BURST), "repeats": len(pairs), "max_pairs": max_pairs,
              "warmup": warmup, "settle_s": settle_s, "temp_c_start": temp_start,
              "loop_s": t1 - t0}
    level_only = {"pair_rest": (rest or Rest()).describe()
                  + (f"; {warm_s:g} s of both back to back first" if warm_s else "")}
    sides = []
    for p, times, readings, fields in (
            (prep, level_ms, [x.level_clock for x in pairs], energies[0]),
            (ref, ref_ms, [x.ref_clock for x in pairs], energies[1])):
        summary = Timing(times).summary()
        tflops = tflops_of(flops, summary["median_ms"])
        step = launch_step(times)
        result: dict[str, Any] = {
            **bench.head(p, tflops), **common, **summary, "tflops": tflops,
            "launch_step": step.as_event() if step else None,
            **clock_summary(readings), "throttled": reasons_seen(readings),
            "telemetry_samples": sum(r.sm_clock_mhz is not None for r in readings)}
        result["clock_source"] = ("launches" if result["sm_clock_mhz_avg"] is not None
                                  else clock_fields(result, fields.get("energy_window"))
                                  ["clock_source"])
        result.update(fields)
        sides.append(result)
    level_result, ref_result = sides
    ref_result["paired_with"] = level.id
    level_result.update({
        "reference": reference.id, "reference_tflops": ref_result["tflops"],
        "reference_sm_clock_mhz_avg": ref_result["sm_clock_mhz_avg"],
        **paired_fields(pairs, bench.device.sm_clock_max_mhz, stop, budget_s)})
    # the old field, kept beside the paired one: the ratio of the two sides' medians
    level_result["pct_of_reference_medians"] = percent(level_result["tflops"],
                                                       ref_result["tflops"])
    level_result.update(also)
    level_result.update(level_only)
    level_result.update(bench.hold_fields())
    return ref_result, level_result


def second_loop(bench: Bench, prep: Prepared, second: Level, read_clock: Callable[[],
                ClockReading], M: int, N: int, K: int, warmup: int, budget_s: float,
                max_pairs: int) -> dict[str, Any]:
    """The level paired with a second reference in a loop of its own (same rules, no
    events per launch): ``deepgemm_pct`` and its interval, or ``deepgemm_reason`` where
    the second reference could not run (memory, a failed launch)."""
    try:
        bench.cp.get_default_memory_pool().free_all_blocks()
        bench.check_memory(second, M, N, K)
        other = bench.prepare(second, M, N, K, None, 0)
        for _ in range(warmup):
            prep.launch()
            other.launch()
        bench.stream.synchronize()
        pairs, stop = pair_loop(launch_timer(bench, prep.launch, read_clock),
                                launch_timer(bench, other.launch, read_clock),
                                bench.clock, budget_s, max_pairs, rest=PAIR_REST,
                                max_clock_mhz=bench.device.sm_clock_max_mhz)
    except Refused as exc:
        return {"deepgemm": second.id, "deepgemm_reason": str(exc)}
    ratios = [p.ratio for p in pairs]
    pct = pct_fields(ratios)
    ref_ms = median(p.ref_ms for p in pairs)
    return {"deepgemm": second.id, "deepgemm_pct": pct["pct_of_reference"],
            "deepgemm_ci_low": pct["pct_ci_low"], "deepgemm_ci_high": pct["pct_ci_high"],
            "deepgemm_pairs": len(pairs), "deepgemm_stop_reason": stop,
            "deepgemm_tflops": Shape(M, N, K).tflops(ref_ms),
            "deepgemm_verified": other.verified,
            "deepgemm_throttled_pairs": sum(p.throttled(bench.device.sm_clock_max_mhz)
                                            for p in pairs)}
