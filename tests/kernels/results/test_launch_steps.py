"""A burst's step from one launch speed to another (kernels/results/launch_steps.py), on
per-launch times measured on three H200s at 8192³ (the bundled recording's GPU and two
fresh machines, 2026-12-01; docs/perf-notes.md, issue 31 item 6)."""

from __future__ import annotations

import statistics

import pytest

from gemmscope.kernels.results.launch_steps import STEP_MIN_PCT, LaunchStep, launch_step

# wmma at 8192³: boost, then the 700 W limiter (bundled GPU after 4 launches, A after 14)
WMMA_BUNDLED = [3.42, 3.39, 3.41, 3.40, 3.66, 3.82, 3.82, 3.82, 3.82, 3.82, 3.82, 3.82,
                3.83, 3.78, 3.76, 3.74, 3.75, 3.75, 3.74, 3.71]
WMMA_A = [3.32, 3.30, 3.30, 3.31, 3.29, 3.30, 3.30, 3.31, 3.30, 3.30, 3.30, 3.29, 3.29,
          3.29, 3.59, 3.67, 3.67, 3.67, 3.67, 3.69]
# mma_sync at 8192³: steady on machine B; slow, fast, then slow on the bundled GPU
MMA_SYNC_B = [2.63, 2.60, 2.60, 2.61, 2.60, 2.62, 2.61, 2.61, 2.60, 2.60, 2.61, 2.61,
              2.61, 2.61, 2.61, 2.60, 2.60, 2.60, 2.60, 2.61]
MMA_SYNC_BUNDLED = [3.02, 3.00, 2.96, 2.68, 2.68, 2.67, 2.79, 2.82, 2.82, 2.82, 2.82, 2.82,
                    2.82, 2.82, 2.82, 2.82, 2.82, 2.82, 2.84, 2.82]


@pytest.mark.parametrize(("times", "at"), [(WMMA_BUNDLED, 4), (WMMA_A, 14)])
def test_a_burst_that_meets_the_power_limit_has_its_step_where_the_launches_slowed(times, at):
    step = launch_step(times)
    assert step is not None
    assert (step.at, step.launches) == (at, 20)
    assert step.before == pytest.approx(statistics.median(times[:at]))
    assert step.after == pytest.approx(statistics.median(times[at:]))
    assert 10.0 < step.change_pct < 13.0


def test_the_two_medians_of_a_step_are_those_of_its_sides():
    step = launch_step([1.0, 1.0, 1.02, 1.0, 1.1, 1.1, 1.12, 1.1])
    assert step == LaunchStep(at=4, launches=8, before=1.0, after=1.1)
    assert step.change_pct == pytest.approx(10.0)


def test_a_steady_burst_has_no_step():
    assert launch_step(MMA_SYNC_B) is None


def test_a_speed_that_comes_and_goes_is_not_called_one_step():
    assert launch_step(MMA_SYNC_BUNDLED) is None
    assert launch_step([1.0, 1.0, 1.0, 1.2, 1.2, 1.2, 1.0, 1.0, 1.0, 1.0]) is None


def test_a_single_slow_launch_is_a_spike_not_a_step():
    assert launch_step([1.0] * 9 + [1.5] + [1.0] * 10) is None


def test_a_change_below_the_threshold_is_the_launches_own_spread():
    small = 1.0 + (STEP_MIN_PCT - 0.5) / 100
    assert launch_step([1.0] * 10 + [small] * 10) is None
    assert launch_step([1.0] * 10 + [1.0 + (STEP_MIN_PCT + 0.5) / 100] * 10) is not None


def test_launches_that_got_faster_are_a_step_too_and_say_so():
    step = launch_step([1.2] * 3 + [1.0] * 12)
    assert step is not None and step.at == 3
    assert step.change_pct == pytest.approx(-100 / 6)
    assert step.text() == "launches 4–15 ran 16.7% faster than 1–3"


def test_a_step_says_which_launches_ran_slower_in_words():
    step = launch_step(WMMA_A)
    assert step is not None
    assert step.text() == "launches 15–20 ran 11.2% slower than 1–14"
    assert LaunchStep(at=1, launches=3, before=1.0, after=2.0).text() == \
        "launches 2–3 ran 100.0% slower than launch 1"
    assert LaunchStep(at=2, launches=3, before=1.0, after=2.0).text() == \
        "launch 3 ran 100.0% slower than 1–2"


@pytest.mark.parametrize("times", [[], [1.0] * 5, [1.0, 1.0, 1.0, 2.0, 2.0],
                                   [0.0] * 10, [1.0, -1.0] * 5, [1.0] * 20])
def test_too_few_equal_or_unphysical_times_give_no_step(times):
    assert launch_step(times) is None


def test_the_step_goes_onto_the_wire_with_its_medians_and_change():
    step = LaunchStep(at=14, launches=20, before=3.3, after=3.67)
    event = step.as_event()
    assert event["at"] == 14 and event["launches"] == 20
    assert event["before_ms"] == 3.3 and event["after_ms"] == 3.67
    assert event["change_pct"] == pytest.approx(100 * (3.67 / 3.3 - 1))


def test_a_burst_of_the_most_repeats_a_run_may_ask_for_has_its_step_found():
    from gemmscope.kernels.protocol.commands import MAX_REPEATS

    at = MAX_REPEATS * 3 // 5
    times = [1.0 + 0.001 * (i % 7) for i in range(at)] + \
        [1.1 + 0.001 * (i % 5) for i in range(MAX_REPEATS - at)]
    step = launch_step(times)
    assert step is not None and (step.at, step.launches) == (at, MAX_REPEATS)
