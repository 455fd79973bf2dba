"""A reference launched once outside the runner (engine.launch), as `record --ncu` has ncu
start it: its library call verifies, in and out of the profiled range (H200); and a
level's --params taken over its shape rule's picks (--over-shape-rule)."""

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


def test_params_over_the_shape_rule_launch_the_shapes_picks_with_the_change():
    """fp8_deep at 1024x1024x7168: the rule picks BN 64, STAGES 4, KS 56; RING 1 given
    over it keeps them (the launch verifies), given over the level's own drops them."""
    from gemmscope.kernels.engine.launch import run_once

    over = run_once("fp8_deep", 1024, 1024, 7168, {"RING": 1}, over_shape_rule=True)
    assert over["verified"], over
    assert (over["params"]["RING"], over["params"]["KS"], over["params"]["BN"]) == (1, 56, 64)
    plain = run_once("fp8_deep", 1024, 1024, 7168, {"RING": 1})
    assert plain["verified"], plain
    assert (plain["params"]["KS"], plain["params"]["BN"]) == (0, 128)
