"""The runner's ``trace`` command (issue 46 item 2) without a GPU: parsed once at the edge,
refused before anything is compiled where the level has no trace build or the shape does
not fit, and answered by one ``trace`` event that readers decode into its record."""

from __future__ import annotations

import io

import pytest
from fake_benches import H200
from fake_benches import LimitsBench as FakeBench
from runner_subprocess import wire

from gemmscope.kernels.engine import runner, trace_launch
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.models import trace_schedule
from gemmscope.kernels.protocol import commands, decoding
from gemmscope.kernels.protocol.events import ProtocolError
from gemmscope.kernels.protocol.trace_records import Trace


def test_trace_command_is_checked_at_the_edge():
    cmd = commands.parse_command('{"cmd": "trace", "level": "wgmma_tma", "M": 64, "N": 64, '
                                 '"K": 64, "id": 3}')
    assert isinstance(cmd, commands.TraceCommand) and cmd.pairs == commands.TRACE_PAIRS[0]
    for bad, why in (('"pairs": -1', "pairs must be"), ('"pairs": 1.5', "pairs must be"),
                     ('"M": 0', "M")):
        line = '{"cmd": "trace", "level": "x", "M": 64, "N": 64, "K": 64, ' + bad + "}"
        with pytest.raises(ProtocolError, match=why):
            commands.parse_command(line)


def _runner() -> tuple[runner.Runner, io.StringIO]:
    out = io.StringIO()
    r = runner.Runner(out, telemetry_hz=0)
    r.device, r.bench = H200, FakeBench()
    return r, out


def test_a_level_without_a_trace_build_is_refused_naming_those_with_one(monkeypatch):
    r, out = _runner()
    monkeypatch.setattr(trace_launch, "trace_event", lambda *a: pytest.fail("launched"))
    r.serve(['{"cmd": "trace", "level": "naive", "M": 64, "N": 64, "K": 64, "id": 1}'])
    error, done, _bye = (wire(x) for x in out.getvalue().splitlines())
    assert error["type"] == "error" and error["kind"] == "refused" and error["id"] == 1
    assert "naive has no trace build" in error["message"]
    assert "wgmma_tma" in error["message"] and "register_2d" in error["message"]
    assert done["type"] == "done"


def test_a_shape_the_level_refuses_is_refused_before_the_trace(monkeypatch):
    r, out = _runner()
    monkeypatch.setattr(trace_launch, "trace_event", lambda *a: pytest.fail("launched"))
    r.serve(['{"cmd": "trace", "level": "wgmma_tma", "M": 64, "N": 64, "K": 7}'])
    error = wire(out.getvalue().splitlines()[0])
    assert error["kind"] == "refused" and "multiple of 8" in error["message"]


def test_a_traced_launch_is_one_trace_event_with_the_command_id(monkeypatch):
    r, out = _runner()
    model = trace_schedule.schedule(registry.get("wgmma_tma"), 512, 512, 256, 132)

    def fake(level, M, N, K, pairs):
        assert (level.id, M, N, K, pairs) == ("wgmma_tma", 512, 512, 256, 4)
        event = trace_schedule.synthetic_trace(model, 132)
        del event["t"]
        return event

    monkeypatch.setattr(trace_launch, "trace_event", fake)
    r.serve(['{"cmd": "trace", "level": "wgmma_tma", "M": 512, "N": 512, "K": 256, '
             '"pairs": 4, "id": "x"}'])
    lines = out.getvalue().splitlines()
    trace = decoding.decode(lines[0])
    assert isinstance(trace, Trace) and trace.id == "x" and trace.grid == model.grid
    assert len(trace.events) > 0 and wire(lines[1])["type"] == "done"


def test_lane_capacity_holds_the_busiest_blocks_events():
    """The buffer is sized from the model: a synthetic trace's busiest lane fits in it."""
    for level_id, shape in (("wgmma_stream_k", (2048, 2048, 1024)),
                            ("register_2d", (512, 512, 256)), ("fp8_deep", (1024, 1024, 512))):
        model = trace_schedule.schedule(registry.get(level_id), *shape, 132)
        trace = decoding.of(trace_schedule.synthetic_trace(model, 132))
        per_lane: dict[tuple[int, int], int] = {}
        for b, lane in zip(trace.events.block, trace.events.lane, strict=True):
            per_lane[(b, lane)] = per_lane.get((b, lane), 0) + 1
        assert trace.stage_sms is None  # nothing left out: every event counted
        assert max(per_lane.values()) <= trace_launch.lane_capacity(model)


def test_record_trace_refuses_a_level_without_a_trace_build_and_leaves_no_file(tmp_path):
    from gemmscope.kernels.cli import main as cli

    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "s.jsonl"
    code = cli.main(["record", "-l", "naive", "-o", str(path), "--trace", "naive,wgmma_tma"],
                    out, err)
    assert code != 0 and not path.exists()
    assert "--trace: naive: no trace build" in err.getvalue()
    assert "wgmma_tma" in err.getvalue()  # the levels that have one, named


def test_record_profile_only_takes_trace_as_its_step(tmp_path):
    from gemmscope.kernels.cli import main as cli

    err = io.StringIO()
    code = cli.main(["record", "-o", str(tmp_path / "s.jsonl"), "--profile-only",
                     "--trace", "wgmma_tma"], io.StringIO(), err)
    assert code != 0 and "pass --append" in err.getvalue()
    assert "--trace" in err.getvalue()
