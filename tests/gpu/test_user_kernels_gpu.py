"""GPU tests of user kernels (issue 32, run on the H200): both examples at aligned and odd
shapes, a kernel that faults, and a sweep of 12 variants, all through the CLI's plan and a
runner session; every result verified. benchmarks/user_kernels_h200.sh is the same as a
script that prints the tables."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.drive.session import RunnerSession, default_runner_command

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "resources" / "kernels"
FAULTING = ROOT / "tests" / "fixtures" / "kernels" / "faulting.toml"
SHAPES = ["4096", "1000x999x1001", "7x13x5", "4099x17x515"]


def run(*argv: str) -> list:
    runs = cli.plan(cli.build_parser().parse_args(["bench", *argv]))
    session = RunnerSession(lambda _e: None, default_runner_command(0), watchdog_s=120)
    try:
        session.wait_ready()
        return session.run(runs)
    finally:
        session.close()


@pytest.mark.parametrize("spec", ["regblock_float4.toml", "triton_matmul.toml"])
def test_an_example_is_verified_at_aligned_and_odd_shapes(spec):
    if spec.startswith("triton") and importlib.util.find_spec("triton") is None:
        pytest.skip("Triton is not installed")
    argv = ["--kernel", str(EXAMPLES / spec), "-r", "3"]
    for s in SHAPES:
        argv += ["-s", s]
    events = run(*argv)
    results = [e for e in events if e.type == "result" and not e.level.startswith("cublas")]
    assert len(results) == len(SHAPES)
    assert all(r.verified for r in results), [(r.M, r.rel_err) for r in results]
    builds = [e for e in events if e.type == "build"]
    assert builds and all((b.regs or 0) > 0 for b in builds)
    assert all(b.sass for b in builds)  # Triton's too: from its cubin


@pytest.mark.smoke
def test_a_user_kernel_is_verified_at_an_odd_and_an_aligned_shape():
    """The quick tier's user kernel: the CUDA example through the CLI's plan, no cuBLAS."""
    events = run("--kernel", str(EXAMPLES / "regblock_float4.toml"), "-r", "3",
                 "--no-compare", "-s", "1000x999x1001", "-s", "1024")
    results = [e for e in events if e.type == "result"]
    assert sorted((r.level, r.M) for r in results) == [("regblock_float4", 1000),
                                                       ("regblock_float4", 1024)]
    assert all(r.verified for r in results), [(r.M, r.rel_err) for r in results]
    builds = [e for e in events if e.type == "build"]
    assert builds and all((b.regs or 0) > 0 and b.sass for b in builds)


def test_a_faulting_kernel_ends_its_runner_and_is_named():
    events = run("--kernel", str(FAULTING), "-s", "256", "--no-compare")
    errors = [e for e in events if e.type == "error"]
    assert any(e.kind == "launch" and "faulting_user failed on the GPU" in e.message
               for e in errors)
    assert all(e.level == "faulting_user" for e in errors)


def test_a_sweep_of_twelve_variants_verifies_or_refuses_each():
    events = run("--kernel", str(EXAMPLES / "regblock_float4.toml"), "--vary",
                 "BM=32,64,128,256", "--vary", "BN=64,128,256", "-s", "1024", "-r", "3")
    from gemmscope.kernels.protocol.decoding import to_builtins
    from gemmscope.kernels.results.sweep_grid import sweep_grid

    grid = sweep_grid("regblock_float4", "BN", "BM",
                      [to_builtins(e) for e in events if e.type in ("result", "error")])
    assert len(grid.cells) == 12
    for cell in grid.cells.values():
        assert (cell.tflops is not None and cell.verified) or "refused" in (cell.why or "")
