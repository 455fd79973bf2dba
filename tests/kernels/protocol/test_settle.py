"""A burst run's settle (issue 31 item 6): idle seconds after the verification and before
the warmup, so that every burst and its reference start from the same rest of the power
limiter. Checked in the run command, carried by run requests and the CLI's --settle-s,
said by the run's phase events and its result, refused for sustained runs."""

from __future__ import annotations

import io
import json

import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.engine.idle import HEARTBEAT_S, idle
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol.commands import SETTLE_S, RunMode, SustainedConfig, parse_command
from gemmscope.kernels.protocol.decoding import of
from gemmscope.kernels.protocol.events import Mode, ProtocolError
from gemmscope.kernels.protocol.plan import RunRequest
from gemmscope.kernels.results.progress import Progress


def run_cmd(**fields):
    return parse_command(json.dumps({"cmd": "run", "level": "naive", "M": 8, "N": 8, "K": 8,
                                     **fields}))


def test_a_burst_run_settles_none_unless_asked_and_takes_seconds_within_the_limits():
    assert run_cmd().settle_s == 0.0
    assert run_cmd(settle_s=2.5).settle_s == 2.5
    assert run_cmd(settle_s=SETTLE_S[2]).settle_s == SETTLE_S[2]
    assert isinstance(run_cmd(settle_s=3).settle_s, float)


@pytest.mark.parametrize("value", [-1, SETTLE_S[2] + 0.5, "5", True, None, [1], 1e309])
def test_a_settle_outside_the_limits_or_not_a_number_is_refused(value):
    with pytest.raises(ProtocolError, match="settle_s must be a number of seconds from 0"):
        run_cmd(settle_s=value)


def test_a_sustained_run_refuses_a_settle_its_cooldown_does_that():
    with pytest.raises(ProtocolError, match="settle_s applies to burst runs only"):
        run_cmd(mode="sustained", settle_s=1)


def test_a_request_sends_its_settle_for_a_burst_run_only():
    burst = RunRequest("naive", Shape(8, 8, 8), settle_s=4.0)
    assert burst.command("r1")["settle_s"] == 4.0
    assert parse_command(json.dumps(burst.command("r1"))).settle_s == 4.0
    assert "settle_s" not in RunRequest("naive", Shape(8, 8, 8)).command("r1")
    sustained = burst.with_mode(RunMode(Mode.SUSTAINED, SustainedConfig()))
    assert "settle_s" not in sustained.command("r1")
    assert parse_command(json.dumps(sustained.command("r1"))).mode is Mode.SUSTAINED


def _plan(*argv: str) -> list[RunRequest]:
    return cli.plan(cli.build_parser().parse_args(["bench", *argv]))


def test_the_cli_settle_option_reaches_every_burst_request():
    runs = _plan("-l", "naive,coalesced", "-s", "64", "-s", "128", "--settle-s", "5")
    assert len(runs) == 4 and {r.settle_s for r in runs} == {5.0}
    assert {r.settle_s for r in _plan("-l", "naive")} == {None}
    # the sustained runs added after the burst ones send none
    mixed = _plan("-l", "naive", "--settle-s", "2", "--sustained-size", "64")
    assert [("settle_s" in r.command("x")) for r in mixed] == [True, False]


@pytest.mark.parametrize(("argv", "said"), [
    (["--settle-s", "61"], "--settle-s: '61': give seconds from 0 to 60"),
    (["--settle-s", "-2"], "from 0 to 60"),
    (["--settle-s", "nan"], "from 0 to 60"),
    (["--settle-s", "2", "--sustained"], "--settle-s applies to burst runs"),
])
def test_the_cli_refuses_a_settle_out_of_range_or_with_sustained_runs(argv, said):
    err = io.StringIO()
    assert cli.main(["bench", "-l", "naive", *argv], stdout=io.StringIO(), stderr=err) == 2
    assert said in err.getvalue()


def test_an_idle_says_it_is_still_going_every_heartbeat_and_takes_its_time():
    now, said = [0.0], []
    took = idle(25.0, said.append, lambda s: now.__setitem__(0, now[0] + s), lambda: now[0])
    assert took == 25.0
    assert said == [25.0, 25.0 - HEARTBEAT_S, 25.0 - 2 * HEARTBEAT_S]
    assert idle(0.0, said.append, lambda s: None, lambda: 0.0) == 0.0 and len(said) == 3


def test_the_progress_line_says_a_burst_is_settling():
    progress = Progress(io.StringIO(), 3)
    shown: list[str] = []
    progress.show = lambda text, final=False: shown.append(text)
    progress.event(of({"type": "phase", "t": 1.0, "id": "r", "level": "wmma", "M": 8192,
                       "N": 8192, "K": 8192, "mode": "burst", "phase": "settle", "trial": 0,
                       "seconds": 5.0}))
    assert shown == ["wmma 8192x8192x8192  settling (5 s)"]


def test_a_result_and_its_run_start_keep_the_settle():
    start = of({"type": "run_start", "t": 0.5, "id": "r", "level": "naive", "M": 8, "N": 8,
                "K": 8, "repeats": 20, "settle_s": 5.0})
    assert start.settle_s == 5.0
    result = of({"type": "result", "t": 1.0, "level": "naive", "M": 8, "N": 8, "K": 8,
                 "dtype": "fp32", "median_ms": 0.01, "tflops": 0.1, "verified": True,
                 "rel_err": 1e-7, "repeats": 20, "settle_s": 5.0, "temp_c_start": 41.0})
    assert (result.settle_s, result.temp_c_start) == (5.0, 41.0)


def test_the_runner_says_a_burst_and_its_reference_settle_and_the_result_keeps_it():
    from fake_benches import SustainedBench, serve

    bench = SustainedBench()
    lines = serve(bench, {"cmd": "run", "id": "b", "level": "cp_async", "M": 64, "N": 64,
                          "K": 64, "settle_s": 3})
    starts = [e for e in lines if e["type"] == "run_start"]
    phases = [e for e in lines if e["type"] == "phase" and e["phase"] != "compile"]
    results = [e for e in lines if e["type"] == "result"]
    assert bench.burst_runs == ["cublas_fp32", "cp_async"]  # paired in one loop
    assert [s["settle_s"] for s in starts] == [3.0, 3.0]
    # one settle: the pair loop starts from it for both
    assert [(p["phase"], p["mode"], p["seconds"]) for p in phases] == [("settle", "burst", 3.0)]
    assert [r["settle_s"] for r in results] == [3.0, 3.0]
    plain = serve(SustainedBench(), {"cmd": "run", "id": "p", "level": "cp_async", "M": 64,
                                     "N": 64, "K": 64})
    assert not [e for e in plain if e["type"] == "phase" and e["phase"] != "compile"]
    assert all("settle_s" not in e for e in plain if e["type"] == "run_start")
