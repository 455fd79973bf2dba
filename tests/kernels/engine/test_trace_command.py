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
from gemmscope.kernels.protocol.trace_kinds import MAX_TRACE_EVENTS
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
    # every ladder level has a trace build; a reference (a library call) has none
    r.serve(['{"cmd": "trace", "level": "cublas_fp32", "M": 64, "N": 64, "K": 64, "id": 1}'])
    error, done, _bye = (wire(x) for x in out.getvalue().splitlines())
    assert error["type"] == "error" and error["kind"] == "refused" and error["id"] == 1
    assert "cublas_fp32 has no trace build" in error["message"]
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

    def fake(level, M, N, K, pairs, every):
        assert (level.id, M, N, K, pairs, every) == ("wgmma_tma", 512, 512, 256, 4, 8)
        event = trace_schedule.synthetic_trace(model, 132, stage_every=every)
        del event["t"]
        return event

    monkeypatch.setattr(trace_launch, "trace_event", fake)
    r.serve(['{"cmd": "trace", "level": "wgmma_tma", "M": 512, "N": 512, "K": 256, '
             '"pairs": 4, "every": 8, "id": "x"}'])
    lines = out.getvalue().splitlines()
    trace = decoding.decode(lines[0])
    assert isinstance(trace, Trace) and trace.id == "x" and trace.grid == model.grid
    assert len(trace.events) > 0 and wire(lines[1])["type"] == "done"
    assert trace.stage_every == 8


def test_the_k_step_sampling_is_one_the_build_knows_or_left_to_the_runner():
    line = '{"cmd": "trace", "level": "wgmma_tma", "M": 64, "N": 64, "K": 64'
    assert commands.parse_command(line + "}").every is None  # the runner picks
    for every in commands.STAGE_EVERY:
        assert commands.parse_command(line + f', "every": {every}}}').every == every
    for bad in ("3", "0", "256", "96", "8.0", '"8"', "true"):
        with pytest.raises(ProtocolError, match="every must be one of 1, 4, 8"):
            commands.parse_command(line + f', "every": {bad}}}')


def test_trace_event_refuses_a_sampling_the_build_does_not_know():
    with pytest.raises(ValueError, match="every must be one of"):
        trace_launch.trace_event(registry.get("wgmma_tma"), 256, 256, 256, 0, every=3)


@pytest.mark.parametrize("level_id", ["register_2d", "mma_tma", "wgmma_stream_k", "fp8_deep"])
def test_a_small_shape_keeps_every_step_and_a_big_one_samples_within_one_events_bound(
        level_id):
    small = trace_schedule.schedule(registry.get(level_id), 1024, 1024, 1024, 132)
    assert trace_launch.auto_every(small) == 1
    big = trace_schedule.schedule(registry.get(level_id), 4096, 4096, 4096, 132)
    every = trace_launch.auto_every(big)
    assert every > 1
    lanes = sum(len(p) * 4 + 2 for p in big.pieces) * big.lanes_per_block
    fits = lanes + trace_launch.stage_events(big, every) <= MAX_TRACE_EVENTS
    assert fits or every == commands.STAGE_EVERY[-1]
    # the least that fits (or the level's least for its cost): the one below would not do
    below = commands.STAGE_EVERY[commands.STAGE_EVERY.index(every) - 1]
    assert (lanes + trace_launch.stage_events(big, below) > MAX_TRACE_EVENTS
            or below < trace_launch.LEAST_SAMPLING.get(level_id, 1) == every)


@pytest.mark.parametrize("level_id", ["naive", "coalesced"])
def test_a_level_that_stages_no_k_tiles_wants_its_blocks_begin_and_end_only(level_id):
    model = trace_schedule.schedule(registry.get(level_id), 4096, 4096, 4096, 132)
    assert not model.staged and model.ksteps == 4096  # K walked one element at a time
    assert trace_launch.stage_events(model, 1) == 0
    assert trace_launch.auto_every(model) == 1  # nothing to sample
    assert trace_launch.lane_capacity(model, 1) == 2 + 4  # not 3 per K step


def test_a_level_whose_steps_are_short_samples_no_less_than_its_cost_allows():
    model = trace_schedule.schedule(registry.get("fp8_deep"), 4096, 4096, 4096, 132)
    lanes = sum(len(p) * 4 + 2 for p in model.pieces) * model.lanes_per_block
    assert lanes + trace_launch.stage_events(model, 8) <= MAX_TRACE_EVENTS  # 8 would fit
    assert trace_launch.auto_every(model) == trace_launch.LEAST_SAMPLING["fp8_deep"] == 16


@pytest.mark.parametrize("every", [1, 4, 16])
def test_lane_capacity_holds_a_sampled_lanes_events_and_no_more_than_it_needs(every):
    model = trace_schedule.schedule(registry.get("wgmma_tma"), 2048, 2048, 2048, 132)
    trace = decoding.of(trace_schedule.synthetic_trace(model, 132, stage_every=every))
    per_lane: dict[tuple[int, int], int] = {}
    for b, lane in zip(trace.events.block, trace.events.lane, strict=True):
        per_lane[(b, lane)] = per_lane.get((b, lane), 0) + 1
    cap = trace_launch.lane_capacity(model, every)
    assert max(per_lane.values()) <= cap
    if every > 1:
        assert cap < trace_launch.lane_capacity(model, 1)


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


@pytest.mark.parametrize("options", [["--trace-every", "8"], ["--trace-pairs", "3"],
                                     ["--trace-size", "1024"]])
def test_record_refuses_a_trace_option_without_trace(tmp_path, options):
    from gemmscope.kernels.cli import main as cli

    err = io.StringIO()
    path = tmp_path / "s.jsonl"
    code = cli.main(["record", "-l", "naive", "-s", "16", "-o", str(path), *options],
                    io.StringIO(), err)
    assert code == 2 and not path.exists()
    assert f"{options[0]} shape the --trace step: pass --trace LEVELS" in err.getvalue()


def test_record_refuses_a_sampling_the_build_does_not_know(tmp_path):
    from gemmscope.kernels.cli import main as cli

    err = io.StringIO()
    code = cli.main(["record", "-l", "naive", "-o", str(tmp_path / "s.jsonl"), "--trace",
                     "wgmma_tma", "--trace-every", "3"], io.StringIO(), err)
    assert code == 2 and "invalid choice: 3" in err.getvalue()


def test_record_trace_refuses_a_level_without_a_trace_build_and_leaves_no_file(tmp_path):
    from gemmscope.kernels.cli import main as cli

    out, err = io.StringIO(), io.StringIO()
    path = tmp_path / "s.jsonl"
    code = cli.main(["record", "-l", "naive", "-o", str(path), "--trace",
                     "cublas_fp32,wgmma_tma"], out, err)
    assert code != 0 and not path.exists()
    assert "--trace: cublas_fp32: no trace build" in err.getvalue()
    assert "wgmma_tma" in err.getvalue()  # the levels that have one, named


def test_record_profile_only_takes_trace_as_its_step(tmp_path):
    from gemmscope.kernels.cli import main as cli

    err = io.StringIO()
    code = cli.main(["record", "-o", str(tmp_path / "s.jsonl"), "--profile-only",
                     "--trace", "wgmma_tma"], io.StringIO(), err)
    assert code != 0 and "pass --append" in err.getvalue()
    assert "--trace" in err.getvalue()


class _L2Gpu:
    """A fake GPU for trace_launch._paired: a launch takes 1 ms, or 0.9 ms when the
    launch before it left the operands in L2 (no flush between); it logs what ran."""

    def __init__(self):
        self.log: list[str] = []
        self.now, self.warm = 0.0, False
        gpu = self

        class Event:
            def record(self):
                self.at = gpu.now

            def synchronize(self):
                pass

        self.cuda = type("cuda", (), {"Event": Event,
                                      "get_elapsed_time": staticmethod(lambda a, b: b.at - a.at)})

    def launch(self, name: str):
        def run():
            self.log.append(name)
            self.now += 0.9 if self.warm else 1.0
            self.warm = True
        return run

    def flush(self):
        self.log.append("flush")
        self.warm = False


def test_the_trace_cost_loop_flushes_l2_before_each_launch_and_alternates_the_order():
    gpu = _L2Gpu()
    plain_ms, trace_ms, ratios = trace_launch._paired(gpu, gpu.launch("plain"),
                                                      gpu.launch("trace"), 4, gpu.flush)
    timed = gpu.log[4:]  # after the warm-up of each build, twice
    assert timed == ["flush", "plain", "flush", "trace", "flush", "trace", "flush", "plain"] * 2
    # every launch starts with a cold L2, so neither build reads the other's operands
    assert plain_ms == pytest.approx(1.0) and trace_ms == pytest.approx(1.0)
    assert ratios == pytest.approx([1.0] * 4)


@pytest.mark.parametrize("every", [1, 16])
def test_an_observers_trace_has_the_blocks_stage_events_on_its_own_lane_and_as_many_as_sized(
        every):
    """fp8_deep's K-stage observer (kernels/cuda/trace.cuh, GsTraceStages): a fourth lane
    per block records data ready and products done once a block, the consumer lanes their
    tiles only, the producer its loads; the host's count of K-stage events is the
    trace's (a model trace: the layout is the GPU's)."""
    from gemmscope.kernels.protocol.trace_kinds import STAGE_KINDS, TraceKind

    model = trace_schedule.schedule(registry.get("fp8_deep"), 1024, 1024, 2048, 132)
    assert model.observer and model.lanes_per_block == 4
    event = trace_schedule.synthetic_trace(model, 132, stage_every=every)
    kinds = event["kinds"]
    lanes: dict[TraceKind, set[int]] = {}
    for lane, k in zip(event["events"]["lane"], event["events"]["kind"], strict=True):
        lanes.setdefault(TraceKind(kinds[k]), set()).add(lane)
    assert lanes[TraceKind.DATA_READY] == lanes[TraceKind.MMA_DONE] == {3}
    assert lanes[TraceKind.LOAD_ISSUED] == {0}
    assert lanes[TraceKind.TILE_BEGIN] == {1, 2}
    staged = sum(1 for k in event["events"]["kind"] if TraceKind(kinds[k]) in STAGE_KINDS)
    assert staged == trace_launch.stage_events(model, every)


def test_the_trace_command_line_traces_a_form_the_param_names(monkeypatch, capsys):
    """``--param``: a form of the level other than the registry's (fp8_deep's 2-CTA
    clusters), its parameters checked as the level checks them."""
    traced = []

    def fake_event(level, M, N, K, pairs, every):
        traced.append((level.params["CL"], level.params["BN"], (M, N, K)))
        return {"level": level.id, "M": M, "N": N, "K": K, "events": {"t_ns": []},
                "recorded": 0, "wanted": 0, "grid": 1, "verified": True}

    monkeypatch.setattr(trace_launch, "trace_event", fake_event)
    assert trace_launch.main(["fp8_deep", "4096", "4096", "4096", "--param", "CL=2"]) == 0
    assert traced == [(2, registry.get("fp8_deep").params["BN"], (4096, 4096, 4096))]
    assert "fp8_deep 4096x4096x4096" in capsys.readouterr().out


@pytest.mark.parametrize("args, why", [
    (["fp8_deep", "64", "64", "64", "--param", "XX=3"], "fp8_deep has no parameter(s) XX"),
    (["fp8_deep", "64", "64", "64", "--param", "CL=x"], "--param: 'CL=x': give NAME=VALUE"),
    (["no_such_level", "64", "64", "64"], "unknown level 'no_such_level'"),
])
def test_the_trace_command_line_refuses_in_one_line(args, why, capsys):
    try:
        code = trace_launch.main(args)
    except SystemExit as exc:  # argparse's refusal of the value itself
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert why in err and err.count("\n") == 1


def test_the_trace_command_line_without_a_gpu_says_so_in_one_line(monkeypatch, capsys):
    def no_gpu():
        raise trace_launch.NoGPU("CuPy is not installed (cupy)")

    monkeypatch.setattr(trace_launch, "require_cupy", no_gpu)
    assert trace_launch.main(["wgmma_tma", "256", "256", "256"]) == 2
    err = capsys.readouterr().err
    assert "CuPy is not installed" in err and "Traceback" not in err and err.count("\n") == 1
