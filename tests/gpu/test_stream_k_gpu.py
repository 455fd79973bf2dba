"""Stream-K levels (run on the H200): a tile cut between blocks is summed through a
workspace and per-tile counters that each launch must leave at zero for the next one, so
these check a result after many launches, not only the first."""

from __future__ import annotations

import pytest

from gemmscope.kernels.ladder import registry

pytestmark = pytest.mark.gpu

STREAM_K = [lv for lv in registry.LEVELS if lv.params.get("SK")]
# fewer tiles than SMs (every tile cut, several contributors each); a partial last wave
# with ragged edges; DeepGEMM's small-N shape; one K step per tile
SHAPES = [(1000, 999, 1024), (4099, 4104, 512), (4096, 2112, 7168), (2048, 2048, 128),
          (8192, 8192, 1024)]


@pytest.fixture(scope="module")
def bench():
    from gemmscope.kernels.device.gpu import device_info
    from gemmscope.kernels.engine.measure import Bench, wall_clock

    return Bench(device_info(), wall_clock())


def test_the_ladder_has_stream_k_levels():
    assert {lv.id for lv in STREAM_K} == {"wgmma_stream_k", "fp8_stream_k"}


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("mode", [1, 2], ids=lambda m: f"SK{m}")
@pytest.mark.parametrize("level", STREAM_K, ids=lambda lv: lv.id)
def test_stream_k_result_is_right_after_many_launches(bench, level, mode, shape):
    from gemmscope.kernels.engine.measure import refusal
    from gemmscope.kernels.engine.operands import check

    level = level.with_params({level.stream_k_param: mode})
    M, N, K = shape
    assert refusal(level, M, N, K, bench.device) is None
    with bench.stream:
        prep = bench.prepare(level, M, N, K, None, warmup=25)
        assert prep.verified, prep.why_wrong()
        prep.ops.poison()
        prep.launch()
        acc = check(prep.ops)
    assert not acc.has_nan, "an element of C was not written after 26 launches"
    assert acc.verified(level.precision), f"rel_err {acc.rel_err} after 26 launches"
