"""GPU test of the paired timing of a level and its reference (issue 41 items 1-3;
docs/protocol.md, "Paired ratios"). Run on the H200:

    python -m pytest -q -s -p no:cacheprovider tests/gpu/test_paired_gpu.py

It asserts the method, never a speed: the result is paired, enough pairs were timed, the
interval holds the median, the loop stopped for a stated reason within its bounds, and the
reference's result comes from the same loop, marked as such.
"""

from __future__ import annotations

import pytest

from gemmscope.kernels.drive.session import RunnerSession, default_runner_command
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol.plan import RunRequest
from gemmscope.kernels.results.ratio_stats import MIN_BUDGET_PAIRS, MIN_PAIRS, THROTTLE_RULE

pytestmark = pytest.mark.gpu

S = 2048
LEVEL = "wgmma_tma"


@pytest.mark.smoke
def test_a_paired_burst_gives_the_ratio_its_interval_and_the_reference_from_one_loop():
    seen: list = []
    session = RunnerSession(seen.append, default_runner_command(50), watchdog_s=120)
    try:
        session.wait_ready()
        events = session.run([RunRequest(LEVEL, Shape(S, S, S), max_pairs=400, pair_budget_s=2.0)])
    finally:
        session.close()
    errors = [e for e in events if e.type == "error"]
    assert not errors, errors
    ref_id = registry.BY_ID[LEVEL].reference
    results = {e.level: e for e in events if e.type == "result"}
    level, ref = results[LEVEL], results[ref_id]
    print(f"\n{LEVEL} {S}^3: {level.pct_of_reference:.2f}% of {ref_id} "
          f"[{level.pct_ci_low:.2f}, {level.pct_ci_high:.2f}] over {level.pairs} pairs "
          f"({level.stop_reason}, {level.loop_s:.2f} s); throttled pairs "
          f"{level.throttled_pairs}, unthrottled {level.pct_of_reference_unthrottled}; "
          f"level {level.tflops:.0f} TFLOPS at {level.sm_clock_mhz_avg} MHz, reference "
          f"{ref.tflops:.0f} at {ref.sm_clock_mhz_avg} MHz; pair_step {level.pair_step}")
    assert level.paired is True and level.reference == ref_id
    assert level.repeats == level.pairs == ref.repeats
    assert level.pct_ci_low <= level.pct_of_reference <= level.pct_ci_high
    assert level.stop_reason in ("precision", "budget", "repeats")
    if level.stop_reason == "precision":
        assert level.pct_half_width <= 0.5 and level.pairs >= MIN_PAIRS
    elif level.stop_reason == "budget":
        assert level.loop_s >= 2.0 and level.pairs >= MIN_BUDGET_PAIRS
    assert level.budget_s_per_pair == 2.0 and level.target_half_width_pct == 0.5
    assert level.throttle_rule == THROTTLE_RULE and 0 <= level.throttled_pairs <= level.pairs
    assert level.reference_tflops == ref.tflops and ref.paired_with == LEVEL
    # every launch of the loop was said: the level's and the reference's (told apart)
    repeats = [e for e in events if e.type == "repeat"]
    assert len([e for e in repeats if e.of == "reference"]) == level.pairs
    assert len([e for e in repeats if e.of is None and e.level == LEVEL]) == level.pairs
    # the clock was read per launch: both sides have one
    assert level.clock_source == "launches" and ref.sm_clock_mhz_avg is not None
    assert level.verified and ref.verified


def _run(requests: list[RunRequest]) -> list:
    session = RunnerSession(lambda _e: None, default_runner_command(50), watchdog_s=300)
    try:
        session.wait_ready()
        events = session.run(requests)
    finally:
        session.close()
    errors = [e for e in events if e.type == "error"]
    assert not errors, errors
    return events


def test_an_fp8_level_pairs_with_cublaslt_and_deepgemm_where_it_is_installed():
    from gemmscope.kernels.device.gpu import deep_gemm_missing
    from gemmscope.kernels.engine.cublaslt import torch_scaled_mm_available

    if not torch_scaled_mm_available():
        pytest.skip("cuBLASLt FP8 needs torch._scaled_mm: the level runs unpaired here")
    level_id = "fp8_block_scaled"
    events = _run([RunRequest(level_id, Shape(4096, 4096, 4096), max_pairs=400)])
    level = next(e for e in events if e.type == "result" and e.level == level_id)
    print(f"\n{level_id} 4096^3: {level.pct_of_reference:.2f}% of {level.reference} "
          f"[{level.pct_ci_low}, {level.pct_ci_high}], DeepGEMM {level.deepgemm_pct} "
          f"[{level.deepgemm_ci_low}, {level.deepgemm_ci_high}] {level.deepgemm_reason}")
    assert level.paired is True and level.reference == registry.BY_ID[level_id].reference
    if deep_gemm_missing() is None:
        assert level.deepgemm == "deepgemm_fp8" and level.deepgemm_pairs >= 6
        assert level.deepgemm_ci_low <= level.deepgemm_pct <= level.deepgemm_ci_high
    else:
        assert level.deepgemm is None


def test_a_sustained_run_alternates_level_and_reference_windows():
    from gemmscope.kernels.protocol.commands import RunMode, SustainedConfig
    from gemmscope.kernels.protocol.events import Mode

    how = RunMode(Mode.SUSTAINED, SustainedConfig(window_s=1.0, trials=6, cooldown_s=0.0))
    events = _run([RunRequest(LEVEL, Shape(4096, 4096, 4096)).with_mode(how)])
    ref_id = registry.BY_ID[LEVEL].reference
    results = {e.level: e for e in events if e.type == "result"}
    level, ref = results[LEVEL], results[ref_id]
    trials = [(e.level, e.i) for e in events if e.type == "repeat"]
    print(f"\nsustained {LEVEL}: {level.pct_of_reference:.2f}% "
          f"[{level.pct_ci_low}, {level.pct_ci_high}] over {level.pairs} trials")
    assert trials[:4] == [(LEVEL, 0), (ref_id, 0), (ref_id, 1), (LEVEL, 1)]
    assert level.paired is True and level.pairs == 6 and ref.paired_with == LEVEL
    assert level.pct_ci_low <= level.pct_of_reference <= level.pct_ci_high


@pytest.mark.smoke
def test_a_held_launch_does_not_time_the_hosts_queuing():
    """kernels/engine/hold.py: 20 ms of host work between the start event and a small
    launch is timed unheld (the GPU waits on the host inside the events) and not held."""
    import time

    import cupy as cp

    from gemmscope.kernels.engine.hold import LaunchHold

    hold = LaunchHold(cp)
    x = cp.zeros(1 << 20, cp.float32)
    start, end = cp.cuda.Event(), cp.cuda.Event()

    def timed(held: bool) -> float:
        cp.cuda.Device().synchronize()
        if held:
            hold.hold()
        start.record()
        time.sleep(0.02)  # the host queuing slowly, as a library call's setup
        x.fill(1.0)
        end.record()
        if held:
            hold.release()
        end.synchronize()
        hold.settled()
        return cp.cuda.get_elapsed_time(start, end)

    unheld, held = timed(False), min(timed(True) for _ in range(3))
    print(f"\nunheld {unheld:.3f} ms, held {held:.3f} ms")
    assert unheld >= 15.0
    assert held < 1.0 and hold.timeouts == 0


def test_a_small_library_call_times_the_same_paired_as_alone():
    """The reference of a level at 256³ (a cuBLAS call of a few microseconds, whose host
    setup is longer than its kernel) gives the same median in the paired loop as in its
    own burst: the paired loop held 10x slow cuBLAS calls before its launches were held."""
    level_id, S = "wmma", 256
    ref_id = registry.BY_ID[level_id].reference
    events = _run([RunRequest(ref_id, Shape(S, S, S), repeats=50),
                   RunRequest(level_id, Shape(S, S, S), max_pairs=200, pair_budget_s=1.0)])
    results = [e for e in events if e.type == "result"]
    alone = next(e for e in results if e.level == ref_id and e.paired_with is None)
    paired_ref = next(e for e in results if e.level == ref_id and e.paired_with == level_id)
    level = next(e for e in results if e.level == level_id)
    print(f"\n{ref_id} {S}^3 alone {alone.median_ms * 1e3:.1f} us, paired "
          f"{paired_ref.median_ms * 1e3:.1f} us; {level_id} {level.pct_of_reference:.1f}%")
    assert level.launch_hold == "held" and level.hold_timeouts == 0
    assert paired_ref.median_ms < 1.5 * alone.median_ms
    assert alone.median_ms < 1.5 * paired_ref.median_ms
