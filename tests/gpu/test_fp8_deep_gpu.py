"""fp8_deep on the H200: right answers at aligned and odd shapes, with and without 2-CTA
clusters (A multicast), the ring of stages run on from tile to tile (RING) and C staged
box by box with a fourth stage (EPC), K compiled in (KS) or read at run time, the tile
width it picks recorded in the result, and the K it refuses."""

from __future__ import annotations

import pytest

from gemmscope.kernels.ladder import registry

pytestmark = pytest.mark.gpu

# aligned; ragged M and N with an odd number of tile rows; N = 2112 (BN = 88: tiles that
# cross a 128-column scale block of Bt, C in plain boxes); N % 8 != 0 (direct stores);
# one K block; three tiles (with CL = 2 the last cluster has one tile: its peer idles);
# several ragged tiles a CTA of 5 K blocks each (RING 1 goes round the stages across them)
SHAPES = [(2048, 2048, 1024), (4099, 4104, 512), (300, 2112, 256), (513, 2121, 640),
          (7, 13, 128), (256, 384, 256), (1280, 8200, 640)]


@pytest.fixture(scope="module")
def bench():
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, wall_clock

    return Bench(device_info(), wall_clock())


def _sms() -> int:
    from gemmscope.kernels.device.gpu import require_cupy

    return int(require_cupy().cuda.Device().attributes["MultiProcessorCount"])


@pytest.mark.parametrize("ring", [0, 1])
@pytest.mark.parametrize("cl", [1, 2])
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_fp8_deep_verifies_with_and_without_clusters_and_the_ring(bench, shape, cl, ring):
    from gemmscope.kernels.ladder.registry import DEEPGEMM_DIFF_MAX

    level = registry.get("fp8_deep")
    params = {**level.for_shape(*shape, _sms()).params, "CL": cl, "RING": ring}
    if shape == (256, 384, 256):
        params["BN"] = 128  # three tiles
    r = bench.run(level, *shape, repeats=2, warmup=1, params=params, energy=False)
    assert not r["nan"], "an element of C was not written"
    assert r["verified"], (r["rel_err"], r["tol"])
    assert r["deepgemm_diff"] < DEEPGEMM_DIFF_MAX


@pytest.mark.parametrize("cl", [1, 2])
@pytest.mark.parametrize("shape", [*SHAPES, (4096, 4096, 4096)],
                         ids=lambda s: "x".join(map(str, s)))
def test_fp8_deep_verifies_with_c_staged_box_by_box_and_four_stages(bench, shape, cl):
    """EPC 1 (the shape rule's pick where a tile has 32 K blocks or more) at every shape
    whose tiles are 64 columns or a multiple wide: ragged rows and columns clip each 32 x 64
    box's store; N % 8 != 0 stores C directly (no box)."""
    from gemmscope.kernels.ladder.registry import DEEPGEMM_DIFF_MAX

    level = registry.get("fp8_deep")
    params = {**level.for_shape(*shape, _sms()).params, "CL": cl, "EPC": 1, "STAGES": 4}
    if shape == (256, 384, 256):
        params["BN"] = 128  # three tiles
    if params["BN"] % 64:
        pytest.skip(f"BN={params['BN']}: C is staged whole where its boxes are not 64 wide")
    r = bench.run(level, *shape, repeats=2, warmup=1, params=params, energy=False)
    assert not r["nan"], "an element of C was not written"
    assert r["verified"], (r["rel_err"], r["tol"])
    assert r["deepgemm_diff"] < DEEPGEMM_DIFF_MAX


def test_fp8_deep_runs_the_width_it_picks_and_says_so(bench):
    level = registry.get("fp8_deep")
    shape = (512, 2112, 1024)
    expected = level.for_shape(*shape, _sms()).params
    r = bench.run(level, *shape, repeats=2, warmup=1, energy=False)
    assert r["verified"]
    assert r.get("params", level.params)["BN"] == expected["BN"]
    assert r.get("params", level.params)["STAGES"] == expected["STAGES"]


def test_fp8_deep_refuses_k_that_is_not_a_multiple_of_128(bench):
    from gemmscope.kernels.engine.measure import refusal

    why = refusal(registry.get("fp8_deep"), 1024, 1024, 1000, bench.device)
    assert why is not None and "multiple of 128" in str(why)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_fp8_deep_verifies_with_k_read_at_run_time(bench, shape):
    """KS = 0, the build that reads K (the other tests run the shape rule's build, K / 128
    compiled in): the last round's stages filled and passed decided at run time."""
    from gemmscope.kernels.ladder.registry import DEEPGEMM_DIFF_MAX

    level = registry.get("fp8_deep")
    params = {**level.for_shape(*shape, _sms()).params, "KS": 0}
    r = bench.run(level, *shape, repeats=2, warmup=1, params=params, energy=False)
    assert not r["nan"], "an element of C was not written"
    assert r["verified"], (r["rel_err"], r["tol"])
    assert r["deepgemm_diff"] < DEEPGEMM_DIFF_MAX


def test_fp8_deep_refuses_a_build_for_another_k_before_launch(bench):
    from gemmscope.kernels.engine.measure import refusal

    level = registry.get("fp8_deep").with_params({"KS": 16})
    why = refusal(level, 1024, 1024, 1024, bench.device)
    assert why is not None and "KS=16" in str(why) and "K=1024 has 8" in str(why)


def test_fp8_deep_run_given_a_build_for_another_k_is_refused_not_launched(bench):
    """A run that gives its parameters past the runner's check (the benchmark scripts call
    the bench directly) meets the same refusal in the launcher: a build with 16 K blocks
    compiled in would walk 16 where K = 1024 has 8, its scales read past their arrays."""
    from gemmscope.kernels.engine.level_launch import Refused

    level = registry.get("fp8_deep")
    params = {**level.for_shape(1024, 1024, 2048, _sms()).params}
    assert params["KS"] == 16
    with pytest.raises(Refused, match=r"KS=16.*K=1024 has 8"):
        bench.run(level, 1024, 1024, 1024, repeats=2, warmup=1, params=params, energy=False)
