"""benchmarks/paired_ratio.py --rounds: each repetition pooled from loops spread over the
whole run (issue 41 item 8), checked with a stand-in runner whose ratios are known."""

from __future__ import annotations

import json
import math
from typing import ClassVar

import benchmark_script
import msgspec
import pytest

from gemmscope.kernels.drive import session as session_module
from gemmscope.kernels.protocol.records import Result


@pytest.fixture(scope="module")
def pr():
    return benchmark_script.load("paired_ratio")


def loop(pct, stop="precision", pairs=50, throttled=0, clocks=(1980.0, 1970.0), temp=40.0,
         tflops=(700.0, 750.0)):
    return {"run": (pct, pct - 0.1, pct + 0.1, stop, pairs, throttled),
            "held": (*clocks, temp), "tflops": tflops, "loop_s": 0.05}


def test_the_passes_give_every_repetition_its_loops_in_turn(pr):
    assert pr.passes(3, 1) == [0, 1, 2]
    assert pr.passes(3, 2) == [0, 1, 2, 0, 1, 2]
    assert pr.passes(2, 3) == [0, 1, 0, 1, 0, 1]


def test_a_pooled_repetition_is_the_loops_mean_with_a_students_t_interval(pr):
    pooled = pr.pool([loop(100.0, clocks=(1980.0, 1960.0), temp=41.0),
                      loop(101.0, pairs=60, throttled=2, clocks=(1960.0, 1940.0), temp=45.0),
                      loop(102.0, tflops=(710.0, 760.0))])
    pct, low, high, stop, pairs, throttled = pooled["run"]
    half = 4.303 * 1.0 / math.sqrt(3)  # t(0.975, 2 df) x s.d. 1 / sqrt(3)
    assert pct == pytest.approx(101.0)
    assert (low, high) == (pytest.approx(101.0 - half, abs=1e-3),
                           pytest.approx(101.0 + half, abs=1e-3))
    assert (stop, pairs, throttled) == ("precision", 160, 2)
    assert pooled["held"] == (pytest.approx(1973.33, abs=0.01), pytest.approx(1956.67, abs=0.01),
                              41.0)  # clocks averaged, the temperature at the first loop
    assert pooled["tflops"] == (pytest.approx(703.33, abs=0.01), pytest.approx(753.33, abs=0.01))


def test_loops_that_stopped_differently_pool_as_mixed_and_failed_loops_are_left_out(pr):
    failed = {"run": (None, None, None, "error", 0, 0), "held": (None, None, None),
              "tflops": (None, None), "loop_s": None}
    pooled = pr.pool([loop(99.0), failed, loop(99.4, stop="budget")])
    assert pooled["run"][0] == pytest.approx(99.2) and pooled["run"][3] == "mixed"
    assert pooled["run"][4] == 100  # the failed loop's pairs are not counted
    assert pr.pool([failed, failed])["run"] == (None, None, None, "error", 0, 0)
    one = loop(98.0)
    assert pr.pool([one])["run"] == one["run"]  # one loop keeps its own interval


class StandInRunner:
    """RunnerSession's face: every run() answers each request with a paired Result whose
    % is 100 + the pass index (wgmma_tma) or 50 (naive, whose loop takes 5 s of pairs)."""

    passes: ClassVar[list[list[str]]] = []

    def __init__(self, _on_event, _command, watchdog_s=None) -> None:
        self.closed = False

    def wait_ready(self) -> None:
        pass

    def run(self, requests):
        index = len(StandInRunner.passes)
        StandInRunner.passes.append([r.level for r in requests])
        out = []
        for r in requests:
            slow = r.level == "naive"
            out.append(msgspec.convert({
                "type": "result", "t": 1.0, "id": f"r{index}", "level": r.level,
                "M": r.shape.M, "N": r.shape.N, "K": r.shape.K, "dtype": "f32",
                "median_ms": 90.0 if slow else 0.2, "tflops": 1.0 if slow else 700.0,
                "verified": True, "rel_err": 1e-4, "repeats": 50, "precision": "fp32",
                "reference": "cublas", "reference_tflops": 50.0 if slow else 700.0,
                "pct_of_reference": 50.0 if slow else 100.0 + index, "pct_ci_low": None,
                "pct_ci_high": None, "paired": True, "pairs": 50, "stop_reason": "precision",
                "throttled_pairs": 0, "sm_clock_mhz_avg": 1980.0,
                "reference_sm_clock_mhz_avg": 1980.0, "temp_c_start": 40.0}, Result))
        return out

    def close(self) -> None:
        self.closed = True


def test_rounds_pool_loops_spread_over_the_run_and_long_rows_keep_one_loop(pr, monkeypatch,
                                                                         tmp_path):
    StandInRunner.passes = []
    monkeypatch.setattr(session_module, "RunnerSession", StandInRunner)
    out = tmp_path / "rows.json"
    rows = pr.measure(["naive", "wgmma_tma"], [(512, 512, 512)], runs=3, repeats=100,
                      budget_s=2.0, fresh=False, rounds=3, only_short_s=1.0,
                      json_out=str(out))
    # three full passes, then six with the short row alone
    assert StandInRunner.passes == [["naive", "wgmma_tma"]] * 3 + [["wgmma_tma"]] * 6
    by = {r["level"]: r for r in rows}
    # wgmma_tma's repetition 1 pooled passes 0, 3, 6; repetition 2 passes 1, 4, 7; ...
    assert [run[0] for run in by["wgmma_tma"]["runs"]] == [pytest.approx(103.0),
                                                           pytest.approx(104.0),
                                                           pytest.approx(105.0)]
    assert [len(lps) for lps in by["wgmma_tma"]["loops"]] == [3, 3, 3]
    assert [len(lps) for lps in by["naive"]["loops"]] == [1, 1, 1]
    # naive's loop: 50 pairs of 90 ms and 2 x 512³ / 50 TFLOPS
    assert by["naive"]["loops"][0][0]["loop_s"] == pytest.approx(50 * (90.0 + 0.005369) / 1e3,
                                                                 rel=1e-3)
    # the file holds the rows as --json prints them, rewritten after the last pass
    assert json.loads(out.read_text()) == json.loads(json.dumps(rows))


def test_without_rounds_a_repetition_is_one_loop_as_before(pr, monkeypatch):
    StandInRunner.passes = []
    monkeypatch.setattr(session_module, "RunnerSession", StandInRunner)
    rows = pr.measure(["wgmma_tma"], [(512, 512, 512)], runs=2, repeats=100, budget_s=2.0,
                      fresh=False)
    assert StandInRunner.passes == [["wgmma_tma"]] * 2
    assert [run[0] for run in rows[0]["runs"]] == [100.0, 101.0]
    assert rows[0]["runs"][0][1:] == (None, None, "precision", 50, 0)


def test_rounds_and_only_short_out_of_range_are_refused_in_one_line(pr, capsys):
    for argv, said in ((["--rounds", "21"], "--rounds must be from 1 to 20"),
                       (["--only-short", "0"], "--only-short must be over 0")):
        with pytest.raises(SystemExit) as exc:
            pr.main([*argv, "--smoke"])
        assert exc.value.code == 2 and said in capsys.readouterr().err
