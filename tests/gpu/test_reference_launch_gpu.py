"""A reference launched once outside the runner (engine.launch), as `record --ncu` has ncu
start it: its library call verifies, in and out of the profiled range (H200)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("level_id", ["cublas_fp32", "cublas_tf32", "cublas_bf16"])
@pytest.mark.parametrize("profiled", [False, True])
def test_a_reference_launches_once_and_verifies(level_id, profiled):
    from gemmscope.kernels.engine.launch import run_once

    out = run_once(level_id, 256, 192, 320, profiled_range=profiled)
    assert out["verified"], out
    assert out["variant"] == "cublas" and out["kernel"] is None
