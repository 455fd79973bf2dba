"""GPU tests of issue 41 items 5 and 6 (run on the H200): every operand distribution
verifies on a level of each precision and its reference, zeros with C exactly zero; every
result names the driver, CUDA, cuBLAS and NVRTC that made it; a user's Triton kernel has a
code key; ncu says its version.

    python -m pytest -q -s -p no:cacheprovider tests/gpu/test_operands_versions_gpu.py
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from gemmscope.kernels.cli import main as cli
from gemmscope.kernels.drive.session import RunnerSession, default_runner_command
from gemmscope.kernels.ladder import registry
from gemmscope.kernels.ladder.shape import Shape
from gemmscope.kernels.profile.ncu import find_ncu, tool_version
from gemmscope.kernels.protocol.events import Distribution
from gemmscope.kernels.protocol.plan import RunRequest

pytestmark = pytest.mark.gpu

ROOT = Path(__file__).resolve().parents[2]
TRITON_SPEC = ROOT / "resources" / "kernels" / "triton_matmul.toml"
# a level of each precision class the ladder has (FP8 block-scaled and BF16 wgmma need
# Hopper; the test runs on the H200)
LEVELS = ("register_2d", "wmma", "wgmma_tma", "fp8_block_scaled")
S = 512  # a multiple of 128 (FP8's K blocks) and of every level's tile


def run(requests: list[RunRequest]) -> list:
    session = RunnerSession(lambda _e: None, default_runner_command(0), watchdog_s=120)
    try:
        session.wait_ready()
        return session.run(requests)
    finally:
        session.close()


@pytest.mark.smoke
def test_every_result_names_what_made_it():
    events = run([RunRequest("naive", Shape(256, 256, 256), 3)])
    results = [e for e in events if e.type == "result"]
    assert {r.level for r in results} == {"cublas_fp32", "naive"}
    for r in results:
        v = r.versions
        assert v is not None, r.level
        assert re.fullmatch(r"\d+\.\d+(\.\d+)*", v.driver or ""), v  # NVML: "580.95.05"
        for part in (v.cuda_driver, v.cuda_runtime, v.nvrtc):
            assert re.fullmatch(r"\d+\.\d+", part or ""), v
        assert re.fullmatch(r"\d+\.\d+\.\d+", v.cublas or ""), v
        assert v.cupy and r.operands == "uniform" and r.verified
        print(f"\n{r.level}: {v}")
    naive = next(r for r in results if r.level == "naive")
    assert naive.code_key and naive.compiler


@pytest.mark.parametrize("distribution", list(Distribution))
def test_every_distribution_verifies_at_every_precision(distribution):
    requests = [RunRequest(level, Shape(S, S, S), 3, operands=distribution) for level in LEVELS]
    events = run(requests)
    results = [e for e in events if e.type == "result"]
    errors = [e for e in events if e.type == "error"]
    assert not errors, [(e.level, e.kind, e.message[:200]) for e in errors]
    expected = {*LEVELS, *(registry.get(level).reference for level in LEVELS)}
    assert {r.level for r in results} == expected
    for r in results:
        assert r.operands == str(distribution) and r.verified, (r.level, r.rel_err)
        if distribution is Distribution.ZEROS:
            assert r.rel_err == 0.0  # C exactly zero: every element written, none wrong
        print(f"\n{distribution} {r.level}: {r.tflops:.1f} TFLOPS, rel. error {r.rel_err:.2e}")
    for r in results:  # each ratio is of the reference on the same distribution
        if r.level in LEVELS:
            assert r.pct_of_reference is not None and r.reference_tflops is not None


def test_a_user_triton_kernel_has_a_code_key():
    if importlib.util.find_spec("triton") is None:
        pytest.skip("Triton is not installed")
    runs = cli.plan(cli.build_parser().parse_args(
        ["bench", "--kernel", str(TRITON_SPEC), "-s", "1024", "-r", "3", "--no-compare"]))
    events = run(runs)
    results = [e for e in events if e.type == "result"]
    assert results and all(r.code_key and re.fullmatch(r"[0-9a-f]{16}", r.code_key)
                           for r in results)
    assert all(r.compiler and r.compiler.startswith("Triton ") for r in results)
    builds = [e for e in events if e.type == "build"]
    assert builds and {b.code_key for b in builds} == {r.code_key for r in results}


def test_ncu_says_its_version():
    exe = find_ncu("ncu")
    if exe is None:
        pytest.skip("ncu is not on PATH")
    version = tool_version(exe)
    assert version is not None and re.fullmatch(r"\d{4}\.\d+(\.\d+)*", version), version
    print(f"\nncu {version}")
