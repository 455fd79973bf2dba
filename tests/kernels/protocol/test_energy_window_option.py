"""A burst run's energy window length (``energy_s``, issue 40 item 3): 1 s unless the run
asks for another, 0 for none. Checked in the run command, carried by run requests and the
CLI's --energy-s (the app's run form: tests/app/core/test_core_runs.py), given to the
bench, said by the run's start and its result's energy window, refused for sustained
runs."""

from __future__ import annotations

import io
import json

import pytest
from fake_benches import SustainedBench, serve

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.engine.energy import EnergyReading, MeasuredWindow
from gemmscope.kernels.engine.measure import burst_energy_fields
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol.commands import (
    ENERGY_S,
    RunMode,
    SustainedConfig,
    parse_command,
)
from gemmscope.kernels.protocol.events import Mode, ProtocolError
from gemmscope.kernels.protocol.plan import RunRequest


def run_cmd(**fields):
    return parse_command(json.dumps({"cmd": "run", "level": "naive", "M": 8, "N": 8, "K": 8,
                                     **fields}))


def test_a_burst_run_has_the_documented_window_unless_it_asks_for_another():
    assert run_cmd().energy_s == ENERGY_S[0] == 1.0
    assert run_cmd(energy_s=0.5).energy_s == 0.5
    assert run_cmd(energy_s=0).energy_s == 0.0  # none
    assert run_cmd(energy_s=ENERGY_S[2]).energy_s == ENERGY_S[2]


@pytest.mark.parametrize("value", [0.1, -1, ENERGY_S[2] + 1, "1", True, None, 1e309])
def test_a_window_too_short_out_of_range_or_not_a_number_is_refused(value):
    with pytest.raises(ProtocolError, match=r"energy_s must be 0 \(no energy window\) or a "
                                            r"number of seconds from 0\.25 to 30"):
        run_cmd(energy_s=value)


def test_a_sustained_run_refuses_it_its_trials_are_its_windows():
    with pytest.raises(ProtocolError, match="energy_s applies to burst runs only"):
        run_cmd(mode="sustained", energy_s=1)


def test_a_request_sends_its_window_for_a_burst_run_only():
    burst = RunRequest("naive", Shape(8, 8, 8), energy_s=0.5)
    assert parse_command(json.dumps(burst.command("r"))).energy_s == 0.5
    assert "energy_s" not in RunRequest("naive", Shape(8, 8, 8)).command("r")
    sustained = burst.with_mode(RunMode(Mode.SUSTAINED, SustainedConfig()))
    assert "energy_s" not in sustained.command("r")


def _plan(*argv: str) -> list[RunRequest]:
    return cli.plan(cli.build_parser().parse_args(["bench", *argv]))


def test_the_cli_keeps_the_default_unless_told():
    assert {r.energy_s for r in _plan("-l", "naive,coalesced")} == {None}  # the runner's 1 s
    assert {r.energy_s for r in _plan("-l", "naive", "--energy-s", "0.5")} == {0.5}
    err = io.StringIO()
    assert cli.main(["bench", "-l", "naive", "--energy-s", "0.1"], stdout=io.StringIO(),
                    stderr=err) == 2
    # refused where it is parsed, in one line (option_bounds' rule for every number)
    assert "--energy-s: '0.1': give 0 (off) or seconds from 0.25 to 30" in err.getvalue()
    err = io.StringIO()
    assert cli.main(["bench", "-l", "naive", "--energy-s", "1", "--sustained"],
                    stdout=io.StringIO(), stderr=err) == 2
    assert "--energy-s applies to burst runs" in err.getvalue()


def test_the_runner_gives_the_window_to_the_bench_and_says_it_where_not_the_default():
    bench = SustainedBench()
    shape = {"level": "cp_async", "M": 64, "N": 64, "K": 64}
    events = serve(bench, {"cmd": "run", "id": "a", **shape, "energy_s": 0.5},
                   {"cmd": "run", "id": "b", **shape, "compare": False})
    assert bench.energy_asked == [0.5, 0.5, 1.0]  # the reference's too, then the default
    starts = [e for e in events if e["type"] == "run_start"]
    assert [s.get("energy_s") for s in starts] == [0.5, 0.5, None]


def test_the_result_says_the_window_it_asked_for():
    w = MeasuredWindow(50, 0.52, 1.0, 1.6, 10, 0, EnergyReading(350.0, 0.56, True, 0.1), None)
    fields = burst_energy_fields(w, 2.0 * 2048**3, None, "graph", asked_s=0.5)
    assert fields["energy_window"]["asked_s"] == 0.5
    assert fields["energy_window"]["gpu_s"] == 0.52 and fields["energy_j"] == 7.0
    assert burst_energy_fields(w, 1.0, None, "graph")["energy_window"]["asked_s"] == 1.0
