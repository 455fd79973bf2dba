"""GPU tests (run on the H200): every level at aligned and odd shapes, faults, telemetry."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.device.gpu import deep_gemm_missing
from gemmscope.kernels.drive.session import RunnerSession, default_runner_command
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.level import Level, Library
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.protocol.plan import RunRequest

pytestmark = pytest.mark.gpu

SHAPES = [(1, 1, 1), (7, 13, 5), (100, 100, 100), (1000, 999, 1001), (1000, 1000, 1000),
          (4099, 17, 515),   # tall and skinny
          (17, 4099, 515),   # short and wide
          (1000, 1000, 512),  # vector path, interior and edge blocks, K a multiple of BK
          (2056, 4104, 264),  # vector path, more tiles than SMs (persistent blocks loop)
          (4096, 4096, 4096),
          (256, 256, 128)]  # aligned for every level (the smoke tier's small aligned shape)
# shapes with ragged M and N that the K-restricted levels (K % 8, K % 128) accept
K_ALIGNED_SHAPES = [(1000, 999, 1024), (1000, 1000, 1024), (4099, 4104, 512), (4099, 17, 512),
                    (17, 4099, 512)]
FAULTY = str(Path(__file__).with_name("faulty_levels.py"))
# the smoke tier runs each level at the first odd and the first aligned shape it takes
# (where it takes none, the last one's refusal is its check)
SMOKE_ODD = [(100, 100, 100), (1000, 999, 1024)]
SMOKE_ALIGNED = [(256, 256, 128), (4096, 4096, 4096)]


def _needs(level: Level) -> list[pytest.MarkDecorator]:
    """A level that calls an optional library skips, saying which, where it is missing."""
    if level.library is Library.DEEPGEMM and (missing := deep_gemm_missing()) is not None:
        return [pytest.mark.skip(reason=f"DeepGEMM: {missing}")]
    return []


def smoke_shapes(level: Level) -> set[tuple[int, int, int]]:
    def takes(shape: tuple[int, int, int]) -> bool:
        return level.shape_refusal(*shape) is None

    return {next((s for s in shapes if takes(s)), shapes[-1])
            for shapes in (SMOKE_ODD, SMOKE_ALIGNED)}


def _case(level: Level, shape: tuple[int, int, int]):
    smoke = [pytest.mark.smoke] if shape in smoke_shapes(level) else []
    return pytest.param(level, shape, id=f"{level.id}-{'x'.join(map(str, shape))}",
                        marks=[*_needs(level), *smoke])


LEVEL_CASES = [_case(lv, shape) for lv in registry.LEVELS
               for shape in SHAPES + K_ALIGNED_SHAPES]


@pytest.fixture(scope="module")
def bench():
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, wall_clock

    return Bench(device_info(), wall_clock())


@pytest.mark.parametrize(("level", "shape"), LEVEL_CASES)
def test_level_is_correct(bench, level, shape):
    from gemmscope.kernels.engine.measure import refusal
    from gemmscope.kernels.ladder.registry import DEEPGEMM_DIFF_MAX

    M, N, K = shape
    if shape in K_ALIGNED_SHAPES and level.k_multiple == 1 and level.shape_rule is None:
        pytest.skip("the ragged K-aligned shapes are for the K-restricted levels")
    why = refusal(level, M, N, K, bench.device)
    if why is not None:
        # refused before launch, with the reason; only where the level's rule says so
        assert (K % level.k_multiple) or level.shape_rule is not None, str(why)
        assert str(why).startswith(level.id) and ("multiple" in str(why))
        return
    r = bench.run(level, M, N, K, repeats=2, warmup=1, energy=False)
    assert not r["nan"], "an element of C was not written"
    assert r["verified"], f"rel_err {r['rel_err']} > {r['tol']}"
    assert r["median_ms"] > 0
    if level.precision == "fp8":
        assert r["deepgemm_diff"] < DEEPGEMM_DIFF_MAX


def test_hopper_levels_are_compared_with_cublas_at_their_precision():
    seen: list = []
    client = RunnerSession(seen.append, default_runner_command(0))
    try:
        client.wait_ready()
        for level_id, ref in (("wgmma_tma", "cublas_bf16"),
                              ("fp8_block_scaled", "cublaslt_fp8")):
            evs = client.run([RunRequest(level_id, Shape(2048, 2048, 2048), 3)])
            result = next(e for e in evs if e.type == "result" and e.level == level_id)
            assert result.verified and result.variant == "tma"
            assert result.reference == ref and result.pct_of_reference > 10
    finally:
        client.close()


@pytest.mark.smoke
def test_scalar_path_is_used_for_odd_k(bench):
    r = bench.run(registry.get("vectorized"), 64, 64, 63, repeats=1, warmup=0, energy=False)
    assert r["variant"] == "scalar" and r["verified"]
    r = bench.run(registry.get("vectorized"), 64, 64, 64, repeats=1, warmup=0, energy=False)
    assert r["variant"] == "vector" and r["verified"]


@pytest.mark.smoke
def test_a_faulting_kernel_kills_only_the_runner():
    seen: list = []
    client = RunnerSession(seen.append, [*default_runner_command(0), "--levels-from", FAULTY])
    try:
        client.wait_ready()
        evs = client.run([RunRequest("test_fault", Shape(64, 64, 64), compare=False)])
        errors = [e for e in evs if e.type == "error"]
        assert errors, evs
        assert errors[0].kind in ("launch", "runner_crash")
        assert errors[0].level == "test_fault"
        # the next run gets a fresh runner and a right answer
        evs = client.run([RunRequest("register_2d", Shape(256, 256, 256), 2)])
        results = [e for e in evs if e.type == "result"]
        assert results and results[-1].verified
        assert client.restarts == 1
    finally:
        client.close()


@pytest.mark.smoke
def test_telemetry_samples_and_run_summary():
    seen: list = []
    client = RunnerSession(seen.append, default_runner_command(100))
    try:
        header = client.wait_ready()
        assert header.telemetry.available, header.telemetry
        evs = client.run([RunRequest("cp_async", Shape(4096, 4096, 4096), 20)])
    finally:
        client.close()
    samples = [e for e in seen if e.type == "telemetry"]
    assert len(samples) >= 5
    assert all(s.sm_clock_mhz and s.sm_clock_mhz > 100 for s in samples)
    assert all(s.power_w and s.power_w > 10 for s in samples)
    assert any(s.temp_c for s in samples)
    if "H100" in header.device.name or "H200" in header.device.name:
        # Hopper supports GPM; the second sample on gives the metrics
        assert any(s.sm_util_pct is not None for s in samples[2:]), samples[-1]
    result = next(e for e in evs if e.type == "result" and e.level == "cp_async")
    assert result.sm_clock_mhz_avg and result.sm_clock_mhz_min <= result.sm_clock_mhz_avg
    assert result.energy_j and result.energy_j > 0
    assert isinstance(result.throttled, tuple)  # the slowdowns seen (none, or which)
    assert result.reference == "cublas_fp32" and result.pct_of_reference > 10


def test_bench_command_prints_the_table(tmp_path):
    out, err = io.StringIO(), io.StringIO()
    rec = tmp_path / "r.jsonl"
    code = cli.main(["bench", "-l", "register_2d,wmma", "-s", "512", "-r", "3", "-o", str(rec)],
                    stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    text = out.getvalue()
    assert "register_2d" in text and "wmma" in text and "% of cuBLAS" in text
    report = io.StringIO()
    assert cli.main(["report", str(rec)], stdout=report, stderr=io.StringIO()) == 0
    assert "register_2d" in report.getvalue()
