"""Named operand distributions and what made a result (issue 41 items 5 and 6), without a
GPU: the draws, the verification against a zero reference, the FP8 scales of zero blocks,
the command, the plan and the CLI option, the result's fields as read and shown, cuBLAS's
version text and a Triton kernel's code key."""

from __future__ import annotations

import json
from types import SimpleNamespace

import msgspec
import numpy as np
import pytest
from fake_benches import SustainedBench, serve

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.device.gpu import cublas_text
from gemmscope.kernels.engine import quantize as qz
from gemmscope.kernels.engine.operands import Accuracy, draw
from gemmscope.kernels.ladder.registry import Precision
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol import commands
from gemmscope.kernels.protocol.events import DEFAULT_DISTRIBUTION, Distribution, ProtocolError
from gemmscope.kernels.protocol.plan import RunRequest
from gemmscope.kernels.protocol.records import Result
from gemmscope.kernels.results.rows import Column, Row
from gemmscope.kernels.toolchain.triton_build import triton_code_key


def numpy_xp(seed: int = 0) -> SimpleNamespace:
    """numpy dressed as the CuPy calls ``draw`` makes (CuPy's take a dtype)."""
    rng = np.random.default_rng(seed)
    return SimpleNamespace(
        random=SimpleNamespace(random=lambda shape, dtype: rng.random(shape, dtype=dtype),
                               standard_normal=lambda shape, dtype:
                               rng.standard_normal(shape, dtype=dtype)),
        zeros=np.zeros, float32=np.float32)


def test_the_default_is_uniform_what_every_run_drew_before():
    assert DEFAULT_DISTRIBUTION is Distribution.UNIFORM
    assert [str(d) for d in Distribution] == ["uniform", "normal", "pm1", "zeros"]


@pytest.mark.parametrize("distribution", list(Distribution))
def test_each_distribution_draws_what_its_name_says(distribution):
    x = draw((256, 512), distribution, numpy_xp())
    assert x.shape == (256, 512) and x.dtype == np.float32
    if distribution is Distribution.UNIFORM:
        assert -1 <= x.min() < -0.9 and 0.9 < x.max() < 1 and abs(x.mean()) < 0.02
    elif distribution is Distribution.NORMAL:
        assert abs(x.mean()) < 0.02 and abs(x.std() - 1) < 0.02 and x.max() > 3
    elif distribution is Distribution.PM1:
        assert set(np.unique(x)) == {-1.0, 1.0} and abs(x.mean()) < 0.02
    else:
        assert not x.any()


@pytest.mark.parametrize("distribution", list(Distribution))
def test_every_distribution_survives_the_fp8_block_scales(distribution):
    a = draw((128, 256), distribution, numpy_xp(1))
    codes, scales = qz.quantize_rows_1x128(a)
    back = qz.dequantize_rows_1x128(codes, scales)
    bt_codes, bt_scales = qz.quantize_blocks_128x128(a)
    bt_back = qz.dequantize_blocks_128x128(bt_codes, bt_scales)
    for s, v in ((scales, back), (bt_scales, bt_back)):
        assert np.isfinite(s).all() and (s > 0).all()  # a zero block: the floor, no 0/0
        assert np.isfinite(v).all()
    if distribution is Distribution.ZEROS:
        assert not codes.any() and not back.any() and not bt_back.any()
    else:  # E4M3 keeps 3 mantissa bits: within 1/16 of each block's largest element
        assert np.abs(back - a).max() <= np.abs(a).max() / 16
    if distribution is Distribution.PM1:  # +-1 is exact in BF16
        assert (qz.bf16_decode(qz.bf16_encode(a)) == a).all()


def test_a_zero_reference_verifies_only_an_exactly_zero_c():
    exact = Accuracy(0.0, False, 0.0, zero_reference=True)
    tiny = Accuracy(1e-30, False, 1.0, zero_reference=True)  # ||C||: something was written
    unwritten = Accuracy(float("nan"), True, float("nan"), zero_reference=True)
    for precision in Precision:
        assert exact.verified(precision)
        assert not tiny.verified(precision) and not unwritten.verified(precision)
    # a reference that is not zero: the tolerance as before
    assert Accuracy(1e-7, False, 0.0).verified(Precision.FP32)
    assert not Accuracy(1e-2, False, 0.0).verified(Precision.FP32)


def test_the_run_command_carries_the_distribution():
    base = {"cmd": "run", "level": "naive", "M": 8, "N": 8, "K": 8}
    assert commands.parse_command(json.dumps(base)).operands is Distribution.UNIFORM
    for d in Distribution:
        cmd = commands.parse_command(json.dumps({**base, "operands": str(d)}))
        assert cmd.operands is d
    for bad in ("gaussian", 1, None, ""):
        with pytest.raises(ProtocolError, match="operands must be one of uniform, normal"):
            commands.parse_command(json.dumps({**base, "operands": bad}))
    request = RunRequest("naive", Shape(8, 8, 8), operands=Distribution.PM1)
    assert request.command("r1")["operands"] == "pm1"
    assert "operands" not in RunRequest("naive", Shape(8, 8, 8)).command("r1")


def test_the_cli_option_reaches_every_run():
    def planned(*argv: str) -> list[RunRequest]:
        return cli.plan(cli.build_parser().parse_args(["bench", "-l", "naive,wmma", *argv,
                                                       "--sustained-size", "512"]))

    assert {r.operands for r in planned()} == {None}  # the default goes unsaid
    runs = planned("--operands", "zeros")
    assert len(runs) == 4 and {r.operands for r in runs} == {Distribution.ZEROS}
    with pytest.raises(SystemExit):
        planned("--operands", "ones")


def test_the_runner_draws_what_the_command_asks_and_names_what_made_the_result():
    bench = SustainedBench()
    drawn = []
    run = bench.run

    def recording_run(*args, **kwargs):
        drawn.append(bench.distribution)
        return run(*args, **kwargs)

    bench.run = recording_run
    events = serve(bench, {"cmd": "run", "id": 1, "level": "naive", "M": 64, "N": 64,
                           "K": 64, "operands": "normal", "compare": False},
                   {"cmd": "run", "id": 2, "level": "naive", "M": 64, "N": 64, "K": 64,
                    "compare": False})
    assert drawn == [Distribution.NORMAL, Distribution.UNIFORM]
    results = [e for e in events if e["type"] == "result"]
    assert len(results) == 2 and all("versions" not in r for r in results)  # no GPU: none


RESULT = {"type": "result", "t": 1.0, "level": "naive", "M": 8, "N": 8, "K": 8,
          "dtype": "fp32", "median_ms": 1.0, "tflops": 1.0, "verified": True,
          "rel_err": 0.0, "repeats": 3}


def test_a_result_reads_its_operands_and_shows_them():
    r = msgspec.json.decode(json.dumps({**RESULT, "operands": "zeros"}), type=Result)
    assert r.operands == "zeros" and Row.of(r).texts()[Column.OPERANDS] == "zeros"
    # an older file says none: its operands were uniform
    old = msgspec.json.decode(json.dumps(RESULT), type=Result)
    assert old.operands is None and Row.of(old).texts()[Column.OPERANDS] == "uniform"
    # a newer distribution's name still reads (text, not the enum)
    newer = msgspec.json.decode(json.dumps({**RESULT, "operands": "lognormal"}), type=Result)
    assert Row.of(newer).texts()[Column.OPERANDS] == "lognormal"


VERSIONS = {"driver": "580.95.05", "cuda_driver": "13.0", "cuda_runtime": "13.0",
            "cublas": "13.0.2", "nvrtc": "13.0", "cupy": "14.2.0"}


def test_a_result_reads_what_made_it_and_shows_it():
    r = msgspec.json.decode(json.dumps({**RESULT, "versions": VERSIONS}), type=Result)
    assert r.versions is not None and r.versions.cublas == "13.0.2"
    assert Row.of(r).texts()[Column.VERSIONS] == ("driver 580.95.05 · CUDA 13.0/13.0 · "
                                                  "cuBLAS 13.0.2 · NVRTC 13.0")
    old = msgspec.json.decode(json.dumps(RESULT), type=Result)  # an older file: unknown
    assert old.versions is None and Row.of(old).texts()[Column.VERSIONS] == "–"
    # a part the runner could not read is left out, not shown as "None"
    part = msgspec.json.decode(json.dumps({**RESULT, "versions": {"cublas": "13.0.2"}}),
                               type=Result)
    assert Row.of(part).texts()[Column.VERSIONS] == "cuBLAS 13.0.2"


def test_cublas_versions_read_as_text():
    assert cublas_text(120804) == "12.8.4"
    assert cublas_text(130002) == "13.0.2"
    assert cublas_text(11402) == "11.4.2"  # the old encoding, major * 1000


def test_a_triton_kernels_code_key_names_its_source_triton_parameters_and_arch():
    params = {"BLOCK_M": 128, "BLOCK_N": 128, "num_warps": 8}
    key = triton_code_key("src", "3.4.0", params, "sm_90a")
    assert len(key) == 16 and int(key, 16) >= 0
    assert key == triton_code_key("src", "3.4.0", dict(reversed(params.items())), "sm_90a")
    for other in (triton_code_key("src ", "3.4.0", params, "sm_90a"),
                  triton_code_key("src", "3.5.0", params, "sm_90a"),
                  triton_code_key("src", "3.4.0", {**params, "num_warps": 4}, "sm_90a"),
                  triton_code_key("src", "3.4.0", params, "sm_90")):
        assert other != key


def test_a_ratio_is_of_the_reference_on_the_same_distribution():
    bench = SustainedBench()
    run = {"cmd": "run", "level": "naive", "M": 64, "N": 64, "K": 64}
    events = serve(bench, {**run, "id": 1}, {**run, "id": 2},
                   {**run, "id": 3, "operands": "zeros"})
    # paired bursts: each run times its reference in its own loop, on the run's inputs
    assert bench.burst_runs == ["cublas_fp32", "naive"] * 3
    assert str(bench.distribution) == "zeros"  # set for the last run, before its loop
    levels = [e for e in events if e["type"] == "result" and e["level"] == "naive"]
    assert all(r["reference"] == "cublas_fp32" for r in levels)


def test_the_report_says_once_what_made_the_results(tmp_path):
    import synthetic_session as synth

    from gemmscope.kernels.results.session_report import report_lines

    evs = synth.events()
    for ev in evs:
        if ev["type"] == "result":
            ev["versions"] = VERSIONS
    lines, problem = report_lines(str(synth.write(tmp_path / "v.jsonl", evs)))
    assert problem is None
    assert lines[1] == ("made with driver 580.95.05 · CUDA 13.0/13.0 · cuBLAS 13.0.2 · "
                        "NVRTC 13.0")
    assert sum(line.startswith("made with") for line in lines) == 1
    old, _ = report_lines(str(synth.write(tmp_path / "old.jsonl")))  # no versions: no line
    assert not any(line.startswith("made with") for line in old)


def seedable_xp() -> SimpleNamespace:
    """numpy dressed as CuPy's global generator: ``random.seed`` restarts it."""
    state = {"rng": np.random.default_rng()}

    def seed(value: int) -> None:
        state["rng"] = np.random.default_rng(value)

    return SimpleNamespace(
        random=SimpleNamespace(seed=seed,
                               random=lambda shape, dtype: state["rng"].random(shape,
                                                                               dtype=dtype),
                               standard_normal=lambda shape, dtype:
                               state["rng"].standard_normal(shape, dtype=dtype)),
        zeros=np.zeros, float32=np.float32)


def test_the_operand_seed_makes_every_draw_the_same_and_its_absence_keeps_them_fresh(
        monkeypatch):
    from gemmscope.kernels.engine.operands import seed_from_env
    from gemmscope.kernels.protocol.events import OPERAND_SEED

    xp = seedable_xp()
    monkeypatch.delenv(OPERAND_SEED, raising=False)
    assert seed_from_env(xp) is None
    fresh = [draw((8, 8), Distribution.NORMAL, xp) for _ in range(2)]
    assert not np.array_equal(*fresh)  # no seed: each run its own values
    monkeypatch.setenv(OPERAND_SEED, " 7 ")
    runs = []
    for _ in range(3):  # as random_inputs does before each run's draws
        assert seed_from_env(xp) == 7
        runs.append((draw((8, 8), Distribution.NORMAL, xp), draw((8, 4), Distribution.UNIFORM,
                                                                 xp)))
    for a, b in runs[1:]:
        assert np.array_equal(a, runs[0][0]) and np.array_equal(b, runs[0][1])
    assert not np.array_equal(runs[0][0][:, :4], runs[0][1])  # A and B still differ
    monkeypatch.setenv(OPERAND_SEED, "seven")
    with pytest.raises(ValueError, match="GEMMSCOPE_OPERAND_SEED='seven': give an integer"):
        seed_from_env(xp)


def test_record_refuses_to_record_with_the_operand_seed_set(tmp_path, monkeypatch):
    import io

    from gemmscope.kernels.protocol.events import OPERAND_SEED

    monkeypatch.setenv(OPERAND_SEED, "1")
    err = io.StringIO()
    path = tmp_path / "s.jsonl"
    code = cli.main(["record", "-l", "naive", "-s", "16", "-o", str(path)], io.StringIO(), err)
    assert code == 2 and not path.exists()
    assert "GEMMSCOPE_OPERAND_SEED is set" in err.getvalue() and "Unset it" in err.getvalue()
    monkeypatch.setenv(OPERAND_SEED, "")  # empty: not set
    code = cli.main(["record", "-o", str(path), "--update", str(tmp_path / "none.jsonl")],
                    io.StringIO(), err := io.StringIO())
    assert "GEMMSCOPE_OPERAND_SEED" not in err.getvalue()
