"""The paired ratio's statistics (kernels/results/ratio_stats.py): the pseudo-median and
its distribution-free interval, the throttle rule, the stopping rule and the result's
fields."""

from __future__ import annotations

import itertools
import json
import math
import random
from pathlib import Path
from statistics import median

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemmscope.kernels.results import ratio_stats as rs
from gemmscope.kernels.results.ratio_stats import ClockReading, Pair

ratios = st.lists(st.floats(0.5, 2.0, allow_nan=False), min_size=6, max_size=300)
SERIES = (Path(__file__).resolve().parents[3] / "docs" / "ratio-series"
          / "2026-12-07-h100-GPU-937b635f-vectorized-4096.jsonl")


def walsh(values):
    """Every average of two values, each with itself too, sorted: the n^2 table the
    estimator does without."""
    return sorted((a + b) / 2 for a, b in itertools.combinations_with_replacement(values, 2))


def test_the_interval_uses_the_signed_rank_ranks():
    # the textbook ranks of the 95% interval of a pseudo-median from n values: the k-th
    # least and k-th greatest of the n(n+1)/2 averages, k = 1 of 6, 9 of 10, 53 of 20,
    # 138 of 30 (the signed-rank statistic's critical values 0, 8, 52, 137)
    for n, k in ((6, 1), (10, 9), (20, 53), (30, 138)):
        values = [float(v) for v in range(1, n + 1)]
        w = walsh(values)
        assert rs.pseudo_median_ci(values) == (w[k - 1], w[-k])
    assert rs.pseudo_median_ci([1.0, 2.0, 3.0, 4.0, 5.0]) is None  # no 95% interval from 5
    assert rs.pseudo_median_ci([]) is None and rs.pseudo_median([]) is None


def _exact_rank(n, confidence=0.95):
    """The signed-rank rank by whole-number counts, for any n (slow)."""
    ways = [1] + [0] * (n * (n + 1) // 2)
    for r in range(1, n + 1):
        for t in range(len(ways) - 1, r - 1, -1):
            ways[t] += ways[t - r]
    total, cdf, k = 2**n, 0, 0
    for t, w in enumerate(ways):
        cdf += w
        if cdf * 1.0 / total > (1 - confidence) / 2:
            break
        k = t + 1
    return k


def test_the_rank_is_exact_up_to_the_handover_and_within_one_beyond_it():
    edge = rs.EXACT_UP_TO
    for n in (6, 7, 25, edge):
        assert rs._rank(n, 0.95) == _exact_rank(n)
    for n in (edge + 1, edge + 2, 100, 150):
        assert abs(rs._rank(n, 0.95) - _exact_rank(n)) <= 1


@settings(max_examples=200, deadline=None)
@given(ratios)
def test_the_estimate_is_the_median_of_the_averages_and_its_interval_holds_it(values):
    w = walsh(values)
    assert rs.pseudo_median(values) == pytest.approx(median(w), rel=1e-12)
    low, high = rs.pseudo_median_ci(values)
    k = rs._rank(len(values), 0.95)
    assert (low, high) == (pytest.approx(w[k - 1], rel=1e-12), pytest.approx(w[-k], rel=1e-12))
    assert low <= rs.pseudo_median(values) <= high


def test_equal_and_tied_ratios_give_one_of_their_averages():
    assert rs.pct_fields([0.9] * 40)["pct_of_reference"] == pytest.approx(90.0, abs=1e-12)
    tied = [1.0] * 7 + [1.1] * 5 + [0.95] * 3
    assert rs.pseudo_median(tied) == pytest.approx(median(walsh(tied)), rel=1e-15)


def test_the_interval_narrows_as_pairs_come():
    rng = random.Random(41)
    values = [rng.gauss(1.0, 0.02) for _ in range(4000)]
    widths = [rs.half_width_pct(values[:n]) for n in (10, 40, 160, 640, 2560)]
    assert all(a > b for a, b in itertools.pairwise(widths))


def test_the_interval_holds_the_true_centre_about_95_times_in_100():
    rng = random.Random(7)
    held = 0
    for _ in range(2000):
        values = [rng.gauss(1.0, 0.1) for _ in range(15)]  # symmetric about 1.0
        low, high = rs.pseudo_median_ci(values)
        held += low <= 1.0 <= high
    assert 0.94 <= held / 2000 <= 0.98


def test_a_level_with_two_launch_speeds_keeps_its_ratio_from_loop_to_loop():
    # a measured series (vectorized beside cuBLAS FP32 at 4096^3 on an H100, 1,364 pairs):
    # its launches took 4.17 or 4.24 ms, about half each; cut into loops of 50 pairs as the
    # paired loop's least, the plain medians of the loops spread over 1%, the estimate
    # the loop reports under 0.5%
    series = json.loads(SERIES.read_text(encoding="utf-8").splitlines()[0])
    pairs = [r[2] / r[1] for r in series["pairs"]]
    loops = [pairs[i:i + rs.MIN_PAIRS] for i in range(0, len(pairs) - rs.MIN_PAIRS + 1,
                                                       rs.MIN_PAIRS)]

    def spread(got):
        return 100 * (max(got) / min(got) - 1)

    assert len(loops) == 27
    assert spread([median(loop) for loop in loops]) > 1.0
    assert spread([rs.pseudo_median(loop) for loop in loops]) < 0.5


@settings(max_examples=200, deadline=None)
@given(ratios, st.floats(0.0, 10.0), st.floats(0.1, 5.0), st.integers(1, 400))
def test_the_stopping_rule_respects_both_bounds(values, elapsed, budget, max_pairs):
    reason = rs.stop_reason(values, elapsed, budget, max_pairs)
    n = len(values)
    if n >= max_pairs:
        assert reason in ("precision", "repeats")
    if reason == "budget":
        assert elapsed >= budget and n >= min(rs.MIN_BUDGET_PAIRS, max_pairs)
    if reason == "precision":
        assert n >= rs.MIN_PAIRS and rs.half_width_pct(values) <= rs.TARGET_HALF_WIDTH_PCT
    if reason is None:
        assert n < max_pairs and (elapsed < budget or n < rs.MIN_BUDGET_PAIRS)


def test_precision_stops_a_steady_ratio_and_never_before_the_least_pairs():
    steady = [1.0 + 0.001 * (i % 3) for i in range(2 * rs.MIN_PAIRS)]
    least = rs.MIN_PAIRS
    assert rs.stop_reason(steady[:least - 1], 0.0, 2.0, 1000) is None
    assert rs.stop_reason(steady[:least], 0.0, 2.0, 1000) == "precision"
    noisy = [1.0 + 0.1 * ((-1) ** i) * (i % 5) for i in range(30)]
    assert rs.stop_reason(noisy, 0.5, 2.0, 1000) is None
    assert rs.stop_reason(noisy, 2.0, 2.0, 1000) == "budget"
    assert rs.stop_reason(noisy, 0.5, 2.0, 30) == "repeats"
    assert rs.stop_reason(noisy[:3], 9.0, 2.0, 1000) is None  # no interval yet
    assert rs.stop_reason(noisy[:3], 9.0, 2.0, 3) == "repeats"


@pytest.mark.parametrize(("mhz", "reasons", "flagged"), [
    (1980.0, ("SwPowerCap",), False),  # the limiter at work: both sides meet it
    (1500.0, ("SwPowerCap",), False),  # 76% of 1980
    (1480.0, ("SwPowerCap",), True),  # under 75% of 1980 (1485)
    (1980.0, ("HwSlowdown",), True),
    (1980.0, ("SwThermalSlowdown",), True),
    (1980.0, ("GpuIdle",), False),
    (None, None, False),  # nothing read: not flagged
    (None, ("HwThermalSlowdown",), True),
])
def test_the_throttle_rule(mhz, reasons, flagged):
    assert rs.launch_throttled(ClockReading(mhz, reasons), 1980.0) is flagged


def test_without_a_max_clock_only_the_reasons_flag():
    assert not rs.launch_throttled(ClockReading(100.0, ()), None)
    assert rs.launch_throttled(ClockReading(100.0, ("HwSlowdown",)), None)


def _pair(i, level_ms, ref_ms, level_mhz=1980.0, ref_mhz=1980.0):
    return Pair(i, level_ms, ref_ms, i % 2 == 0, ClockReading(level_mhz, ()),
                ClockReading(ref_mhz, ()))


def test_the_fields_give_the_ratio_with_and_without_the_throttled_pairs():
    # 20 pairs: 12 at 90% of the reference, then 8 with the level's clock at 1000 MHz
    # where it ran at 50%
    pairs = [_pair(i, 1.0 / 0.9, 1.0) for i in range(12)]
    pairs += [_pair(12 + i, 2.0, 1.0, level_mhz=1000.0) for i in range(8)]
    f = rs.paired_fields(pairs, 1980.0, "budget", 2.0)
    assert f["paired"] is True and f["pairs"] == 20 and f["stop_reason"] == "budget"
    assert f["throttled_pairs"] == 8
    assert f["pct_of_reference_unthrottled"] == pytest.approx(90.0)
    assert f["pct_ci_low_unthrottled"] == pytest.approx(90.0)
    # with them, 96 of the 210 averages are of a 90% pair and a 50% one: the estimate
    # is their 70%, and the interval (the 53rd least and greatest) runs to 90
    assert f["pct_of_reference"] == pytest.approx(70.0)
    assert f["pct_ci_low"] == pytest.approx(70.0) and f["pct_ci_high"] == pytest.approx(90.0)
    assert f["pct_estimator"] == "hodges-lehmann"
    assert f["budget_s_per_pair"] == 2.0 and f["target_half_width_pct"] == 0.5
    assert "75%" in f["throttle_rule"] and "nvbench" in f["throttle_rule"]
    assert f["pair_step"] is not None and f["pair_step"]["at"] == 12


def test_every_pair_throttled_leaves_no_unthrottled_ratio():
    pairs = [_pair(i, 1.0, 1.0, level_mhz=900.0) for i in range(12)]
    f = rs.paired_fields(pairs, 1980.0, "repeats", 2.0)
    assert f["throttled_pairs"] == 12
    assert f["pct_of_reference_unthrottled"] is None and f["pct_ci_low_unthrottled"] is None


def test_a_pair_ratio_is_the_level_speed_over_the_reference_speed():
    assert _pair(0, 2.0, 1.0).ratio == 0.5  # the level takes twice as long: 50%
    assert math.isclose(100 * _pair(0, 1.0, 1.1).ratio, 110.0)


def test_readers_call_older_results_unpaired():
    assert rs.pairing({"paired": True}) == "paired"
    assert rs.pairing({}) == "unpaired" and rs.pairing({"paired": False}) == "unpaired"


def test_the_reasons_a_side_states_are_its_slowdowns():
    readings = [ClockReading(1980.0, ("GpuIdle", "SwPowerCap")), ClockReading(None, None),
                ClockReading(1900.0, ("SwPowerCap", "HwSlowdown"))]
    assert rs.reasons_seen(readings) == ["SwPowerCap", "HwSlowdown"]
    assert rs.clock_summary(readings) == {"sm_clock_mhz_avg": 1940.0, "sm_clock_mhz_min": 1900.0}
