"""The Hopper levels' tile width per shape (run on the H200): where 192-wide (FP8) or
232-wide (BF16) tiles need fewer waves the launch uses them, the result says so, and the
answer is right, including the FP8 tiles that start 64 columns into a 128-column scale
block of B and the BF16 tiles whose last 64 columns overlap the chunk before."""

from __future__ import annotations

import pytest

from gemmscope.kernels.ladder import registry

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def bench():
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, wall_clock

    return Bench(device_info(), wall_clock())


@pytest.mark.parametrize("level_id", ["fp8_block_scaled", "fp8_stream_k"])
@pytest.mark.parametrize("shape", [(512, 2112, 1024), (1000, 4160, 512), (129, 300, 384),
                                   (2048, 2048, 1024)],
                         ids=lambda s: "x".join(map(str, s)))
def test_fp8_runs_the_tile_width_it_picks_for_the_shape_and_verifies(bench, level_id, shape):
    from gemmscope.kernels.device.gpu import require_cupy

    level = registry.get(level_id)
    sms = int(require_cupy().cuda.Device().attributes["MultiProcessorCount"])
    expected = level.for_shape(*shape, sms).params["BN"]
    r = bench.run(level, *shape, repeats=2, warmup=1, energy=False)
    assert r["verified"], (r["rel_err"], r["tol"])
    assert r.get("params", level.params)["BN"] == expected


def test_fp8_given_parameters_are_run_as_given(bench):
    level = registry.get("fp8_block_scaled")
    r = bench.run(level, 512, 2112, 1024, repeats=2, warmup=1, params=dict(level.params),
                  energy=False)
    assert r["verified"] and "params" not in r  # the level's own BN = 256, not the pick


@pytest.mark.parametrize("level_id", ["wgmma_tma", "wgmma_stream_k"])
@pytest.mark.parametrize(("shape", "width"), [((3000, 5000, 4096), 232), ((1000, 999, 1024), 232),
                                              ((2056, 4104, 264), 232), ((4096, 4096, 512), 256)],
                         ids=lambda v: "x".join(map(str, v)) if isinstance(v, tuple) else str(v))
def test_bf16_runs_the_tile_width_it_picks_for_the_shape_and_verifies(bench, level_id, shape,
                                                                      width):
    level = registry.get(level_id)
    r = bench.run(level, *shape, repeats=2, warmup=1, energy=False)
    assert r["verified"], (r["rel_err"], r["tol"])
    assert not r["nan"], "an element of C was not written"
    assert r.get("params", level.params)["BN"] == width
