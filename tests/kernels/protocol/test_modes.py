"""Burst and sustained runs in the protocol, the run requests and the CLI: every result
says its mode, old results read as burst, and a sustained run's fields are checked."""

from __future__ import annotations

import io
import json

import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol import events as protocol
from gemmscope.kernels.protocol import recording
from gemmscope.kernels.protocol.commands import (
    RunCommand,
    RunMode,
    SustainedConfig,
    parse_command,
)
from gemmscope.kernels.protocol.decoding import from_builtins, of
from gemmscope.kernels.protocol.events import Mode, ProtocolError
from gemmscope.kernels.protocol.plan import RunRequest

RESULT = {"type": "result", "t": 1.5, "level": "naive", "M": 8, "N": 8, "K": 8, "dtype": "fp32",
          "median_ms": 0.01, "tflops": 0.1, "verified": True, "rel_err": 1e-7, "repeats": 3}


def run_cmd(**fields) -> dict:
    return parse_command(json.dumps({"cmd": "run", "level": "naive", "M": 8, "N": 8, "K": 8,
                                     **fields}))


def test_a_result_without_mode_reads_as_burst(tmp_path):
    header = {"type": "session", "t": 0.0, "protocol": 2, "created": "x", "levels": {}}
    p = tmp_path / "old.jsonl"
    p.write_text(protocol.dumps(header) + "\n" + protocol.dumps(RESULT) + "\n")
    assert [r.mode for r in recording.read_session(p).results] == ["burst"]
    assert from_builtins({**RESULT, "mode": "sustained"}).mode == "sustained"
    with pytest.raises(ProtocolError, match='"mode" must be one of burst, sustained'):
        from_builtins({**RESULT, "mode": "marathon"})


def test_run_command_takes_a_mode_and_sustained_fields_within_limits():
    plain = run_cmd()
    assert plain.mode is Mode.BURST and (plain.repeats, plain.warmup) == (20, 3)  # defaults
    cmd = run_cmd(mode="sustained", window_s=2.5, trials=4, cooldown_s=0)
    assert cmd.mode is Mode.SUSTAINED and cmd.sustained == SustainedConfig(2.5, 4, 0.0)
    assert run_cmd(mode="sustained", trials=5).sustained == SustainedConfig(3.0, 5, 5.0)
    bad = [({"mode": "fast"}, "mode must be one of burst, sustained"),
           ({"window_s": 3}, "window_s applies to sustained runs only"),
           ({"mode": "burst", "trials": 2}, "trials applies to sustained runs only"),
           ({"mode": "sustained", "window_s": 0.2}, "window_s must be a number of seconds "
                                                    "from 1 to 30"),
           ({"mode": "sustained", "window_s": 31}, "from 1 to 30"),
           ({"mode": "sustained", "trials": 0}, "trials must be an integer from 1 to 10"),
           ({"mode": "sustained", "trials": 2.0}, "trials must be an integer"),
           ({"mode": "sustained", "trials": True}, "trials must be an integer"),
           ({"mode": "sustained", "cooldown_s": -1}, "cooldown_s must be a number of "
                                                     "seconds from 0 to 120"),
           ({"mode": "sustained", "cooldown_s": "5"}, "cooldown_s must be")]
    for fields, message in bad:
        with pytest.raises(ProtocolError, match=message):
            run_cmd(**fields)


def test_run_request_sends_what_the_runner_takes():
    burst = RunRequest("wmma", Shape(64, 64, 64), 7).command("r1")
    assert burst["repeats"] == 7 and "mode" not in burst
    assert parse_command(json.dumps(burst)) == RunCommand("wmma", 64, 64, 64, "r1", repeats=7)
    how = RunMode(Mode.SUSTAINED, SustainedConfig(2.0, 2, 5.0))
    req = RunRequest("wmma", Shape(64, 64, 64)).with_mode(how)
    cmd = req.command("r2")
    assert cmd["mode"] == "sustained" and cmd["window_s"] == 2.0 and cmd["trials"] == 2
    assert "repeats" not in cmd
    # what the runner parses is what was asked for: one typed spec, end to end
    ran = parse_command(json.dumps(cmd))
    assert (ran.mode, ran.sustained, ran.id, str(ran.shape)) == (
        how.mode, how.sustained, "r2", "64×64×64")
    assert parse_command(json.dumps(RunRequest("wmma", Shape(8, 8, 8)).with_mode(
        RunMode(Mode.SUSTAINED)).command("r3"))).sustained == SustainedConfig()  # defaults
    assert req.describe() == "wmma at 64×64×64 (sustained)"


def _plan(*argv: str):
    return cli.plan(cli.build_parser().parse_args(["bench", *argv]))


def test_cli_sustained_options_become_sustained_requests():
    runs = _plan("-l", "wmma", "--sustained", "--window-s", "2", "--trials", "5",
                 "--cooldown-s", "0")
    assert [(r.mode, r.sustained) for r in runs] == \
        [("sustained", SustainedConfig(2.0, 5, 0.0))]
    assert _plan("-l", "wmma", "--sustained")[0].sustained is None  # the runner's defaults
    assert _plan("-l", "wmma")[0].mode == "burst"
    rec = cli.build_parser().parse_args(["record", "-o", "x.jsonl", "--sustained"])
    assert all(r.mode == "sustained" for r in cli.plan(rec))


@pytest.mark.parametrize("argv, flag", [
    (["--window-s", "2"], "--window-s"),
    (["--sustained", "--trials", "0"], "--trials"),
    (["--sustained", "--window-s", "100"], "--window-s"),
    (["--sustained", "--cooldown-s", "-3"], "--cooldown-s"),
])
def test_cli_refuses_sustained_options_out_of_range(argv, flag):
    err = io.StringIO()
    assert cli.main(["bench", "-l", "naive", *argv], stdout=io.StringIO(), stderr=err) == 2
    assert f"gemmscope bench: {flag}:" in err.getvalue()


def test_table_says_the_mode_and_the_spread_of_trials():
    from gemmscope.kernels.results.table import render

    burst = {**RESULT, "mode": "burst", "precision": "fp32", "energy_j": 0.5,
             "gflop_per_j": 2.0}
    sustained = {**RESULT, "mode": "sustained", "precision": "fp32", "trials": 3,
                 "tflops_min": 0.09, "tflops_max": 0.11, "avg_power_w": 612.4,
                 "energy_j": 0.25, "gflop_per_j": 4.0}
    no_counter = {**RESULT, "precision": "fp32", "energy_j": None,
                  "energy_reason": "nvmlDeviceGetTotalEnergyConsumption: Not Supported"}
    lines = render([of(burst), of(sustained), of(no_counter)]).splitlines()
    assert lines[0].split()[:5] == ["level", "shape", "precision", "mode", "median"]
    assert lines[2].split()[3] == "burst" and lines[3].split()[3] == "sustained"
    assert "3 trials 0.09000–0.1100 TFLOPS" in lines[3]
    assert lines[4].split()[3] == "burst"  # an old result without a mode
    assert "no energy: nvmlDeviceGetTotalEnergyConsumption: Not Supported" in lines[4]
