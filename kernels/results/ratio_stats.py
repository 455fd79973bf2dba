"""The statistics of a paired ratio (issue 41 items 1-3; pure Python, no GPU).

A level and its reference are timed alternately in one loop (kernels/engine/paired.py),
so both meet the same state of the power limiter; each pair gives one ratio, t_ref /
t_level (the level's TFLOPS over the reference's). Here, once, for the runner, the
benchmark scripts and the tests:

- the ratio is the **Hodges-Lehmann estimate of the per-pair ratios** (their
  pseudo-median: the median of the n(n+1)/2 averages of two ratios, each ratio with itself
  included), and its 95% confidence interval is distribution-free: two order statistics of
  those averages picked by the Wilcoxon signed-rank distribution (no bootstrap, so no
  seed). Until stretch 39 it was the plain median with the sign-test interval. Both are
  robust (a few disturbed pairs move neither), but a level whose launches take two speeds
  (vectorized at 4096^3 on an H100: 4.17 and 4.24 ms, about half the launches each) moves
  the plain median from one speed to the other as the share shifts a little between
  loops: over 27 consecutive loops of 50 pairs of one recorded series the medians spread
  1.31% and the pseudo-medians 0.26% (docs/perf-notes.md, "Issue 41 item 8 on three fresh
  H100s"; ``benchmarks/ratio_series.py --replay``);
- a launch is **throttled** when its SM clock, read while it ran, is under
  THROTTLE_THRESHOLD of the device's max clock (nvbench's ``--throttle-threshold``
  default, 75%), or when NVML named a thermal or hardware slowdown for it; a pair is
  flagged when either of its launches is;
- the loop **stops** when the interval's half-width is at most TARGET_HALF_WIDTH_PCT of
  the ratio (after MIN_PAIRS pairs), when its time budget is spent (after
  MIN_BUDGET_PAIRS), or at ``repeats`` pairs, whichever comes first.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal

import numpy as np

from ..protocol.throttle import slowdowns
from .launch_steps import launch_step

CONFIDENCE = 0.95
TARGET_HALF_WIDTH_PCT = 0.5  # stop when the interval is this narrow (% of the ratio)
# the precision rule waits for this many pairs. Ten let a run of slow pairs (2-3 ms each)
# stop inside one slow swing of the clock: mma_sync's repetitions at 8192³ moved 1.01%
# with 10 and 0.17% with 50 (docs/perf-notes.md, issue 41 item 8); a loop of 50 pairs
# of the shortest launches takes milliseconds, and the time budget still ends long ones.
MIN_PAIRS = 50
# the fewest pairs with a 95% interval: with n ratios the widest interval (least to
# greatest average, the least and greatest ratio) holds the pseudo-median with probability
# 1 - 2 / 2**n, 0.969 at n = 6
MIN_BUDGET_PAIRS = 6

THROTTLE_THRESHOLD = 0.75  # of the max SM clock: nvbench's --throttle-threshold default
# NVML's clock-event reasons that flag a launch by themselves. SwPowerCap is not one: it
# is the 700 W limiter at work, on during most heavy launches of the H200 and met by both
# launches of a pair alike (that is what pairing is for); its deep cuts show as a clock
# under the threshold.
THROTTLE_REASONS = ("HwSlowdown", "HwThermalSlowdown", "SwThermalSlowdown",
                    "HwPowerBrakeSlowdown")
THROTTLE_RULE = (f"SM clock under {THROTTLE_THRESHOLD:.0%} of the max clock (nvbench's "
                 "default throttle threshold), or a thermal or hardware slowdown "
                 f"({', '.join(THROTTLE_REASONS)}), read per launch while it ran; a pair "
                 "is flagged when either launch is")

StopReason = str  # "precision" | "budget" | "repeats"


@dataclass(frozen=True, slots=True)
class ClockReading:
    """The SM clock (MHz) and clock-event reasons read while a launch ran (None: not
    read, or NVML does not say)."""

    sm_clock_mhz: float | None = None
    reasons: tuple[str, ...] | None = None


def launch_throttled(reading: ClockReading, max_clock_mhz: float | None,
                     threshold: float = THROTTLE_THRESHOLD) -> bool:
    """THROTTLE_RULE for one launch. A reading without a clock, or a device without a
    max clock, is judged by its reasons alone."""
    if (reading.sm_clock_mhz is not None and max_clock_mhz
            and reading.sm_clock_mhz < threshold * max_clock_mhz):
        return True
    return any(r in THROTTLE_REASONS for r in reading.reasons or ())


ESTIMATOR = "hodges-lehmann"  # what a paired result's pct_of_reference is (pct_estimator)
REL_TOL = 1e-12  # the bisection's last step, as a share of the value
WINDOW_MARGIN = 1e-9  # the window of sums read one by one, beyond the bisection's ends
MAX_WINDOW = 100_000  # sums; more in the window: they are one value to within its width


def _kth_sum(x: np.ndarray, k: int) -> float:
    """The k-th least (from 1) of x_i + x_j over i <= j, for x sorted ascending, without
    a table of all n(n+1)/2 sums: a bisection on the value (counting the sums at most t
    in O(n log n): for each i, the j from i up with x_j <= t - x_i) brings the k-th into
    a narrow window; the sums in the window are then formed and sorted, and the k-th
    taken among them after those below it are counted, so that the value is one of the
    sums even where rounding or equal ratios make the counts at a single value unsure."""
    n = len(x)
    idx = np.arange(n)

    def first_j(t: float, side: Literal["left", "right"]) -> np.ndarray:
        """Per i, the first j >= i with x_j past t - x_i."""
        return np.maximum(np.searchsorted(x, t - x, side=side), idx)

    lo, hi = 2.0 * float(x[0]), 2.0 * float(x[-1])
    while hi - lo > REL_TOL * max(abs(lo), abs(hi)):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:
            break
        if int((first_j(mid, "right") - idx).sum()) >= k:
            hi = mid
        else:
            lo = mid
    margin = WINDOW_MARGIN * max(abs(lo), abs(hi), 1e-300)
    start, stop = first_j(lo - margin, "left"), first_j(hi + margin, "right")
    below = int((start - idx).sum())
    width = stop - start
    if int(width.sum()) > MAX_WINDOW:
        return hi
    rows = np.repeat(idx, width)
    cols = start[rows] + (np.arange(int(width.sum())) - np.repeat(np.cumsum(width) - width,
                                                                   width))
    window = np.sort(x[rows] + x[cols])
    if window.size == 0:
        return hi
    return float(window[min(max(k - below - 1, 0), window.size - 1)])


def _sorted(values: Sequence[float]) -> np.ndarray:
    return np.sort(np.asarray(values, dtype=np.float64))


def _pseudo_median(x: np.ndarray) -> float | None:
    m = len(x) * (len(x) + 1) // 2
    if m == 0:
        return None
    if m % 2:
        return _kth_sum(x, (m + 1) // 2) / 2.0
    return (_kth_sum(x, m // 2) + _kth_sum(x, m // 2 + 1)) / 4.0


def _pseudo_median_ci(x: np.ndarray, confidence: float) -> tuple[float, float] | None:
    k = _rank(len(x), confidence)
    if k == 0:
        return None
    m = len(x) * (len(x) + 1) // 2
    return _kth_sum(x, k) / 2.0, _kth_sum(x, m + 1 - k) / 2.0


def pseudo_median(values: Sequence[float]) -> float | None:
    """The Hodges-Lehmann estimate of ``values``: the median of the averages (v_i + v_j)
    / 2 over i <= j. None for no values."""
    return _pseudo_median(_sorted(values))


def pseudo_median_ci(values: Sequence[float], confidence: float = CONFIDENCE
                     ) -> tuple[float, float] | None:
    """The distribution-free interval of the pseudo-median of ``values``: the k-th least
    and k-th greatest of the n(n+1)/2 averages, k the largest with P(T < k) <= (1 -
    confidence) / 2 for T the signed-rank statistic of n values. None with too few values
    for any interval at that confidence (n < 6 at 95%)."""
    return _pseudo_median_ci(_sorted(values), confidence)


EXACT_UP_TO = 60  # values; above, the normal approximation's rank (the same or one off)


@functools.lru_cache(maxsize=4096)
def _rank(n: int, confidence: float) -> int:
    """The k of :func:`pseudo_median_ci` for n values: the signed-rank statistic's exact
    distribution up to EXACT_UP_TO values (the number of subsets of 1..n with each sum,
    in whole numbers), then floor(m/2 - 0.5 - z sigma) + 1 with m = n(n+1)/2 and sigma^2 =
    n(n+1)(2n+1)/24 (with continuity correction)."""
    tail = (1.0 - confidence) / 2.0
    m = n * (n + 1) // 2
    if n > EXACT_UP_TO:
        z = NormalDist().inv_cdf(1.0 - tail)
        sigma = math.sqrt(n * (n + 1) * (2 * n + 1) / 24.0)
        return max(0, math.floor(m / 2.0 - 0.5 - z * sigma) + 1)
    ways = np.zeros(m + 1, dtype=np.int64)  # ways[s]: subsets of 1..r with sum s
    ways[0] = 1
    for r in range(1, n + 1):
        ways[r:] = ways[r:] + ways[:-r]  # the sum is formed before it is stored
    cdf = np.cumsum(ways) / float(2**n)
    below = np.nonzero(cdf <= tail)[0]  # the c with P(T <= c) <= tail
    return int(below[-1]) + 1 if len(below) else 0


def _half_width(mid: float | None, low: float | None, high: float | None) -> float | None:
    """Half the width of the interval low..high in percent of mid (None: no interval)."""
    if mid is None or mid <= 0 or low is None or high is None:
        return None
    return 100.0 * (high - low) / 2.0 / mid


def half_width_pct(values: Sequence[float]) -> float | None:
    """Half the width of :func:`pseudo_median_ci` in percent of the pseudo-median (None:
    no interval)."""
    x = _sorted(values)
    ci = _pseudo_median_ci(x, CONFIDENCE)
    return _half_width(_pseudo_median(x), *(ci or (None, None)))


def stop_reason(ratios: Sequence[float], elapsed_s: float, budget_s: float,
                max_pairs: int, min_pairs: int = MIN_PAIRS,
                target_pct: float = TARGET_HALF_WIDTH_PCT) -> StopReason | None:
    """Why the pair loop stops after these ratios, or None to go on: "precision" (the
    interval's half-width at most ``target_pct`` of the ratio, ``min_pairs`` timed),
    "repeats" (``max_pairs`` timed), "budget" (``budget_s`` spent, MIN_BUDGET_PAIRS
    timed, or fewer where ``max_pairs`` allows no more)."""
    n = len(ratios)
    if n >= min_pairs:
        hw = half_width_pct(ratios)
        if hw is not None and hw <= target_pct:
            return "precision"
    if n >= max_pairs:
        return "repeats"
    if elapsed_s >= budget_s and n >= min(MIN_BUDGET_PAIRS, max_pairs):
        return "budget"
    return None


def pct_fields(ratios: Sequence[float], suffix: str = "") -> dict[str, float | None]:
    """``pct_of_reference`` (the pseudo-median), ``pct_ci_low`` and ``pct_ci_high`` (each +
    ``suffix``) of per-pair ratios, in percent; None where there are none (or too few for
    an interval)."""
    x = _sorted(ratios)
    ci = _pseudo_median_ci(x, CONFIDENCE)
    mid = _pseudo_median(x)
    return {f"pct_of_reference{suffix}": 100.0 * mid if mid is not None else None,
            f"pct_ci_low{suffix}": 100.0 * ci[0] if ci else None,
            f"pct_ci_high{suffix}": 100.0 * ci[1] if ci else None}


@dataclass(frozen=True, slots=True)
class Pair:
    """One pair: the level's and the reference's launch times (ms), which went first,
    and what the clock read during each."""

    i: int
    level_ms: float
    ref_ms: float
    level_first: bool
    level_clock: ClockReading = ClockReading()
    ref_clock: ClockReading = ClockReading()

    @property
    def ratio(self) -> float:
        """t_ref / t_level: the level's speed as a fraction of the reference's."""
        return self.ref_ms / self.level_ms

    def throttled(self, max_clock_mhz: float | None) -> bool:
        return (launch_throttled(self.level_clock, max_clock_mhz)
                or launch_throttled(self.ref_clock, max_clock_mhz))


def _mean(values: Iterable[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return sum(got) / len(got) if got else None


def _least(values: Iterable[float | None]) -> float | None:
    got = [v for v in values if v is not None]
    return min(got) if got else None


def pair_step(ratios: Sequence[float]) -> dict[str, Any] | None:
    """The launch-step rule (kernels/results/launch_steps.py) applied to the per-pair
    ratios in loop order: where the ratio itself changed mid-loop, in percent."""
    step = launch_step(ratios)
    if step is None:
        return None
    return {"at": step.at, "pairs": step.launches, "before_pct": 100.0 * step.before,
            "after_pct": 100.0 * step.after, "change_pct": step.change_pct}


def paired_fields(pairs: Sequence[Pair], max_clock_mhz: float | None, stop: StopReason,
                  budget_s: float) -> dict[str, Any]:
    """The paired fields of a level's result (docs/protocol.md, "Paired ratios")."""
    ratios = [p.ratio for p in pairs]
    flagged = [p.throttled(max_clock_mhz) for p in pairs]
    clean = [r for r, f in zip(ratios, flagged, strict=True) if not f]
    pct = pct_fields(ratios)
    out: dict[str, Any] = {
        "paired": True, "pairs": len(pairs), "stop_reason": stop,
        **pct, "pct_estimator": ESTIMATOR,
        "pct_half_width": _half_width(pct["pct_of_reference"], pct["pct_ci_low"],
                                      pct["pct_ci_high"]),
        "throttle_rule": THROTTLE_RULE, "throttle_threshold": THROTTLE_THRESHOLD,
        "throttled_pairs": sum(flagged),
        **pct_fields(clean, "_unthrottled"),
        "budget_s_per_pair": budget_s, "target_half_width_pct": TARGET_HALF_WIDTH_PCT,
        "pair_step": pair_step(ratios),
    }
    return out


def clock_summary(readings: Iterable[ClockReading]) -> dict[str, float | None]:
    """Mean and least SM clock over one side's launches (None: none read)."""
    values = [r.sm_clock_mhz for r in readings]
    return {"sm_clock_mhz_avg": _mean(values), "sm_clock_mhz_min": _least(values)}


def reasons_seen(readings: Iterable[ClockReading]) -> list[str]:
    """The slowdowns read during one side's launches (kernels/protocol/throttle.py's rule,
    as a plain burst's ``throttled``), each once, in the order seen."""
    return list(slowdowns(r for x in readings for r in x.reasons or ()))


def pairing(result: Any) -> str:
    """"paired" for a result whose ratio came from a pair loop, else "unpaired" (older
    recordings, sustained runs before pairing, levels timed apart from their reference):
    what a reader says beside its % of reference."""
    return "paired" if getattr(result, "paired", None) is True or (
        isinstance(result, dict) and result.get("paired") is True) else "unpaired"
