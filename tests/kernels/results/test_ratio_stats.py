"""The paired ratio's statistics (kernels/results/ratio_stats.py): the median's
distribution-free interval, the throttle rule, the stopping rule and the result's fields."""

from __future__ import annotations

import itertools
import math
import random
from statistics import median

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gemmscope.kernels.results import ratio_stats as rs
from gemmscope.kernels.results.ratio_stats import ClockReading, Pair

ratios = st.lists(st.floats(0.5, 2.0, allow_nan=False), min_size=6, max_size=300)


def test_the_interval_uses_the_sign_test_ranks():
    # the textbook ranks of the 95% interval of a median: (2, 9) of 10, (6, 15) of 20,
    # (10, 21) of 30, (40, 61) of 100
    for n, k in ((6, 1), (10, 2), (20, 6), (30, 10), (100, 40)):
        assert rs.median_ci(list(range(1, n + 1))) == (k, n + 1 - k)
    assert rs.median_ci([1.0, 2.0, 3.0, 4.0, 5.0]) is None  # no 95% interval from 5
    assert rs.median_ci([]) is None


def test_the_rank_is_continuous_where_the_exact_sum_hands_over_to_the_approximation():
    edge = rs.EXACT_UP_TO
    assert abs(rs._rank(edge, 0.95) - rs._rank(edge + 1, 0.95)) <= 1
    assert rs._rank(10_000, 0.95) == pytest.approx(5000 - 98, abs=1)


@settings(max_examples=200, deadline=None)
@given(ratios)
def test_the_interval_holds_the_median(values):
    low, high = rs.median_ci(values)
    assert low <= median(values) <= high


def test_the_interval_narrows_as_pairs_come():
    rng = random.Random(41)
    values = [rng.gauss(1.0, 0.02) for _ in range(4000)]
    widths = [rs.half_width_pct(values[:n]) for n in (10, 40, 160, 640, 2560)]
    assert all(a > b for a, b in itertools.pairwise(widths))


def test_the_interval_holds_the_true_median_about_95_times_in_100():
    rng = random.Random(7)
    held = 0
    for _ in range(2000):
        values = [rng.lognormvariate(0.0, 0.1) for _ in range(15)]  # true median 1.0
        low, high = rs.median_ci(values)
        held += low <= 1.0 <= high
    assert 0.95 <= held / 2000 <= 0.99  # at least 95% (order statistics are conservative)


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
    assert f["pct_of_reference"] == pytest.approx(90.0)
    assert f["pct_ci_low"] == pytest.approx(50.0)  # the 6th least: a slow pair
    assert f["pct_ci_low"] <= f["pct_of_reference"] <= f["pct_ci_high"]
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
