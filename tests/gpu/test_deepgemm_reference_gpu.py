"""DeepGEMM as the FP8 levels' reference on the H200 (issue 31 item 5): where deep_gemm
is importable it runs on the bench's operands, verifies against float64 by the bench's
measure, which agrees with DeepGEMM's own calc_diff, and the runner lists it; without
deep_gemm the runner leaves it out of its catalog (tests/kernels/drive checks the
skipping without a GPU)."""

from __future__ import annotations

import pytest

from gemmscope.kernels.device.gpu import deep_gemm_missing
from gemmscope.kernels.ladder import registry

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(deep_gemm_missing() is not None,
                                 reason=f"DeepGEMM: {deep_gemm_missing()}")]

# square; DeepGEMM's N = 2112; ragged M (its scales then need TMA padding); one that
# DeepGEMM itself refuses (N % 64)
SHAPES = [(1024, 1024, 1024), (512, 2112, 1024), (1001, 1536, 512)]


@pytest.fixture(scope="module")
def bench():
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, wall_clock

    return Bench(device_info(), wall_clock())


@pytest.mark.parametrize("shape", [
    pytest.param(s, marks=[pytest.mark.smoke] if s == SHAPES[0] else []) for s in SHAPES],
    ids=lambda s: "x".join(map(str, s)))
def test_deepgemm_reference_verifies_against_float64(bench, shape):
    from gemmscope.kernels.ladder.registry import DEEPGEMM_DIFF_MAX

    r = bench.run(registry.get("deepgemm_fp8"), *shape, repeats=3, warmup=1, energy=False)
    assert not r["nan"], "an element of C was not written"
    assert r["verified"], (r["rel_err"], r["tol"])
    assert r["deepgemm_diff"] < DEEPGEMM_DIFF_MAX
    assert r["variant"] == "deep_gemm"
    assert r["tflops"] > 0


def test_the_bench_measure_equals_deepgemms_calc_diff(bench):
    from gemmscope.kernels.device.gpu import require_cupy
    from gemmscope.kernels.engine import deepgemm, operands
    from gemmscope.kernels.engine import quantize as qz

    cp = require_cupy()
    ops = operands.random_inputs(registry.get("deepgemm_fp8"), 512, 1024, 768)
    with bench.stream:
        deepgemm.deepgemm_launcher(ops, bench.stream.ptr)()
    bench.stream.synchronize()
    c64 = ops.c32().astype(cp.float64)
    ref = cp.matmul(ops.a64(), ops.b64())
    ours = qz.deepgemm_diff(c64, ref, cp)
    theirs = deepgemm.calc_diff(c64, ref)
    assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-12)
    assert ours < registry.DEEPGEMM_DIFF_MAX


def test_deepgemm_refuses_n_not_a_multiple_of_64(bench):
    from gemmscope.kernels.engine.measure import refusal

    why = refusal(registry.get("deepgemm_fp8"), 1024, 1000, 1024, bench.device)
    assert why is not None and "multiple of 64" in str(why)


def test_the_runner_lists_deepgemm_where_it_imports():
    from gemmscope.kernels.engine.runner import unavailable_here

    assert "deepgemm_fp8" not in unavailable_here()
